"""Puzzle 27 designs: bf16 cross-entropy forward + backward at the copy bandwidth.

Every design has launch(logits, target, dloss, **params) -> (loss [1] fp32, dlogits like logits).

  A  ref      the reference kernel as the checker launches it (spec's programs() and warps())
  B  ref      the same kernel with other launches (BLOCK_V, warps, programs per SM)
  C  split    K = 1: the row fits one block; read once, lse, gradient from the same registers
  D  split    K > 1: K programs share a row, exchange (max, Σexp) through global memory, wait for each
              other on a per-row counter (sync.py), and write their chunk's gradient from registers
  E  ref      the reference kernel with V a compile-time constant (tl.constexpr: a kernel per vocabulary)

Why C and D: the reference reads each row twice (pass 2 hits L2 only as long as the rows in flight
fit), and computes exp twice per element. C and D read once and keep e = exp(x - m_chunk) in
registers: p = e · exp(m_chunk - lse), one exp per element (ONE_EXP; else x is kept and exp is
taken again). At V = 128256 a row is too wide for one program's registers: D splits it over K.

SOLO (C and D): one launch instead of three. Every program counts the valid targets itself (8192
int32, from L2 after the first), and the loss is summed by the last program to finish (a ticket
counter), in a fixed order: no count kernel, no torch .sum(), still deterministic."""
import torch
import triton
import triton.language as tl

from common import compiled_fit, interpreting, sm_count, with_constant_width
from sync import arrive, buffers, leave, wait

from checker.specs import p27_cross_entropy as SPEC  # noqa: E402
from research.runs import solution  # noqa: E402  (common put ROOT on sys.path)

SOL = solution("p27")

IGNORE = -100
LIMIT = 1 << 20  # polls before a waiting program gives up (about a second): a hang becomes NaN
POISON = False  # explore.py's check: outputs start as NaN, so a lane nobody writes shows


def _empty_out(logits):
    dlogits = torch.empty_like(logits)
    if POISON:
        dlogits.fill_(float("nan"))
    return dlogits


def _count_and_buffers(logits, target):
    M = logits.shape[0]
    f32 = dict(device=logits.device, dtype=torch.float32)
    n_valid, loss_rows = torch.empty(1, **f32), torch.empty(M, **f32)
    SOL.ce_count_kernel[(1,)](target, n_valid, M, IGNORE, BLOCK_M=triton.next_power_of_2(M))
    return n_valid, loss_rows


# -- A and B: the reference kernel ------------------------------------------------------------------
def ref_block(V: int) -> int:
    """The bench's BLOCK_V: FAST at V = 32000, WIDE at V = 128256 (checker/specs/p27_cross_entropy.py)."""
    return SPEC.WIDE["BLOCK_V"] if V > 65536 else SPEC.FAST["BLOCK_V"]


def launch_ref(logits, target, dloss, BLOCK_V=None, per_sm=None, warps=None, kernel=None):
    """A (no params): exactly the checker's launch. B: BLOCK_V / warps / programs per SM overridden.
    kernel: another build of the reference's kernel (E)."""
    M, V = logits.shape
    BLOCK_V = BLOCK_V or ref_block(V)
    if per_sm is None or not logits.is_cuda:
        P = SPEC.programs(logits, M, BLOCK_V, None)
    else:
        P = min(M, per_sm * sm_count(logits))
    dlogits = _empty_out(logits)
    n_valid, loss_rows = _count_and_buffers(logits, target)
    (kernel or SOL.ce_fwd_bwd_kernel)[(P,)](logits, target, dloss, n_valid, loss_rows, dlogits, M=M, V=V, stride=V,
                                            ignore_index=IGNORE, BLOCK_V=BLOCK_V,
                                            num_warps=warps or SPEC.warps(BLOCK_V), num_stages=1)
    return loss_rows.sum().reshape(1), dlogits


# -- C and D: one read ----------------------------------------------------------------------------
@triton.jit
def ce_split_kernel(logits_ptr, target_ptr, dloss_ptr, n_valid_ptr, loss_rows_ptr, dlogits_ptr,
                    part_ptr, count_ptr, abort_ptr, loss_part_ptr, ticket_ptr, loss_ptr,
                    M, V, CHUNK, ignore_index,
                    K: tl.constexpr, BLOCK: tl.constexpr, ONE_EXP: tl.constexpr, SOLO: tl.constexpr,
                    PHASE: tl.constexpr, LIMIT: tl.constexpr, BLOCK_M: tl.constexpr):
    """Program pid takes chunk c = pid % K (columns c·CHUNK .. c·CHUNK + CHUNK, BLOCK >= CHUNK lanes)
    of rows g, g + G, g + 2G, ... (g = pid // K, G = programs // K): the K programs of a row are
    neighbours in the grid and walk the same rows, so they meet at each row's counter together.

    PHASE 0 is the real kernel. The interpreter runs programs one after another, so a wait for a
    partner would never end there: the CPU check launches PHASE 1 (partials and arrivals only), then
    PHASE 2 (waits that find the counter full, the combine, the gradient) with the same grid."""
    pid = tl.program_id(0)
    c = pid % K
    group = pid // K
    groups = tl.num_programs(0) // K
    lanes = tl.arange(0, BLOCK)
    cols = c * CHUNK + lanes
    inside = (lanes < CHUNK) & (cols < V)
    dloss = tl.load(dloss_ptr)
    if SOLO:  # count the rows that count here, in every program (no separate launch)
        n_int = 0
        for start in range(0, M, BLOCK_M):
            rows_m = start + tl.arange(0, BLOCK_M)
            t = tl.load(target_ptr + rows_m, mask=rows_m < M, other=ignore_index)
            n_int += tl.sum((t != ignore_index).to(tl.int32), axis=0)
        n = n_int.to(tl.float32)
    else:
        n = tl.load(n_valid_ptr)
    loss_acc = 0.0
    for row in range(group, M, groups):
        base = tl.cast(row, tl.int64) * V
        target = tl.load(target_ptr + row)
        valid = target != ignore_index
        # the one read: evict_first, nothing here is read again
        x = tl.load(logits_ptr + base + cols, mask=inside, other=-float("inf"), eviction_policy="evict_first")
        m = tl.max(x, axis=0).to(tl.float32)  # exact in bf16
        # a chunk with no column (tiny V) has m = -inf: exp(x - 0) = 0 keeps its sum 0, not NaN
        m_safe = tl.where(m == -float("inf"), 0.0, m)
        if ONE_EXP:
            e = tl.exp(x.to(tl.float32) - m_safe)
            s = tl.sum(e, axis=0)
        else:
            s = tl.sum(tl.exp(x.to(tl.float32) - m_safe), axis=0)
        if K > 1:
            seen = 0
            if PHASE != 2:
                tl.store(part_ptr + (row * K + c) * 2, m)
                tl.store(part_ptr + (row * K + c) * 2 + 1, s)
                seen = arrive(count_ptr + row)
            ok = True
            if PHASE != 1:
                if PHASE == 2:
                    seen = tl.atomic_add(count_ptr + row, 0, sem="acquire")
                ok = wait(count_ptr + row, abort_ptr, seen, K, LIMIT)
                # volatile: straight from L2; a line of partials cached in L1 for another row is stale
                ks = tl.arange(0, K)
                m_k = tl.load(part_ptr + (row * K + ks) * 2, volatile=True)
                s_k = tl.load(part_ptr + (row * K + ks) * 2 + 1, volatile=True)
                leave(count_ptr + row, K)
                m_row = tl.max(m_k, axis=0)
                # every program adds the same K numbers in the same order: the same lse everywhere
                lse = m_row + tl.log(tl.sum(s_k * tl.exp(m_k - m_row), axis=0))
                lse = tl.where(ok, lse, float("nan"))
        else:
            lse = m + tl.log(s)
        if PHASE != 1:
            scale = tl.where(valid, dloss / n, 0.0)
            if ONE_EXP:
                p = e * tl.exp(m_safe - lse)
            else:
                p = tl.exp(x.to(tl.float32) - lse)
            # the one-hot subtracted in fp32, rounded once at the store (see the reference)
            grad = tl.where(cols == target, p - 1.0, p) * scale
            tl.store(dlogits_ptr + base + cols, grad, mask=inside, eviction_policy="evict_first")
            # the loss: the chunk-0 program of the row
            x_t = tl.load(logits_ptr + base + target, mask=valid & (c == 0)).to(tl.float32)
            share = tl.where(valid & (c == 0), lse - x_t, 0.0)
            if SOLO:
                loss_acc += share
            else:
                tl.store(loss_rows_ptr + row, share / n, mask=c == 0)
    if SOLO and PHASE != 1:
        # the program that finishes last adds the P partials in program order: deterministic
        tl.store(loss_part_ptr + pid, loss_acc / n)
        ticket = tl.atomic_add(ticket_ptr, 1, sem="acq_rel")
        P = tl.num_programs(0)
        if ticket == P - 1:
            total = 0.0
            for start in range(0, P, BLOCK_M):
                i = start + tl.arange(0, BLOCK_M)
                total += tl.sum(tl.load(loss_part_ptr + i, mask=i < P, other=0.0, volatile=True), axis=0)
            tl.store(loss_ptr, total)
            tl.atomic_xchg(ticket_ptr, 0)




def chunk_of(V: int, K: int) -> tuple[int, int]:
    """CHUNK columns a program (a multiple of 64: every chunk starts 128-byte aligned) and BLOCK lanes."""
    chunk = -(-(-(-V // K)) // 64) * 64
    return chunk, triton.next_power_of_2(chunk)


def launch_split(logits, target, dloss, K=1, warps=16, per_sm=1, ONE_EXP=True, SOLO=False, maxnreg=None,
                 info=None):
    """C (K = 1) and D (K > 1). P: per_sm programs per SM, never more than fit at once (read from the
    compiled kernel), a multiple of K. `info`, a dict, receives the compiled kernel's numbers and P."""
    M, V = logits.shape
    CHUNK, BLOCK = chunk_of(V, K)
    dlogits = _empty_out(logits)
    dev = logits.device
    f32 = dict(device=dev, dtype=torch.float32)
    counts, abort, ticket = buffers(dev, M)
    part = torch.empty(M * K * 2 if K > 1 else 1, **f32)
    loss = torch.empty(1, **f32)
    if SOLO:
        n_valid, loss_rows = loss, loss  # unused
    else:
        n_valid, loss_rows = _count_and_buffers(logits, target)
    # maxnreg: a cap on registers a thread (ptxas spills past it), for more programs an SM
    launch_opts = dict(num_warps=warps, num_stages=1, **({} if maxnreg is None or interpreting() else dict(maxnreg=maxnreg)))
    consts = dict(K=K, BLOCK=BLOCK, ONE_EXP=ONE_EXP, SOLO=SOLO, LIMIT=LIMIT,
                  BLOCK_M=min(8192, triton.next_power_of_2(M)))  # one load of the targets at M <= 8192
    if interpreting():
        P = K * min(3, M)  # a few groups, each walking several rows
    else:
        args = (logits, target, dloss, n_valid, loss_rows, dlogits, part, counts, abort, loss, ticket, loss,
                M, V, CHUNK, IGNORE)
        got = compiled_fit(ce_split_kernel, (K, BLOCK, ONE_EXP, SOLO, warps, maxnreg, V % 16 == 0), args,
                           dict(PHASE=0, **launch_opts, **consts))
        fit = got["fit_per_sm"]
        P = min(per_sm, fit) * sm_count(logits) // K * K
        P = min(P, -(-M // 1) * K)
        if info is not None:
            info.update(got, P=P, per_sm_used=min(per_sm, fit))
        if P == 0:
            raise RuntimeError(f"not one group of {K} programs fits: {got}")
    loss_part = torch.empty(P, **f32)
    args = (logits, target, dloss, n_valid, loss_rows, dlogits, part, counts, abort, loss_part, ticket, loss,
            M, V, CHUNK, IGNORE)
    phases = (1, 2) if (interpreting() and K > 1) else (0,)
    for phase in phases:
        ce_split_kernel[(P,)](*args, PHASE=phase, **launch_opts, **consts)
    if not SOLO:
        loss = loss_rows.sum().reshape(1)
    return loss, dlogits


# -- the designs, as explore.py walks them -------------------------------------------------------------
def designs(V: int, cpu: bool = False):
    """(design, params) for one vocabulary width, the most telling first (a run cut short by its
    budget keeps those). cpu: a few small ones that exercise every code path."""
    if cpu:
        return [("A ref", {}), ("B ref", dict(BLOCK_V=32, per_sm=2, warps=4)), ("E ref", {}),
                ("C one-read", dict(K=1, warps=4)), ("C one-read", dict(K=1, warps=4, ONE_EXP=False)),
                ("C one-read", dict(K=1, warps=4, SOLO=True)),
                ("D split", dict(K=2, warps=4)), ("D split", dict(K=4, warps=4, SOLO=True)),
                ("D split", dict(K=4, warps=4, ONE_EXP=False))]
    out = [("A ref", {})]
    # occupancy from compile_check.py (sm_90): at 16 warps a 32768-lane block takes 128 registers a
    # thread, one program an SM; maxnreg caps the registers so that two (or four) fit
    if V <= 32768:  # the row fits one block of 32768 lanes
        for p in (dict(warps=32), dict(warps=16), dict(warps=32, ONE_EXP=False), dict(warps=16, SOLO=True),
                  dict(warps=16, per_sm=2, ONE_EXP=False, maxnreg=64)):
            out.append(("C one-read", {"K": 1, "per_sm": 1, **p}))
        for p in (dict(K=2, warps=16, per_sm=2, maxnreg=64), dict(K=2, warps=8, per_sm=2, maxnreg=128),
                  dict(K=4, warps=8, per_sm=4, maxnreg=64), dict(K=4, warps=16, per_sm=3),
                  dict(K=2, warps=16, per_sm=1), dict(K=2, warps=16, per_sm=2, maxnreg=64, SOLO=True)):
            out.append(("D split", p))
    else:
        for p in (dict(K=4, warps=32, per_sm=1), dict(K=4, warps=16, per_sm=1), dict(K=8, warps=16, per_sm=1),
                  dict(K=8, warps=16, per_sm=2, maxnreg=64), dict(K=8, warps=8, per_sm=2, maxnreg=128),
                  dict(K=16, warps=8, per_sm=4), dict(K=16, warps=8, per_sm=2), dict(K=16, warps=4, per_sm=4, maxnreg=128),
                  dict(K=2, warps=32, per_sm=1), dict(K=8, warps=16, per_sm=2, maxnreg=64, ONE_EXP=False),
                  dict(K=8, warps=16, per_sm=2, maxnreg=64, SOLO=True), dict(K=16, warps=8, per_sm=4, SOLO=True)):
            out.append(("D split", p))
    # B: the reference kernel's launch, pruned: around the checker's choices
    for BLOCK_V, warps, per_sm in ((16384, 16, 2), (16384, 16, 3), (16384, 16, 6), (16384, 16, 8),
                                   (32768, 32, 1), (32768, 32, 3), (32768, 16, 2),
                                   (8192, 8, 4), (8192, 8, 6), (8192, 8, 8), (16384, 8, 4), (16384, 8, 8)):
        out.append(("B ref", dict(BLOCK_V=BLOCK_V, warps=warps, per_sm=per_sm)))
    # E: the reference's launch and a few of B's with V a compile-time constant
    out += [("E ref", {})] + [("E ref", dict(BLOCK_V=b, warps=w, per_sm=p))
                              for b, w, p in ((16384, 16, 2), (16384, 16, 8), (32768, 32, 3), (8192, 8, 8))]
    return out


def launch_const(logits, target, dloss, **params):
    """E: launch_ref's launch of the reference kernel with V a compile-time constant (a kernel per
    vocabulary: the block loop's bounds and all masks but the last block's known to the compiler)."""
    module = with_constant_width("p27", "M, V, stride, ignore_index, BLOCK_V: tl.constexpr",
                                 "M, stride, ignore_index, V: tl.constexpr, BLOCK_V: tl.constexpr")
    return launch_ref(logits, target, dloss, kernel=module.ce_fwd_bwd_kernel, **params)


def launch(design: str, logits, target, dloss, **params):
    if design.startswith("E"):
        return launch_const(logits, target, dloss, **params)
    if design.endswith("ref"):
        return launch_ref(logits, target, dloss, **params)
    return launch_split(logits, target, dloss, **params)


def reference(logits, target, dloss):
    """fp32 math, PyTorch autograd: F.cross_entropy(ignore_index=-100, mean) and its gradient."""
    import torch.nn.functional as F
    x = logits.detach().float().requires_grad_()
    loss = F.cross_entropy(x, target.long(), ignore_index=IGNORE)
    (g,) = torch.autograd.grad(loss, x, dloss.reshape(()).float())
    return loss.detach().reshape(1), g
