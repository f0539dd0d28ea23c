"""Check the learner-bug corpus and judge the checker's hints against each bug's true cause class.

    python tests/bugs/measure.py                 # every puzzle: one line per entry, then totals
    python tests/bugs/measure.py p05 p22         # some puzzles
    python tests/bugs/measure.py p05 --text      # and each report's hints, as the learner reads them
    python tests/bugs/measure.py --json out.json # everything, machine-readable (diff two runs)
    python tests/bugs/measure.py --only stride   # entries whose name contains a word
    python tests/bugs/measure.py p24 --full      # each report in full
    python tests/bugs/measure.py --corpus DIR    # a blind set kept apart until it is scored

The corpus is each tests/bugs/pNN.py's MEASURED (bugs, with their true cause) and RIGHT (correct
rewrites), written apart from its PINNED entries: it measures the hints, where PINNED pins them.

Every entry is checked in Triton's interpreter with the sanitizer, in this process (torch imported
once), as tests/test_contract.py's check_text does; an entry that may hang gets a worker process
with its time limit. Run from the repository root: the checker package of this tree is used.

A report's hints are the sanitizer's and the checker's error messages, each failing case's own
diagnoses (the addresses), the hints on its failing outputs that the report shows (as decided once: Report.shown)
and the summary hints across cases: every hint the learner reads, whichever else the report holds. Each carries a cause class ("cause", the one the evidence names)
and the classes it asks about ("candidates") in the worker's JSON; where those fields are missing
(an older checker) a rough reading of the text stands in, and the verdict is marked with "~".

Verdicts for a bug that is caught, on every sentence the report shows (each judged against the
bug's true classes: it names the true class, asks about it, names or asks only about others, or
states a fact or an observation):
    misleading  a sentence shown names another class, or asks only about others: a learner reads
                every sentence, and one that sends them the wrong way counts whatever else is right
    right       no sentence misleads, and one names the true class (or one the entry accepts)
    among       none names it, but one asks about it among its candidates ("among-generic" where
                only the question about nearly every class does: "a slip in the arithmetic ...")
    none        nothing shown points at the cause (observations only: "12 of 32 elements were
                never written")
    compile     only Triton's GPU front end spoke: it rejects the kernel, and says why (a fact)
Each record also keeps the earlier measure, by cause classes ("by_classes": right where any hint
names the true class, "right+wrong" where another names a different one as certain). A bug that
passes is "PASSES" (or "blind" when the entry says the interpreter cannot see it); a correct
rewrite is "ok" or "FAILS".
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")  # before anything imports triton
# the report the experiments' counts of cases give, however loaded the machine (checker/experiment.py)
os.environ.setdefault("TRITON_PUZZLES_EXPERIMENT_SECONDS", "60")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))  # tests/: the bugs package

from checker import registry  # noqa: E402
from checker.run.session import run_check  # noqa: E402
from checker.source import from_text  # noqa: E402

from bugs import Bug, Entries, apply, entries, keys as corpus_keys  # noqa: E402


# -- reading a report's hints ---------------------------------------------------------------------
# (pattern, cause, candidates): the first that matches a hint's text stands in for its missing
# class fields. Rough on purpose: it reads what the text tells the learner to change.
TEXT_RULES = [
    (r"already has a mask, but it lets these lanes through", "mask", ()),
    (r"switch off the lanes that fall outside with a mask", "mask", ()),
    (r"sums shares from several programs: add each share with tl\.atomic_add", "atomic", ()),
    (r"belongs to exactly one program, so two programs reaching it means their offsets overlap", "address", ()),
    (r"does not compile", "compile", ()),
    (r"still running after .* A loop that never ends", "", ("loop", "lock")),
    (r"not reproducible", "determinism", ()),
    (r"equals the share of|each element equals one .*'s share|whole number of equal shares", "atomic", ()),
    (r"never written: the kernel did not store", "", ()),
    (r"every column from \d+ on|every element from column \d+ on", "", ("address", "loop")),
    (r"whole rows .*grid or row-mask problem", "", ("address", "mask")),
    (r"elements were never written\.$|received nothing from any|still exactly 0 everywhere", "", ()),
    (r"transposed|wrong shape", "address", ()),
    (r"rounded to (bfloat16|float16)|TF32|only the bfloat16 cases|keep the running sum in fp32", "precision", ()),
    (r"NaN or Inf, computed by the kernel", "", ("stability", "formula", "mask")),
    (r"hard-coded", "", ("hardcoded",)),
    (r"overflows|cancels catastrophically|underflow|Subtract the row's max", "stability", ()),
    (r"accumulator|starts over|reset inside the loop|Create it once", "accumulate", ()),
    (r"tl\.atomic_add|atomics", "", ("atomic",)),
    (r"is a mask missing|mask the loads and stores|masks? .*cols < |other=|padded lanes|masked-off lanes",
     "", ("mask", "fill")),
    (r"does the grid cover|loop over|loop must cover|walk all of|range\(0, ", "", ("loop", "address")),
    (r"program_id|axes swapped|stride|rows .* apart|row \w+ of|its own row|at row \* |\* N \+|as if it were "
     r"contiguous|the token's|read transposed|element \(k, m\)", "address", ()),
    (r"lock", "", ("lock",)),
    (r"matches|instead of|is missing|belongs inside|divides by|the sign|product rule", "formula", ()),
]


def guess(text: str) -> tuple[str, list[str]]:
    for pattern, cause, candidates in TEXT_RULES:
        if re.search(pattern, text, re.S | re.M):
            return cause, list(candidates)
    return "", []


def _error_gist(message: str) -> str:
    """An error message without the sanitizer's boilerplate paragraph: what the learner acts on."""
    keep = []
    for line in message.strip().split("\n"):
        if line.startswith(("On a GPU this would", "On a GPU, programs run in parallel")):
            continue
        keep.append(line)
        if line.rstrip().endswith("For example:"):
            break  # the example's code lines say nothing about the cause
    return "\n".join(keep)


def hints_of(report, text: str) -> tuple[list[dict], bool]:
    """Every distinct sentence the report shows, and whether the checker gave their classes itself:
    each diagnosis the report shows as decided once (Report.shown: errors, the cases' own, the
    outputs' that are shown, the claims across cases), the notes that stand for those left out, the
    experiments' lines, a fact the runner measured (an input changed) and a hang's line."""
    found: dict[str, dict] = {}
    fields = False

    def add(kind: str, hint: str, data: dict, case: str = "", measured: bool = False) -> None:
        """measured: the runner's own class for a fact the checker reports (an input changed)."""
        nonlocal fields
        if not hint:
            return
        key = kind + ":" + re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "#", hint)
        if key in found:
            return
        has = "cause" in data or "candidates" in data
        fields = fields or (has and not measured)
        cause, candidates = (data.get("cause", ""), list(data.get("candidates", []))) if has else guess(hint)
        found[key] = {"kind": kind, "hint": hint, "cause": cause, "candidates": candidates, "case": case,
                      "code": data.get("code", ""), "from_text": not has, "measured": measured}

    for result in report.results:
        if result.get("mutated"):  # a fact the checker measured, not a guess: an input changed
            add("mutated", f"the kernel changed its inputs: {', '.join(result['mutated'])} (inputs are read-only; "
                "write only to outputs)", {"cause": "inplace", "candidates": []}, result["case"], measured=True)
    for shown in report.shown():  # as decided once: what every reader shows
        d = shown.diagnosis
        kind = {"error": "error", "case": "case", "output": f"output:{shown.output}", "summary": "hint"}[shown.source]
        words = _error_gist(d.text) if shown.source == "error" else d.text
        add(kind, words, d.to_json(), shown.case)
    for case in report.cases:  # a note that stands for a hint the story left out: it names no cause
        for note in case.notes.values():
            add("note", note, {"cause": "", "candidates": []}, case.case)
    for e in getattr(report, "experiments", None) or []:  # facts: the smallest failing case and its neighbours
        add("experiment", " ".join(e["sentences"]), {"cause": "", "candidates": []})
    for line in text.split("\n"):
        stripped = line.strip()
        if "still running after" in stripped or "worker process" in stripped and "❌" in stripped:
            add("fault", stripped.lstrip("❌ "), {})
    # with the fields present, a hint that lacks them (a fault line) is an observation, not a guess
    if fields:
        for item in found.values():
            if item["from_text"] and not item["measured"]:
                item["cause"], item["candidates"], item["from_text"] = "", [], False
    return list(found.values()), fields


# facts the run establishes, true whatever the bug: Triton's compiler rejecting code, an input written to
FACTS = {"compile", "inplace", "stub"}
GENERIC = {"cases.every_case"}   # asks about nearly every class: "a slip in the arithmetic ... term by term"


def verdict(bug: Bug, hints: list[dict]) -> str:
    """The old measure, by cause classes: right where any hint names the true class (whatever else
    another says: "right+wrong"), among where one asks about it."""
    truth = set(bug.classes)
    named = {h["cause"] for h in hints if h["cause"]}
    asked = {c for h in hints if not h["cause"] for c in h["candidates"]}
    if "compile" in named and not named - truth - {"compile"}:
        return "right" if named & truth else "compile"
    wrong = bool(named - truth)
    if named & truth:
        return "right+wrong" if wrong else "right"
    if asked & truth:
        return "among+wrong" if wrong else "among"
    if named or asked:
        return "misleading"
    return "none"


def judge(hint: dict, truth: set[str]) -> str:
    """One sentence the learner reads, against the bug's true classes: "right" (it names the true
    class), "among" (it asks about it), "misleading" (it names another class, or asks only about
    others), "fact" (the compiler, an input written: true whatever the bug) or "neutral" (it names
    no class: an observation)."""
    cause, candidates = hint["cause"], set(hint["candidates"])
    if cause in FACTS and cause not in truth:
        return "fact"
    if cause:
        return "right" if cause in truth else "misleading"
    if candidates:
        return "among" if candidates & truth else "misleading"
    return "neutral"


def sentence_verdict(bug: Bug, hints: list[dict]) -> str:
    """The measure of what a learner reads: every sentence the report shows is judged (judge), and
    one that sends the learner the wrong way makes the report misleading, whatever else it says.
    Otherwise right where one names the true class, among where one asks about it ("among-generic"
    where only the question about nearly every class does), compile where only the compiler spoke,
    none where nothing shown points at the cause."""
    truth = set(bug.classes)
    judged = [(h, judge(h, truth)) for h in hints]
    found = {v for _, v in judged}
    if "misleading" in found:
        return "misleading"
    if "right" in found:
        return "right"
    if "among" in found:
        specific = [h for h, v in judged if v == "among" and h.get("code") not in GENERIC]
        return "among" if specific else "among-generic"
    if "fact" in found and any(h["cause"] == "compile" for h in hints):
        return "compile"
    return "none"


# -- running ----------------------------------------------------------------------------------------
def load(key: str, corpus: Path | None = None):
    """The puzzle's corpus (MEASURED, RIGHT), or None where its file has neither. corpus: a folder of
    pNN.py files written apart (a blind set not yet merged), read instead of tests/bugs/."""
    if corpus is None:
        found = entries(key)
    elif (corpus / f"{key}.py").is_file():
        spec = importlib.util.spec_from_file_location(f"corpus_{key}", corpus / f"{key}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found = Entries(key, measured=list(getattr(module, "MEASURED", [])), right=list(getattr(module, "RIGHT", [])))
    else:
        return None
    return found if found.measured or found.right else None


def check(puzzle, text: str, parts: list[str], timeout: float, seed: int):
    lines: list[str] = []
    options = dict(backend="interpreter", write=lines.append, seed=seed)
    if timeout:
        report = run_check(puzzle, parts, from_text(text, "kernels.py"), timeout=timeout, shards=1, **options)
    else:
        report = run_check(puzzle, parts, from_text(text, "kernels.py"), in_process=True, **options)
    return report, "\n".join(lines)


def run_entry(puzzle, entry, seed: int) -> dict:
    bug = isinstance(entry, Bug)
    record = {"puzzle": puzzle.key, "name": entry.name, "kind": "bug" if bug else "right", "what": entry.what}
    if bug:
        record.update(part=entry.part, cause=entry.cause, accept=list(entry.accept),
                      interpreter_blind=entry.interpreter_blind)
    parts = [entry.part] if bug else [p.name for p in puzzle.parts]
    start = time.perf_counter()
    try:
        text = apply(puzzle.solution.read_text(encoding="utf-8"), entry.patches, f"{puzzle.key} {entry.name}")
        report, out = check(puzzle, text, parts, entry.timeout, seed)
    except Exception as exc:  # a stale patch, a checker crash: recorded, the run goes on
        record.update(status="runner error", error=f"{type(exc).__name__}: {exc}", seconds=0.0, hints=[])
        return record
    record["seconds"] = round(time.perf_counter() - start, 1)
    # the experiments' share of it: what a failing check pays for its smallest failing case
    record["experiment_seconds"] = round(sum(e.get("seconds", 0.0) for e in getattr(report, "experiments", [])), 3)
    record["passed"] = report.passed
    record["report"] = out
    hints, fields = hints_of(report, out)
    record["hints"] = hints
    record["classes_from"] = "checker" if fields else "text"
    broken = [p["problem"] for p in report.parts if re.search(r"SyntaxError|do not run|not implemented", p["problem"])]
    if broken:  # the entry's own text does not run: a mistake in the corpus, not a learner's bug
        record.update(status="runner error", error="the patched kernels do not run: " + broken[0])
    elif not bug:
        record["status"] = "ok" if report.passed else "FAILS"
    elif report.passed:
        record["status"] = "blind" if entry.interpreter_blind else "PASSES"
    else:
        record["status"] = ("~" if not fields else "") + sentence_verdict(entry, hints)
        record["by_classes"] = verdict(entry, hints)  # the old measure, beside it
        record["misleading_sentences"] = [h["hint"][:300] for h in hints if judge(h, set(entry.classes)) == "misleading"]
    return record


def classes_text(hints: list[dict]) -> str:
    named = sorted({h["cause"] for h in hints if h["cause"]})
    asked = sorted({c for h in hints if not h["cause"] for c in h["candidates"]} - set(named))
    return " ".join([f"{c}!" for c in named] + [f"{c}?" for c in asked]) or "-"


def print_entry(r: dict, text: bool) -> None:
    what = r.get("cause", "")
    if r.get("accept"):
        what += "/" + "/".join(r["accept"])
    print(f"{r['puzzle']} {r['name'][:38]:<38} {r.get('part', 'all')[:9]:<9} {what[:20]:<20} "
          f"{r['status']:<13} {classes_text(r.get('hints', []))}")
    if r["status"] == "runner error":
        print(f"      {r['error']}")
    if text or r["status"] == "FAILS":
        print(f"      ({r['what']})")
        for h in r.get("hints", []):
            tag = classes_text([h])
            body = h["hint"].replace("\n", "\n" + " " * 10)
            print(f"    - [{h['kind']}; {tag}] {body}")
        if r["status"] == "FAILS":
            print("\n".join("      | " + ln for ln in r["report"].split("\n") if "❌" in ln or "hint" in ln))


def summary_lines(bugs: list[dict]) -> list[str]:
    """The totals, in both measures: every sentence shown (what a learner reads), and by cause
    classes (the measure of earlier rounds, where a right hint outweighed a wrong one beside it)."""
    caught = [r for r in bugs if r["status"] not in ("PASSES", "blind", "runner error")]
    tally: dict[str, int] = {}
    for r in bugs:
        tally[r["status"].lstrip("~")] = tally.get(r["status"].lstrip("~"), 0) + 1
    old: dict[str, int] = {}
    for r in caught:
        old[r.get("by_classes", "")] = old.get(r.get("by_classes", ""), 0) + 1
    share = lambda n: f"{100 * n / len(caught):.1f} %" if caught else "-"  # noqa: E731
    misleading = tally.get("misleading", 0)
    useless = tally.get("none", 0)
    old_misleading = old.get("misleading", 0) + old.get("among+wrong", 0)
    return [f"{len(bugs)} bugs: " + ", ".join(f"{v} {k}" for k, v in sorted(tally.items(), key=lambda kv: -kv[1])),
            f"every sentence shown: of {len(caught)} caught, {misleading} misleading ({share(misleading)}), "
            f"{useless} with no useful hint ({share(useless)})",
            f"by cause classes (the earlier measure): " + ", ".join(f"{v} {k}" for k, v in sorted(old.items(), key=lambda kv: -kv[1]))
            + f"; misleading {old_misleading} ({share(old_misleading)})"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("puzzles", nargs="*", help="p05 p22 ... (default: every puzzle with a corpus file)")
    parser.add_argument("--text", action="store_true", help="print each report's hints")
    parser.add_argument("--full", action="store_true", help="print each report in full, as the learner reads it")
    parser.add_argument("--json", metavar="FILE", help="write every record (with the full report) to FILE")
    parser.add_argument("--only", action="append", default=[], help="entries whose name contains this")
    parser.add_argument("--bugs", action="store_true", help="the bugs only")
    parser.add_argument("--right", action="store_true", help="the correct rewrites only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shard", default="", help="i/n: every n-th entry from the i-th (0-based), to spread a run over processes")
    parser.add_argument("--corpus", type=Path, help="a folder of pNN.py corpus files written apart (default: tests/bugs)")
    args = parser.parse_args(argv)

    keys = [k if k.startswith("p") else f"p{int(k):02d}" for k in args.puzzles] or \
        [k for k in corpus_keys() if load(k, args.corpus) is not None]
    records = []
    print(f"{'':3} {'entry':<38} {'part':<9} {'true class':<20} {'verdict':<13} hint classes (x! named, x? asked)")
    for key in keys:
        corpus = load(key, args.corpus)
        if corpus is None:
            print(f"{key}: no corpus (MEASURED, RIGHT) in tests/bugs/{key}.py")
            continue
        puzzle = registry.get(key)
        chosen = ([] if args.right else corpus.measured) + ([] if args.bugs else corpus.right)
        if args.shard:
            index, count = (int(n) for n in args.shard.split("/"))
            chosen = chosen[index::count]
        for entry in chosen:
            if args.only and not any(w in entry.name for w in args.only):
                continue
            record = run_entry(puzzle, entry, args.seed)
            records.append(record)
            print_entry(record, args.text)
            if args.full and record.get("report"):
                print("\n".join("      | " + ln for ln in record["report"].split("\n")))
            sys.stdout.flush()

    bugs = [r for r in records if r["kind"] == "bug"]
    rights = [r for r in records if r["kind"] == "right"]
    print()
    for line in summary_lines(bugs):
        print(line)
    by_class: dict[str, list[int]] = {}
    for r in bugs:
        row = by_class.setdefault(r["cause"], [0, 0, 0])
        row[0] += 1
        row[1] += r["status"].lstrip("~").startswith("right")
        row[2] += r["status"].lstrip("~") == "misleading"
    print("by true class (bugs, right, misleading): " + ", ".join(
        f"{c} {n}/{ok}/{bad}" for c, (n, ok, bad) in sorted(by_class.items())))
    failing = [r["puzzle"] + " " + r["name"] for r in rights if r["status"] != "ok"]
    print(f"{len(rights)} correct rewrites: {len(rights) - len(failing)} pass" +
          (f"; FAIL: {', '.join(failing)}" if failing else ""))
    if any(r.get("classes_from") == "text" for r in records):
        print("(~: this checker gives no cause classes: they were read from the hints' text)")
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1, ensure_ascii=False), encoding="utf-8")
    errors = [r for r in records if r["status"] == "runner error"]
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
