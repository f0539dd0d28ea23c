"""What the compiler makes of a kernel for an H100, read on a machine without one: Triton's front end
and its NVIDIA back end lower a kernel to PTX (the GPU's assembly) without a driver, and the PTX
says which memory instructions a launch will run.

The lowering runs in a child process: a page that has run kernels in the interpreter
(TRITON_INTERPRET=1) has triton.language patched for it, and the compiler must see it unpatched."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

# the H100's compute capability and warp size
TARGET = ("cuda", 90, 32)

COUNTED = {
    "16-byte loads": r"ld\.global[.\w]*\.v4\.",
    "narrower loads": r"ld\.global(?![.\w]*\.v4\.)",
    "asynchronous copies (pipelining)": r"cp\.async\.c[ag]\.shared\.global",
    "16-byte stores": r"st\.global[.\w]*\.v4\.",
    "narrower stores": r"st\.global(?![.\w]*\.v4\.)",
}


def memory_instructions(source: str, kernel: str, signature: dict[str, str], constexprs: dict[str, Any],
                        divisible_by_16: set[str], num_warps: int, num_stages: int) -> dict[str, int]:
    """How many global loads and stores of each width, and asynchronous copies, the PTX of one launch
    of `kernel` (a jitted function in the file `source`) holds. signature: Triton's types ("*bf16",
    "i32", "fp32", "constexpr"); divisible_by_16: the arguments a launch would find divisible by 16
    (every pointer from PyTorch's allocator; an integer such as H only when it is a multiple of 16):
    Triton specializes a kernel on that, and what it may assume about alignment follows."""
    job = dict(source=str(Path(source).resolve()), kernel=kernel, signature=signature, constexprs=constexprs,
               divisible=sorted(divisible_by_16), num_warps=num_warps, num_stages=num_stages)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, __file__, json.dumps(job)], env=env, capture_output=True, text=True,
                          check=True)
    text = done.stdout
    return {name: len(re.findall(pattern, text)) for name, pattern in COUNTED.items()}


def _lower(job: dict) -> str:
    import importlib.util

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    spec = importlib.util.spec_from_file_location("lowered_module", job["source"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names = list(job["signature"])
    attrs = {(i,): [["tt.divisibility", 16]] for i, name in enumerate(names) if name in job["divisible"]}
    source = ASTSource(fn=getattr(module, job["kernel"]), signature=job["signature"], constexprs=job["constexprs"],
                       attrs=attrs)
    compiled = triton.compile(source, target=GPUTarget(*TARGET),
                              options={"num_warps": job["num_warps"], "num_stages": job["num_stages"]})
    return compiled.asm["ptx"]


if __name__ == "__main__":
    sys.stdout.write(_lower(json.loads(sys.argv[1])))
