"""Known-buggy kernels for puzzle 24 (lock-grouped accumulation), and correct ones written differently."""
from catalog import Alternative, Bug

BUGS = [
    Bug("lock_never_released", "backward",
        (("    tl.debug_barrier()\n    tl.atomic_xchg(lock, 0)\n", "    tl.debug_barrier()\n", 1),),
        reasons=(("still running after",), ("lock taken is released",), ("`ln_bwd_locked_kernel`",),
                 ("while tl.atomic_cas(lock, 0, 1) == 1",), ("documented configuration",)),
        timeout=3.0,
        notes="the group's next program spins forever: a hang, stopped at the time limit, kernel, line "
              "and case named"),
    Bug("no_lock_at_all", "backward",
        (("    while tl.atomic_cas(lock, 0, 1) == 1:\n        pass\n", "", 1),),
        reasons=(("Data race on `dgamma_part_ptr`",), ("atomic",)),
        misleading=("belongs to exactly one program",),
        cpu_blind_without_sanitizer=True,
        notes="right in the plain interpreter (one program at a time), lost updates on a GPU"),
    Bug("count_never_set", "backward",
        (("        tl.atomic_xchg(count, 1)\n", "", 1),),
        reasons=(("dgamma",), ("dbeta",)),
        misleading=("race", "atomic"),
        notes="every program thinks it is its group's first and stores: each partial row keeps the last share"),
    Bug("first_program_adds_garbage", "backward",
        (("    if tl.load(count) == 0:\n        tl.atomic_xchg(count, 1)\n"
          "        tl.store(dgamma_part_ptr + partial, dz * x_hat, mask=col_ok)\n"
          "        tl.store(dbeta_part_ptr + partial, dz, mask=col_ok)\n    else:\n",
          "    if True:\n", 1),
         ("        dgamma = tl.load(", "        dgamma = tl.load(", 1)),
        reasons=(("dgamma",),),
        notes="always load + add: the first program adds its share to whatever the empty buffer held"),
    Bug("reduce_skips_the_last_group", "backward",
        (("        ok = (rows[:, None] < G) & col_ok[None, :]", "        ok = (rows[:, None] < G - 1) & col_ok[None, :]", 1),),
        reasons=(("dgamma",), ("dbeta",)),
        misleading=("race", "still running")),
]

ALTERNATIVES = [
    Alternative("contiguous_groups", (("    group = row % G\n", "    group = row * G // M\n", 1),),
                notes="rows split into G contiguous groups instead of round robin"),
]
