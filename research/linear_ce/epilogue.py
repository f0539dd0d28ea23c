"""Puzzle 28's products with their epilogue in two halves: the solution's chunk_matmul_kernel, the same
tiles and the same sums, but its [BLOCK_M, BLOCK_N] fp32 accumulator stored (or read, added to and
stored, for dW's later chunks) half a tile at a time.

Why: at the reference's tiles (128 × 256 × 64, 8 warps) the accumulator is 128 fp32 registers per
thread, and ptxas spills the solution's products (--spills, Triton 3.6 as on the GPU machine, sm_90a:
296 to 460 bytes of spill stores when the tile is stored, 1600 to 1852 when it is read and added to;
the halves 60, and 264). Half a tile at a time leaves fewer values live at once. Whether that
makes the step faster only a GPU can say: this script times it.

    cd research/linear_ce && ROOT=../.. python epilogue.py --spills      # ptxas, no GPU
    cd research/linear_ce && ROOT=../.. TRITON_INTERPRET=1 python epilogue.py --cpu-smoke
    cd research/linear_ce && ROOT=../.. OUT=. python epilogue.py         # GPU: epilogue.json

--spills compiles both products for sm_90a with the Triton installed (the GPU machine's, for its
numbers) and prints ptxas's register and spill report for each."""
import json
import os
import subprocess
import sys
import tempfile
import types

import torch
import triton
import triton.language as tl

ROOT = os.environ.get("ROOT", ".")
OUT = os.environ.get("OUT", ".")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # recompute.py, beside this file
from checker.puzzle import timing  # noqa: E402
from checker.specs import p28_linear_cross_entropy as SPEC  # noqa: E402
from checker.specs.families.cross_entropy import IGNORE  # noqa: E402
from research.runs import run_stamp, solution  # noqa: E402
from recompute import product_step  # noqa: E402

SOL = solution("p28")


@triton.jit
def halves_matmul_kernel(a_desc, b_desc, c_ptr, M, N, K, A_T: tl.constexpr, ACCUMULATE: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         GROUP_M: tl.constexpr):
    """The solution's chunk_matmul_kernel (same arguments, same grid, same sums), its epilogue in two
    [BLOCK_M, BLOCK_N / 2] halves: columns 0 .. BLOCK_N / 2 of the tile, then the rest."""
    tile_m, tile_n = SOL.grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        acc = product_step(a_desc, b_desc, acc, start, tile_m, tile_n, A_T, BLOCK_M, BLOCK_N)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    # as [row, half, column within the half], the half moved last and split off: the left and right halves
    left, right = tl.split(tl.permute(tl.reshape(acc, [BLOCK_M, 2, BLOCK_N // 2]), [0, 2, 1]))
    for half in tl.static_range(2):
        part = left if half == 0 else right
        cols = tile_n * BLOCK_N + half * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
        c_ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        if ACCUMULATE:  # one writer per tile per launch, launches in order: see the solution
            part += tl.load(c_ptrs, mask=mask)
        tl.store(c_ptrs, part, mask=mask)


# the solution's kernels with its products swapped for the halves: SPEC.launch takes it as `k`
HALVES = types.SimpleNamespace(**{name: getattr(SOL, name) for name in dir(SOL) if not name.startswith("__")})
HALVES.chunk_matmul_kernel = halves_matmul_kernel


def step(k, x, w, target, dloss, CHUNK, tiles: dict):
    """Puzzle 28's step with kernels k: (loss, dx, dw)."""
    N, H = x.shape
    V = w.shape[0]
    loss = torch.empty(1, device=x.device)
    dx, dw = torch.empty_like(x), torch.empty((V, H), device=x.device)
    with timing():
        SPEC.launch(k, x, w, target, dloss, loss, dx, dw, N, H, V, CHUNK, triton.next_power_of_2(N), **tiles)
    return loss, dx, dw


def cpu_smoke():
    """The interpreter, a tiny size, chunks of 16 rows of 40: the halves give the solution's step bit for bit."""
    tiles = dict(TILE_M=16, TILE_N=32, TILE_K=16, GROUP_M=2, NUM_WARPS=4, NUM_STAGES=1, TILES_PER_STEP=2)
    gen = torch.Generator().manual_seed(0)
    N, H, V = 40, 64, 150
    x, w = torch.randn(N, H, generator=gen), 0.3 * torch.randn(V, H, generator=gen)
    target = torch.randint(0, V, (N,), generator=gen, dtype=torch.int32)
    target[::7] = IGNORE
    dloss = torch.tensor([1.5])
    for CHUNK in (16,):  # three chunks, the last one short: dW stored, then added to
        ours, theirs = step(HALVES, x, w, target, dloss, CHUNK, tiles), step(SOL, x, w, target, dloss, CHUNK, tiles)
        assert all(torch.equal(a, b) for a, b in zip(ours, theirs)), CHUNK
        print(f"chunk {CHUNK}: loss, dx and dw bit for bit the solution's", flush=True)


def spills():
    """ptxas's report (registers, spill stores and loads) for both products at the reference's tiles,
    compiled for sm_90a by the Triton installed here."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    # the ptxas Triton ships for this PTX version (newer Tritons write PTX only their Blackwell one reads)
    bin_dir = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin")
    assemblers = [os.path.join(bin_dir, name) for name in ("ptxas", "ptxas-blackwell") if os.path.exists(
        os.path.join(bin_dir, name))]
    t = SPEC.BIG
    consts = dict(BLOCK_M=t["TILE_M"], BLOCK_N=t["TILE_N"], BLOCK_K=t["TILE_K"], GROUP_M=t["GROUP_M"])
    for name, fn in (("solution", SOL.chunk_matmul_kernel), ("halves", halves_matmul_kernel)):
        for a_t in (False, True):
            a_block = [t["TILE_K"], t["TILE_M"]] if a_t else [t["TILE_M"], t["TILE_K"]]
            types_ = dict(a_desc=f"tensordesc<bf16{a_block}>", b_desc=f"tensordesc<bf16{[t['TILE_K'], t['TILE_N']]}>",
                          c_ptr="*fp32", M="i32", N="i32", K="i32")
            for accumulate in (False, True):
                fixed = dict(consts, A_T=a_t, ACCUMULATE=accumulate)
                sig = {n: "constexpr" if n in fixed else types_[n] for n in fn.arg_names}
                src = ASTSource(fn=fn, signature=sig, constexprs=fixed, attrs={(2,): [["tt.divisibility", 16]]})
                compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                                          options=dict(num_warps=t["NUM_WARPS"], num_stages=t["NUM_STAGES"]))
                with tempfile.NamedTemporaryFile("w", suffix=".ptx") as ptx:
                    ptx.write(compiled.asm["ptx"])
                    ptx.flush()
                    runs = [subprocess.run([ptxas, "-arch=sm_90a", "-v", ptx.name, "-o", os.devnull],
                                           capture_output=True, text=True) for ptxas in assemblers]
                done = [run for run in runs if run.returncode == 0]
                report = done[0].stdout + done[0].stderr if done else runs[-1].stderr
                found = [line.split("info    :")[-1].strip() for line in report.splitlines()
                         if "spill" in line or "registers" in line]
                print(f"triton {triton.__version__} {name:8} {'dW (gᵀ x)' if a_t else 'dx (g w)':10} "
                      f"{'reads and adds' if accumulate else 'stores':14} {' | '.join(found)}", flush=True)


def gpu():
    """p28's reference step with the solution's products and with the halves, in one run: each
    checked bit for bit against the other first, then timed (medians) at two chunk sizes."""
    import triton.testing
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    records = []
    torch.manual_seed(0)
    for N, H, V in ((8192, 4096, 128256), (8192, 2048, 32000)):
        x = torch.randn(N, H, device="cuda", dtype=torch.bfloat16)
        w = (0.02 * torch.randn(V, H, device="cuda")).to(torch.bfloat16)
        target = torch.randint(0, V, (N,), device="cuda", dtype=torch.int32)
        dloss = torch.ones(1, device="cuda")
        for CHUNK in (512, 2048):
            same = all(torch.equal(a, b) for a, b in zip(step(HALVES, x, w, target, dloss, CHUNK, SPEC.BIG),
                                                         step(SOL, x, w, target, dloss, CHUNK, SPEC.BIG)))
            row = {"size": f"N={N}, H={H}, V={V}", "chunk": CHUNK, "bit_identical": same}
            for name, k in (("solution", SOL), ("halves", HALVES)):
                row[name] = float(triton.testing.do_bench(lambda k=k: step(k, x, w, target, dloss, CHUNK, SPEC.BIG),
                                                          warmup=3, rep=400, return_mode="median"))
            records.append(row)
            print(row, flush=True)
        del x, w
        torch.cuda.empty_cache()
    with open(f"{OUT}/epilogue.json", "w") as f:
        json.dump(run_stamp(rows=records), f, indent=1)


if __name__ == "__main__":
    cpu_smoke() if "--cpu-smoke" in sys.argv else spills() if "--spills" in sys.argv else gpu()
