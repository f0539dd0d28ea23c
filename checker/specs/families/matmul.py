"""What the matmul puzzles' known bugs compute (p13's matrix–vector product, p14's tiled matmul),
written once: the product over the last K step alone (an accumulator reset inside the K loop) and
a matrix read with the wrong row stride. torch is imported inside the functions: a spec that
imports this module still loads without it."""
from __future__ import annotations


def last_k_step(a, b, K: int, BLOCK_K: int):
    """a @ b over the last K step alone, what a kernel that resets its accumulator inside the loop
    over K keeps; None where two K steps make that also what a loop that skips the first gives."""
    start = (K - 1) // BLOCK_K * BLOCK_K
    if start == BLOCK_K:
        return None
    return a[:, start:] @ b[start:]


def read_with_row_stride(t, rows: int, cols: int, stride: int):
    """t as a kernel reads it whose rows are `stride` elements apart (t[r, c] at r * stride + c of
    the flat buffer); NaN, which matches nothing, past t's end."""
    import torch
    flat = torch.cat([t.flatten(), t.new_full((rows * stride + cols,), float("nan"))])
    return flat[torch.arange(rows)[:, None] * stride + torch.arange(cols)[None, :]]
