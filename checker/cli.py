"""python -m checker p22 [--unfused|--fused|--backward] [--solution] ... ; python -m checker --all.

Exit status: 0 every check passed; 1 some check failed (or a puzzle is not started); 2 the command
could not run as asked (usage, a missing or unreadable notebook, a spec error, no CUDA device).
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

from checker import registry
from checker.history.store import is_learner_folder, learner_folder, learners_own, record_bench, record_check, state_dir
from checker.report import json as report_json
from checker.report.model import Report
from checker.run.hang_limits import DEFAULT_TIMEOUT, FACTOR, FLOOR
from checker.run.session import BACKENDS, run_check
from checker.source import NotebookError, from_file, from_notebook, not_started
from checker.puzzle.edition import NO_SOLUTIONS, student_edition
from checker.puzzle.model import REPO_ROOT, Puzzle, SpecError

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
PROGRESS_LINK = ("Your progress over time, on the interpreter and on a GPU, with each part's last check: "
                 "python -m checker --progress")
EPILOG = """exit status: 0 every check passed; 1 some check failed (or, with --all, a puzzle is not
started); 2 the command could not run as asked (usage, a missing or unreadable notebook, a spec
error, --backend gpu without a CUDA device).

examples:
  python -m checker p22 --backward      the backward part of the saved notebook
  python -m checker p01 --solution      the reference solution
  python -m checker --all               every puzzle of puzzles/, one line per part
  python -m checker --all --json        the same as JSON, for a grading script
  python -m checker --progress          your last check of every part, on each backend
  python -m checker --grade DIR         a class's notebooks (one folder per student): a gradebook
  python -m checker --grade DIR --scheduler tcp://HOST:8786   the same checks on a Dask cluster"""


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text}")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of processes, 1 or more, not {text}")
    return value


class _Parser(argparse.ArgumentParser):
    """One line for a mistyped option, with the likeliest meant one, instead of every flag."""

    def error(self, message: str):
        options = [o for action in self._actions for o in action.option_strings if o.startswith("--")]
        # a known option named in the message ("argument --timeout: must be ...") is no typo
        unknown = [word for word in message.replace(",", " ").split()
                   if word.startswith("--") and word.split("=")[0].rstrip(":") not in options]
        for word in unknown:
            close = difflib.get_close_matches(word.split("=")[0], options, n=1, cutoff=0.6)
            if close:
                message += f" (did you mean {close[0]}?)"
        self.exit(2, f"{self.prog}: {message}\n(python -m checker --help lists the options)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m checker", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description=("Check a puzzle's kernels against PyTorch autograd. Reads the saved notebook "
                     "puzzles/pNN_*.ipynb (cells tagged 'kernel'); never writes to it."))
    parser.add_argument("puzzle", nargs="?", help="puzzle number, e.g. p22")
    parser.add_argument("--list", action="store_true", help="list the puzzles and their parts")
    parser.add_argument("--all", action="store_true",
                        help="check every puzzle of a notebook folder (--folder), one line per part")
    parser.add_argument("--progress", action="store_true",
                        help="your progress: each part's last check on each backend, and the best --bench")
    parser.add_argument("--grade", metavar="DIR",
                        help="a teacher's gradebook: check every student's folder of notebooks under DIR "
                             "(one subfolder per student) into a CSV and a JSON table; never writes to them")
    parser.add_argument("--out", metavar="PATH",
                        help="with --grade: where the gradebook goes (default DIR/gradebook.csv and .json)")
    parser.add_argument("--puzzles", metavar="p01,p02",
                        help="with --grade: only these puzzles (default: every puzzle)")
    parser.add_argument("--jobs", type=_count, default=None, metavar="N",
                        help="with --grade: checks at once (default: one per core, one per two on a GPU host)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="with --grade: run the checks on a Dask cluster, its scheduler's address "
                             "(tcp://host:8786), or 'local' for --jobs worker processes on this machine")
    parser.add_argument("--folder", metavar="DIR", default=str(REPO_ROOT / "puzzles"),
                        help="with --all: the folder of notebooks (default: puzzles/)")
    parser.add_argument("--json", action="store_true", help="print a machine-readable report on stdout")
    parser.add_argument("--solution", action="store_true", help="check the reference kernels in solutions/")
    parser.add_argument("--notebook", metavar="PATH", help="check (or --reset) this notebook instead of the puzzle's own")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="auto: the interpreter, and the GPU too when CUDA is there")
    parser.add_argument("--timeout", type=_positive, default=None, metavar="SECONDS",
                        help="stop a kernel that runs longer than this in one case (default: the puzzle's own, "
                             f"{FACTOR:g}× its reference's slowest case in the interpreter, at least {FLOOR:g}; "
                             f"{DEFAULT_TIMEOUT:g} on a GPU)")
    parser.add_argument("--seed", type=int, default=0,
                        help="draw other random inputs (with --grade: inputs the students never ran)")
    parser.add_argument("--workers", type=_count, default=None, metavar="N",
                        help="interpreter processes sharing the cases (default: one per two idle cores, up to 4)")
    parser.add_argument("--no-sanitize", action="store_true",
                        help="interpreter: skip the out-of-bounds and race checks (faster, blind)")
    parser.add_argument("--verbose", action="store_true", help="show full tracebacks")
    parser.add_argument("--map", metavar="CASE", default="",
                        help="draw the memory map of this case (its name as the report gives it), failing or not; "
                             "by default the first failure's is drawn, into .checker/maps/")
    parser.add_argument("--bench", action="store_true",
                        help="GPU: after the check passes, time the kernels next to PyTorch and torch.compile")
    parser.add_argument("--profile", action="store_true",
                        help="with --bench: also list the kernels of one run, yours next to torch.compile's, each "
                             "with its time (torch.profiler)")
    parser.add_argument("--reset", action="store_true",
                        help="back up the notebook next to itself, then restore its original stubs")
    parser.add_argument("--no-server", action="store_true",
                        help="run here, without the warm checker in the background (also: TRITON_PUZZLES_NO_SERVER=1)")
    parser.add_argument("--stop-server", action="store_true", help="stop the warm checker of this checkout")
    return parser


def _add_part_flags(parser: argparse.ArgumentParser) -> None:
    # every part of every puzzle is a flag; a puzzle's parts are named in its spec
    names = sorted({part.name for puzzle in registry.all_puzzles() for part in puzzle.parts})
    for name in names:
        parser.add_argument(f"--{name}", action="append_const", const=name, dest="parts",
                            help=f"check only the '{name}' part")


def _which_puzzle(args) -> None:
    """A command that needs a puzzle, given none: one line with the command it wants, not the usage."""
    keys = [p.key for p in registry.all_puzzles()]
    benched = [p.key for p in registry.all_puzzles() if p.bench]
    if args.bench or args.profile:
        example = f"python -m checker {benched[0] if benched else 'p25'} --bench (puzzles with a benchmark: " \
                  f"{', '.join(benched)})"
    elif args.reset:
        example = "python -m checker p01 --reset (backs your notebook up next to it, then restores its stubs)"
    else:
        example = "python -m checker p01 (the saved notebook of puzzle 1)"
    print(f"python -m checker: which puzzle? e.g. {example}. The puzzles: {keys[0]} to {keys[-1]} "
          f"(python -m checker --list); the options: python -m checker --help", file=sys.stderr)


def _list() -> int:
    for puzzle in registry.all_puzzles():
        parts = ", ".join(f"--{p.name} ({p.title})" for p in puzzle.parts)
        print(f"{puzzle.key}  {puzzle.title}: {parts}")
    for message in registry.errors().values():
        print(message)
    return EXIT_USAGE if registry.errors() else EXIT_PASS


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _check_all(args) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        print(f"no folder {folder}", file=sys.stderr)
        return EXIT_USAGE
    # (puzzle, source, the entry when it cannot run, path, why it cannot): checked side by side where
    # cores allow, and reported in the puzzles' order
    todo = [_prepare(puzzle, folder, args) for puzzle in registry.all_puzzles()]
    parallel = _puzzles_at_once(args)

    def check(item):
        puzzle, source = item[0], item[1]
        return run_check(puzzle, [p.name for p in puzzle.parts], source, backend=args.backend,
                         timeout=args.timeout, seed=args.seed, sanitize=not args.no_sanitize,
                         write=lambda line: None, shards=args.workers if parallel == 1 else 1,
                         sharing=parallel)

    from concurrent.futures import ThreadPoolExecutor
    entries, tally = [], AllTally()
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        reports = {item[0].key: pool.submit(check, item) for item in todo if item[2] is None}
        try:
            for puzzle, source, entry, path, why in todo:
                if entry is not None:
                    entries.append(entry)
                    tally.count(entry["status"], [])
                    _say(_puzzle_line(puzzle, why))
                    continue
                progress = _Progress(_puzzle_line(puzzle, "checking …"))
                report = reports[puzzle.key].result()
                progress.erase()
                entries.append(report_json.report_entry(puzzle, str(path), report))
                passed = sum(part["passed"] for part in report.parts)
                tally.count("pass" if report.passed else "fail", report.parts)
                _say(_puzzle_line(puzzle, f"{'✅' if report.passed else '❌'} {passed}/{len(report.parts)} parts"))
                _say_parts(puzzle, report)
                if not args.solution and learners_own(path):
                    record_check(puzzle, report)
        except KeyboardInterrupt:
            # the puzzles not started are dropped and the running ones' workers stopped, so that
            # leaving the pool (it waits for its threads) takes a moment, not the rest of the class
            pool.shutdown(wait=False, cancel_futures=True)
            from checker.run.runner import kill_busy_workers
            kill_busy_workers()
            raise
    _say(tally.line())
    if args.json:
        print(json.dumps(report_json.document(entries), indent=1))
    if not args.solution and is_learner_folder(folder):
        _say(f"\n{PROGRESS_LINK}")
    return EXIT_PASS if tally.everything_ok else EXIT_FAIL


class AllTally:
    """--all's total line: puzzles passed, parts passed, puzzles not started."""

    def __init__(self) -> None:
        self.statuses: list[str] = []
        self.parts_passed = self.parts = 0

    def count(self, status: str, parts: list[dict]) -> None:
        self.statuses.append(status)
        self.parts += len(parts)
        self.parts_passed += sum(part["passed"] for part in parts)

    @property
    def everything_ok(self) -> bool:
        return all(status == "pass" for status in self.statuses)

    def line(self) -> str:
        waiting = sum(status in ("not_started", "missing") for status in self.statuses)
        unreadable = sum(status == "unreadable" for status in self.statuses)
        line = (f"total: {self.statuses.count('pass')}/{len(self.statuses)} puzzles pass "
                f"({self.parts_passed}/{self.parts} parts of those checked); {waiting} not started")
        return line + (f", {unreadable} unreadable" if unreadable else "")


class _Progress:
    """A transient "checking …" on a terminal, erased when the puzzle's lines come; nothing when
    stderr is a file or a pipe (a log keeps only the results)."""

    def __init__(self, line: str) -> None:
        self.shown = sys.stderr.isatty()
        if self.shown:
            sys.stderr.write(line)
            sys.stderr.flush()

    def erase(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")  # back to the line's start, and clear it


def _puzzle_line(puzzle: Puzzle, status: str) -> str:
    """pNN, its title padded to the longest title, its status: one column of statuses down the page."""
    width = max(len(p.title) for p in registry.all_puzzles())
    return f"{puzzle.key}  {puzzle.title:<{width}}  {status}"


def _grade(args) -> int:
    from checker.grade.run import grade
    from checker.run.session import checks_at_once
    folder = Path(args.grade)
    if not folder.is_dir():
        print(f"no folder {folder} (--grade takes a folder holding one folder of notebooks per student)",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        chosen = [registry.get(key.strip()) for key in args.puzzles.split(",") if key.strip()] \
            if args.puzzles else registry.all_puzzles()
    except (KeyError, SpecError) as err:
        print(err.args[0], file=sys.stderr)
        return EXIT_USAGE
    from checker.grade.cluster import ClusterError
    try:
        grade(folder, chosen, out=Path(args.out) if args.out else None,
              jobs=args.jobs or checks_at_once(args.backend), backend=args.backend, timeout=args.timeout,
              seed=args.seed, scheduler=args.scheduler, say=_say)
    except ClusterError as err:
        print(err.args[0], file=sys.stderr)
        return EXIT_USAGE
    return EXIT_PASS


def _prepare(puzzle: Puzzle, folder: Path, args) -> tuple:
    """(puzzle, source, None, path, "") to check, or (puzzle, None, entry, path, why) with why it
    cannot be; nothing is printed here: --all prints in the puzzles' order."""
    path = puzzle.solution if args.solution else folder / puzzle.notebook.name
    if not path.is_file():
        return puzzle, None, report_json.report_entry(puzzle, str(path), None, "missing"), path, \
            f"not started (no {path.name})"
    try:
        source = from_file(path, path.name) if args.solution else from_notebook(path, path.name)
    except NotebookError as err:
        return puzzle, None, report_json.report_entry(puzzle, str(path), None, "unreadable"), path, f"❌ {err}"
    if not args.solution and not_started(source, puzzle.kernel_names):
        return puzzle, None, report_json.report_entry(puzzle, str(path), None, "not_started"), path, "not started"
    return puzzle, source, None, path, ""


def _shown(path: Path) -> str:
    """A path as the learner would type it: from the checkout's root where it is inside."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def _puzzles_at_once(args) -> int:
    """Puzzles checked side by side (session.checks_at_once); one where the user chose --workers."""
    from checker.run.session import checks_at_once
    return 1 if args.workers else checks_at_once(args.backend)


def _say_parts(puzzle: Puzzle, report: Report) -> None:
    order = [p.name for p in puzzle.parts]  # the puzzle's order, whichever part reported first
    for part in sorted(report.parts, key=lambda p: order.index(p["part"])):
        mark = "✅" if part["passed"] else "❌"
        detail = f"{part['correct']}/{part['cases']} cases" if part["cases"] else part["problem"]
        if part["cases"] and part["problem"]:
            detail += f"; {part['problem']}"
        _say(f"      {part['title']:<{_part_title_width()}}  {part['backend']:<24} {mark} {detail}")


def _part_title_width() -> int:
    """One column of part titles for every puzzle, so that --all's lines align down the page."""
    return max((len(p.title) for puzzle in registry.all_puzzles() for p in puzzle.parts), default=0)


def _other_puzzles_notebook(puzzle: Puzzle, source) -> Puzzle | None:
    """The puzzle whose kernels this notebook defines, when it defines none of `puzzle`'s."""
    import re
    defined = set(re.findall(r"^[ \t]*def[ \t]+(\w+)", source.text, re.M))
    if defined & set(puzzle.kernel_names):
        return None
    return next((p for p in registry.all_puzzles() if defined & set(p.kernel_names)), None)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        from checker.run.runner import kill_busy_workers
        kill_busy_workers()
        print("\nInterrupted: the check stopped, and nothing was written.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`| head`): stop the workers and stop quietly, as a shell tool does
        from checker.run.client import EXIT_PIPE, quiet_stdout
        from checker.run.runner import kill_busy_workers
        kill_busy_workers()
        quiet_stdout()
        return EXIT_PIPE


def _main(argv: list[str] | None = None) -> int:
    parser = _parser()
    _add_part_flags(parser)
    args = parser.parse_args(argv)
    if args.stop_server:
        from checker.run.client import stop_servers
        return stop_servers()
    if args.list:
        return _list()
    if args.progress:
        from checker.history.view import text_lines
        print("\n".join(text_lines()))
        return EXIT_PASS
    if args.solution and student_edition():
        print(NO_SOLUTIONS, file=sys.stderr)
        return EXIT_USAGE
    if args.all:
        return _check_all(args)
    if args.grade:
        return _grade(args)
    if not args.puzzle:
        _which_puzzle(args)
        return EXIT_USAGE
    try:
        puzzle = registry.get(args.puzzle)
    except (KeyError, SpecError) as err:
        print(err.args[0], file=sys.stderr)
        return EXIT_USAGE
    if args.reset:
        from checker.reset import reset_notebook
        return reset_notebook(puzzle, Path(args.notebook) if args.notebook else None)
    known = [p.name for p in puzzle.parts]
    parts = args.parts or known
    unknown = [p for p in parts if p not in known]
    if unknown:
        print(f"{puzzle.key} has no part {unknown[0]!r}; its parts: {', '.join(known)}", file=sys.stderr)
        return EXIT_USAGE
    path = Path(args.notebook) if args.notebook else puzzle.notebook
    # progress is the learner's own notebooks': not the solution's, a copy's elsewhere or a page's
    recorded = not args.solution and learners_own(path)
    try:
        if args.solution:
            source = from_file(puzzle.solution, str(puzzle.solution.relative_to(REPO_ROOT)))
        else:
            display = args.notebook or str(puzzle.notebook.relative_to(REPO_ROOT))
            source = from_notebook(path, display)
    except NotebookError as err:
        print(err, file=sys.stderr)
        return EXIT_USAGE
    if args.bench or args.profile:
        from dataclasses import asdict

        from checker.run.session import run_bench
        status, rows = run_bench(puzzle, source, timeout=args.timeout or DEFAULT_TIMEOUT,
                                 write=(lambda line: print(line, file=sys.stderr)) if args.json else print,
                                 profile=args.profile,
                                 checked=(lambda report: record_check(puzzle, report)) if recorded else None)
        if status == EXIT_PASS and recorded:
            record_bench(puzzle, rows)
        if args.json:
            import time
            print(json.dumps({"puzzle": puzzle.key, "date": time.strftime("%Y-%m-%d"),
                              "rows": [asdict(r) for r in rows]}, indent=1))
        return status
    other = _other_puzzles_notebook(puzzle, source) if not args.solution else None
    if other is not None:
        print(f"{source.origin} defines the kernels of puzzle {other.number} ({other.title}), not of "
              f"{puzzle.key}: check it with `python -m checker {other.key} --notebook {args.notebook}`, or give "
              f"{puzzle.key}'s own notebook.", file=sys.stderr)
        return EXIT_USAGE
    write = (lambda line: None) if args.json else print
    report = run_check(puzzle, parts, source, backend=args.backend, timeout=args.timeout, seed=args.seed,
                       sanitize=not args.no_sanitize, verbose=args.verbose, write=write, shards=args.workers,
                       maps=True, map_case=args.map, map_folder=None if args.json else state_dir() / "maps")
    if recorded:
        record_check(puzzle, report)
    elif not args.solution and not args.json and not report.usage_error:
        print(f"(Not recorded in your progress: it holds the checks of the notebooks in "
              f"{_shown(learner_folder())}/ only.)", file=sys.stderr)
    if args.json:
        print(json.dumps(report_json.document([report_json.report_entry(puzzle, source.origin, report)]), indent=1))
    if report.usage_error:
        return EXIT_USAGE
    return EXIT_PASS if report.passed else EXIT_FAIL
