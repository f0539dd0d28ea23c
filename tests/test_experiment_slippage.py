"""The experiment holds what it has shown (checker/experiment.py): once a case's own inputs (or its
dtype) are seen to decide its verdict, the shrinking keeps them, so that it does not slip to another
failure that the smaller cases have on plain inputs; the pair on the way is the evidence the report
shows where the smallest case has none of its own.

Seen on an H100: p10's one-pass variance E[x²] − E[x]² fails "mean near 1000"; its rows of one value
have variance 0, and a GPU's fused multiply-add leaves x²'s rounding there, on plain inputs too. The
shrinking went on to plain inputs at N = 1, and the report lost its cancellation hint."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

from bugs import entries, patched  # noqa: E402
from checker import registry  # noqa: E402
from checker.diagnosis import experiments  # noqa: E402
from checker.experiment import Experiment  # noqa: E402
from checker.run.session import run_check  # noqa: E402
from checker.source import from_text  # noqa: E402

P10 = registry.get("p10")
START = next(c for c in P10.cases() if c.name.startswith("mean near 1000, one chunk"))


def test_inputs_that_decide_the_start_are_held_while_shrinking():
    # plain inputs pass at the start's sizes; at N = 1 every case fails, plain or not (the slip)
    def run(case, offset):
        fails = "recipe" in case.tags or case.sizes["N"] == 1
        return {"status": "fail" if fails else "pass", "comparisons": []}

    found = Experiment(P10, START, run, fair=lambda case: True, budget=60.0)
    found.shrink()
    event = found.report("forward")
    assert "recipe" in found.smallest_case.tags, found.smallest_case.name  # its own inputs, held
    assert "inputs" not in event["smallest"]
    on_the_way = [p for p in event["passing"] if p.get("at") is not None]
    assert [p["property"] for p in on_the_way] == ["inputs"], event["passing"]

    finding = experiments.read(P10, event, "gpu")
    assert finding.confirms(lambda case: "cancellation" in case.tags)
    said = experiments.sentences(finding, P10)
    assert any(line.startswith("before it was made smaller, “mean near 1000, one chunk") for line in said), said


def test_a_gpu_s_fused_multiply_add_keeps_the_cancellation_hint():
    # the one-pass bug with its last step as a GPU computes it: x² − mean² fused, rounded once
    bug = next(b for b in entries(P10).pinned if b.name == "one_pass_e_x2_minus_mean2")
    one_pass = "    var = tl.sum(acc_sq, axis=0) / N - mean * mean"
    fused = ("    var = ((tl.sum(acc_sq, axis=0) / N).to(tl.float64)"
             " - mean.to(tl.float64) * mean.to(tl.float64)).to(tl.float32)")
    text = patched(P10, bug.name, bug.patches)
    assert one_pass in text
    lines: list[str] = []
    run_check(P10, ["forward"], from_text(text.replace(one_pass, fused), "kernels.py"), backend="interpreter",
              write=lines.append, in_process=True)
    report = "\n".join(lines)
    assert "cancels catastrophically" in report, report
    smallest = next(line for line in lines if "smallest failing case:" in line)
    assert "inputs of “mean near 1000" in smallest, report
