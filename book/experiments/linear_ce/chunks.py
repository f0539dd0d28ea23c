"""Puzzle 28's time against its scratch memory, in one run on a GPU: the reference at several chunk
sizes (its scratch is one chunk's logits), torch.compile's step, and cuBLAS's products alone, three of
them (the step without recomputing the logits) and four (with the logits recomputed in the backward,
as a design that never stores them must).

    cd book/experiments/linear_ce && ROOT=../../.. OUT=. python chunks.py

writes chunks.json; book/data/p28_chunks.json is that file."""
import importlib.util
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
import triton
import triton.testing

ROOT = os.environ.get("ROOT", ".")
OUT = os.environ.get("OUT", ".")
sys.path.insert(0, ROOT)
from checker.specs import p28_linear_cross_entropy as SPEC  # noqa: E402
from checker.specs.families.cross_entropy import IGNORE  # noqa: E402

spec = importlib.util.spec_from_file_location("sol28", f"{ROOT}/solutions/p28_linear_cross_entropy.py")
SOL = importlib.util.module_from_spec(spec)
spec.loader.exec_module(SOL)
triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
SIZES = [dict(N=8192, H=4096, V=128256), dict(N=8192, H=2048, V=32000)]
CHUNKS = (512, 1024, 2048, 4096)


def median_ms(fn) -> float:
    return float(triton.testing.do_bench(fn, warmup=3, rep=400, return_mode="median"))


def peak_mib(fn) -> float:
    """The memory fn allocates beyond what is allocated before it (its scratch), MiB."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - before) / 2**20


def main():
    records = []
    torch.manual_seed(0)
    for size in SIZES:
        N, H, V = size["N"], size["H"], size["V"]
        x = torch.randn(N, H, device="cuda", dtype=torch.bfloat16)
        w = (0.02 * torch.randn(V, H, device="cuda")).to(torch.bfloat16)
        target = torch.randint(0, V, (N,), device="cuda", dtype=torch.int32)
        dloss = torch.ones(1, device="cuda")
        loss = torch.empty(1, device="cuda")
        dx = torch.empty_like(x)
        dw = torch.empty(V, H, device="cuda", dtype=torch.float32)
        flops = 3 * 2 * N * H * V  # the three products
        row = {"size": f"N={N}, H={H}, V={V}", "tflop": flops / 1e12}
        ref = F.cross_entropy(x.float() @ w.float().T, target.long(), ignore_index=IGNORE)
        for chunk in CHUNKS:
            def ours(chunk=chunk):
                SPEC.launch(SOL, x, w, target, dloss, loss, dx, dw, N, H, V, chunk, triton.next_power_of_2(N),
                            **SPEC.BIG)
            mib = peak_mib(ours)
            err = abs(float(loss) - float(ref)) / abs(float(ref))
            row[f"chunk {chunk}"] = {"ms": round(median_ms(ours), 3), "scratch_mib": round(mib, 1),
                                     "loss_rel_err": err}
            print(row["size"], chunk, row[f"chunk {chunk}"], flush=True)

        leaves = [t.detach().requires_grad_() for t in (x, w)]

        def step(x, w):
            return F.cross_entropy(x @ w.T, target.long(), ignore_index=IGNORE)

        compiled = torch.compile(step)

        def compile_step():
            out = compiled(*leaves)
            return torch.autograd.grad(out, leaves)
        compile_step()
        row["torch.compile"] = {"ms": round(median_ms(compile_step), 3), "scratch_mib": round(peak_mib(compile_step), 1)}
        print(row["size"], "compile", row["torch.compile"], flush=True)

        g = torch.randn(N, V, device="cuda", dtype=torch.bfloat16)
        three = lambda: (x @ w.T, g @ w, g.T @ x)  # noqa: E731
        four = lambda: (x @ w.T, x @ w.T, g @ w, g.T @ x)  # noqa: E731
        row["cuBLAS, 3 products"] = {"ms": round(median_ms(three), 3)}
        row["cuBLAS, 4 products"] = {"ms": round(median_ms(four), 3)}
        print(row["size"], "cublas", row["cuBLAS, 3 products"], row["cuBLAS, 4 products"], flush=True)
        records.append(row)
        del g, x, w, dx, dw, leaves, compiled
        torch.cuda.empty_cache()
    result = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "triton": triton.__version__, "rows": records}
    with open(f"{OUT}/chunks.json", "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
