"""Puzzle 25: the LayerNorm backward at the memory roofline (persistent grid, partial rows, --bench)."""
from checker.declare import bench, case, next_pow2, out, part, puzzle, randn

EPS = 1e-5


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def layernorm(x, gamma, beta):
    import torch.nn.functional as F
    return {"z": F.layer_norm(x, (x.shape[-1],), gamma, beta, EPS)}


def programs(x, M, ROWS) -> int:
    """The persistent grid: a few programs per SM on a GPU (each walks many rows), 4 on the CPU."""
    import torch
    if x.is_cuda:
        return min(triton_cdiv(M, ROWS), 4 * torch.cuda.get_device_properties(x.device).multi_processor_count)
    return min(triton_cdiv(M, ROWS), 4)


def warps(BLOCK_H, ROWS) -> int:
    """Enough threads that each holds at most ~16 elements of each row block in registers."""
    return max(1, min(16, ROWS * BLOCK_H // 512))


def launch(k, x, gamma, dz, dx, dgamma, dbeta, M, H, ROWS, BLOCK_H, BLOCK_P, BLOCK_COLS):
    import torch
    p = programs(x, M, ROWS)
    dgamma_part = torch.empty(p, H, dtype=torch.float32, device=x.device)  # every row gets written
    dbeta_part = torch.empty_like(dgamma_part)
    k.ln_bwd_roofline_kernel[(p,)](x, gamma, dz, dx, dgamma_part, dbeta_part, M, H, EPS, ROWS=ROWS,
                                   BLOCK_H=BLOCK_H, num_warps=warps(BLOCK_H, ROWS))
    k.ln_bwd_partials_reduce_kernel[(triton_cdiv(H, BLOCK_COLS),)](dgamma_part, dbeta_part, dgamma, dbeta, p, H,
                                                                   BLOCK_P=BLOCK_P, BLOCK_COLS=BLOCK_COLS)


def torch_backward(x, gamma, beta, dz):
    """PyTorch's LayerNorm backward alone: the forward graph built once, backward timed."""
    import torch
    import torch.nn.functional as F
    leaves = [t.detach().requires_grad_() for t in (x, gamma, beta)]
    z = F.layer_norm(leaves[0], (x.shape[-1],), leaves[1], leaves[2], EPS)
    return lambda: torch.autograd.grad(z, leaves, dz, retain_graph=True)


def rows_for(BLOCK_H):
    """Rows per step: a power of two, so that a step holds about 4096 elements (1 for wide rows)."""
    return max(1, 4096 // BLOCK_H)


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
    params={"BLOCK_H": next_pow2("H"), "ROWS": lambda H: rows_for(next_pow2("H")(H=H)), "BLOCK_P": 16, "BLOCK_COLS": 64},
    blocks={"H": "BLOCK_COLS"},
    cases=[case(M=8, H=16, ROWS=2, documented=True),
           case(M=37, H=100, ROWS=4),
           case(M=1, H=48),
           case(M=64, H=40, ROWS=1),
           case(M=21, H=200, ROWS=2, BLOCK_P=2),
           case(M=4096, H=1024, gpu_only=True),
           case(M=1000, H=5632, gpu_only=True),
           case(M=512, H=8462, gpu_only=True),
           case(M=4096, H=4096, dtype="bfloat16"),
           case(M=300, H=5120, dtype="bfloat16")],
    bench=bench("backward", [case(M=4096, H=h, dtype=d) for d in ("float32", "bfloat16")
                             for h in (1024, 4096, 5120, 5632, 8192, 8462, 16384)],
                traffic=lambda x, M, H: 3 * M * H * x.element_size(),
                torch=torch_backward),
)
