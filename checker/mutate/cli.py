"""python -m checker.mutate p08 [--class mask] [--sample K] [--json]; python -m checker.mutate --all.

Exit status: 0 every mutant caught or listed as equivalent; 1 a survivor not listed as equivalent,
or a listed one that is caught or gone; 2 the command could not run as asked.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

from checker import registry
from checker.mutate.operators import CLASSES, Mutant, mutants_of
from checker.mutate.run import CannotCheck, Outcome, check_mutant, exemptions, parts_touched
from checker.mutate.score import Scored, overall, puzzle_section
from checker.run.runner import DEFAULT_TIMEOUT
from checker.puzzle.edition import NO_SOLUTIONS, student_edition
from checker.puzzle.model import Puzzle, SpecError

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def sample(mutants: list[Mutant], k: int) -> list[Mutant]:
    """k mutants, the same ones every time, spread over the classes: each class's mutants in the
    order of a hash of their ids, taken in turn class by class. Kept in the order of the file."""
    queues = {cls: sorted((m for m in mutants if m.cls == cls), key=lambda m: hashlib.sha1(m.id.encode()).hexdigest())
              for cls in CLASSES}
    chosen: list[Mutant] = []
    while len(chosen) < k and any(queues.values()):
        for cls in CLASSES:
            if queues[cls] and len(chosen) < k:
                chosen.append(queues[cls].pop(0))
    order = {m.id: i for i, m in enumerate(mutants)}
    return sorted(chosen, key=lambda m: order[m.id])


def gpu_only_precision(puzzle: Puzzle) -> bool:
    """Some case that only a GPU runs is not fp32: a precision mutant that survives the interpreter
    (its fp32 cases, and its small bf16 ones where the puzzle has them, in which a lost cast can
    round away unseen) is judged by those GPU cases."""
    return any(c.dtype != "float32" and c.gpu_only for c in puzzle.cases())


def mutate_puzzle(puzzle: Puzzle, *, classes: tuple[str, ...] | None = None, k: int | None = None,
                  backend: str = "interpreter", timeout: float = DEFAULT_TIMEOUT, seed: int = 0,
                  progress=None) -> Scored:
    """Make the puzzle's mutants, check each, and score them against the list of equivalents."""
    started = time.perf_counter()
    solution = puzzle.solution.read_text(encoding="utf-8")
    mutants = mutants_of(solution, classes)
    if k is not None:
        mutants = sample(mutants, k)
    gpu_only = backend == "interpreter" and gpu_only_precision(puzzle)
    outcomes = []
    for i, mutant in enumerate(mutants, start=1):
        outcome = check_mutant(puzzle, mutant, parts_touched(puzzle, solution, mutant.kernel), backend=backend,
                               timeout=timeout, seed=seed)
        outcomes.append(outcome)
        if progress is not None:
            progress(_progress_line(puzzle, i, len(mutants), outcome, gpu_only))
    return Scored(puzzle, outcomes, exemptions(puzzle.key).equivalent, gpu_only=gpu_only,
                  complete=classes is None and k is None, seconds=time.perf_counter() - started)


def _progress_line(puzzle: Puzzle, i: int, n: int, outcome, gpu_only: bool) -> str:
    m = outcome.mutant
    if outcome.caught:
        verdict = f"caught ({outcome.stage})" + ("" if outcome.stage == "compile" else
                                                  f", hints: {'/'.join(sorted(set(outcome.verdicts)))}")
    elif m.id in exemptions(puzzle.key).equivalent:
        verdict = "survived (listed equivalent)"
    elif m.cls == "precision" and gpu_only:
        verdict = "survived (GPU only)"
    else:
        verdict = "SURVIVED"
    width = len(str(n))
    return f"{puzzle.key} [{i:>{width}}/{n}] {outcome.seconds:5.1f} s  {verdict:<40} {m.id}  {m.description}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m checker.mutate", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Mutation testing of the checker: change a puzzle's reference solution in small ways, one "
                    "bug class at a time, check every mutant, and count what the checker catches and how "
                    "precise its hints are.",
        epilog="exit status: 0 every mutant caught or listed as equivalent (EQUIVALENT in tests/bugs/pNN.py); 1 a "
               "survivor not listed, or a listed one caught or gone; 2 usage.")
    parser.add_argument("puzzles", nargs="*", help="puzzle numbers, e.g. p08 p09")
    parser.add_argument("--all", action="store_true", help="every puzzle")
    parser.add_argument("--class", dest="cls", action="append", choices=CLASSES,
                        help="only mutants of this class (repeat for several)")
    parser.add_argument("--sample", type=int, metavar="K", help="K mutants per puzzle, the same every time")
    parser.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    parser.add_argument("--json-file", metavar="PATH", help="also write the JSON results to this file")
    parser.add_argument("--list", action="store_true", help="list the mutants without checking them")
    parser.add_argument("--show", metavar="ID", help="print one mutant's whole text")
    parser.add_argument("--backend", choices=("interpreter", "gpu"), default="interpreter")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds for one case's kernels (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--seed", type=int, default=0, help="other random inputs")
    parser.add_argument("--quiet", action="store_true", help="no progress line per mutant")
    parser.add_argument("--rescore", metavar="PATH", help="score the results of an earlier --json-file again, against "
                        "the list of equivalents as it is now, without checking anything")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if student_edition():  # its mutants are the solutions', its exemptions the catalogs'
        print(f"python -m checker.mutate needs the solutions and tests/bugs/. {NO_SOLUTIONS}", file=sys.stderr)
        return EXIT_USAGE
    try:
        puzzles = registry.all_puzzles() if args.all or args.rescore else [registry.get(key) for key in args.puzzles]
        if args.rescore and args.puzzles:
            puzzles = [registry.get(key) for key in args.puzzles]
    except (SpecError, KeyError) as err:
        print(f"python -m checker.mutate: {err}", file=sys.stderr)
        return EXIT_USAGE
    if not puzzles:
        print("python -m checker.mutate: name a puzzle (p08) or --all", file=sys.stderr)
        return EXIT_USAGE
    classes = tuple(args.cls) if args.cls else None
    if args.list or args.show:
        return _list(puzzles, classes, args)
    if args.rescore:
        return _rescore(args.rescore, {p.key for p in puzzles} if args.puzzles else None)

    started = time.perf_counter()
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    results = []
    for puzzle in puzzles:
        try:
            scored = mutate_puzzle(puzzle, classes=classes, k=args.sample, backend=args.backend,
                                   timeout=args.timeout, seed=args.seed, progress=progress)
        except CannotCheck as err:
            print(f"python -m checker.mutate: {err}", file=sys.stderr)
            return EXIT_USAGE
        results.append(scored)
        if not args.json:
            print("\n".join(puzzle_section(scored)), flush=True)
        data = {"backend": args.backend, "seconds": round(time.perf_counter() - started, 1),
                "puzzles": [s.to_json() for s in results]}
        if args.json_file:  # after every puzzle: a long run that is stopped keeps what it finished
            with open(args.json_file, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1)
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        if len(results) > 1:
            print("\n".join(overall(results)))
        print(f"{sum(len(s.outcomes) for s in results)} mutants in {seconds:.0f} s")
    return EXIT_OK if all(s.ok for s in results) else EXIT_FAIL


def _list(puzzles: list[Puzzle], classes: tuple[str, ...] | None, args) -> int:
    for puzzle in puzzles:
        mutants = mutants_of(puzzle.solution.read_text(encoding="utf-8"), classes)
        if args.sample is not None:
            mutants = sample(mutants, args.sample)
        for m in mutants:
            if args.show:
                if m.id == args.show:
                    print(m.text, end="")
                    return EXIT_OK
            else:
                print(f"{puzzle.key} {m.id:<52} {m.cls:<10} {m.description}")
    if args.show:
        print(f"python -m checker.mutate: no mutant {args.show}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _rescore(path: str, only: set[str] | None) -> int:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    results = []
    for entry in data["puzzles"]:
        if only is not None and entry["puzzle"] not in only:
            continue
        puzzle = registry.get(entry["puzzle"])
        outcomes = [_outcome_from_json(m) for m in entry["mutants"]]
        scored = Scored(puzzle, outcomes, exemptions(puzzle.key).equivalent, gpu_only=data["backend"] == "interpreter"
                        and gpu_only_precision(puzzle), complete=entry["complete"], seconds=entry["seconds"])
        results.append(scored)
        print("\n".join(puzzle_section(scored)))
    if len(results) > 1:
        print("\n".join(overall(results)))
    return EXIT_OK if all(s.ok for s in results) else EXIT_FAIL


def _outcome_from_json(m: dict) -> Outcome:
    mutant = Mutant(m["id"], m["class"], m["operator"], m["kernel"], m["line"], m["description"], m["before"],
                    m["after"], text="")
    return Outcome(mutant, m["caught"], m["stage"], m["hints"], m["seconds"], m["first_failure"], m["isolated"])
