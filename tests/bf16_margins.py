"""The bf16 tolerances calibrated on a GPU: how much of each bf16 tolerance the correct kernels use,
and how far past it the roundings the pages name as bugs land.

    python tests/bf16_margins.py                    # every puzzle with bf16 cases (a GPU host)
    python tests/bf16_margins.py p27 p30 p31        # some puzzles
    python tests/bf16_margins.py p30 --write        # and write each puzzle's figures into its spec
    python tests/bf16_margins.py p30 --interpreter  # a dry run on the CPU's small bf16 cases (no GPU)
    python tests/bf16_margins.py --from-output RUN.txt --device "NVIDIA H100 80GB HBM3" --date 2026-12-07 --write
                                                    # a GPU run's printed tables, written into the specs here

For each puzzle, every correct kernel (the solution, tests/bugs/pNN.py's PASSING and RIGHT) and every
named rounding (its PINNED and MEASURED bugs of cause "precision" that round to, or keep a value in,
a narrower type: what the page says not to do) is checked on the puzzle's bfloat16 cases alone; each
case's outputs give max |error| / tolerance (the report's worst_ratio). The table: per (case, output)
the correct kernels' largest ratio, and whose; per named rounding its largest ratio, where, and
whether it fails; then the room for a factor f on today's bf16 tolerances: every correct kernel within
half of it (tests/test_contract.py's MARGIN) and every named rounding failing while
2 · max(correct) <= f < min(rounding). Where none exists, the output's own rounding to bf16 at the
store hides the named rounding: no element-wise tolerance on the answer separates them.

--write puts the figures above the spec's `PUZZLE = puzzle(` as a comment block, replacing the one a
previous run wrote: what a tolerance is measured against stays beside it.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import math
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MARGIN = 0.5          # a correct kernel may use at most this fraction of a tolerance (test_contract)
HEADER = "# bf16 margins (tests/bf16_margins.py)"


NARROW = re.compile(r"bf16|bfloat16|fp16|float16|round|dtype|narrow", re.I)


def kernels(puzzle) -> tuple[list, list]:
    """(correct, named roundings): (name, text, parts) each. Correct: the solution, tests/bugs/pNN.py's
    PASSING and RIGHT. Named roundings: its PINNED and MEASURED bugs of cause "precision" that round
    to, or keep a value in, a narrower type (their name or words say so: an int32 offset is not one)."""
    from bugs import entries, patched
    known = entries(puzzle)
    everything = [p.name for p in puzzle.parts]
    correct = [("solution", puzzle.solution.read_text(encoding="utf-8"), everything)]
    correct += [(r.name, patched(puzzle, r.name, r.patches), everything) for r in known.passing + known.right]
    roundings = [(b.name, patched(puzzle, b.name, b.patches), [b.part]) for b in known.pinned + known.measured
                 if b.cause == "precision" and NARROW.search(f"{b.name} {b.what} {b.notes}")]
    return correct, roundings


def ratios(puzzle, text: str, parts: list[str], backend: str) -> dict[tuple[str, str, str], float]:
    """(part, case, output) -> max |error| / tolerance on the puzzle's bf16 cases (NaN, an error or
    an output never written: inf)."""
    from checker.run.session import run_check
    from checker.source import from_text
    # the verdicts' figures alone: no experiments (each derived case is a compile on a GPU)
    report = run_check(puzzle, parts, from_text(text, "kernels.py"), backend=backend, in_process=True,
                       write=lambda line: None, experiments=False)
    found = {}
    for result in report.results:
        if result.get("dtype") != "bfloat16":
            continue
        if result["status"] == "error":
            found[(result["part"], result["case"], "(error)")] = math.inf
            continue
        for c in result.get("comparisons", []):
            ratio = c.get("worst_ratio")
            if ratio != ratio and c.get("ok"):
                ratio = 0.0  # an exact output (no tolerance) matched: 0 / 0, none of its tolerance used
            found[(result["part"], result["case"], c["label"])] = math.inf if ratio is None or ratio != ratio else ratio
    return found


def measure(puzzle, backend: str) -> tuple[list[dict], list[dict]]:
    """(one row per (part, case, output) of the bf16 cases: the correct kernels' largest ratio and
    whose; one row per named rounding: its largest ratio, where, and the solution's ratio there)."""
    correct, roundings = kernels(puzzle)
    runs = {name: ratios(puzzle, text, parts, backend) for name, text, parts in correct}
    rows = []
    for key in sorted({k for r in runs.values() for k in r}):
        worst, whose = max(((r[key], name) for name, r in runs.items() if key in r), key=lambda t: t[0])
        rows.append({"part": key[0], "case": key[1], "output": key[2], "correct": worst, "correct_by": whose})
    named = []
    for name, text, parts in roundings:
        found = ratios(puzzle, text, parts, backend)
        if not found:
            continue
        key, worst = max(found.items(), key=lambda item: item[1])
        named.append({"name": name, "ratio": worst, "case": key[1], "output": key[2],
                      "solution": runs["solution"].get(key)})
    return rows, named


def table(puzzle, rows: list[dict], named: list[dict]) -> list[str]:
    """The correct kernels' margins, then each named rounding's verdict, then where a factor f on
    today's bf16 tolerances would keep the first within MARGIN and fail every one of the second."""
    lines = [f"{puzzle.key}: max |error| / tolerance on the bf16 cases",
             f"  {'output':10s} {'case':50s} correct kernels: the largest (whose)"]
    for r in rows:
        lines.append(f"  {r['output'][:10]:10s} {r['case'][:50]:50s} {r['correct']:.3g} ({r['correct_by']})")
    for n in named:
        verdict = "fails" if n["ratio"] > 1 else "PASSES"
        solution = "" if n["solution"] is None else f", the solution's {n['solution']:.3g}"
        lines.append(f"  named rounding {n['name']}: {n['ratio']:.3g} at most ({n['output']}, {n['case']}{solution}): "
                     f"{verdict}")
    low = max((r["correct"] for r in rows), default=0.0) / MARGIN
    high = min((n["ratio"] for n in named), default=None)
    if high is None:
        lines.append(f"  factor f on the bf16 tolerances: f >= {low:.2g} (no named rounding)")
    elif low < high:
        lines.append(f"  factor f on the bf16 tolerances: {low:.2g} <= f < {high:.3g}")
    else:
        lines.append(f"  factor f on the bf16 tolerances: none separates them ({low:.2g} needed, a rounding at "
                     f"{high:.3g}): the store's own rounding hides it; compare with the answer rounded to bf16")
    return lines


def comment(puzzle, rows: list[dict], named: list[dict], device: str, date: str = "") -> list[str]:
    """The spec's comment block: per output, the worst correct kernel; each named rounding's worst."""
    lines = [f"{HEADER}, {device}, {date or datetime.date.today().isoformat()}: max |error| / tolerance on the",
             "# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug"]
    for output in sorted({r["output"] for r in rows}):
        worst = max((r for r in rows if r["output"] == output), key=lambda r: r["correct"])
        lines.append(f"#   {output}: correct <= {worst['correct']:.3g} ({worst['correct_by']}, {worst['case']})")
    lines += [f"#   {n['name']}: {n['ratio']:.3g} ({n['output']}, {n['case']})" for n in named]
    return lines


def write(puzzle, lines: list[str]) -> None:
    """Put `lines` above the spec's `PUZZLE = puzzle(`, in place of the block a previous run wrote."""
    import importlib
    path = Path(importlib.import_module(f"checker.specs.{puzzle.slug}").__file__)
    text = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next((i for i, line in enumerate(text) if line.startswith(HEADER)), None)
    if start is not None:
        end = start
        while end < len(text) and text[end].startswith("#"):
            end += 1
        del text[start:end]
    at = next(i for i, line in enumerate(text) if line.startswith("PUZZLE = puzzle("))
    text[at:at] = [line + "\n" for line in lines]
    path.write_text("".join(text), encoding="utf-8")


ROW = re.compile(r"^  (?P<output>.{10}) (?P<case>.{50}) (?P<ratio>\S+) \((?P<whose>[^()]+)\)$")
NAMED = re.compile(r"^  named rounding (?P<name>\w+): (?P<ratio>\S+) at most \((?P<output>[^,]+), (?P<case>.*?)"
                   r"(?:, the solution's \S+)?\): (?:fails|PASSES)$")


def read_output(text: str, puzzles: dict) -> dict[str, tuple[list[dict], list[dict]]]:
    """A run's printed tables (what main prints, a GPU machine's run saved to a file) read back:
    puzzle key -> (rows, named) as measure() gives them. The table cuts a case's name at 50
    characters: the full name is the one bf16 case of the puzzle it begins."""
    found: dict[str, tuple[list[dict], list[dict]]] = {}
    key = None
    for line in text.splitlines():
        head = re.match(r"^(p\d\d): max \|error\| / tolerance on the bf16 cases$", line)
        if head:
            key = head.group(1)
            found[key] = ([], [])
            continue
        if key is None:
            continue
        names = [c.name for c in puzzles[key].cases() if c.dtype == "bfloat16"]
        named = NAMED.match(line)
        row = None if named else ROW.match(line)
        if named:
            found[key][1].append({"name": named["name"], "ratio": float(named["ratio"]),
                                  "output": named["output"], "case": named["case"]})
        elif row and row["output"].strip() != "output":
            cut = row["case"].rstrip()
            whole = [n for n in names if n.startswith(cut) and (len(cut) < 50 or len(n) >= 50)]
            found[key][0].append({"output": row["output"].strip(), "case": whole[0] if len(whole) == 1 else cut,
                                  "correct": float(row["ratio"]), "correct_by": row["whose"]})
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("puzzles", nargs="*")
    parser.add_argument("--write", action="store_true", help="write each puzzle's figures into its spec")
    parser.add_argument("--interpreter", action="store_true", help="a dry run: the CPU's bf16 cases, no GPU")
    parser.add_argument("--from-output", metavar="FILE", help="a run's printed tables, read back (no run here)")
    parser.add_argument("--device", default="", help="with --from-output: the GPU that made them")
    parser.add_argument("--date", default="", help="with --from-output: the day they were made (YYYY-MM-DD)")
    args = parser.parse_args(argv)
    if args.from_output:
        os.environ["TRITON_INTERPRET"] = "1"  # the specs are read, nothing runs
        sys.path.insert(0, str(ROOT))
        from checker import registry
        puzzles = {p.key: p for p in registry.all_puzzles()}
        for key, (rows, named) in read_output(Path(args.from_output).read_text(encoding="utf-8"), puzzles).items():
            if args.puzzles and key not in args.puzzles:
                continue
            block = comment(puzzles[key], rows, named, args.device or "a GPU", args.date)
            print("\n".join(block))
            if args.write:
                write(puzzles[key], block)
        return 0
    backend = "interpreter" if args.interpreter else "gpu"
    if args.interpreter:
        os.environ["TRITON_INTERPRET"] = "1"
    else:
        os.environ.pop("TRITON_INTERPRET", None)  # the GPU's compiler, before anything imports triton
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))  # the bugs package
    import torch
    from checker import registry
    if not args.interpreter and not torch.cuda.is_available():
        print("the bf16 margins are measured on a GPU: no CUDA device here (--interpreter: a dry run)")
        return 2
    get = registry.get
    chosen = [get(k) for k in args.puzzles] if args.puzzles else registry.all_puzzles()
    chosen = [p for p in chosen if any(c.dtype == "bfloat16" for c in p.cases())]
    device = "the interpreter" if args.interpreter else torch.cuda.get_device_name(0)
    for puzzle in chosen:
        # the bf16 cases alone: the worker finds the puzzle by its key, and gets this one
        only_bf16 = dataclasses.replace(puzzle, cases=lambda p=puzzle: [c for c in p.cases() if c.dtype == "bfloat16"
                                                                          and not (args.interpreter and c.gpu_only)])
        registry.get = lambda key, p=only_bf16: p if get(key).key == p.key else get(key)
        try:
            rows, named = measure(only_bf16, backend)
        finally:
            registry.get = get
        for line in table(puzzle, rows, named):
            print(line, flush=True)
        if args.write:
            write(puzzle, comment(puzzle, rows, named, device))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
