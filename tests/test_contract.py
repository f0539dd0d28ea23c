"""The contract every registered puzzle keeps, one test module for all of them.

For each puzzle: the solution passes in the interpreter using at most half of every tolerance;
the untouched notebook fails with the not-implemented line and exit status 1; the notebook's stubs
are the solution's signatures, and the solution cut into the notebook's kernel cells passes; every
pinned bug (tests/bugs/pNN.py) is rejected for its stated reason: a hint names its true cause class,
none names a class that would send the learner astray; every alternative correct kernel passes; the
book has its page and the table of contents lists it.

Checks run in this process (torch and triton imported once, not once per kernel); the CLI is run
as a subprocess only where its exit status is the point. Select one puzzle with `pytest -m p07`.
"""
from __future__ import annotations

import os

import ast
import json
import re
import subprocess
import sys

import pytest

import block_steps
import gpu_memory
from bugs import entries, patched
from checker import registry, stubs
from checker.mutate.run import report_hints
from checker.run.session import run_check
from checker.source import from_notebook, from_text
from checker.puzzle.model import REPO_ROOT, Puzzle

PUZZLES = registry.all_puzzles()
MARGIN = 0.5  # the solution may use at most this fraction of any tolerance


def by_puzzle(items=None, marks=lambda puzzle: []):
    """pytest params, each marked with its puzzle's marker (pytest -m p07) and `marks(puzzle)`. A
    puzzle's tests share one xdist worker (--dist loadgroup) unless `marks` names another group: its
    float64 references, most of the first check of a puzzle (p22's: 5.0 s, the next ones 0.6-2.2 s),
    are then made once, not once in each worker."""
    def marked(p: Puzzle) -> list:
        extra = marks(p)
        own = [] if any(m.mark.name == "xdist_group" for m in extra) else [pytest.mark.xdist_group(f"puzzle-{p.key}")]
        return [getattr(pytest.mark, p.key), *own, *extra]
    if items is None:
        return [pytest.param(p, id=p.key, marks=marked(p)) for p in PUZZLES]
    return [pytest.param(p, item, id=f"{p.key}-{item.name}", marks=marked(p))
            for p in PUZZLES for item in items(p)]


# The GPU suite runs on one card (the README: pytest -m gpu -n 8). The checks that hold more than
# SMALL_GPU_CHECK (the specs' gpu_memory) are dealt into two xdist groups, so that at most two of them
# run side by side, beside six small ones: 2 x 14 + 6 x 4 GiB at the very most, and the warm workers'
# CUDA contexts, on an 80 GB card. (Two groups, not one: one worker would take every large check in turn.)
MEMORY_GROUPS = 2


def on_the_gpu(items=None):
    """by_puzzle's params, each puzzle whose GPU check is large (Puzzle.gpu_memory) in its xdist group."""
    large = sorted((p for p in PUZZLES if p.gpu_memory), key=lambda p: -p.gpu_memory)
    group = {p.key: f"gpu_memory_{i % MEMORY_GROUPS}" for i, p in enumerate(large)}
    return by_puzzle(items, lambda p: [pytest.mark.xdist_group(group[p.key])] if p.key in group else [])


def check_text(puzzle: Puzzle, text: str, parts: list[str], name: str, **options):
    """The report of a check of `text`. In this process when the sanitizer guards memory (no
    restart of torch per kernel); in a worker process otherwise: an unguarded buggy kernel may
    write over the heap, or hang, which must not take the test run down."""
    lines: list[str] = []
    options.setdefault("backend", "interpreter")
    # a hang needs the worker's time limit: a process of its own
    in_process = options["backend"] == "interpreter" and options.get("sanitize", True) and "timeout" not in options
    # a neutral file name: a reason word must not match the bug's own name in the report's places
    report = run_check(puzzle, parts, from_text(text, "kernels.py"), write=lines.append,
                       in_process=in_process, **options)
    return report, "\n".join(lines)


def all_parts(puzzle: Puzzle) -> list[str]:
    return [p.name for p in puzzle.parts]


def worst_ratios(report) -> dict:
    worst = {}
    for result in report.results:
        for c in result.get("comparisons", []):
            key = (result["part"], result["dtype"], c["label"])
            if c.get("worst_ratio", 0.0) > worst.get(key, (0.0, ""))[0]:
                worst[key] = (c["worst_ratio"], result["case"])
    return worst


# one seed: a second one (7) cost about 30 s of CI's 15 minutes; the margins are checked again on
# the GPU's own inputs (test_solution_passes_on_the_gpu) and by every correct alternative
@pytest.mark.parametrize("seed", [0])
@pytest.mark.parametrize("puzzle", by_puzzle())
def test_solution_passes_within_half_of_each_tolerance(puzzle, seed):
    text = puzzle.solution.read_text(encoding="utf-8")
    report, out = check_text(puzzle, text, all_parts(puzzle), "solution", seed=seed)
    assert report.passed, out
    assert "❌" not in out
    over = {k: v for k, v in worst_ratios(report).items() if v[0] > MARGIN}
    assert not over, f"the solution uses more than {MARGIN:.0%} of these tolerances: {over}"


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_untouched_notebook_fails_kindly_with_exit_status_1(puzzle):
    before = puzzle.notebook.read_bytes()
    # the committed notebook (tests/pristine.py), not the learner's copy in puzzles/
    run = subprocess.run([sys.executable, "-m", "checker", puzzle.key, "--notebook", str(puzzle.notebook)],
                         cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    for kernel in puzzle.kernel_names:
        assert f"{kernel} is not implemented yet" in run.stdout, run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert puzzle.notebook.read_bytes() == before


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_notebook_stubs_are_the_solution_signatures(puzzle):
    assert stubs.differences(puzzle) == []


def _solution_by_kernel(puzzle: Puzzle) -> list[str]:
    """The solution cut into one cell per kernel; helper functions go into the first cell."""
    text = puzzle.solution.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    segments = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            segments[node.name] = "".join(lines[first - 1:node.end_lineno])
    kernels = puzzle.kernel_names
    helpers = [code for name, code in segments.items() if name not in kernels]
    return ["\n\n".join(helpers + [segments[kernels[0]]])] + [segments[k] for k in kernels[1:]]


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_notebook_with_the_solution_in_its_kernel_cells_passes(puzzle, tmp_path):
    """The notebook's own structure (tags, order, prelude) carries the solution to a pass."""
    notebook = json.loads(puzzle.notebook.read_text(encoding="utf-8"))
    for cell, code in zip(stubs.kernel_cells(notebook), _solution_by_kernel(puzzle), strict=True):
        cell["source"] = code
    path = tmp_path / "solved.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    lines: list[str] = []
    report = run_check(puzzle, all_parts(puzzle), from_notebook(path, "solved.ipynb"), backend="interpreter",
                       only_documented=True, in_process=True, write=lines.append)
    assert report.passed, "\n".join(lines)


def case_names(puzzle: Puzzle) -> set[str]:
    """The names a report gives the cases: each one's own, and as each part names it (a note on a
    block holds for the parts that block the size with it)."""
    return {name for c in puzzle.cases() for name in (c.name, *c.titles.values())}


def _case_line(line: str, cases: set) -> bool:
    """'   ❌ M=8, N=100: N wider than BLOCK_N (16)   dims': a case's own line, its name and sizes only."""
    stripped = line.strip()
    return stripped[:1] in ("✅", "❌") and any(stripped[2:].startswith(name) for name in cases)


def assert_reasons(text: str, reasons: tuple, not_words: tuple, name: str, kernels: str = "",
                   cases: set = frozenset()) -> None:
    """Substrings, where the wording is the point: each group of `reasons` has one in the report, no
    phrase of `not_words` is in its hints."""
    # the title line names the puzzle ("Blocks and masks"): it is no reason and no hint; the lines
    # that echo the learner's code (mask=..., a variable called acc) are neither
    code = {line.strip() for line in kernels.splitlines() if line.strip()}
    body = text.split("\n", 1)[1] if "\n" in text else text
    body = "\n".join(line for line in body.split("\n") if line.strip() not in code)
    for alternatives in reasons:
        assert any(r.lower() in body.lower() for r in alternatives), (
            f"{name}: the report should say one of {alternatives}:\n{text}")
    # nor do the case names (which may name a block parameter) on the case and "not run" lines mislead
    # nor do the experiment's smallest failing case and a larger one it passed through, whose settings
    # name the blocks they ran with
    hints = "\n".join(line for line in body.split("\n")
                      if not _case_line(line, cases) and not line.startswith("Not run here:")
                      and not line.strip().startswith(("smallest failing case:", "before it was made smaller,")))
    for wrong in not_words:
        # from a word's start: "race" is not in "traceback"
        assert not re.search(rf"(?<![A-Za-z_]){re.escape(wrong)}", hints, re.I), f"{name}: misleading hint {wrong!r}:\n{text}"


def _classes(hints: list[dict]) -> str:
    """One line per hint: its cause (x!) or its candidates (x? y?), where it comes from, its words."""
    lines = []
    for h in hints:
        named = f"{h['cause']}!" if h["cause"] else " ".join(f"{c}?" for c in h["candidates"]) or "-"
        lines.append(f"  - {named} ({h['source']}) {' '.join(h['hint'].split())[:160]}")
    return "\n".join(lines) or "  (no hints)"


def assert_causes(hints: list[dict], bug, text: str, named: bool = True) -> None:
    """On the report's structured hints (checker.mutate.run.report_hints): a hint names the bug's
    true cause as its cause, or asks about it among its candidates, as far as `bug.named` says
    (named=False: only the classes that must not be a cause are checked); no hint names a class of
    `bug.not_causes` as its cause."""
    causes = {h["cause"] for h in hints if h["cause"]}
    asked = {c for h in hints for c in h["candidates"]}
    if named and bug.named == "cause":
        assert bug.cause in causes, f"{bug.name}: no hint names {bug.cause!r} as its cause:\n{_classes(hints)}\n{text}"
    elif named and bug.named == "candidates":
        assert bug.cause in causes | asked, (f"{bug.name}: no hint names {bug.cause!r} or asks about it:\n"
                                             f"{_classes(hints)}\n{text}")
    wrong = [h for h in hints if h["cause"] in bug.not_causes]
    assert not wrong, f"{bug.name}: a hint names {wrong[0]['cause']!r}, which would mislead:\n{_classes(wrong)}\n{text}"
    if named and bug.code:  # the diagnosis that names it is the one it was pinned by (tests/bugs/pin_codes.py)
        assert any(h.get("code") == bug.code and (h["cause"] in bug.classes or set(h["candidates"]) & set(bug.classes))
                   for h in hints), f"{bug.name}: no hint of code {bug.code!r} names {bug.cause!r}:\n{_classes(hints)}\n{text}"


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_catalog_is_large_enough(puzzle):
    known = entries(puzzle)
    bugs, alternatives = known.pinned, known.passing
    assert len(bugs) >= 3, f"{puzzle.key}: {len(bugs)} catalog bugs, at least 3 wanted"
    assert len({b.name for b in bugs}) == len(bugs)
    assert all(b.cause for b in bugs), f"{puzzle.key}: every pinned bug names its true cause class"
    assert alternatives, f"{puzzle.key}: no alternative correct kernel"
    assert {b.part for b in bugs} <= set(all_parts(puzzle))


@pytest.mark.parametrize(("puzzle", "bug"), by_puzzle(lambda p: entries(p).pinned))
def test_catalog_bug_is_rejected_for_its_reason(puzzle, bug):
    hang = {"timeout": bug.timeout} if bug.timeout else {}
    report, text = check_text(puzzle, patched(puzzle, bug.name, bug.patches), [bug.part], bug.name, **hang)
    if bug.interpreter_blind:
        # programs run one after another in the interpreter: this bug shows only on a GPU (below)
        assert report.passed, text
        return
    assert not report.passed, f"{bug.name} passed:\n{text}"
    assert_causes(report_hints(report, bug.cause), bug, text)
    assert_reasons(text, bug.reasons, bug.not_words, bug.name, patched(puzzle, bug.name, bug.patches),
                   case_names(puzzle))


@pytest.mark.parametrize(("puzzle", "bug"), by_puzzle(
    lambda p: [b for b in entries(p).pinned if b.reasons_unsanitized or b.cpu_blind_without_sanitizer]))
def test_catalog_hints_without_the_sanitizer(puzzle, bug):
    """The values alone, as on a GPU: hints name the bug; races are invisible to the plain interpreter."""
    report, text = check_text(puzzle, patched(puzzle, bug.name, bug.patches), [bug.part], bug.name,
                              sanitize=False)
    if bug.cpu_blind_without_sanitizer:
        # the hole the sanitizer closes: programs run one after another, so the race cannot show
        assert report.passed, text
        return
    assert not report.passed, f"{bug.name} passed:\n{text}"
    assert_causes(report_hints(report, bug.cause), bug, text, named=False)
    assert_reasons(text, bug.reasons_unsanitized, bug.not_words, bug.name, patched(puzzle, bug.name, bug.patches),
                   case_names(puzzle))


def parts_touched(puzzle: Puzzle, text: str) -> list[str]:
    """The parts whose kernels `text` changes from the solution's: an alternative that rewrites the
    backward kernel cannot change what the forward part computes, so only its own parts run (the
    parts of a puzzle like p22 or p28 take 10-40 s each in the interpreter). A change outside the
    parts' own kernels (a helper they call, a module-level constant) runs every part."""
    def functions(source: str) -> tuple[dict[str, str], list[str]]:
        tree = ast.parse(source)
        defs = {n.name: ast.dump(n) for n in tree.body if isinstance(n, ast.FunctionDef)}
        rest = [ast.dump(n) for n in tree.body if not isinstance(n, ast.FunctionDef)]
        return defs, rest
    before, rest_before = functions(puzzle.solution.read_text(encoding="utf-8"))
    after, rest_after = functions(text)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    kernels = {k for part in puzzle.parts for k in part.kernels}
    if rest_before != rest_after or not changed or changed - kernels:
        return all_parts(puzzle)
    return [part.name for part in puzzle.parts if changed & set(part.kernels)]


@pytest.mark.parametrize(("puzzle", "alternative"), by_puzzle(lambda p: entries(p).passing))
def test_alternative_correct_kernel_passes(puzzle, alternative):
    text = patched(puzzle, alternative.name, alternative.patches)
    report, text = check_text(puzzle, text, parts_touched(puzzle, text), alternative.name)
    assert report.passed, text


def test_only_the_parts_an_alternative_touches_run():
    """parts_touched: a change to one part's kernel runs that part; a helper's or a constant's, all."""
    p22 = registry.get("p22")
    solution = p22.solution.read_text(encoding="utf-8")
    backward_only = {k for part in p22.parts for k in part.kernels} - {
        k for part in p22.parts if part.name != "backward" for k in part.kernels}
    kernel = sorted(backward_only)[0]
    touched = solution.replace(f"def {kernel}(", f"def {kernel}(\n", 1)  # same code, new layout: unchanged
    assert parts_touched(p22, touched) == all_parts(p22)
    edited = re.sub(rf"(def {kernel}\(.*?\):\n)", r'\1    """another docstring"""\n', solution, count=1, flags=re.S)
    assert [p for p in parts_touched(p22, edited)] == [part.name for part in p22.parts if kernel in part.kernels]
    assert parts_touched(p22, solution + "\nX = 1\n") == all_parts(p22)


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_book_has_the_page_and_the_toc_lists_it(puzzle):
    page = REPO_ROOT / "book" / f"{puzzle.key}.md"
    assert page.is_file(), f"no book page {page.name}"
    assert f"file: book/{puzzle.key}\n" in (REPO_ROOT / "_toc.yml").read_text(encoding="utf-8")
    text = page.read_text(encoding="utf-8")
    assert f'check("{puzzle.key}", solution=True' in text, "the page shows the checker's report for the solution"
    assert f"solutions/{puzzle.slug}.py" in text, "the page folds the solution in"
    assert "TODO" not in text


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_every_equation_on_the_page_matches_autograd(puzzle):
    """Each labelled equation of the page ($$ ... $$ (eq-pNN-...)) is a formula the spec evaluates,
    equal to autograd in float64 on every CPU case."""
    text = (REPO_ROOT / "book" / f"{puzzle.key}.md").read_text(encoding="utf-8")
    labels = re.findall(r"^\$\$[ \t]*\((eq-[\w-]+)\)", text, re.M)
    assert set(labels) == set(puzzle.equations), (labels, puzzle.equations)
    for label in labels:
        for case in puzzle.cases():
            if not case.gpu_only:
                assert puzzle.equation_error(label, case) < 1e-9, (label, case.name)


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_every_block_a_kernel_steps_by_differs_from_its_other_blocks_in_a_case(puzzle):
    """Wherever the solution steps by a block size (a loop's step, a tile's stride across programs),
    some CPU case takes that step at least twice while each other block size of the kernel differs
    from it: a kernel stepping by the wrong block fails there."""
    kernels = block_steps.kernels(puzzle)
    blocks: dict[str, set] = {name: set() for name in kernels}  # constexprs launched as integers
    taken, differs = set(), set()  # steps taken twice in some case; (step, other block) also differing there
    for _case, name, grid, values in block_steps.launches(puzzle):
        kernel = kernels[name]
        ints = {k for k in kernel.constexprs if isinstance(values.get(k), int) and not isinstance(values[k], bool)}
        blocks[name] |= ints
        for step in block_steps.steps(kernel):
            if block_steps.matters(step, kernel, grid, values):
                taken.add(step)
                differs.update((step, other) for other in ints if values[other] != values[step.block])
    missing = []
    for kernel in kernels.values():
        for step in block_steps.steps(kernel):
            where = f"{kernel.name}, line {step.line}: `{step.text}`"
            if step not in taken:
                missing.append(f"{where} takes one step at most in every CPU case")
            missing += [f"{where} never takes two steps with {step.block} != {other}"
                        for other in sorted(blocks[kernel.name] - {step.block})
                        if step in taken and (step, other) not in differs]
    assert not missing, "add a CPU case for each:\n" + "\n".join(missing)


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_notebook_has_no_placeholder_text(puzzle):
    notebook = json.loads(puzzle.notebook.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        assert "TODO: " not in "".join(cell["source"]).replace("# TODO: write this kernel", ""), cell["source"]


# -- on a GPU ----------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("puzzle", on_the_gpu())
def test_solution_passes_on_the_gpu(puzzle):
    """Within half of each tolerance, and within a learner's card: the check's largest case allocates at
    most gpu_memory.BUDGET GiB, and no more than its spec declares (Puzzle.gpu_memory)."""
    # the time limit is a hang guard: a case's time includes compiling its kernels, slow on a busy host
    report, out = check_text(puzzle, puzzle.solution.read_text(encoding="utf-8"), all_parts(puzzle), "solution",
                             backend="gpu", timeout=240)
    print(out)
    assert report.passed, out
    over = {k: v for k, v in worst_ratios(report).items() if v[0] > MARGIN}
    assert not over, over
    allocated, reserved, case = gpu_memory.peak(report)
    line = f"{puzzle.key}: {allocated:.2f} GiB allocated, {reserved:.2f} reserved at the peak ({case})"
    print(line)
    if os.environ.get("TRITON_PUZZLES_GPU_PEAKS"):  # a file the run collects each puzzle's peak in
        with open(os.environ["TRITON_PUZZLES_GPU_PEAKS"], "a", encoding="utf-8") as peaks:
            peaks.write(line + "\n")
    assert allocated <= gpu_memory.BUDGET, (allocated, case)
    assert allocated <= gpu_memory.allowed(puzzle), f"{allocated:.2f} GiB in {case}: declare it (gpu_memory=)"


@pytest.mark.gpu
@pytest.mark.parametrize("puzzle", on_the_gpu())
def test_float64_reference_on_the_gpu_is_the_cpus(puzzle):
    """A GPU check computes its cases' float64 references on the GPU (or on the CPU, for a spec
    whose formulas make CPU tensors): the same answer, known-bug variants and shares as the CPU's."""
    import torch
    def size(case):
        return sum(t.numel() for t in puzzle.make_inputs(case, "cpu").values() if torch.is_tensor(t))
    # the documented case and the smallest GPU-only one (the CPU's float64 reference of the largest
    # takes a minute on a busy host)
    chosen = [c for c in puzzle.cases() if c.documented][:1] + sorted((c for c in puzzle.cases() if c.gpu_only),
                                                                       key=size)[:1]
    for case in chosen:
        on_gpu = puzzle.reference(puzzle.make_inputs(case, "cuda"), case)
        on_cpu = puzzle.reference(puzzle.make_inputs(case, "cpu"), case)
        for field in ("outputs", "contributions", "touched"):
            for name, want in getattr(on_cpu, field).items():
                got = getattr(on_gpu, field)[name]
                assert got.device.type == "cpu", (case.name, field, name)
                assert torch.allclose(got.double(), want.double(), rtol=1e-9, atol=1e-12), (case.name, field, name)
        for variant, outputs in on_cpu.alternatives.items():
            for name, want in outputs.items():
                assert torch.allclose(on_gpu.alternatives[variant][name], want, rtol=1e-9, atol=1e-12, equal_nan=True), \
                    (case.name, variant, name)
        assert on_gpu.condition == pytest.approx(on_cpu.condition, rel=1e-9), case.name
    torch.cuda.empty_cache()  # this test's process serves the rest of the suite: it keeps no cached blocks


@pytest.mark.gpu
@pytest.mark.parametrize(("puzzle", "alternative"), on_the_gpu(lambda p: entries(p).passing + entries(p).right))
def test_alternative_correct_kernel_passes_on_the_gpu(puzzle, alternative):
    """Every correct rewrite passes where the GPU-only cases run too: the large ones, the bf16 ones, and
    the GPU's own compiler (a rewrite the catalog took for correct, p09's tile summed in bf16, failed
    the GPU's large bf16 case, which the interpreter did not run)."""
    text = patched(puzzle, alternative.name, alternative.patches)
    report, out = check_text(puzzle, text, parts_touched(puzzle, text), alternative.name, backend="gpu",
                             timeout=240, experiments=False)
    assert report.passed, out


@pytest.mark.gpu
@pytest.mark.parametrize(("puzzle", "bug"), on_the_gpu(
    lambda p: [b for b in entries(p).measured if b.cause == "precision" and not b.gpu_blind]))
def test_measured_rounding_is_rejected_on_the_gpu(puzzle, bug):
    """The roundings the catalogs measured (a value kept in, or summed in, a narrower type) fail on a GPU,
    whose bf16 and fp16 arithmetic is the real one: where a bf16 case cannot tell one from the output's
    own rounding at the store (tests/bf16_margins.py), an fp32 case must."""
    report, text = check_text(puzzle, patched(puzzle, bug.name, bug.patches), [bug.part], bug.name,
                              backend="gpu", first_failure=True)
    assert not report.passed, f"{bug.name} passed on the GPU:\n{text}"


@pytest.mark.gpu
@pytest.mark.parametrize(("puzzle", "bug"), on_the_gpu(lambda p: entries(p).pinned))
def test_catalog_bug_is_rejected_on_the_gpu(puzzle, bug):
    # "rejected" needs one failing case: stop there, unless the bug must pass or its reasons are asked for
    quick = not bug.gpu_blind and not bug.gpu_reasons
    report, text = check_text(puzzle, patched(puzzle, bug.name, bug.patches), [bug.part], bug.name,
                              backend="gpu", first_failure=quick)
    if bug.gpu_blind:
        assert report.passed, f"{bug.name} is marked invisible on a GPU, but the GPU run failed it:\n{text}"
        return
    if bug.gpu_by_chance:  # either verdict: the report must only be whole (no crash of the checker)
        assert report.parts, text
        return
    assert not report.passed, f"{bug.name} passed on the GPU:\n{text}"
    if bug.gpu_reasons:
        assert_causes(report_hints(report, bug.cause), bug, text, named=False)
        assert_reasons(text, bug.gpu_reasons, bug.not_words, bug.name, patched(puzzle, bug.name, bug.patches),
                       case_names(puzzle))


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_notebook_has_one_check_cell_per_part(puzzle):
    """The check cells name this puzzle and its parts, each part once (a scaffold's "forward" left in a
    backward puzzle would answer the learner with a usage error)."""
    notebook = json.loads(puzzle.notebook.read_text(encoding="utf-8"))
    calls = [re.fullmatch(r'check\("(p\d+)"(?:, "(\w+)")?\)\s*', "".join(cell["source"]))
             for cell in notebook["cells"] if cell["cell_type"] == "code" and "".join(cell["source"]).startswith("check(")]
    assert calls and all(calls), [c for c in calls if not c]
    assert {c.group(1) for c in calls} == {puzzle.key}
    named = [c.group(2) for c in calls]
    assert named == [p.name for p in puzzle.parts] or named == [None], named
