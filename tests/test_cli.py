"""The command line a learner and a teacher use: exit codes, one-line errors, --all, --json (checked
against the schema kept in the repo), --reset on the notebook it is given, and specs that are
checked when they load."""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time

import pytest

from checker import registry, stubs
from checker.registry import _check_one
from checker.puzzle.model import REPO_ROOT, Part, Puzzle, SpecError
from learner_notebooks import solved_notebook

SCHEMA = json.loads((REPO_ROOT / "checker" / "report" / "schema.json").read_text(encoding="utf-8"))
P01 = registry.get("p01")


def checker(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checker", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize(("args", "words"), [
    (["p01", "--notebook", "no/such/notebook.ipynb"], "no notebook at"),
    (["p01", "--timeout", "0"], "above 0"),
    (["p01", "--timeout", "-3"], "above 0"),
    (["p99"], "no puzzle called"),
    (["p01", "--unfused"], "has no part"),
    ([], "which puzzle? e.g. python -m checker p01 "),
])
def test_usage_and_file_errors_are_one_line_with_exit_status_2(args, words):
    run = checker(*args)
    assert run.returncode == 2, run.stdout + run.stderr
    assert words in run.stderr
    assert "Traceback" not in run.stdout + run.stderr and "usage:" not in run.stderr  # not the usage block
    assert "did you mean" not in run.stderr  # a value out of range is no typo


@pytest.mark.parametrize(("args", "words"), [
    (["--reset"], "which puzzle? e.g. python -m checker p01 --reset"),
    (["--bench"], "which puzzle? e.g. python -m checker p22 --bench"),
    (["p01", "--tiemout", "3"], "(did you mean --timeout?)"),
])
def test_a_command_without_its_puzzle_or_with_a_typo_says_what_it_wants(args, words, capsys):
    from checker import cli
    with pytest.raises(SystemExit) if "--tiemout" in args else contextlib.nullcontext():
        assert cli.main(args) == 2
    said = capsys.readouterr().err
    assert words in said and "usage:" not in said and len(said.strip().splitlines()) <= 2, said


def test_output_piped_into_a_reader_that_stops_early_ends_quietly():
    run = subprocess.run(f"{sys.executable} -m checker --list | head -1", shell=True, cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.stdout.startswith("p01") and run.stderr == "", run.stderr


def test_a_kernel_cell_that_does_not_parse_is_said_first_and_nothing_passes(tmp_path):
    unclosed = P01.solution.read_text(encoding="utf-8").replace("tl.arange(0, BLOCK)", "tl.arange(0, BLOCK", 1)
    notebook = solved_notebook(P01, tmp_path / "p01.ipynb", unclosed)
    run = checker("p01", "--notebook", str(notebook))
    assert run.returncode == 1 and "✅" not in run.stdout
    assert run.stdout.splitlines()[1].startswith("❌ The cell that defines `add_constant_kernel` does not run "
                                                 "(SyntaxError: '(' was never closed, line "), run.stdout


def test_a_file_that_is_not_a_notebook_is_one_line_with_exit_status_2(tmp_path):
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{ not json", encoding="utf-8")
    run = checker("p01", "--notebook", str(bad))
    assert run.returncode == 2 and "is not a notebook" in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_gpu_backend_without_cuda_says_so_with_exit_status_2():
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    run = checker("p01", "--solution", "--backend", "gpu")
    assert run.returncode == 2
    assert "no CUDA device here" in run.stdout
    assert "AssertionError" not in run.stdout + run.stderr


def test_help_documents_the_exit_codes():
    out = checker("--help").stdout
    assert "exit status: 0 every check passed; 1 some check failed" in out and "2 the command" in out


def test_json_of_one_puzzle_validates_against_the_schema():
    run = checker("p01", "--solution", "--json", "--backend", "interpreter")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    pytest.importorskip("jsonschema").validate(report, SCHEMA)
    assert report["passed"] and report["puzzles"][0]["puzzle"] == "p01"
    case = report["puzzles"][0]["cases"][0]
    assert case["verdict"] == "pass" and case["outputs"][0]["output"] == "z"


@pytest.mark.every_puzzle
def test_all_checks_a_folder_one_line_per_puzzle_and_part_and_json_validates(tmp_path):
    solved_notebook(P01, tmp_path / P01.notebook.name)
    untouched = registry.get("p22")
    (tmp_path / untouched.notebook.name).write_bytes(untouched.notebook.read_bytes())
    run = checker("--all", "--folder", str(tmp_path), "--json", "--backend", "interpreter")
    assert run.returncode == 1, run.stderr  # p22 not started, the others missing
    report = json.loads(run.stdout)
    pytest.importorskip("jsonschema").validate(report, SCHEMA)
    status = {p["puzzle"]: p["status"] for p in report["puzzles"]}
    assert status["p01"] == "pass" and status["p22"] == "not_started"
    assert all(s == "missing" for k, s in status.items() if k not in ("p01", "p22"))
    assert "✅ 6/6 cases" in run.stderr and "not started" in run.stderr
    assert "checking" not in run.stderr  # the transient "checking …" is for a terminal only
    lines = run.stderr.splitlines()
    keys = [line[:3] for line in lines if line[:1] == "p"]
    assert keys == sorted(keys) and len(keys) == len(registry.all_puzzles()), keys  # the puzzles' order
    total = next(line for line in reversed(lines) if line.startswith("total: "))  # before the progress link
    assert total.startswith("total: 1/") and "puzzles pass (1/1 parts of those checked)" in total
    assert total.endswith(f"{len(keys) - 1} not started"), total
    # one column for every puzzle's verdicts, whatever its title's length
    assert len({line.index(" not started") for line in lines if line[:1] == "p" and " not started" in line}) == 1
    assert lines[keys.index("p01")].index("✅") == lines[keys.index("p22")].index("not started")


def test_all_shows_checking_only_on_a_terminal_and_erases_it(monkeypatch):
    import io

    from checker import cli

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for stream, shown in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        cli._Progress("p01  Add a constant  checking …").erase()
        assert stream.getvalue() == ("p01  Add a constant  checking …\r\033[K" if shown else "")


def test_reset_acts_on_the_notebook_it_is_given_and_clears_old_outputs(tmp_path):
    copy = tmp_path / "my_copy.ipynb"
    notebook = json.loads(P01.notebook.read_text(encoding="utf-8"))
    stubs.kernel_cells(notebook)[0]["source"] = "# my work\n"
    check_cell = next(c for c in notebook["cells"] if c["cell_type"] == "code" and "check(" in "".join(c["source"]))
    check_cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["Overall Result: ✅ ALL CORRECT\n"]}]
    check_cell["execution_count"] = 3
    copy.write_text(json.dumps(notebook), encoding="utf-8")
    own = P01.notebook.read_bytes()
    run = checker("p01", "--reset", "--notebook", str(copy))
    assert run.returncode == 0, run.stderr
    assert P01.notebook.read_bytes() == own                       # the puzzle's own notebook untouched
    backups = list(tmp_path.glob("my_copy.backup-*.ipynb"))
    assert len(backups) == 1 and "# my work" in backups[0].read_text(encoding="utf-8")
    reset = json.loads(copy.read_text(encoding="utf-8"))
    assert stubs.differences_in(P01, reset) == []
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in reset["cells"] if c["cell_type"] == "code")


def test_reset_refuses_a_missing_notebook():
    run = checker("p01", "--reset", "--notebook", "no/such.ipynb")
    assert run.returncode == 2 and "not reset" in run.stderr


# -- specs checked when they load --------------------------------------------------------------
def test_every_spec_loads_without_errors():
    assert registry.errors() == {}


def test_specs_import_neither_torch_nor_triton_and_list_is_instant():
    code = ("import sys, time; t = time.time(); from checker import registry; registry.all_puzzles(); "
            "print('torch' in sys.modules, 'triton' in sys.modules, time.time() - t)")
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True)
    torch_loaded, triton_loaded, seconds = run.stdout.split()
    assert (torch_loaded, triton_loaded) == ("False", "False"), run.stdout
    started = time.monotonic()
    assert checker("--list").returncode == 0
    assert time.monotonic() - started < 5


def _puzzle(**changes) -> Puzzle:
    import dataclasses
    return dataclasses.replace(P01, **changes)


@pytest.mark.parametrize(("module", "changes", "words"), [
    ("p01_other_name", {}, "named after the puzzle's slug"),
    ("p01_add_constant", {"parts": (Part("forward", "F", ("no_such_kernel",), (), None, None),)},
     "does not define"),
    ("p01_add_constant", {"parts": (Part("list", "F", ("add_constant_kernel",), (), None, None),)},
     "collides with an option"),
])
def test_spec_mistakes_are_spec_errors_for_the_author(module, changes, words):
    with pytest.raises(SpecError, match=words):
        _check_one(module, _puzzle(**changes))


def test_bench_without_a_gpu_says_why_with_exit_status_2():
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    run = checker("p22", "--solution", "--bench")
    assert run.returncode == 2 and "--bench needs a CUDA GPU" in run.stdout
    assert checker("p01", "--solution", "--bench").returncode == 2  # p01 has no benchmark
    profiled = checker("p22", "--solution", "--profile")  # --profile is a benchmark's option: it asks for one
    assert profiled.returncode == 2 and "--bench needs a CUDA GPU" in profiled.stdout


@pytest.mark.gpu
def test_bench_times_the_solution_next_to_pytorch():
    # p26: two sizes of fast kernels (34 s on an H100); p22's teaching kernels take minutes at its sizes
    run = checker("p26", "--solution", "--bench", "--profile")
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Benchmark on" in run.stdout and "best other / yours" in run.stdout and "torch.compile: compiled" in run.stdout
    for case in registry.get("p26").bench.cases():  # one table row per benchmark size
        assert sum(line.startswith(case.dims) for line in run.stdout.splitlines()) >= 1, case.dims
        assert f"where one run's time goes, {case.dims}" in run.stdout  # --profile: the kernels, yours and compile's
    assert "ln_dx_kernel" in run.stdout


def test_json_of_a_failing_check_keeps_every_detail(tmp_path):
    """A teacher's grading script gets the reason: every part, case, output, difference and hint of a
    failure, with the hint's cause class, validated against the schema."""
    solution = P01.solution.read_text(encoding="utf-8")
    wrong = tmp_path / "wrong.py"
    wrong.write_text(solution.replace("x + 10.0)", "x + 1.0)"), encoding="utf-8")
    notebook = json.loads(P01.notebook.read_text(encoding="utf-8"))
    for cell in stubs.kernel_cells(notebook):
        cell["source"] = wrong.read_text(encoding="utf-8")
    path = tmp_path / "learner.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    run = checker("p01", "--notebook", str(path), "--json", "--backend", "interpreter")
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    pytest.importorskip("jsonschema").validate(report, SCHEMA)
    entry = report["puzzles"][0]
    assert entry["status"] == "fail" and entry["parts"] and entry["cases"]
    failing = [c for c in entry["cases"] if c["verdict"] == "fail"]
    assert failing and all(c["outputs"] for c in failing)
    output = failing[0]["outputs"][0]
    assert output["verdict"] == "fail" and output["wrong"] > 0 and output["first_wrong"]
    assert output["max_difference"] is not None and output["max_difference"] > 8
    # the first failure's memory map, as data (who wrote z, beside the reference), never a picture
    drawn = failing[0]["memory_map"]
    assert [t["tensor"] for t in drawn["tensors"] if t["role"] == "output"] == ["z"] and drawn["reference"]
    assert "base64" not in run.stdout and not any("memory_map" in c for c in failing[1:])


def test_a_mistyped_option_gets_one_line_and_the_likeliest_meant_one():
    run = checker("p21", "--backwrd")
    assert run.returncode == 2
    assert "did you mean --backward?" in run.stderr and len(run.stderr.strip().splitlines()) == 2
    assert "--reset" not in run.stderr  # no dump of every flag


def test_another_puzzles_notebook_is_named_as_such():
    other = registry.get("p21")
    run = checker("p22", "--notebook", str(other.notebook))
    assert run.returncode == 2 and "defines the kernels of puzzle 21" in run.stderr
    assert "run the cell that defines it" not in run.stdout + run.stderr
