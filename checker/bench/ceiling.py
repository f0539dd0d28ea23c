"""The copy that measures a memory-bound kernel's ceiling: a Triton kernel that reads every byte once
and writes it once, as the learner's kernels do (GPU only: imported by the benchmark's worker).

Not torch's `dst.copy_(src)`: for a contiguous copy that is cudaMemcpy, and on the H100 it moved
2,409 GB/s at 1.17 GB (every one of six timings) and 2,421 GB/s at 1 GiB, while a learner's Triton
kernel moved 2,993 GB/s in the same run (p30, 2026-11-27): a ceiling below the kernel it bounds. At
0.45 GB the same copy moved 2,910. The ceiling is what a kernel of the SMs can move."""
import triton
import triton.language as tl

WORDS = 4096  # 4-byte words a program: four 16-byte accesses per thread at 4 warps


@triton.jit
def copy_words(src, dst, n, WORDS: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * WORDS + tl.arange(0, WORDS)
    inside = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=inside), mask=inside)


def launch(src, dst) -> None:
    """dst[:] = src[:], both int32 and of one length."""
    copy_words[(triton.cdiv(src.numel(), WORDS),)](src, dst, src.numel(), WORDS=WORDS, num_warps=4)
