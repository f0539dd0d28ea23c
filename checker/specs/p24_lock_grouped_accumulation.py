"""Puzzle 24: lock-grouped accumulation of dgamma and dbeta (spin locks, a count, G partial rows)."""
from checker.puzzle import case, cdiv, full, identical_rows, next_pow2, out, part, puzzle, randn, scratch, shared
from checker.specs.families.layernorm import EPS, centring_cost, layernorm


def launch(k, x, gamma, dz, dx, dgamma, dbeta, M, H, GROUP_SIZE, BLOCK_H, BLOCK_G, BLOCK_COLS):
    import torch
    groups = min(GROUP_SIZE, M)  # every group gets at least one row, so every partial row is written
    # not zeroed, on purpose (poisoned: NaN until written): the count tells each group's first
    # program to store, not add
    dgamma_part = scratch((groups, H), dtype=torch.float32, like=x)
    dbeta_part = scratch((groups, H), dtype=torch.float32, like=x)
    locks = torch.zeros(2 * groups, dtype=torch.int32, device=x.device)
    shared(dgamma_part, dbeta_part)  # programs of one group share a partial row, by design
    k.ln_bwd_locked_kernel[(M,)](x, gamma, dz, dx, dgamma_part, dbeta_part, locks, M, H, EPS,
                                 G=groups, BLOCK_H=BLOCK_H)
    k.ln_bwd_group_reduce_kernel[(cdiv(H, BLOCK_COLS),)](dgamma_part, dbeta_part, dgamma, dbeta, groups, H,
                                                         BLOCK_G=BLOCK_G, BLOCK_COLS=BLOCK_COLS)


# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   dbeta: correct <= 6.54e-06 (solution, bfloat16 M=512, H=768: H not a power of two, H wider than BLOCK_COLS (32))
#   dgamma: correct <= 2.33e-05 (contiguous_groups, bfloat16 M=512, H=768: H not a power of two, H wider than BLOCK_COLS (32))
#   dx: correct <= 0.196 (solution, bfloat16 M=512, H=768: H not a power of two, H wider than BLOCK_COLS (32))
PUZZLE = puzzle(
    24, "lock_grouped_accumulation", "Lock-grouped accumulation",
    skill="spin locks (tl.atomic_cas, tl.atomic_xchg) and a count guarding G partial buffers: less contention",
    chapter="Fast and deterministic",
    inputs={"x": randn("M H"), "gamma": randn("H", mean=1.0, std=0.5), "beta": randn("H", std=0.5),
            "dz": randn("like z")},
    reference=layernorm,
    parts=[part("backward", "LayerNorm backward, G locked partial rows",
                ["ln_bwd_locked_kernel", "ln_bwd_group_reduce_kernel"],
                outputs=["dx", out("dgamma", dtype="float32"), out("dbeta", dtype="float32")],
                grads={"dx": "x", "dgamma": "gamma", "dbeta": "beta"}, upstream={"z": "dz"}, launch=launch)],
    params={"BLOCK_H": next_pow2("H"), "GROUP_SIZE": 4, "BLOCK_G": 4, "BLOCK_COLS": 32},
    blocks={"H": "BLOCK_COLS"},
    condition=centring_cost,  # rows near 1000 lose digits to centring in fp32, whatever the kernel
    cases=[case(M=8, H=16, documented=True),
           case(M=37, H=100),
           case(M=1, H=48),
           case(M=3, H=40, GROUP_SIZE=8),
           case(M=64, H=24, GROUP_SIZE=16, BLOCK_G=4),
           case("identical rows, dz = 1.3: equal shares", M=40, H=24,
                inputs={"x": identical_rows("M H"), "dz": full("like z", 1.3)}),
           case("mean near 1000 (1000 + randn)", M=16, H=64, tags=("cancellation",),
                inputs={"x": randn("M H", mean=1000.0)}),
           case(M=4096, H=1024, GROUP_SIZE=64, BLOCK_G=16, gpu_only=True),
           case(M=2048, H=4000, GROUP_SIZE=32, BLOCK_G=8, gpu_only=True),
           case(M=8, H=40, dtype="bfloat16", gpu_only=False),
           case(M=512, H=768, GROUP_SIZE=32, dtype="bfloat16")],
)
