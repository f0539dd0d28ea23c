"""Safe checking: every class of bad kernel gets one clear message and exit status 1, the learner's
notebook is byte-identical afterwards, and a notebook-style (in-process) check survives it."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

from checker import check, registry, stubs
from checker.run.runner import STARTUP_TIMEOUT
from checker.source import cell_text
from checker.puzzle.model import REPO_ROOT
from learner_notebooks import namespace_of

PUZZLE = registry.get("p22")
SIGNATURE = "@triton.jit\ndef layernorm_fwd_kernel(x_ptr, gamma_ptr, beta_ptr, z_ptr, H, eps, BLOCK_H: tl.constexpr):\n"


def kernel(body: str) -> str:
    return SIGNATURE + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


def layernorm(store: str) -> str:
    """A one-block LayerNorm (right for H <= BLOCK_H) whose result `z` is stored by `store`."""
    return kernel("""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_ptr + row * H + cols, mask=mask, other=0.0)
        mean = tl.sum(x, axis=0) / H
        diff = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)
        z = diff * rstd * tl.load(gamma_ptr + cols, mask=mask) + tl.load(beta_ptr + cols, mask=mask)
        """ + store.replace("\n", "\n" + " " * 8))


# Each case: a body for the unfused kernel, what the report must say, and the extra CLI options.
BAD = {
    "syntax_error": (kernel("row = tl.program_id(0\ncols = tl.arange(0, BLOCK_H)"), ["SyntaxError", "the cell that defines `layernorm_fwd_kernel`, line"], []),
    "exception": (kernel("""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_H)
        x = tl.load(x_ptr + row * H + cols, mask=cols < H, other=0.0)
        tl.store(z_ptr + row * H + cols, x * undefined_scale, mask=cols < H)
        """), ["`undefined_scale` is not defined", "`layernorm_fwd_kernel`, line 6 of its cell"], []),
    "shape_error_in_tl_op": (kernel("""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_H)
        x = tl.load(x_ptr + row * H + cols, mask=cols < H, other=0.0)
        y = x + tl.zeros([BLOCK_H + 1], dtype=tl.float32)
        tl.store(z_ptr + row * H + cols, y, mask=cols < H)
        """), ["`layernorm_fwd_kernel`, line 6 of its cell"], []),
    "oob_load": (kernel("""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_H)
        x = tl.load(x_ptr + row * H + cols)
        tl.store(z_ptr + row * H + cols, x, mask=cols < H)
        """), ["out-of-bounds", "x_ptr", "mask"], []),
    "oob_store": (kernel("""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_H)
        x = tl.load(x_ptr + row * H + cols, mask=cols < H, other=0.0)
        tl.store(z_ptr + row * H + cols, x)
        """), ["out-of-bounds", "z_ptr", "mask"], []),
    "race": (kernel("""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_H)
        x = tl.load(x_ptr + row * H + cols, mask=cols < H, other=0.0)
        tl.store(z_ptr + cols, x, mask=cols < H)
        """), ["race", "belongs to exactly one program"], []),  # a forgotten row offset, not a missing atomic
    "hang": (kernel("""
        row = tl.program_id(0)
        i = 0
        while i >= 0:
            i += 1
        """), ["still running after 3 s", "stopped", "cases not run",
               "it was at `layernorm_fwd_kernel`, line"], ["--timeout", "3"]),
    "nan_output": (kernel("""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_H)
        x = tl.load(x_ptr + row * H + cols, mask=cols < H, other=0.0)
        tl.store(z_ptr + row * H + cols, tl.sqrt(x * 0.0 - 1.0), mask=cols < H)
        """), ["NaN or Inf"], []),
    "wrong_shape": (layernorm("tl.store(z_ptr + cols * tl.num_programs(0) + row, z, mask=mask)"),
                    ["wrong shape", "transposed"], []),
    "wrong_dtype": (layernorm("tl.store(z_ptr + row * H + cols, z.to(tl.bfloat16), mask=mask)"),
                    ["rounded to bfloat16"], []),
    "output_not_written": (kernel("""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_H)
        x = tl.load(x_ptr + row * H + cols, mask=cols < H, other=0.0)
        """), ["never written"], []),
    "input_mutated": (layernorm("tl.store(x_ptr + row * H + cols, diff, mask=mask)\n"
                                "tl.store(z_ptr + row * H + cols, z, mask=mask)"),
                      ["changed its inputs: x"], []),
}


def notebook_with(tmp_path, first_kernel: str):
    notebook = json.loads(PUZZLE.notebook.read_text(encoding="utf-8"))
    stubs.kernel_cells(notebook)[0]["source"] = first_kernel
    path = tmp_path / "learner.ipynb"
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return path


def run_cli(path, *options):
    return subprocess.run([sys.executable, "-m", "checker", "p22", "--unfused", "--notebook", str(path),
                           "--backend", "interpreter", *options], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("name", list(BAD))
def test_bad_kernel_gets_one_clear_message_and_exit_1(name, tmp_path):
    code, expected, options = BAD[name]
    path = notebook_with(tmp_path, code)
    before = path.read_bytes()
    started = time.monotonic()
    run = run_cli(path, *options)
    elapsed = time.monotonic() - started
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    for words in expected:
        assert words.lower() in out.lower(), f"{name}: expected {words!r} in\n{out}"
    assert "Traceback" not in out, out           # tracebacks only with --verbose
    assert path.read_bytes() == before           # the learner's notebook is untouched
    assert "Overall Result: ❌" in out
    if name == "hang":  # stopped at its own timeout, not at some later, larger limit
        assert elapsed < 3 + STARTUP_TIMEOUT / 2, elapsed


def test_verbose_shows_the_traceback(tmp_path):
    path = notebook_with(tmp_path, BAD["exception"][0])
    run = run_cli(path, "--verbose")
    assert run.returncode == 1 and "Traceback" in run.stdout


@pytest.mark.parametrize("name", ["exception", "oob_store", "race", "hang", "nan_output"])
def test_notebook_style_check_survives(name, tmp_path):
    """In-process, as from a notebook cell: the bad kernel is reported and this process goes on."""
    code, expected, options = BAD[name]
    timeout = float(options[1]) if options else 60.0
    report = check("p22", "unfused", namespace=namespace_of(code, tmp_path), backend="interpreter",
                   timeout=timeout, plot=False)
    assert not report.passed
    assert any(words.lower() in report.text.lower() for words in expected), report.text
    # the process still works: a passing check right after
    assert check("p22", "unfused", solution=True, backend="interpreter", only_documented=True, plot=False).passed


def test_reset_backs_up_then_restores_the_stubs(tmp_path, monkeypatch):
    notebook = tmp_path / "puzzles" / PUZZLE.notebook.name
    notebook.parent.mkdir()
    learner = json.loads(PUZZLE.notebook.read_text(encoding="utf-8"))
    stubs.kernel_cells(learner)[0]["source"] = BAD["exception"][0]
    notebook.write_text(json.dumps(learner), encoding="utf-8")
    learner_bytes = notebook.read_bytes()
    import dataclasses

    import checker.reset as reset
    monkeypatch.setattr(reset, "REPO_ROOT", tmp_path)
    # the same puzzle, with its notebook in tmp_path (its solution stays where it is)
    moved = dataclasses.replace(PUZZLE)
    monkeypatch.setattr(type(moved), "notebook", property(lambda self: notebook))
    assert reset.reset_notebook(moved) == 0
    backups = list(notebook.parent.glob("*.backup-*.ipynb"))
    assert len(backups) == 1 and backups[0].read_bytes() == learner_bytes
    restored = json.loads(notebook.read_text(encoding="utf-8"))
    assert [cell_text(c) for c in stubs.kernel_cells(restored)] == [
        stubs.stub_text(PUZZLE.solution.read_text(encoding="utf-8"), k).rstrip("\n") for k in PUZZLE.kernel_names]


@pytest.mark.gpu
def test_gpu_out_of_bounds_does_not_kill_the_notebook(tmp_path):
    # 2**36 elements past the output: far outside anything allocated, so the GPU faults
    code = BAD["oob_store"][0].replace("tl.store(z_ptr + row * H + cols, x)",
                                       "tl.store(z_ptr + row * H + cols + (1 << 36), x)")
    report = check("p22", "unfused", namespace=namespace_of(code, tmp_path), backend="gpu", plot=False)
    assert not report.passed
    print(report.text)
    assert "illegal memory access" in report.text or "GPU stopped the kernel" in report.text
    # the notebook's process goes on, and so does the GPU in a fresh worker
    assert check("p22", "unfused", solution=True, backend="gpu", only_documented=True, plot=False).passed


@pytest.mark.gpu
def test_gpu_compile_error_points_at_the_learners_line(tmp_path):
    path = notebook_with(tmp_path, BAD["shape_error_in_tl_op"][0])
    run = subprocess.run([sys.executable, "-m", "checker", "p22", "--unfused", "--notebook", str(path),
                          "--backend", "gpu"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    print(run.stdout)
    assert run.returncode == 1
    assert "does not compile" in run.stdout and "`layernorm_fwd_kernel`, line 6 of its cell" in run.stdout
    assert "Traceback" not in run.stdout
