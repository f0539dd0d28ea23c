"""Puzzle 17 reference kernel: the histogram of integer data, hist[b] = #{i : x[i] == b}.

    x:    [N] int32, contiguous, every value in [0, B)
    hist: [B] int32, contiguous, zeros before the launch (the checker zeroes it)

One program per block of BLOCK elements; every element adds 1 to its bin:

    histogram_kernel[(triton.cdiv(N, BLOCK),)](x, hist, N, BLOCK=BLOCK)

Which bin an element lands in depends on the data, so many elements -- in one block and in
different blocks -- can add into the same bin. That is what makes this puzzle different from
the earlier ones, where each output element had exactly one writer.
"""
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, N, BLOCK: tl.constexpr):
    """hist[x[i]] += 1 for each i in this program's block. Grid: (cdiv(N, BLOCK),)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N  # the last block sticks out past N when BLOCK does not divide it
    bins = tl.load(x_ptr + offsets, mask=mask)  # data in [0, B): bins are valid offsets into hist
    # The output addresses are data: two lanes of this block, or two programs, may hold the same
    # bin. A plain load + add + store would let them all read the same old count and write back
    # count + 1: every hit but one is lost (on a GPU; the checker's interpreter reports the race).
    # tl.atomic_add makes each read-add-write indivisible, so every hit is counted. Integers add
    # exactly, so unlike a float sum the total does not even depend on the order of the adds.
    # The mask matters here too: a masked-off lane's bin is whatever the load left in it, and
    # adding 1 there would count an element that does not exist.
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)
