"""Puzzle 18: Embedding forward (a gather) and backward (a scatter-add into dweight with atomics)."""
from checker.puzzle import EXACT, case, custom, full, out, part, puzzle, randint, randn, variant


def token_ids(hot=None, share=1.0, ends=False):
    """[T] ids in [0, V): the id `hot` takes a `share` of the tokens; ends: only ids 0 and V - 1."""
    def draw(gen, dims, sizes):
        import torch
        V = sizes["V"]  # ends: 0 or 1 times V - 1
        x = torch.randint(0, 2 if ends else V, dims, generator=gen) * (V - 1 if ends else 1)
        return x if hot is None else torch.where(torch.rand(dims, generator=gen) < share, hot, x)
    return custom("T", draw, dtype="int32", note="token ids")


def scatter_add(ids, dy, weight):  # eq-p18-dweight: dweight[v] = sum of dy[t] over the tokens with ids[t] == v
    return weight.new_zeros(weight.shape).index_add(0, ids, dy)


def token_as_row(weight, dy, T, V):  # the token's index t used as the row instead of ids[t]
    import torch
    rows = torch.arange(T).clamp(max=V - 1)
    return {"y": weight[rows], "dweight": scatter_add(rows, dy, weight)}


GRID = lambda T, D, BLOCK_D: (T, -(-D // BLOCK_D))  # noqa: E731

PUZZLE = puzzle(
    18, "embedding", "Embedding forward and backward",
    skill="a gather by data-dependent row, and its backward: a scatter-add of rows with tl.atomic_add",
    chapter="Atomics and parameter gradients",
    inputs={"ids": randint("T", 0, "V"), "weight": randn("V D"), "dy": randn("like y")},
    reference=lambda ids, weight: {"y": weight[ids]},
    parts=[part("forward", "Forward: gather rows", ["embedding_fwd_kernel"],
                outputs=[out("y", tolerance={"float32": EXACT, "bfloat16": EXACT})],  # a copy is exact
                launch=lambda k, ids, weight, y, T, D, BLOCK_D:
                k.embedding_fwd_kernel[GRID(T, D, BLOCK_D)](ids, weight, y, D, BLOCK_D=BLOCK_D)),
           part("backward", "Backward: scatter-add rows", ["embedding_bwd_kernel"],
                outputs=[out("dweight", accumulated=True, share_unit="token", shares=lambda ids, dy: (ids, dy))],
                grads={"dweight": "weight"}, upstream={"y": "dy"},
                launch=lambda k, ids, dy, dweight, T, D, BLOCK_D:
                k.embedding_bwd_kernel[GRID(T, D, BLOCK_D)](ids, dy, dweight, D, BLOCK_D=BLOCK_D))],
    params={"BLOCK_D": 16},
    formulas={"eq-p18-dweight": ("dweight", scatter_add)},
    variants=[variant("token_as_row", "address", "row t of the table belongs to token t here: the row is the token's id, "
                      "ids[t] (a value loaded from ids_ptr), not the token's position t.", token_as_row)],
    cases=[case(T=6, V=8, D=16, BLOCK_D=8, documented=True),
           case("one token; D=24 wider than its block (16)", T=1, V=5, D=24),
           case("D=5, narrower than its block (16)", T=12, V=7, D=5),
           case("D=100: four blocks of 32, the last one ragged", T=20, V=30, D=100, BLOCK_D=32),
           case("50 tokens, 10 ids: every id repeats", T=50, V=10, D=48),
           case("skewed: id 7 takes 80% of the tokens", T=64, V=40, D=24, inputs={"ids": token_ids(7, 0.8)}),
           case("every token has id 3", T=32, V=6, D=40, inputs={"ids": token_ids(3)}),
           case("a one-row table, dy = 1.3: equal shares", T=40, V=1, D=24, inputs={"dy": full("like y", 1.3)}),
           case("10 tokens, 64 ids: most rows of dweight stay 0", T=10, V=64, D=16),
           case("only ids 0 and V - 1: the table's first and last rows", T=24, V=20, D=36,
                inputs={"ids": token_ids(ends=True)}),
           # GPU only; the checker spreads the shares out densely ([T, V, D] in float64): keep T * V * D modest
           case("4096 tokens, 32 ids: heavy contention", T=4096, V=32, D=128, BLOCK_D=128, gpu_only=True),
           case("D=96: a half-full second block of 64", T=1024, V=200, D=96, BLOCK_D=64, gpu_only=True),
           case("bf16: the documented configuration", T=6, V=8, D=16, BLOCK_D=8, dtype="bfloat16", gpu_only=False),
           case("bf16: D=200, a ragged fourth block of 64", T=512, V=100, D=200, BLOCK_D=64, dtype="bfloat16")],
)
