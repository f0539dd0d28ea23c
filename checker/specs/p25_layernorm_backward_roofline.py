"""Puzzle 25: the LayerNorm backward at the memory roofline (persistent grid, partial rows, --bench)."""
from typing import NamedTuple

from checker.puzzle import (HELION_NOTE, bench, case, cdiv, helion_column, helion_example, out, part, persistent,
                            puzzle, randn, scratch)
from checker.specs.families.layernorm import EPS, centring_cost, layernorm


class Tuned(NamedTuple):
    """A launch measured best for one width and dtype on an H100 (M = 4096, the bench's sizes): a sweep of
    warps (4-32) x programs per SM (1-4) x rows per step (16-64 KB of x and dz a step) x pipeline stages."""
    rows: int
    warps: int
    per_sm: int
    stages: int


TUNED = {("float32", 1024): Tuned(8, 4, 1, 3), ("float32", 4096): Tuned(1, 8, 1, 3),
         ("float32", 5120): Tuned(1, 8, 1, 3), ("float32", 5632): Tuned(1, 8, 1, 3),
         ("float32", 8192): Tuned(1, 8, 1, 3), ("float32", 8462): Tuned(1, 8, 1, 1),
         ("float32", 16384): Tuned(1, 16, 1, 2),  # 0.504 ms against 8 warps' 0.554 (2026-11-27, one run)
         ("bfloat16", 1024): Tuned(8, 4, 1, 3), ("bfloat16", 4096): Tuned(2, 8, 1, 3),
         ("bfloat16", 5120): Tuned(1, 4, 2, 3), ("bfloat16", 5632): Tuned(2, 8, 1, 3),
         ("bfloat16", 8192): Tuned(1, 8, 1, 3), ("bfloat16", 8462): Tuned(1, 8, 1, 1),
         ("bfloat16", 16384): Tuned(1, 8, 1, 1)}


def tuned(x, H: int) -> Tuned | None:
    return TUNED.get((str(x.dtype).removeprefix("torch."), H)) if x.is_cuda else None


def programs(x, M, H, ROWS, PROGRAMS) -> int:
    """The persistent grid: one program per SM on a GPU (two where the sweep found it better), 3 in the
    interpreter, or the case's PROGRAMS; never more than the row blocks."""
    found = tuned(x, H)
    return persistent(x, cdiv(M, ROWS), found.per_sm if found else 1, PROGRAMS)


def stages(x, H, BLOCK_H, TAIL, ROWS) -> int:
    """Copies of a step's loads in flight: 3, or 1 (no pipelining) where three copies of x's and dz's
    step would not fit in shared memory (16384 fp32 lanes: 262 KB asked, 227 KB on an H100) or where
    rows are not 16-byte aligned (8462: the compiler then has no asynchronous copies to pipeline with)."""
    found = tuned(x, H)
    if found:
        return found.stages
    return 1 if ROWS * (BLOCK_H + TAIL) * x.element_size() >= 65536 else 3


def warps(x, H, BLOCK_H, TAIL, ROWS) -> int:
    """Warps per program: the sweep's choice for the bench's widths; elsewhere 4 up to 5120 lanes a
    step, 8 above."""
    found = tuned(x, H)
    if found:
        return found.warps
    return 4 if ROWS * (BLOCK_H + TAIL) <= 5120 else 8


def launch(k, x, gamma, dz, dx, dgamma, dbeta, M, H, ROWS, BLOCK_H, TAIL, BLOCK_P, BLOCK_COLS, PROGRAMS):
    import torch
    p = programs(x, M, H, ROWS, PROGRAMS)
    # every row gets written: poisoned (NaN) until then, so that a kernel adding into them fails
    dgamma_part = scratch((p, H), dtype=torch.float32, like=x)
    dbeta_part = scratch((p, H), dtype=torch.float32, like=x)
    k.ln_bwd_roofline_kernel[(p,)](x, gamma, dz, dx, dgamma_part, dbeta_part, M, H, EPS, ROWS=ROWS,
                                   BLOCK_H=BLOCK_H, TAIL=TAIL, STAGES=stages(x, H, BLOCK_H, TAIL, ROWS),
                                   num_warps=warps(x, H, BLOCK_H, TAIL, ROWS))
    k.ln_bwd_partials_reduce_kernel[(cdiv(H, BLOCK_COLS),)](dgamma_part, dbeta_part, dgamma, dbeta, p, H,
                                                            BLOCK_P=BLOCK_P, BLOCK_COLS=BLOCK_COLS)


def torch_backward(x, gamma, beta, dz, wrap):
    """PyTorch's LayerNorm backward alone: the forward (through `wrap`: torch.compile compiles it and
    its backward graph) run once, its backward timed."""
    import torch
    import torch.nn.functional as F
    leaves = [t.detach().requires_grad_() for t in (x, gamma, beta)]
    z = wrap(lambda x, g, b: F.layer_norm(x, (x.shape[-1],), g, b, EPS))(*leaves)
    return lambda: torch.autograd.grad(z, leaves, dz, retain_graph=True)


def liger_backward(x, gamma, beta, dz):
    """Liger-Kernel's LayerNorm backward: its forward run once, its backward timed."""
    import torch
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction
    leaves = [t.detach().requires_grad_() for t in (x, gamma, beta)]
    z = LigerLayerNormFunction.apply(leaves[0], leaves[1], leaves[2], EPS)
    return lambda: torch.autograd.grad(z, leaves, dz, retain_graph=True)


@helion_column
def helion_backward(x, gamma, beta, dz):
    """Helion's published LayerNorm backward (examples/layer_norm.py's layer_norm_bwd): dx, dγ, dβ from
    dz, x and the row statistics. The example takes the mean and rstd its forward saved; they are
    computed here, outside the timed work (2 floats a row: the same bytes within 0.1 %, and two row
    reductions fewer than a kernel that recomputes them, as the puzzle's does)."""
    module = helion_example("layer_norm")
    if module is None:
        return None
    import torch
    x32 = x.float()
    mean, rstd = x32.mean(1), torch.rsqrt(x32.var(1, unbiased=False) + EPS)
    return lambda: module.layer_norm_bwd(dz, x, mean, rstd, gamma)


def head(H: int) -> int:
    """The row's head: the largest power of two <= H (its columns need no mask)."""
    return 1 << (H.bit_length() - 1)


def tail(H: int) -> int:
    """The tail block: 0 for a power of two, else the next power of two >= H - head(H). 8462 =
    8192 + a tail of 512 (270 used): 8704 lanes, against 16384 for one block of the next power of
    two, whose registers spill while H is an argument (measured on an H100: 928 GB/s in one block,
    2141 head + tail). Compiled with H a constant, the padded block spills little and is faster still
    (research/memory_bound, design E), but a block wider than H breaks the unmasked head."""
    rest = H - head(H)
    return 0 if rest == 0 else 1 << (rest - 1).bit_length()


def rows_for(BLOCK_H):
    """Rows per step where the sweep did not choose (the tests' widths): a power of two, so that a step
    holds about 4096 elements (1 for wide rows). The bench's widths take TUNED's rows."""
    return max(1, 4096 // BLOCK_H)


# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   dbeta: correct <= 1.34e-05 (reduce_one_partial_row_at_a_time, bfloat16 M=4096, H=4096: H wider than BLOCK_COLS (32))
#   dgamma: correct <= 5.68e-05 (reduce_one_partial_row_at_a_time, bfloat16 M=300, H=5120: M not a power of two, H not a power of two, H wider than BLOCK_COLS (32))
#   dx: correct <= 0.208 (solution, bfloat16 M=4096, H=4096: H wider than BLOCK_COLS (32))
#   dgamma_partials_through_bf16: 0.372 (dgamma, bfloat16 M=300, H=5120: M not a power of two, H not a power of two, H wider than BLOCK_COLS (32))
PUZZLE = puzzle(
    25, "layernorm_backward_roofline", "LayerNorm backward at the roofline",
    skill="a persistent grid, several rows per step, no atomics on the hot path: memory-bound at full speed",
    chapter="Fast and deterministic",
    inputs={"x": randn("M H"), "gamma": randn("H", mean=1.0, std=0.5), "beta": randn("H", std=0.5),
            "dz": randn("like z")},
    reference=layernorm,
    parts=[part("backward", "LayerNorm backward, fast", ["ln_bwd_roofline_kernel", "ln_bwd_partials_reduce_kernel"],
                outputs=["dx", out("dgamma", dtype="float32"), out("dbeta", dtype="float32")],
                grads={"dx": "x", "dgamma": "gamma", "dbeta": "beta"}, upstream={"z": "dz"}, launch=launch)],
    params={"BLOCK_H": head, "TAIL": tail, "ROWS": lambda H: rows_for(head(H)), "BLOCK_P": 32, "BLOCK_COLS": 32,
            "PROGRAMS": None},
    blocks={"H": "BLOCK_COLS"},
    condition=centring_cost,  # rows near 1000 lose digits to centring in fp32, whatever the kernel
    cases=[case(M=8, H=16, ROWS=2, documented=True),
           # 10 row blocks by 3 programs (the interpreter's), then by 2 and by 5: a kernel must read how many
           case(M=37, H=100, ROWS=4, launches={"PROGRAMS": (2, 5)}),
           case(M=1, H=48),
           case("M=8, H=24: one partly filled block", M=8, H=24), case("M=8, H=64: two whole blocks", M=8, H=64),
           case(M=64, H=40, ROWS=1),
           case(M=21, H=200, ROWS=2, BLOCK_P=2),
           case("mean near 1000 (1000 + randn)", M=12, H=72, ROWS=2, tags=("cancellation",),
                inputs={"x": randn("M H", mean=1000.0)}),
           case(M=4096, H=1024, gpu_only=True),
           case(M=1000, H=5632, gpu_only=True),
           case(M=512, H=8462, gpu_only=True),
           case(M=8, H=40, ROWS=2, dtype="bfloat16", gpu_only=False),
           case(M=4096, H=4096, dtype="bfloat16"),
           case(M=300, H=5120, dtype="bfloat16")],
    # the partial rows reduced in one step of 256 (P <= 264 on an H100) over 16 columns a program:
    # measured best for P = 132 at every width
    bench=bench("backward", [case(M=4096, H=h, dtype=d, ROWS=TUNED[(d, h)].rows, BLOCK_P=256, BLOCK_COLS=16)
                             for d in ("float32", "bfloat16") for h in (1024, 4096, 5120, 5632, 8192, 8462, 16384)],
                traffic=lambda x, M, H: 3 * M * H * x.element_size(),
                torch=torch_backward, liger=liger_backward,
                extra={"helion": helion_backward}, notes=(HELION_NOTE,)),
)
