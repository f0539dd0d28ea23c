"""Benchmark the checker itself (not the learner's kernels): medians of interleaved runs.

    python -m checker.selftime                          # p22 --backward --solution, sanitizer on vs off
    python -m checker.selftime --runs 5 -- p22 --fused --solution
    python -m checker.selftime --phases p22 --backend gpu   # where one check's time goes, per phase
    python -m checker.selftime --compare workers -- p22 --solution   # one interpreter worker vs several

Each round runs every variant once, in turn, so all see the same machine load. --phases runs the
solution's check through the real worker and splits its wall time into the worker's start-up
(imports, CUDA), preparing cases (inputs, the float64 autograd reference), the kernels
(compilation included), comparing, and the rest (process and pipe overhead).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from checker.puzzle.edition import NO_SOLUTIONS, student_edition
from checker.puzzle.model import REPO_ROOT

COMPARISONS = {  # what --compare sets side by side: the first variant is the numerator of the ratio
    "sanitizer": {"sanitizer on": [], "sanitizer off": ["--no-sanitize"]},
    "workers": {"one interpreter worker": ["--workers", "1"], "workers by idle cores": []},
}


def time_once(args: list[str]) -> float:
    start = time.perf_counter()
    # a cold command line each time, as it is timed here: no warm server (checker/server.py)
    run = subprocess.run([sys.executable, "-m", "checker", "--no-server", *args], cwd=REPO_ROOT, capture_output=True,
                         text=True)
    elapsed = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"checker {' '.join(args)} failed:\n{run.stdout[-2000:]}")
    return elapsed


def phases_once(puzzle_key: str, backend: str) -> dict[str, float]:
    """One check of the solution, every part, on one backend: seconds per phase."""
    from checker import registry
    from checker.run.runner import Request, run_backend
    from checker.source import from_file

    puzzle = registry.get(puzzle_key)
    request = Request(puzzle.key, [p.name for p in puzzle.parts], from_file(puzzle.solution, "solution"), backend)
    totals = {"start-up": 0.0, "prepare": 0.0, "kernels": 0.0, "compare": 0.0}
    start = time.perf_counter()
    for event in run_backend(request):
        if event["type"] == "hello":
            totals["start-up"] = event.get("startup", 0.0)
        elif event["type"] == "case_result":
            if event.get("status") != "pass":
                raise SystemExit(f"the solution failed {event['case']} on {backend}")
            for phase, seconds in event.get("timings", {}).items():
                totals[phase] += seconds
    totals["wall"] = time.perf_counter() - start
    totals["other"] = totals["wall"] - sum(v for k, v in totals.items() if k != "wall")
    return totals


def slowest_cases(keys: list[str] | None = None) -> dict[str, float]:
    """Each puzzle's reference solution (`keys`, or every puzzle), every part, in the interpreter: its
    slowest case's kernels in seconds (checker/run/hang_limits.py's SLOWEST_CASE_S)."""
    from checker import registry
    from checker.run.runner import Request, run_backend
    from checker.source import from_file
    slowest = {}
    for puzzle in (registry.get(k) for k in keys) if keys else registry.all_puzzles():
        request = Request(puzzle.key, [p.name for p in puzzle.parts], from_file(puzzle.solution, "solution"),
                          "interpreter")
        times = [e.get("timings", {}).get("kernels", 0.0) for e in run_backend(request) if e["type"] == "case_result"]
        slowest[puzzle.key] = round(max(times, default=0.0), 3)
    return slowest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checker.selftime")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--phases", metavar="PUZZLE", help="split one backend's check of PUZZLE into phases")
    parser.add_argument("--backend", default="interpreter", choices=("interpreter", "gpu"))
    parser.add_argument("--compare", default="sanitizer", choices=sorted(COMPARISONS))
    parser.add_argument("checker_args", nargs="*", default=["p22", "--backward", "--solution", "--backend",
                                                           "interpreter"])
    parser.add_argument("--slowest-cases", nargs="*", metavar="PUZZLE",
                        help="each puzzle's slowest case in the interpreter (the hang limits' basis): the "
                             "puzzles named, or every puzzle")
    parser.add_argument("--write", action="store_true",
                        help="with --slowest-cases: store what was measured in checker/run/slowest_cases.json")
    args = parser.parse_args(argv)
    if student_edition():  # it times the reference kernels
        print(f"python -m checker.selftime times the solutions. {NO_SOLUTIONS}", file=sys.stderr)
        return 2
    if args.slowest_cases is not None:
        measured = slowest_cases(args.slowest_cases)
        print(measured)
        if args.write:
            from checker.run import hang_limits
            hang_limits.store(measured)
            print(f"wrote {len(measured)} to {hang_limits.MEASURED.name}")
        return 0
    if args.phases:
        runs = [phases_once(args.phases, args.backend) for _ in range(args.runs)]
        print(f"{args.phases} --solution on {args.backend}: {args.runs} runs, seconds (the first may compile)")
        for phase in runs[0]:
            values = [r[phase] for r in runs]
            print(f"  {phase:9s} median {statistics.median(values):6.2f}   runs {' '.join(f'{v:.2f}' for v in values)}")
        return 0
    variants = COMPARISONS[args.compare]
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.runs):
        for name, extra in variants.items():
            times[name].append(time_once(args.checker_args + extra))
    print(f"python -m checker {' '.join(args.checker_args)}: {args.runs} interleaved runs, wall seconds")
    for name, values in times.items():
        print(f"  {name:22s} median {statistics.median(values):6.2f}   runs {' '.join(f'{v:.2f}' for v in values)}")
    first, second = variants
    print(f"  ratio {first} / {second}: {statistics.median(times[first]) / statistics.median(times[second]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
