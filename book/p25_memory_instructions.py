"""Puzzle 25's reference kernel as the compiler makes it for an H100, at one width: the memory
instructions its PTX holds (book/ptx.py). The page's alignment table and its test read it."""
from __future__ import annotations

from pathlib import Path

from ptx import memory_instructions

SOLUTION = Path(__file__).resolve().parent.parent / "solutions" / "p25_layernorm_backward_roofline.py"


def census(H: int, dtype: str) -> dict[str, int]:
    """One row per step, 8 warps, 3 stages, M = 4096; dtype in Triton's spelling ("bf16", "fp32")."""
    head = 1 << (H.bit_length() - 1)
    rest = H - head
    tail = 0 if rest == 0 else 1 << (rest - 1).bit_length()
    signature = {"x_ptr": f"*{dtype}", "gamma_ptr": f"*{dtype}", "dz_ptr": f"*{dtype}", "dx_ptr": f"*{dtype}",
                 "dgamma_part_ptr": "*fp32", "dbeta_part_ptr": "*fp32", "M": "i32", "H": "i32", "eps": "fp32",
                 "ROWS": "constexpr", "BLOCK_H": "constexpr", "TAIL": "constexpr", "STAGES": "constexpr"}
    # PyTorch's allocations are 16-byte aligned; M = 4096 is a multiple of 16; H is one only sometimes
    aligned = {name for name in signature if name.endswith("_ptr")} | {"M"} | ({"H"} if H % 16 == 0 else set())
    return memory_instructions(str(SOLUTION), "ln_bwd_roofline_kernel", signature,
                               {"ROWS": 1, "BLOCK_H": head, "TAIL": tail, "STAGES": 3}, aligned, num_warps=8,
                               num_stages=3)
