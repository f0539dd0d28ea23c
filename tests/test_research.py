"""The research scripts (research/) whose designs a page describes: their CPU smoke runs (the
interpreter, tiny sizes) still check out against PyTorch, so that a change to the kernels they
build on (the solutions) cannot leave a page describing a design that no longer computes the step.
Also the scripts' shared reading of Nsight Compute's raw CSV, which the pages' profiles come from."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # research/ is a folder of the repository, not an installed package
from research.runs import module_at, ncu_launches, ncu_number, ncu_stalls  # noqa: E402


def test_p28_recomputing_design_matches_pytorch():
    """p28's page: the logits recomputed per vocabulary slice give PyTorch's loss, dx and dW
    (several chunkings, short last chunks, ignored rows); with the gradient filter, the step that
    zeroes the same tiles of the gradient, some tiles kept and some skipped."""
    module_at(ROOT / "research/linear_ce/recompute.py", "recompute").cpu_smoke()


def test_p28_products_in_halves_match_the_solution():
    """p28's products with the epilogue in two halves (an experiment against the solution's spills)
    give the solution's step bit for bit."""
    module_at(ROOT / "research/linear_ce/epilogue.py", "epilogue").cpu_smoke()


def test_ncu_raw_csv_reads_each_launch_and_its_stalls(tmp_path):
    """ncu's raw CSV as the profiling scripts write it: the profiled program's output before the
    header, a line of units after it, thousands with commas; stalls largest first, without
    "selected", n/a or the ones below 0.05 cycles."""
    stall = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio".format
    head = ["ID", "Kernel Name", "gpu__time_duration.sum", stall("barrier"), stall("long_scoreboard"),
            stall("selected"), stall("wait"), stall("drain")]
    lines = ['"==PROF== Connected to process 7"', "profiled",
             ",".join(f'"{h}"' for h in head), '"","","ns","ratio","ratio","ratio","ratio","ratio"',
             '"0","kept_matmul_kernel","1,234,567","0.9","9.36","1","0.01","n/a"',
             '"1","chunk_matmul_kernel","229,472","4.92","1.92","1","0.05","0.2"']
    path = tmp_path / "ncu.csv"
    path.write_text("\n".join(lines) + "\n")
    launches = ncu_launches(path)
    assert [d["Kernel Name"] for d in launches] == ["kept_matmul_kernel", "chunk_matmul_kernel"]
    assert ncu_number(launches[0], "gpu__time_duration.sum") == 1234567.0
    assert ncu_stalls(launches[0]) == {"long_scoreboard": 9.36, "barrier": 0.9}
    assert list(ncu_stalls(launches[1])) == ["barrier", "long_scoreboard", "drain", "wait"]


def test_p32_backward_designs_match_the_solution():
    """p32's page: the backward's designs (the diagonal in finer steps, whole blocks without a row mask,
    dQ longest walk first, the fused arrangement) give the solution's gradients, bit for bit where they
    add the same products in the same order, and float64 autograd's within float32 rounding."""
    module_at(ROOT / "research/attention/bwd_designs.py", "bwd_designs").cpu_smoke()
