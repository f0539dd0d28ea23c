"""check(...) for a notebook cell: the kernels as last run in this notebook, the report shown
inline (as HTML in a Jupyter kernel, checker/report/html.py; as text elsewhere), and a picture of where
wrong outputs differ. Runs in a child process, so a hang or a GPU fault cannot take the notebook's
kernel down. Nothing is written to the notebook's file: the report is the cell's output."""
from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

from checker import registry
from checker.cell_history import notebook_file
from checker.history.store import is_learner_folder, learners_own, record_check, state_dir
from checker.history.view import ProgressView

from checker.report import html as rich
from checker.report.model import Report
from checker.run.session import run_check
from checker.source import from_file, from_namespace
from checker.puzzle.edition import NO_SOLUTIONS, student_edition
from checker.puzzle.model import REPO_ROOT, Puzzle

# set by the book's build (book/build_book.py): every check() of its pages runs in the page's process
IN_PROCESS_VARIABLE = "TRITON_PUZZLES_IN_PROCESS"

LIVE_ORIGIN = "this notebook (the kernels as last run)"


class CheckUsageError(Exception):
    """A check() call that cannot be answered: which puzzle, which part. Shown as one line."""


def learner_namespace() -> dict:
    """The globals of the notebook (or script) that called check().

    In Jupyter that is IPython's user namespace, whatever wrapper stands in between; elsewhere,
    the first frame up the stack that is not the checker's own code.
    """
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None and getattr(shell, "user_ns", None) is not None:
        return shell.user_ns
    frame = inspect.currentframe()
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] == "checker":
        frame = frame.f_back
    return frame.f_globals if frame is not None else {}


def in_jupyter() -> bool:
    """A Jupyter kernel (JupyterLab, Notebook, VS Code, a book's build): its front end shows HTML.
    A terminal IPython or a script gets the text report."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


class NotebookReport(Report):
    """A report check() has already shown (as HTML, or a line that says why there is none): as the
    cell's value it shows nothing more (a verdict below it would only repeat it, or invent one)."""

    def _ipython_display_(self) -> None:
        pass


class LiveReport:
    """The report in a Jupyter kernel: the check's title at once, its latest lines while it runs (one
    output, updated in place), then the HTML report in their place; the figure of the first failure
    right after its details, the other failures folded below it."""

    LINES, WIDTH = 4, 120   # while it runs: the last lines, each cut to fit a narrow window

    def __init__(self):
        self.said = 0
        self.recent: list[str] = []
        self.handle = None

    def write(self, line: str) -> None:
        self.said += 1
        if self.said == 1:  # the checker's first line says what it checks, and from where
            # as HTML: a notebook's plain text output breaks words anywhere ("as las|t run")
            from IPython.display import display
            display({"text/html": rich.title_html(line), "text/plain": line}, raw=True)
            return
        if line.strip():
            self.recent = [*self.recent, line.strip()][-self.LINES:]
            self._status("\n".join(x if len(x) <= self.WIDTH else x[:self.WIDTH - 1] + "…" for x in self.recent))

    def clear(self) -> None:
        if self.handle is not None:
            self._status("")

    def _status(self, bundle: dict | str) -> None:
        from IPython.display import display
        bundle = {"text/plain": bundle} if isinstance(bundle, str) else bundle
        if self.handle is None:
            self.handle = display(bundle, raw=True, display_id=True)
        else:
            self.handle.update(bundle, raw=True)

    def show(self, report: Report, plot: bool) -> Report:
        from IPython.display import display
        try:
            head, tail = rich.report_html(report)
        except Exception:  # noqa: BLE001 - the verdict must reach the learner even if its HTML cannot be built
            self.clear()
            print(report.text)
            return report
        self._status({"text/html": head, "text/plain": report.text})  # the text: for front ends without HTML
        if plot and not report.passed:
            from checker.report.plot import plot_failures
            plot_failures(report)
        if tail:
            display({"text/html": tail, "text/plain": ""}, raw=True)
        return NotebookReport(**vars(report))


def _is_puzzle_key(text: str) -> bool:
    return bool(re.fullmatch(r"p?\d+(_\w+)?", text.lower()))


def puzzle_of_namespace(namespace: dict) -> Puzzle:
    """The puzzle whose kernels this notebook defines (kernel names are unique across puzzles)."""
    defined = set(namespace)
    found = [p for p in registry.all_puzzles() if any(k in defined for k in p.kernel_names)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise CheckUsageError("this notebook defines none of the puzzles' kernels yet: run the kernel "
                              "cells first, or name the puzzle, e.g. check(\"p01\")")
    keys = ", ".join(p.key for p in found)
    raise CheckUsageError(f"this notebook defines kernels of several puzzles ({keys}): name one, "
                          f"e.g. check(\"{found[0].key}\")")


def check(puzzle: str | None = None, part: str | list[str] | None = None, *, solution: bool = False,
          namespace: dict | None = None, backend: str = "auto", timeout: float | None = None,
          seed: int = 0, sanitize: bool = True, verbose: bool = False, plot: bool = True,
          only_documented: bool = False, in_process: bool | None = None, html: bool | None = None,
          stale: bool = False, map_case: str | None = None) -> Report:
    """Check `part` of `puzzle` (None: every part); `check("backward")` finds the puzzle itself.

    The kernels come from `namespace` (default: the calling notebook's globals, as last run), or
    from the reference solution with solution=True. Returns a Report (truthy when all passed).
    A kernel whose cell no longer holds what defined it (its last run failed, or it changed since;
    checker/cell_history.py) is not checked: the report says so first. stale=True checks it anyway.
    html: the report as HTML (default: in a Jupyter kernel) or as the shell's text (False).
    map_case: the case whose memory map to draw (its name as the report gives it, e.g. "N=33"),
    failing or not; by default, the first failure's (folded under it in HTML; a PNG in .checker/maps/
    in text).
    in_process: check in this process, without a worker (no time limit: for kernels known to end).
    Default: a worker, unless TRITON_PUZZLES_IN_PROCESS=1 (the book's build sets it: its pages check
    solutions and chosen bugs, and a worker per check would import torch once more each time).
    """
    if in_process is None:
        in_process = os.environ.get(IN_PROCESS_VARIABLE) == "1"
    if puzzle is not None and part is None and not _is_puzzle_key(puzzle):
        puzzle, part = None, puzzle  # check("unfused"): a part of this notebook's puzzle
    if namespace is None and not solution:
        namespace = learner_namespace()
    try:
        spec = registry.get(puzzle) if puzzle is not None else puzzle_of_namespace(namespace or {})
        parts = [p.name for p in spec.parts] if part is None else ([part] if isinstance(part, str) else list(part))
        unknown = [p for p in parts if p not in [q.name for q in spec.parts]]
        if unknown:
            raise CheckUsageError(f"{spec.key} has no part {unknown[0]!r}; its parts: "
                                  f"{', '.join(q.name for q in spec.parts)}")
    except (KeyError, CheckUsageError) as err:
        message = err.args[0]
        print(f"❌ {message}")
        return NotebookReport(False, message, [], usage_error=message)
    if solution and student_edition():
        print(NO_SOLUTIONS)
        return NotebookReport(False, NO_SOLUTIONS, [], usage_error=NO_SOLUTIONS)
    if solution:
        source = from_file(spec.solution, str(spec.solution.relative_to(REPO_ROOT)))
    else:
        source = from_namespace(namespace, LIVE_ORIGIN, stale_too=stale)
        for kernel in source.stale.values() if stale else ():
            print(f"⚠ {kernel.cell[0].upper()}{kernel.cell[1:]} no longer holds the `{kernel.name}` that ran: "
                  f"checked as it last ran, as asked (stale=True).")
    live = LiveReport() if (in_jupyter() if html is None else html) else None
    try:
        report = run_check(spec, parts, source, backend=backend, timeout=timeout, seed=seed, sanitize=sanitize,
                           verbose=verbose, only_documented=only_documented, in_process=in_process,
                           write=live.write if live else lambda line: print(line, flush=True),
                           timeout_advice="timeout=SECONDS", maps=True, map_case=map_case or "",
                           map_folder=None if live else state_dir() / "maps")
    except KeyboardInterrupt:  # ■ in Jupyter: stop the workers, keep the notebook's kernel, no traceback
        from checker.run.runner import kill_live_workers
        kill_live_workers()
        if live:
            live.clear()
        print("❌ Interrupted: the check stopped. Nothing was written; run the cell again to check.")
        return NotebookReport(False, "interrupted", [])
    if not solution and learners_notebook(namespace):
        record_check(spec, report)
    if live:
        return live.show(report, plot)
    if report.usage_error:  # said above, in one line: no verdict below it either
        return NotebookReport(**vars(report))
    if plot and not report.passed:
        from checker.report.plot import plot_failures
        plot_failures(report)
    return report


def learners_notebook(namespace: dict) -> bool:
    """Is the notebook that runs this check one of the learner's own (puzzles/), whose checks are
    their progress? Its front end names it; where none does, a Jupyter kernel runs in the
    notebook's folder (the book's build runs its pages in book/, a script where it is started)."""
    path = notebook_file(namespace)
    return learners_own(path) if path is not None else is_learner_folder(Path.cwd())


def progress() -> ProgressView:
    """Your progress, as the notebook's cell output: every puzzle in order, each part's last check in
    the interpreter and on a GPU, when, and the best --bench fraction of the roofline. An HTML table
    in Jupyter, text elsewhere (the same as `python -m checker --progress`)."""
    return ProgressView()
