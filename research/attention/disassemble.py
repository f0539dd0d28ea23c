"""What the compiler makes of the forward designs, without a GPU: compile kernels.py's fwd_kernel for
the H100 (sm_90) with the installed Triton's own ptxas, its unmasked walk in turn and overlapped
(OVERLAP), and print, per design, its registers, shared memory, wgmma instructions and the waits on
them. `WARPGROUP.DEPBAR.LE gsb0, 0x0`
waits until no wgmma is left in flight: where every wait is that one, no product overlaps the
softmax. python disassemble.py"""
import os
import re
import subprocess
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

import kernels as K

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
SIGNATURE = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*bf16", "lse_ptr": "*fp32", "L": "i32",
             "S": "i32", "scale": "fp32", "H": "i32", "G": "i32"}


def tool(name: str, cubin: bytes, *args: str) -> str:
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    return subprocess.run([os.path.join(BIN, name), *args, f.name], capture_output=True, text=True).stdout


for overlap in (False, True):
    for tma in (False, True):
        constants = dict(D=128, BQ=128, BK=64, BD=128, CAUSAL=False, TMA=tma, WS=False, REVERSE=False, OVERLAP=overlap)
        compiled = triton.compile(ASTSource(fn=K.fwd_kernel, signature=SIGNATURE, constexprs=constants),
                                  target=GPUTarget("cuda", 90, 32), options=dict(num_warps=8, num_stages=3))
        sass = tool("cuobjdump", compiled.asm["cubin"], "-sass")
        usage = re.search(r"REG:\d+", tool("cuobjdump", compiled.asm["cubin"], "-res-usage"))
        print(f"{'overlapped' if overlap else 'in turn':10} {'TMA' if tma else 'pointers':9} {usage.group(0) if usage else '?':8} "
              f"shared {compiled.metadata.shared:6}  HGMMA {sass.count('HGMMA'):3}  waits "
              f"{sorted(set(re.findall(r'WARPGROUP[.]DEPBAR[.]LE gsb0, 0x[0-9a-f]+', sass)))}")
