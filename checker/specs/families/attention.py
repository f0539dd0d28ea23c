"""What the two attention puzzles (p31 forward, p32 backward) share in their benchmarks: the sizes
a model runs, how PyTorch's pick is named, how the flops of a causal size are counted."""

# (D, N, B) at H = 16: B·N = 4096 and 16384 tokens at N = 1024 and 4096, and the long rows a model
# runs at D = 128, 16384 tokens a batch (FlashAttention-3's paper measures that way)
BENCH_SIZES = [(64, 1024, 4), (64, 4096, 4), (128, 1024, 4), (128, 4096, 4), (128, 8192, 2), (128, 16384, 1)]


def sdpa_backend(kernels: list[str]) -> str:
    """The library behind F.scaled_dot_product_attention's pick, from the names of the GPU kernels
    it launched (cuDNN's "cudnn_generated_fort_native_sdpa_sm90_flash_fprop…", the flash backend's
    "flash_fwd_kernel…", the memory-efficient one's "fmha_cutlass…")."""
    found = " ".join(kernels).lower()
    for mark, name in (("cudnn", "cuDNN"), ("flash", "flash"), ("fmha", "efficient"), ("efficient", "efficient")):
        if mark in found:
            return name
    return "math"


def flops_note(count: str) -> str:
    """The table head's line on what a TFLOP/s column divides: `count` flops per size, and what
    causal does to it."""
    return (f"flops per size: {count}, halved when causal (the blocks above the diagonal are skipped by "
            "every column; the masked half of the diagonal blocks still costs time)")
