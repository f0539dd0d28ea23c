"""Puzzle 29: rotary position embedding (RoPE) on q and k, forward and backward (the rotation's transpose)."""
import functools

from checker.puzzle import (HELION_NOTE, bench, case, custom, helion_column, helion_example, part, puzzle, randint,
                            randn, variant)

BASE = 10000.0


def next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def shifted_rows(gen, dims, sizes):
    """Each batch row's positions run on from its own start in [0, T]: rows of a packed or
    left-padded batch, so position t of one row is not position t of another."""
    import torch
    B, T = dims
    return torch.randint(0, T + 1, (B, 1), generator=gen, dtype=torch.int64) + torch.arange(T)


def angles(pos, D: int, base: float = BASE):
    """[..., D/2] float64: pos * theta_i, theta_i = base ** (-2i / D)."""
    import torch
    theta = base ** (-torch.arange(0, D // 2, dtype=torch.float64) * 2 / D)
    return pos.double()[..., None] * theta


@functools.lru_cache(maxsize=8)
def rope_table(P: int, D: int, base: float, device: str):
    """cos and sin [P, D/2] in float32, computed in float64 and rounded once. A model builds this
    once and every layer reads it; in float32, pos * theta would be off by up to pos * 2**-24
    radians (cos off by 2.4e-5 at position 4096 with D = 128: more than an fp32 output may be)."""
    import torch
    ang = angles(torch.arange(P), D, base)
    return ang.cos().float().to(device), ang.sin().float().to(device)


def turn(x, pos, D, sign=1.0, interleaved=False):
    """x [B, T, H, D] with each pair turned by sign * pos * theta_i (half-split pairs, or interleaved)."""
    import torch
    ang = angles(pos, D)[:, :, None, :]
    cos, sin = ang.cos(), sign * ang.sin()
    if interleaved:  # pairs (x[2i], x[2i + 1]): the GPT-J / original paper's layout
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).flatten(-2)
    x1, x2 = x[..., :D // 2], x[..., D // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


def rope(q, k, pos, D):
    return {"q_out": turn(q, pos, D), "k_out": turn(k, pos, D)}


def by_matrix(q, pos, dq_out, D, **_):
    """dq = R(θ)ᵀ dq_out with each token's D x D rotation matrix built in full."""
    import torch
    ang = angles(pos, D)
    h = D // 2
    R = torch.zeros(*pos.shape, D, D, dtype=torch.float64)
    idx = torch.arange(h)
    R[..., idx, idx] = ang.cos()
    R[..., idx + h, idx + h] = ang.cos()
    R[..., idx, idx + h] = -ang.sin()
    R[..., idx + h, idx] = ang.sin()
    return torch.einsum("btji,bthj->bthi", R, dq_out)  # Rᵀ: sum over the rows j of R


def tables(T, D, x):
    return rope_table(2 * T, D, BASE, str(x.device))  # positions stay below 2T (shifted_rows)


def forward(kernels, q, k, pos, q_out, k_out, B, T, HQ, HK, D, BLOCK_H, BLOCK_HALF, NUM_WARPS):
    cos, sin = tables(T, D, q)
    kernels.rope_fwd_kernel[(B * T,)](q, k, pos, cos, sin, q_out, k_out, HQ, HK, D,
                                      BLOCK_H=BLOCK_H, BLOCK_HALF=BLOCK_HALF, num_warps=NUM_WARPS)


def backward(kernels, dq_out, dk_out, pos, dq, dk, B, T, HQ, HK, D, BLOCK_H, BLOCK_HALF, NUM_WARPS):
    cos, sin = tables(T, D, dq_out)
    kernels.rope_bwd_kernel[(B * T,)](dq_out, dk_out, pos, cos, sin, dq, dk, HQ, HK, D,
                                      BLOCK_H=BLOCK_H, BLOCK_HALF=BLOCK_HALF, num_warps=NUM_WARPS)


def known(forward_sign=1.0, backward_sign=-1.0, interleaved=False, positions=None):
    """What a kernel with one known bug computes, every output: the forward turns by
    forward_sign * angle, the backward by backward_sign * angle (-1 is right: the transpose)."""
    def compute(q, k, pos, dq_out, dk_out, D):
        p = pos if positions is None else pos.reshape(-1)[:1].expand_as(pos)  # "first": token 0's
        return {"q_out": turn(q, p, D, forward_sign, interleaved), "k_out": turn(k, p, D, forward_sign, interleaved),
                "dq": turn(dq_out, p, D, backward_sign, interleaved),
                "dk": turn(dk_out, p, D, backward_sign, interleaved)}
    return compute


def torch_rope(q, k, pos, T, D, wrap):
    """The same forward in PyTorch: the tables gathered by position, the halves turned."""
    import torch
    cos, sin = tables(T, D, q)
    index = pos.long()  # made once, outside the timed work

    def rotate(q, k, index):
        c, s = cos[index][:, :, None, :], sin[index][:, :, None, :]
        h = D // 2
        out = []
        for x in (q, k):
            x1, x2 = x[..., :h].float(), x[..., h:].float()
            out.append(torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).to(x.dtype))
        return out
    f = wrap(rotate)
    return lambda: f(q, k, index)


def liger_rope(q, k, pos, T, D):
    """Liger-Kernel's RoPE: it takes [B, H, T, D] views of [B, T, H, D] storage (as here), cos and
    sin gathered per token ([B, T, D/2], non-duplicated, so rotary_dim = D), and turns q and k in place."""
    from liger_kernel.ops.rope import LigerRopeFunction
    cos, sin = tables(T, D, q)
    c, s = cos[pos.long()], sin[pos.long()]
    qt, kt = q.clone().transpose(1, 2), k.clone().transpose(1, 2)
    return lambda: LigerRopeFunction.apply(qt, kt, c, s, None, 1, D)


@helion_column
def helion_rope(q, k, pos, T, D):
    """Helion's published RoPE (examples/rope.py's rope_fwd): q and k turned by their tokens' angles,
    pairs (i, i + D/2), this puzzle's convention. The example takes q and k as [B, heads, T, D] and
    cos, sin per token, both halves, [B, T, D]; both are made before timing: the [B, T, heads, D]
    tensors transposed into contiguous copies, this puzzle's fp32 tables gathered by position. Reading
    those tables adds 2·B·T·D·4 bytes (5 % of the traffic at the benchmark's first size) that the
    puzzle's kernel does not move: it reads a table row per token, [T, D/2]."""
    module = helion_example("rope")
    if module is None:
        return None
    import torch
    cos, sin = tables(T, D, q)
    index = pos.long()
    cos_tokens = torch.cat([cos[index], cos[index]], -1)
    sin_tokens = torch.cat([sin[index], sin[index]], -1)
    q_heads, k_heads = q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous()
    return lambda: module.rope_fwd(q_heads, k_heads, cos_tokens, sin_tokens)


HINT_INTERLEAVED = ("matches the interleaved convention, pairs (x[2i], x[2i+1]): this puzzle pairs each half-split, "
                    "x[i] with x[i + D/2] (Llama's and Hugging Face's layout). Weights trained with one convention "
                    "give garbage with the other.")
PUZZLE = puzzle(
    29, "rope", "RoPE forward and backward",
    skill="a rotation of q and k by position, every head of a token from one row of cos/sin; its backward, "
          "the transpose",
    chapter="The rest of a training step",
    inputs={"q": randn("B T HQ D"), "k": randn("B T HK D"), "pos": custom("B T", shifted_rows, dtype="int32",
                                                                       note="positions"),
            "dq_out": randn("like q_out"), "dk_out": randn("like k_out")},
    reference=rope,
    parts=[part("forward", "q and k turned by their positions", ["rope_fwd_kernel"], outputs=["q_out", "k_out"],
                launch=forward),
           part("backward", "dq and dk: turned back", ["rope_bwd_kernel"], outputs=["dq", "dk"],
                grads={"dq": "q", "dk": "k"}, upstream={"q_out": "dq_out", "k_out": "dk_out"}, launch=backward)],
    params={"BLOCK_H": lambda HQ: min(next_pow2(HQ), 32), "BLOCK_HALF": lambda D: next_pow2(D // 2), "NUM_WARPS": 4},
    blocks={"HQ": "BLOCK_H", "HK": "BLOCK_H"},
    formulas={"eq-p29-forward": ("q_out", lambda q, pos, D: turn(q, pos, D)),
              "eq-p29-transpose": ("dq", by_matrix),
              "eq-p29-backward": ("dq", lambda dq_out, pos, D: turn(dq_out, pos, D, -1.0))},
    variants=[variant("interleaved", "formula", HINT_INTERLEAVED, known(interleaved=True)),
              variant("backward_turns_forward", "formula",
                      "dq and dk match the upstream gradient turned forward, by +angle: the backward is the "
                      "rotation's transpose, which turns back. Flip sin's sign: dx1 = g1·cos + g2·sin, "
                      "dx2 = g2·cos − g1·sin.", known(backward_sign=1.0)),
              variant("forward_turns_back", "formula",
                      "q_out and k_out match a turn by −angle: sin's sign is flipped. The forward is "
                      "out1 = x1·cos − x2·sin, out2 = x2·cos + x1·sin (x1: the head's first half).",
                      known(forward_sign=-1.0)),
              variant("first_position", "address",
                      "matches every token turned by the first token's position: each program loads its own, "
                      "pos_ptr + its token's index b·T + t.", known(positions="first"))],
    cases=[case(B=2, T=3, HQ=4, HK=2, D=16, documented=True),
           case("D=96: half 48 of a 64-lane block", B=1, T=4, HQ=2, HK=1, D=96),
           case("D=80, 3 query heads, 1 key head", B=2, T=2, HQ=3, HK=1, D=80),
           case("more heads than BLOCK_H (4)", B=1, T=3, HQ=6, HK=5, D=20, BLOCK_H=4),
           case("more key heads than query heads", B=2, T=2, HQ=2, HK=4, D=12, BLOCK_H=2),
           case("random positions, repeats allowed", B=3, T=4, HQ=2, HK=2, D=10,
                inputs={"pos": randint("B T", 0, "T")}),
           case("one token, D=2", B=1, T=1, HQ=1, HK=1, D=2),
           case(B=2, T=512, HQ=32, HK=8, D=128, gpu_only=True),
           case("D=80, 20 query heads, 4 key heads", B=4, T=300, HQ=20, HK=4, D=80, gpu_only=True),
           case("bf16: the documented sizes", B=2, T=3, HQ=4, HK=2, D=16, dtype="bfloat16", gpu_only=False),
           case(B=8, T=1024, HQ=32, HK=8, D=128, dtype="bfloat16"),
           case("bf16 D=96, 12 query heads, 4 key heads", B=2, T=700, HQ=12, HK=4, D=96, dtype="bfloat16")],
    # D = 128: 16 heads a step, 8 warps (the best of 16-64 heads x 4-16 warps on an H100; D = 96 keeps
    # 32 heads and 4 warps)
    bench=bench("forward", [case(B=8, T=4096, HQ=32, HK=8, D=128, BLOCK_H=16, NUM_WARPS=8, dtype="bfloat16"),
                            case(B=4, T=4096, HQ=32, HK=32, D=128, BLOCK_H=16, NUM_WARPS=8, dtype="bfloat16"),
                            case(B=8, T=2048, HQ=40, HK=8, D=96, dtype="bfloat16")],
                # q and k read once and written once; positions and the table rows are small next to them
                traffic=lambda q, k: 2 * (q.numel() + k.numel()) * q.element_size(),
                torch=torch_rope, liger=liger_rope,
                extra={"helion": helion_rope}, notes=(HELION_NOTE,)),
)
