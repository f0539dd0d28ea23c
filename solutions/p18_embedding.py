"""Puzzle 18 reference kernels: an embedding lookup (a gather) and its gradient (a scatter-add).

    ids:     [T]    int32, every id in [0, V)           (the tokens)
    weight:  [V, D] float32 or bfloat16, contiguous     (the table: one row per id)
    y:       [T, D] like weight                         y[t] = weight[ids[t]]
    dy:      [T, D] like y                              the upstream gradient
    dweight: [V, D] float32, zeros before the launch    dweight[v] = sum of dy[t] over the t with ids[t] == v

One program per (token, block of BLOCK_D columns), for both kernels:

    grid = (T, triton.cdiv(D, BLOCK_D))
    embedding_fwd_kernel[grid](ids, weight, y, D, BLOCK_D=BLOCK_D)
    embedding_bwd_kernel[grid](ids, dy, dweight, D, BLOCK_D=BLOCK_D)
"""
import triton
import triton.language as tl


@triton.jit
def embedding_fwd_kernel(ids_ptr, weight_ptr, y_ptr, D, BLOCK_D: tl.constexpr):
    """y[t, cols] = weight[ids[t], cols] for this program's token t and block of columns.

    Grid: (T, cdiv(D, BLOCK_D)).
    """
    t = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D  # the last column block sticks out past D when BLOCK_D does not divide it
    # One scalar load: the id says which row of the table this token reads. In int64 before it
    # is multiplied by the row length: a real table (V = 256k ids, D = 8192) has more than
    # 2**31 elements, and an int32 offset would wrap around to a row that is not ours.
    row = tl.load(ids_ptr + t).to(tl.int64)
    # Each (t, column block) of y has exactly one owner: a plain load and store, no atomics.
    # A gather copies; it does no arithmetic, so y is exact in any dtype.
    values = tl.load(weight_ptr + row * D + cols, mask=mask)
    tl.store(y_ptr + t * D + cols, values, mask=mask)


@triton.jit
def embedding_bwd_kernel(ids_ptr, dy_ptr, dweight_ptr, D, BLOCK_D: tl.constexpr):
    """dweight[ids[t], cols] += dy[t, cols] for this program's token t and block of columns.

    Grid: (T, cdiv(D, BLOCK_D)).
    """
    t = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D
    row = tl.load(ids_ptr + t).to(tl.int64)
    # The forward pass read row ids[t] once per token, so the gradient of that row is the sum of
    # the dy rows of every token with that id: the backward of a gather is a scatter-add. Which
    # tokens share an id is data (in text, "the" shows up many times per batch), so the programs
    # of different tokens can land on the same row of dweight at the same time. tl.atomic_add
    # makes each add indivisible; a plain store would keep one token's row, a load + add + store
    # would lose some. dweight is fp32 whatever dy's dtype: summing many bf16 rows in bf16 would
    # round every partial sum to 8 bits. Rows of ids no token uses receive nothing and stay 0.
    dy = tl.load(dy_ptr + t * D + cols, mask=mask).to(tl.float32)
    tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)
