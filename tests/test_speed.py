"""The benchmark's table (no GPU needed): every column is what its header says, the best time that
is not the learner's is marked, and the header says what was measured and how."""
from checker.bench.measured import BenchRow
from checker.bench.tables import against, against_liger, markdown_table, table


def row(**kw) -> BenchRow:
    base = dict(case="c", dims="M=4096, H=1024", dtype="float32", ms=0.04, torch_ms=0.08, compile_ms=0.06,
                gbytes=0.05, tflop=None, copy_gbps=2000.0, device="H100", timing="CUDA graphs",
                compile_status="compiled", liger_ms=0.05, torch_version="2.11", triton_version="3.6")
    return BenchRow(**{**base, **kw})


def test_the_best_other_time_is_marked_and_compared():
    lines = table([row()], "H100")
    body = lines[-1]
    assert "0.050*" in body and "0.060*" not in body and "1.25x" in body  # Liger is the best other: 0.05 / 0.04
    assert "liger ms" in lines[-2] and "best other / yours" in lines[-2]


def test_the_header_says_what_was_measured_against():
    head = " ".join(table([row(compile_status="ran eager: torch.compile made no graph")], "H100")[:2])
    assert "torch 2.11" in head and "triton 3.6" in head and "CUDA graphs" in head and "L2 cache flushed" in head
    assert "ran eager" in head


def test_no_liger_column_where_no_row_has_it():
    md = markdown_table([row(liger_ms=None), row(liger_ms=None, dims="M=4096, H=4096")])
    assert "liger" not in md and md.count("\n") == 3
    assert "0.060*" in md  # torch.compile is then the best other


def test_scratch_memory_is_listed_only_where_measured():
    lines = table([row(scratch_mib={"yours": 130.0, "torch": 6144.0}), row(dims="M=8, H=8")], "H100")
    memory = [line for line in lines if line.startswith("scratch memory")]
    assert memory == ["scratch memory, MiB (peak beyond inputs and returned outputs), M=4096, H=1024: "
                      "yours 130, torch 6,144"]


def test_the_books_table_puts_its_verdict_next_to_the_size():
    """The book's table is wider than a laptop's column and scrolls: "best other / yours", the
    column a reader looks for, comes second, never scrolled out of sight (issue 35, item 10)."""
    head, _, first, _ = markdown_table([row(), row(dims="M=4096, H=4096")]).splitlines()
    cells = [c.strip() for c in head.strip("|").split("|")]
    assert cells[:2] == ["size", "best other / yours"] and cells.count("best other / yours") == 1
    assert [c.strip() for c in first.strip("|").split("|")][1].endswith("x")


def test_further_baselines_get_their_own_columns():
    """A spec's extra baselines (two PyTorch backends, say) are columns like the fixed ones, and count
    as the best other time when they are."""
    rows = [row(liger_ms=None, extra_ms={"flash": 0.03}), row(liger_ms=None, extra_ms={})]
    md = markdown_table(rows)
    head, _, first, second = md.splitlines()
    assert "flash ms" in head and head.index("compile ms") < head.index("flash ms")
    assert "0.030*" in first and "0.75x" in first  # flash is the best other: 0.03 / 0.04
    assert first.count("|") == second.count("|") and "0.060*" in second  # a row without it shows "-"


def test_the_header_says_why_there_is_no_liger_column():
    """"Not installed" and "Liger has no kernel for this work" are different facts: the header says
    which one it was."""
    words = lambda rows: " ".join(table(rows, "H100")[:2])  # noqa: E731
    assert "not installed here" in words([row(liger_ms=None, liger_status="not installed")])
    assert "has no kernel for this work" in words([row(liger_ms=None, liger_status="no kernel")])
    assert "its kernel for the same work" in words([row(liger_status="kernel")])


def test_scratch_is_poisoned_in_a_check_and_plain_while_timed(monkeypatch):
    """The benchmark times the learner's launch, not the checker's NaN fill of its scratch buffers
    (kernels of their own: at p25's shortest bf16 rows about a fifth of the time in ncu)."""
    import torch

    from checker import poison as poisoning
    from checker.puzzle import scratch, timing
    filled = []
    monkeypatch.setattr(poisoning, "poison", lambda t: filled.append(t.shape))
    like = torch.zeros(4)
    scratch(8, like=like)
    with timing():
        scratch(8, like=like)
        scratch(3, like=like)
    scratch(5, like=like)  # poisoned again after the block
    assert filled == [torch.Size([8]), torch.Size([5])]


def test_a_floor_column_is_shown_but_never_the_best_other():
    """A column doing only part of the work (a design's products by cuBLAS) is no competitor: faster
    than everything else, it still is not marked, nor compared with yours."""
    lines = table([row(extra_ms={"products": 0.01}, floors=["products"])], "H100")
    assert "products ms" in lines[-2] and "0.010" in lines[-1] and "0.010*" not in lines[-1]
    assert "0.050*" in lines[-1] and "1.25x" in lines[-1]
    assert any(line.startswith("products: part of the work only") for line in lines)


def test_against_liger_counts_the_sizes_where_yours_is_faster():
    words = against_liger([row(ms=0.04, liger_ms=0.05), row(dims="M=8, H=8", ms=0.06, liger_ms=0.05)])
    assert words.startswith("Faster than Liger-Kernel's kernel at 1 of 2 sizes")
    assert "M=8, H=8: 0.0600 ms against 0.0500 ms, 0.417 and 0.500 of the copy bandwidth" in words


def test_against_liger_says_where_the_copy_was_no_ceiling():
    words = against_liger([row(ms=0.02, liger_ms=0.05), row(dims="M=8, H=8")])
    assert "At M=4096, H=1024 the copy of the same bytes, timed in the same rounds, was slower" in words
    assert "M=8, H=8 the copy" not in words


def test_the_torch_column_names_the_library_pytorch_picked():
    """"torch" alone does not say which kernel was beaten: the head names the pick's library, each
    cell names its own where the sizes got different ones, and the spec's notes join the head."""
    same = table([row(torch_backend="cuDNN"), row(torch_backend="cuDNN", dims="M=8, H=8")], "H100",
                 notes=("flops per size: counted so",))
    assert "torch (cuDNN) ms" in same[-3] and "(cuDNN)" not in same[-1].replace("torch (cuDNN)", "")
    assert any("named from its GPU kernels" in line for line in same) and "flops per size: counted so" in same
    mixed = markdown_table([row(torch_backend="cuDNN"), row(torch_backend="flash", dims="M=8, H=8")])
    assert "torch (cuDNN / flash) ms" in mixed and "0.080 (flash)" in mixed and "0.080 (cuDNN)" in mixed
    assert "torch ms" in markdown_table([row()])  # no backend measured: the plain name


def test_pytorchs_attention_backend_is_named_from_its_kernel_names():
    from checker.specs.families.attention import sdpa_backend
    # cuDNN's kernel names say "flash" too: the library's own name decides first
    assert sdpa_backend(["Memset (Device)", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16"]) == "cuDNN"
    assert sdpa_backend(["void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits>"]) == "flash"
    assert sdpa_backend(["fmha_cutlassF_bf16_aligned_64x64_rf_sm80"]) == "efficient"
    assert sdpa_backend(["void at::native::softmax_warp_forward", "gemm"]) == "math"


def test_the_ceiling_says_how_it_was_measured_and_when_it_is_not_to_be_trusted():
    from checker.bench.measured import USUAL_COPY_GBPS
    from checker.bench.tables import ceiling_lines
    device = "NVIDIA H100 80GB HBM3"
    usual = USUAL_COPY_GBPS[device]
    steady = [row(copy_gbps=0.97 * usual, copy_large_gbps=usual), row(dims="M=8, H=8", copy_gbps=0.95 * usual,
                                                                     copy_large_gbps=1.01 * usual)]
    lines = ceiling_lines(steady, device)
    assert len(lines) == 1 and "both ends of every round" in lines[0] and f"{1.005 * usual:.0f} GB/s" in lines[0]
    # a slow device: every fraction of its copy is suspect, and the head says so
    slow = [row(copy_gbps=0.75 * usual, copy_large_gbps=0.8 * usual)]
    assert any("-20% from this device's usual" in line for line in ceiling_lines(slow, device))
    # a size too small to reach the memory's rate: its own copy falls short of the large one
    small = [row(dims="M=64, H=64", copy_gbps=0.6 * usual, copy_large_gbps=usual)]
    assert any("fell short of the large copy at M=64, H=64 (60%)" in line for line in ceiling_lines(small, device))
    assert ceiling_lines([row()], device) == []  # rows measured before the large copy was kept
    assert any("fell short" in line for line in table(small, device))


def test_a_baseline_left_out_says_why_and_the_libraries_their_versions():
    rows = [row(absent={"helion": "no examples"}, baseline_versions={"liger-kernel": "0.8.5"})]
    words = "\n".join(table(rows, "GPU"))
    assert "helion: left out, no examples." in words
    assert "baselines' libraries installed: liger-kernel 0.8.5." in words


def test_helion_examples_are_left_out_without_their_folder(monkeypatch):
    from checker.puzzle.helion import helion_status
    from checker.specs.p25_layernorm_backward_roofline import helion_backward
    monkeypatch.delenv("HELION_EXAMPLES", raising=False)
    assert helion_status().startswith("no examples")
    assert helion_backward(None, None, None, None) is None and helion_backward.why_absent is helion_status


def test_a_baseline_left_out_at_one_size_says_where():
    rows = [row(extra_ms={"helion": 0.05}), row(dims="M=8, H=96", absent={"helion": "it failed at this size (E: x)"})]
    assert "helion: left out at M=8, H=96, it failed at this size (E: x)." in "\n".join(table(rows, "GPU"))
    assert "Not timed at M=8, H=96: it failed at this size (E: x)." in against(rows, "helion", "Helion's example")


def test_the_tutorial_column_is_left_out_without_its_file_and_says_why(monkeypatch, tmp_path):
    from checker.puzzle.tutorials import tutorial_status
    from checker.specs.families.attention import tutorial_backward
    monkeypatch.delenv("TRITON_TUTORIALS", raising=False)
    assert tutorial_status().startswith("no tutorials")
    assert tutorial_backward(None, None, None, None, True) is None and tutorial_backward.why_absent is tutorial_status
    monkeypatch.setenv("TRITON_TUTORIALS", str(tmp_path))
    assert tutorial_status() == "no 06-fused-attention.py in TRITON_TUTORIALS"
    (tmp_path / "06-fused-attention.py").write_text("import a_module_no_one_has\n")
    assert tutorial_status().startswith("not importable (ModuleNotFoundError")


def test_the_tutorial_is_refused_where_it_cannot_do_the_work():
    """Before any run: grouped-query heads, a sequence not of whole 128-row blocks, and a non-causal
    size for a version whose backward kernel has no CAUSAL (it masks every backward)."""
    import types

    import torch

    from checker.specs.families.attention import tutorial_refusal
    causal_only = types.SimpleNamespace(_attn_bwd=types.SimpleNamespace(arg_names=["Q", "K", "V"]))
    q, k = torch.empty(1, 4, 256, 64), torch.empty(1, 4, 256, 64)
    assert "one key/value head" in tutorial_refusal(causal_only, q, torch.empty(1, 2, 256, 64), True)
    assert "multiple of 128" in tutorial_refusal(causal_only, torch.empty(1, 4, 200, 64), k, True)
    assert "masks every backward as causal" in tutorial_refusal(causal_only, q, k, False)
