"""Puzzle 28's time against its scratch memory, in one run on a GPU: the reference at several chunk
sizes (its scratch is one chunk's logits), torch.compile's step, and cuBLAS's products alone, three of
them (the step without recomputing the logits) and four (with the logits recomputed in the backward,
as a design that never stores them must).

    cd research/linear_ce && ROOT=../.. OUT=. python chunks.py

writes chunks.json; book/data/p28_chunks.json is that file."""
import json
import os
import sys

import torch
import torch.nn.functional as F
import triton
import triton.testing

ROOT = os.environ.get("ROOT", ".")
OUT = os.environ.get("OUT", ".")
sys.path.insert(0, ROOT)
from checker.specs import p28_linear_cross_entropy as SPEC  # noqa: E402
from checker.puzzle import timing  # noqa: E402
from checker.specs.families.cross_entropy import IGNORE  # noqa: E402
from research.runs import run_stamp, solution  # noqa: E402

SOL = solution("p28")
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


def baselines(x, w, target) -> dict:
    """torch.compile's step (time and scratch), and cuBLAS's products alone: three (the step without
    recomputing the logits) and four (with them recomputed, as a design that never stores them must)."""
    leaves = [t.detach().requires_grad_() for t in (x, w)]
    compiled = torch.compile(lambda x, w: F.cross_entropy(x @ w.T, target.long(), ignore_index=IGNORE))

    def compile_step():
        return torch.autograd.grad(compiled(*leaves), leaves)
    compile_step()
    found = {"torch.compile": {"ms": round(median_ms(compile_step), 3), "scratch_mib": round(peak_mib(compile_step), 1)}}
    g = torch.randn(x.shape[0], w.shape[0], device="cuda", dtype=torch.bfloat16)
    found["cuBLAS, 3 products"] = {"ms": round(median_ms(lambda: (x @ w.T, g @ w, g.T @ x)), 3)}
    found["cuBLAS, 4 products"] = {"ms": round(median_ms(lambda: (x @ w.T, x @ w.T, g @ w, g.T @ x)), 3)}
    return found


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
                # scratch unpoisoned, as the benchmark times it (book/data/p28_chunks.json was measured
                # before this, with the checker's NaN fill of the scratch inside each step)
                with timing():
                    SPEC.launch(SOL, x, w, target, dloss, loss, dx, dw, N, H, V, chunk, triton.next_power_of_2(N),
                                **SPEC.BIG)
            mib = peak_mib(ours)
            err = abs(float(loss) - float(ref)) / abs(float(ref))
            row[f"chunk {chunk}"] = {"ms": round(median_ms(ours), 3), "scratch_mib": round(mib, 1),
                                     "loss_rel_err": err}
            print(row["size"], chunk, row[f"chunk {chunk}"], flush=True)

        row.update(baselines(x, w, target))
        print(row["size"], {k: v for k, v in row.items() if not k.startswith("chunk")}, flush=True)
        records.append(row)
        del x, w, dx, dw
        torch.cuda.empty_cache()
    with open(f"{OUT}/chunks.json", "w") as f:
        json.dump(run_stamp(rows=records), f, indent=1)


if __name__ == "__main__":
    main()
