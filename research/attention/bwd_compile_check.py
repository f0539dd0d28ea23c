"""Compiles every launch bwd_sweep.py times for an H100 (sm_90a) without a GPU, with whichever Triton is
installed (the GPU machine's is 3.6.0: a virtual environment beside, no torch needed), and prints each
kernel's registers, spilled bytes, shared memory and compile seconds: a launch that does not compile,
spills or asks for more shared memory than an SM has shows here, not in a GPU call; and the compile
seconds say what the sweep's compiles cost.

    python -m venv /tmp/t36 && /tmp/t36/bin/pip install triton==3.6.0
    /tmp/t36/bin/python research/attention/bwd_compile_check.py [64|128]    (from the repository's root)

bf16 inputs, L = S = 4096, GROUP = 1 (the benchmark's sizes but the grouped-query one)."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = Path(__file__).resolve().parent
TARGET = GPUTarget("cuda", 90, 32)
CUOBJDUMP = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/cuobjdump")
SHARED_PER_SM = 232448  # bytes a program may use on an H100 (227 KiB)
POINTERS = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "do_ptr": "*bf16", "lse_ptr": "*fp32",
            "delta_ptr": "*fp32", "dq_ptr": "*fp32", "dk_ptr": "*bf16", "dv_ptr": "*bf16"}
SCALARS = {"L": "i32", "S": "i32", "scale": "fp32"}


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compile_one(fn, consts: dict, warps: int, stages: int) -> dict:
    """fn for sm_90a at these constexprs; GROUP = 1 is a constant, as the launcher specialises it."""
    consts = {**consts, "GROUP": 1}
    signature = {name: "constexpr" if name in consts else {**POINTERS, **SCALARS}[name] for name in fn.arg_names}
    attrs = {(i,): [["tt.divisibility", 16]] for i, name in enumerate(fn.arg_names)
             if name in POINTERS or name in ("L", "S")}
    start = time.perf_counter()
    kernel = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=consts, attrs=attrs), target=TARGET,
                            options={"num_warps": warps, "num_stages": stages})
    seconds = time.perf_counter() - start
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(kernel.asm["cubin"])
        f.flush()
        usage = subprocess.run([CUOBJDUMP, "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    fields = dict(kv.split(":") for kv in next(line for line in usage.splitlines() if "REG:" in line).split() if ":" in kv)
    return {"registers": int(fields["REG"]), "spilled": int(fields["LOCAL"]), "shared": kernel.metadata.shared,
            "seconds": round(seconds, 1)}


def launches(D: int, causal: bool):
    """(what, kernel, constexprs, warps, stages) of every launch the sweep makes at this head dim."""
    designs = load(HERE / "bwd_designs.py", "bwd_designs")
    solution = load(HERE.parent.parent / "solutions/p32_flash_attention_backward.py", "p32_solution")
    base = dict(D=D, BLOCK_D=designs.block_d(D), CAUSAL=causal)
    for kind, walks in (("dK/dV", designs.DKDV[D] + designs.DKDV_DESIGNS[D]), ("dQ", designs.DQ[D] + designs.DQ_DESIGNS[D])):
        for walk in designs.runs(walks, causal):
            consts = dict(base, BLOCK_Q=walk.block_q, BLOCK_K=walk.block_k)
            if not walk.own:
                consts.update(SLICE=walk.slice, SPLIT=walk.split, **({"REVERSE": walk.reverse} if kind == "dQ" else {}))
            owner = solution if walk.own else designs
            kernel = owner.attn_bwd_dkdv_kernel if kind == "dK/dV" else owner.attn_bwd_dq_kernel
            yield f"{kind} {walk.name}", kernel, consts, walk.warps, walk.stages
    for fused in designs.runs(designs.FUSED[D], causal):
        consts = dict(base, BLOCK_Q1=fused.block_q1, BLOCK_K1=fused.block_k1, BLOCK_K2=fused.block_k2,
                      SLICE=fused.slice, SPLIT=fused.split)
        yield fused.name, designs.fused_kernel, consts, fused.warps, fused.stages


def main() -> None:
    dims = [int(a) for a in sys.argv[1:]] or [64, 128]
    print(f"triton {triton.__version__}, sm_90a, bf16, GROUP = 1", flush=True)
    total = 0.0
    for D in dims:
        for causal in (False, True):
            for what, kernel, consts, warps, stages in launches(D, causal):
                try:
                    found = compile_one(kernel, consts, warps, stages)
                    total += found["seconds"]
                    warn = " SHARED > SM" if found["shared"] > SHARED_PER_SM else ""
                    warn += " SPILLS" if found["spilled"] else ""
                    print(f"D={D} {'causal' if causal else 'full  '} {what:52} regs {found['registers']:3} spilled "
                          f"{found['spilled']:5} shared {found['shared']:6} {found['seconds']:5.1f} s{warn}", flush=True)
                except Exception as error:  # noqa: BLE001  (a launch that does not compile is a finding)
                    print(f"D={D} {'causal' if causal else 'full  '} {what:52} FAILED {type(error).__name__}: "
                          f"{str(error).splitlines()[0][:200]}", flush=True)
    print(f"compile seconds in all: {total:.0f}")


if __name__ == "__main__":
    main()
