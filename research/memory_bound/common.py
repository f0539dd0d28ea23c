"""What the two kernel files share: the repository on sys.path, and the
occupancy arithmetic that sizes a persistent grid whose programs must all be on the GPU at once."""
import os
import sys
from pathlib import Path

# ROOT (the repository) from the environment, else two folders up from this file
ROOT = Path(os.environ.get("ROOT", Path(__file__).resolve().parents[2])).resolve()
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


# H100 (sm_90) per-SM limits: registers, warps, blocks, shared memory a program may use
REGS_PER_SM, MAX_WARPS, MAX_BLOCKS, SMEM_PER_SM = 65536, 64, 32, 228 * 1024


def resident_per_sm(n_regs: int, num_warps: int, shared: int) -> int:
    """How many programs of a compiled kernel fit on one SM at once (registers are allocated per warp
    in units of 256, i.e. per thread rounded up to 8; each block reserves 1 KB of shared memory)."""
    regs_per_warp = -(-max(n_regs, 1) * 32 // 256) * 256
    by_regs = (REGS_PER_SM // regs_per_warp) // num_warps
    by_warps = MAX_WARPS // num_warps
    by_smem = SMEM_PER_SM // (shared + 1024)
    return max(0, min(by_regs, by_warps, by_smem, MAX_BLOCKS))


def compiled_info(kernel, args, kwargs) -> dict:
    """Compile without launching (a spinning kernel launched too wide would hang) and read what the
    occupancy depends on. GPU only."""
    ck = kernel.warmup(*args, grid=(1,), **kwargs)
    ck._init_handles()
    return dict(n_regs=ck.n_regs, n_spills=ck.n_spills, shared=ck.metadata.shared, num_warps=ck.metadata.num_warps)


_FITS: dict = {}


def compiled_fit(kernel, key: tuple, args, kwargs) -> dict:
    """compiled_info of kernel at these constants, and how many of its programs fit on an SM
    (fit_per_sm), compiled once per key: every launch of a design at one size asks again."""
    key = (kernel.__name__, *key)
    if key not in _FITS:
        got = compiled_info(kernel, args, kwargs)
        got["fit_per_sm"] = resident_per_sm(got["n_regs"], got["num_warps"], got["shared"])
        _FITS[key] = got
    return _FITS[key]


def sm_count(t) -> int:
    import torch
    return torch.cuda.get_device_properties(t.device).multi_processor_count


_CONSTANT: dict = {}


def with_constant_width(puzzle: str, signature: str, constant: str):
    """The puzzle's reference solution with one change: its kernel's signature text `signature`
    replaced by `constant`, the same arguments with the row's width declared tl.constexpr (a kernel
    compiled per width, as Helion compiles one per shape: masks and loop bounds become constants the
    compiler folds). Made from the solution's own text, so it is the reference and nothing else;
    loaded once per puzzle."""
    if puzzle not in _CONSTANT:
        import tempfile

        from checker import registry
        from research.runs import module_at
        text = registry.get(puzzle).solution.read_text()
        assert text.count(signature) == 1, f"{puzzle}'s kernel signature moved: update its constant-width design"
        path = Path(tempfile.mkdtemp()) / f"{puzzle}_constant_width.py"
        path.write_text(text.replace(signature, constant))
        _CONSTANT[puzzle] = module_at(path, f"{puzzle}_constant_width")
    return _CONSTANT[puzzle]
