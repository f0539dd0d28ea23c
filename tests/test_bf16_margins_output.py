"""tests/bf16_margins.py --from-output: a GPU run's printed tables read back as measure() gives them
(the figures a spec's comment block is written from where the run's own writes did not come back)."""
import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bf16_margins  # noqa: E402
from checker import registry  # noqa: E402


def test_a_printed_table_reads_back_with_the_full_case_names():
    p10 = registry.get("p10")
    rows = [{"part": "forward", "case": c.name, "output": "var", "correct": 0.00663, "correct_by": "solution"}
            for c in p10.cases() if c.dtype == "bfloat16"][:1]
    named = [{"name": "mean_stored_as_fp16", "ratio": 2.81, "case": rows[0]["case"], "output": "mean",
              "solution": 0.000832}]
    printed = "\n".join(["some compiler noise", *bf16_margins.table(p10, rows, named)])
    found = bf16_margins.read_output(printed, {"p10": p10})
    back_rows, back_named = found["p10"]
    assert [(r["output"], r["case"], r["correct"], r["correct_by"]) for r in back_rows] == \
        [("var", rows[0]["case"], 0.00663, "solution")]
    assert len(rows[0]["case"]) > 50  # the table cut it; the read gives it whole
    assert back_named == [{"name": "mean_stored_as_fp16", "ratio": 2.81, "output": "mean", "case": rows[0]["case"]}]
    block = bf16_margins.comment(p10, back_rows, back_named, "a GPU", "2026-12-07")
    assert block[0].startswith(f"{bf16_margins.HEADER}, a GPU, 2026-12-07")
