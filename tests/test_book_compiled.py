"""book/compiled.py: the PTX census p25's page draws its alignment table from, at build time."""
from __future__ import annotations

import sys

from checker.spec import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "book"))
from compiled import memory_instructions  # noqa: E402

SOLUTION = str(REPO_ROOT / "solutions" / "p25_layernorm_backward_roofline.py")


def census(H: int) -> dict[str, int]:
    head = 1 << (H.bit_length() - 1)
    rest = H - head
    tail = 0 if rest == 0 else 1 << (rest - 1).bit_length()
    signature = {"x_ptr": "*bf16", "gamma_ptr": "*bf16", "dz_ptr": "*bf16", "dx_ptr": "*bf16",
                 "dgamma_part_ptr": "*fp32", "dbeta_part_ptr": "*fp32", "M": "i32", "H": "i32", "eps": "fp32",
                 "ROWS": "constexpr", "BLOCK_H": "constexpr", "TAIL": "constexpr", "STAGES": "constexpr"}
    aligned = {name for name in signature if name.endswith("_ptr")} | {"M"} | ({"H"} if H % 16 == 0 else set())
    return memory_instructions(SOLUTION, "ln_bwd_roofline_kernel", signature,
                               {"ROWS": 1, "BLOCK_H": head, "TAIL": tail, "STAGES": 3}, aligned, 8, 3)


def test_aligned_rows_load_through_wide_asynchronous_copies():
    found = census(8192)
    assert found["asynchronous copies (pipelining)"] > 0 and found["16-byte stores"] > 0
    assert found["narrower loads"] == 0 and found["narrower stores"] == 0


def test_unaligned_rows_lose_the_copies_and_the_wide_stores():
    found = census(8462)
    assert found["asynchronous copies (pipelining)"] == 0 and found["16-byte stores"] == 0
    assert found["narrower loads"] > 0 and found["narrower stores"] > 0
