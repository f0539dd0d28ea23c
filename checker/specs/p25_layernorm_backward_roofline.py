"""Puzzle 25: the LayerNorm backward at the memory roofline (persistent grid, partial rows, --bench)."""
from checker.declare import bench, case, out, part, puzzle, randn, scratch, sm_count
from checker.specs.p23_deterministic_layernorm_backward import centring_cost

EPS = 1e-5


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def layernorm(x, gamma, beta):
    import torch.nn.functional as F
    return {"z": F.layer_norm(x, (x.shape[-1],), gamma, beta, EPS)}


def programs(x, M, ROWS, BLOCK_H) -> int:
    """The persistent grid: one program per SM on a GPU, 4 on the CPU. Measured on an H100: with the
    row loop pipelined one program per SM keeps the memory system busy (two gained nothing and add
    partial rows to reduce)."""
    if not x.is_cuda:
        return min(triton_cdiv(M, ROWS), 4)
    return min(triton_cdiv(M, ROWS), sm_count(x))


def stages(x, BLOCK_H, ROWS) -> int:
    """Copies of a step's loads in flight: 3, or 1 (no pipelining) where three copies of x's and
    dz's step would not fit in shared memory (16384 fp32 lanes: 262 KB asked, 227 KB on an H100)."""
    return 1 if ROWS * BLOCK_H * x.element_size() >= 65536 else 3


def warps(x, BLOCK_H, TAIL, ROWS) -> int:
    """Warps per program, from a sweep on an H100 (M = 4096, pipelined): 4 up to 5120 lanes a step,
    8 above, 32 for 16384 fp32 lanes, which run unpipelined (fewer registers spill)."""
    lanes = ROWS * (BLOCK_H + TAIL)
    if lanes <= 5120:
        return 4
    return 32 if stages(x, BLOCK_H, ROWS) == 1 else 8


def launch(k, x, gamma, dz, dx, dgamma, dbeta, M, H, ROWS, BLOCK_H, TAIL, BLOCK_P, BLOCK_COLS):
    import torch
    p = programs(x, M, ROWS, BLOCK_H)
    # every row gets written: poisoned (NaN) until then, so that a kernel adding into them fails
    dgamma_part = scratch((p, H), dtype=torch.float32, like=x)
    dbeta_part = scratch((p, H), dtype=torch.float32, like=x)
    k.ln_bwd_roofline_kernel[(p,)](x, gamma, dz, dx, dgamma_part, dbeta_part, M, H, EPS, ROWS=ROWS,
                                   BLOCK_H=BLOCK_H, TAIL=TAIL, STAGES=stages(x, BLOCK_H, ROWS),
                                   num_warps=warps(x, BLOCK_H, TAIL, ROWS))
    k.ln_bwd_partials_reduce_kernel[(triton_cdiv(H, BLOCK_COLS),)](dgamma_part, dbeta_part, dgamma, dbeta, p, H,
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


def head(H: int) -> int:
    """The row's head: the largest power of two <= H (its columns need no mask)."""
    return 1 << (H.bit_length() - 1)


def tail(H: int) -> int:
    """The tail block: 0 for a power of two, else the next power of two >= H - head(H). 8462 =
    8192 + a tail of 512 (270 used): 8704 lanes, against 16384 for one block of the next power of
    two, whose registers spill (measured on an H100: 928 GB/s in one block, 2141 head + tail)."""
    rest = H - head(H)
    return 0 if rest == 0 else 1 << (rest - 1).bit_length()


def rows_for(BLOCK_H):
    """Rows per step: a power of two, so that a step holds about 4096 elements (1 for wide rows)."""
    return max(1, 4096 // BLOCK_H)  # measured best on an H100: 4 rows of 1024, 1 row from 4096 on


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
    params={"BLOCK_H": head, "TAIL": tail, "ROWS": lambda H: rows_for(head(H)), "BLOCK_P": 32, "BLOCK_COLS": 32},
    blocks={"H": "BLOCK_COLS"},
    condition=centring_cost,  # rows near 1000 lose digits to centring in fp32, whatever the kernel
    cases=[case(M=8, H=16, ROWS=2, documented=True),
           case(M=37, H=100, ROWS=4),
           case(M=1, H=48),
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
    bench=bench("backward", [case(M=4096, H=h, dtype=d) for d in ("float32", "bfloat16")
                             for h in (1024, 4096, 5120, 5632, 8192, 8462, 16384)],
                traffic=lambda x, M, H: 3 * M * H * x.element_size(),
                torch=torch_backward, liger=liger_backward),
)
