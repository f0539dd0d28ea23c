"""Benchmark the checker itself: wall time of `python -m checker ...`, interleaved runs, medians.

    python -m checker.bench                      # p22 --backward --solution, sanitizer on vs off
    python -m checker.bench --runs 5 -- p22 --fused --solution

Each round runs every variant once, in turn, so both see the same machine load.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from checker.spec import REPO_ROOT

VARIANTS = {"sanitizer on": [], "sanitizer off": ["--no-sanitize"]}


def time_once(args: list[str]) -> float:
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "checker", *args], cwd=REPO_ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"checker {' '.join(args)} failed:\n{run.stdout[-2000:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checker.bench")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("checker_args", nargs="*", default=["p22", "--backward", "--solution", "--backend",
                                                           "interpreter"])
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(args.runs):
        for name, extra in VARIANTS.items():
            times[name].append(time_once(args.checker_args + extra))
    print(f"python -m checker {' '.join(args.checker_args)}: {args.runs} interleaved runs, wall seconds")
    for name, values in times.items():
        print(f"  {name:14s} median {statistics.median(values):6.2f}   runs {' '.join(f'{v:.2f}' for v in values)}")
    ratio = statistics.median(times["sanitizer on"]) / statistics.median(times["sanitizer off"])
    print(f"  ratio on/off   {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
