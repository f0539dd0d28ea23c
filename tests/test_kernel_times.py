"""--bench --profile: each kernel of one run with its time, yours next to torch.compile's. The
grouping and the printed table need no GPU; the profiler itself runs only where CUDA is."""
import pytest

from checker.bench.kernel_times import group, kernel_times, lines, short
from checker.bench.tables import table
from tests.test_speed import row


def test_events_of_several_runs_become_times_per_run_in_launch_order():
    events = [("stats", 30.0), ("product", 360.0), ("sum", 10.0), ("sum", 12.0)] * 5
    assert group(events, 5) == [["stats", 30.0, 1], ["product", 360.0, 1], ["sum", 22.0, 2]]


def test_long_names_keep_their_head_and_tail():
    nnt, ntt = ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_extra_words_NNT",
                "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_extra_words_NTT")
    assert short(nnt).startswith("nvjet_sm90") and "…" in short(nnt) and short(nnt) != short(ntt)
    assert short("void ln_dx_kernel") == "ln_dx_kernel"


def test_the_columns_stand_side_by_side_with_their_totals():
    out = lines("M=8192", {"yours": [["a_kernel", 100.0, 1], ["b_kernel", 20.0, 2]],
                           "compile": [["nvjet_gemm", 90.0, 1]]})
    assert "yours: 120.0 µs in 3 launches" in out[1] and "compile: 90.0 µs in 1 launches" in out[1]
    assert "a_kernel" in out[2] and "nvjet_gemm" in out[2] and out[2].index("a_kernel") < out[2].index("nvjet")
    assert "b_kernel" in out[3] and "x2" in out[3] and "nvjet" not in out[3]


def test_the_table_lists_kernels_only_for_profiled_rows():
    plain = table([row()], "H100")
    profiled = table([row(kernels={"yours": [["k", 40.0, 1]], "compile": [["c", 60.0, 1]]})], "H100")
    assert not any("where one run's time goes" in line for line in plain)
    assert any("where one run's time goes, M=4096, H=1024" in line for line in profiled)


@pytest.mark.gpu
def test_a_graph_replay_is_profiled_kernel_by_kernel():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    x = torch.randn(1 << 20, device="cuda")
    y = torch.empty_like(x)
    step = lambda: (torch.mul(x, 2.0, out=y), torch.add(y, 1.0, out=y))  # noqa: E731
    step()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    found = kernel_times(graph.replay, steps=3)
    assert len(found) >= 1 and sum(n for *_, n in found) == 2 and all(us > 0 for _, us, _ in found)


def test_the_book_table_ends_with_each_columns_total():
    from checker.bench.kernel_times import markdown
    md = markdown({"yours": [["a", 100.0, 1], ["b", 20.0, 2]], "compile": [["c", 90.0, 1]]}).splitlines()
    assert md[0] == "| yours: kernel | µs | compile: kernel | µs |"
    assert md[3] == "| `b` ×2 | 20.0 |  |  |" and md[-1] == "| **all** | **120.0** | **all** | **90.0** |"
