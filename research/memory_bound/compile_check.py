"""Compiles every GPU launch of kernels_ce.py / kernels_ln.py for an H100 (sm_90) without a GPU, with
the Triton of the GPU machine installed beside (a virtual environment, no torch needed), and prints
each kernel's registers, spills, shared memory and how many programs fit on an SM: a compile error
or a spilling kernel shows here, not in a GPU call.

    python -m venv /tmp/t36 && /tmp/t36/bin/pip install triton==3.6.0
    cd research/memory_bound && /tmp/t36/bin/python compile_check.py"""
import os
import subprocess
import sys
import tempfile
import types

if "torch" not in sys.modules:  # the kernel files import torch at the top; compiling needs none of it
    sys.modules["torch"] = types.ModuleType("torch")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import kernels_ce as KC  # noqa: E402
import kernels_ln as KL  # noqa: E402
from common import resident_per_sm  # noqa: E402

CUOBJDUMP = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/cuobjdump")
TARGET = GPUTarget("cuda", 90, 32)


def compile_one(fn, types_, ints, consts, warps, stages=1, maxnreg=None):
    """types_: name -> triton type ("*bf16", "i32", ...); ints: name -> value (divisibility by 16 as the
    launcher would specialise it); consts: constexprs."""
    sig = {name: ("constexpr" if name in consts else types_[name]) for name in fn.arg_names}
    attrs = {}
    for i, name in enumerate(fn.arg_names):
        t = sig[name]
        if t.startswith("*") or (name in ints and ints[name] % 16 == 0):
            attrs[(i,)] = [["tt.divisibility", 16]]
    src = ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs)
    options = {"num_warps": warps, "num_stages": stages, **({"maxnreg": maxnreg} if maxnreg else {})}
    ck = triton.compile(src, target=TARGET, options=options)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(ck.asm["cubin"])
        f.flush()
        usage = subprocess.run([CUOBJDUMP, "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    line = next(l for l in usage.splitlines() if "REG:" in l)
    fields = dict(kv.split(":") for kv in line.split() if ":" in kv)
    regs, local = int(fields["REG"]), int(fields["LOCAL"])
    shared = ck.metadata.shared
    return dict(regs=regs, local=local, shared=shared, fit=resident_per_sm(regs, warps, shared))


def ce_checks():
    T = {n: "*fp32" for n in ("dloss_ptr", "n_valid_ptr", "loss_rows_ptr", "part_ptr", "loss_part_ptr", "loss_ptr")}
    T.update(logits_ptr="*bf16", dlogits_ptr="*bf16", target_ptr="*i32", count_ptr="*i32", abort_ptr="*i32",
             ticket_ptr="*i32", M="i32", V="i32", CHUNK="i32", ignore_index="i32", stride="i32")
    for V in (32000, 128256):
        for design, p in KC.designs(V):
            if design.endswith("ref"):
                BLOCK_V = p.get("BLOCK_V") or KC.ref_block(V)
                warps = p.get("warps") or (32 if BLOCK_V >= 32768 else 16 if BLOCK_V >= 16384 else 4)
                r = compile_one(KC.SOL.ce_fwd_bwd_kernel, T, dict(M=8192, V=V, stride=V, ignore_index=-100),
                                dict(BLOCK_V=BLOCK_V), warps)
            else:
                K = p.get("K", 1)
                CHUNK, BLOCK = KC.chunk_of(V, K)
                consts = dict(K=K, BLOCK=BLOCK, ONE_EXP=p.get("ONE_EXP", True), SOLO=p.get("SOLO", False),
                              PHASE=0, LIMIT=KC.LIMIT, BLOCK_M=8192)
                r = compile_one(KC.ce_split_kernel, T, dict(M=8192, V=V, CHUNK=CHUNK, ignore_index=-100), consts,
                                p["warps"], maxnreg=p.get("maxnreg"))
            print(f"p27 V={V:6} {design:12} {str(p):60} {r}", flush=True)


def ln_checks():
    for dtype, H in KL_SIZES:
        el = "*bf16" if dtype == "bfloat16" else "*fp32"
        T = dict(x_ptr=el, gamma_ptr=el, dz_ptr=el, dx_ptr=el, M="i32", H="i32", SW="i32", eps="fp32")
        for n in ("dgamma_ptr", "dbeta_ptr", "dgamma_part_ptr", "dbeta_part_ptr", "part_ptr"):
            T[n] = "*fp32"
        T.update(count_ptr="*i32", abort_ptr="*i32", grid_count_ptr="*i32")
        ints = dict(M=4096, H=H)
        for design, p in KL.designs(H, dtype):
            if design.endswith("ref"):
                t = KL.SPEC.TUNED[(dtype, H)]
                rows, warps, stages = p.get("rows", t.rows), p.get("warps", t.warps), p.get("stages", t.stages)
                r = compile_one(KL.SOL.ln_bwd_roofline_kernel, T, ints,
                                dict(ROWS=rows, BLOCK_H=KL.SPEC.head(H), TAIL=KL.SPEC.tail(H), STAGES=stages), warps)
            elif design.startswith("B"):
                r = compile_one(KL.ln_two_pass_kernel, T, ints, dict(BLOCK_C=p["BLOCK_C"], DIV=KL._div(H),
                                                                    STAGES=p.get("stages", 1)), p["warps"])
            else:
                K = p.get("K", 2)
                SW, BLOCK = KL.slice_of(H, K)
                consts = dict(K=K, ROWS=p.get("ROWS", 1), BLOCK=BLOCK, DIV=KL._div(H),
                              GRID_SYNC=p.get("GRID_SYNC", False), RED_COLS=16, RED_G=64,
                              STAGES=p.get("stages", 1), PHASE=0, LIMIT=KL.LIMIT)
                r = compile_one(KL.ln_split_kernel, T, dict(ints, SW=SW), consts, p["warps"], maxnreg=p.get("maxnreg"))
            print(f"p25 {dtype:8} H={H:5} {design:10} {str(p):72} {r}", flush=True)


KL_SIZES = [("bfloat16", 16384), ("float32", 16384), ("bfloat16", 8462), ("float32", 8462), ("bfloat16", 1024),
            ("bfloat16", 4096), ("bfloat16", 5120), ("bfloat16", 5632), ("bfloat16", 8192), ("float32", 8192),
            ("float32", 1024), ("float32", 4096), ("float32", 5120), ("float32", 5632)]

if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("ce", "all"):
        ce_checks()
    if what in ("ln", "all"):
        ln_checks()
