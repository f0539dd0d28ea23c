"""A kernel that assumes its launch: the same case, launched with another value the launch chooses
(a persistent grid's program count), passes one way and fails the other.

A case declared with `launches={"PROGRAMS": (2, 5)}` is checked again with each value, on the same
data and sizes (checker/puzzle/build.py: Case.variation_of). A correct kernel gives the same answer
however it is launched; where one of these runs passes and another fails, the verdict flipped on the
launch's value alone: the kernel assumes one (a loop stepping by 3 where tl.num_programs(0) belongs).
That is an experiment, not a correlation: the hint names the cause, the pair that decides it, and
what the kernel should read (checker/puzzle/launch.py READS).

A value the kernels get as an argument (p27's ignore_index, launch.py ARGUMENTS) is varied the same
way, but its verdict flipping is weaker evidence: a kernel that reads memory at that value flips too.
There the hint asks only where the kernels write the passing value as a number.

Pure Python, so the report can use it without torch.
"""
from __future__ import annotations

from typing import Any, Mapping

from checker.diagnosis.model import Diagnosis, Strength, asking
from checker.diagnosis.written_numbers import COVERAGE
from checker.puzzle.launch import ARGUMENTS, USES, chosen, reads
from checker.puzzle.model import Case


def launch_assumed(results: list[tuple[Case, dict]], written: Mapping[str, Any] | None = None) -> Diagnosis | None:
    """results: (case, its case_result event). The first family of cases (one case and its launches
    again) where one passes and another fails, worded by the launch parameters they differ in.
    written: the numbers the learner's kernels write that the solution's do not (the experiment's
    Finding.written; None where no experiment ran)."""
    families: dict[str, list[tuple[Case, bool]]] = {}
    statuses = {case.name: result.get("status") for case, result in results}
    for case, result in results:
        families.setdefault(case.variation_of or case.name, []).append((case, result.get("status") == "pass"))
    for base, family in families.items():
        passing = [c for c, ok in family if ok]
        failing = [c for c, ok in family if not ok]
        if not passing or not failing:
            continue
        ok, bad = passing[0], failing[0]
        params = [name for name in sorted(set(ok.params) | set(bad.params))
                  if ok.params.get(name) != bad.params.get(name)]
        if not params:
            continue
        if all(name in ARGUMENTS for name in params):
            # an argument's value decides the verdict, but that alone does not say it is written in: a
            # kernel that reads memory at the value (a target's logit loaded unmasked) fails at one value
            # and not the other too. Asked only where the kernels write the value that passes and the
            # other value gives wrong numbers, not a fault of its own
            if statuses.get(bad.name) == "fail" and _writes(written, [ok.params.get(n) for n in params]):
                return _argument_assumed(base, ok, bad, params)
            continue
        passed = ", ".join(f"{name} = {_value(ok, name)}" for name in params)
        failed = ", ".join(f"{name} = {_value(bad, name)}" for name in params)
        readers = "; ".join(f"{name}: {reads(name)}" for name in params)
        # the launch's value decides it (an experiment): written in, most likely; but a program that does
        # several rows' or steps' work wrongly (a share overwritten at each step) also depends on it
        return asking(f"the same case, on the same data, passes when launched with {passed} and fails with {failed} "
                      f"({base}): the kernels' results depend on a value the launch chooses, which a correct kernel "
                      f"never does. On a GPU the launch picks it from the device (a persistent grid: programs per "
                      f"SM times the SMs), in the interpreter from the case. Is it written into the kernel? Read it "
                      f"there ({readers}): a persistent program walks its rows pid, pid + P, pid + 2P, … with "
                      f"P = tl.num_programs(0), however many programs there are. Or, where a program does several "
                      f"rows' or steps' work, does each add to what the earlier ones left (not overwrite it), and "
                      f"does its loop reach every one?", "hardcoded", "accumulate", "loop",
                      code="cases.launch_assumed", strength=Strength.PROOF,
                      data={"params": params, "passed": passed, "failed": failed})
    return None


def _argument_assumed(base: str, ok: Case, bad: Case, params: list[str]) -> Diagnosis:
    """The verdict flipped on an argument's value alone (p27's ignore_index -100, then -1, on the same
    rows): the kernel uses the value that passes where it should use the argument."""
    passed = ", ".join(f"{ARGUMENTS[name]} = {_value(ok, name)}" for name in params)
    failed = ", ".join(f"{ARGUMENTS[name]} = {_value(bad, name)}" for name in params)
    names = " and ".join(f"`{ARGUMENTS[name]}`" for name in params)
    uses = "; ".join(f"{ARGUMENTS[name]}: {USES[name]}" for name in params if name in USES)
    return asking(f"the same case, on the same data, passes with {passed} and fails with {failed} ({base}): only "
                  f"that value changed, and the kernels get it as an argument. Is {_value(ok, params[0])} written "
                  f"into a kernel where it should use {names}?" + (f" ({uses}.)" if uses else ""),
                  "hardcoded", code="cases.argument_assumed", strength=Strength.PROOF,
                  data={"params": params, "passed": passed, "failed": failed})


def _writes(written: Mapping[str, Any] | None, values: list[Any]) -> bool:
    """Whether the learner's kernels write one of these numbers (its magnitude: -100 is written as
    the number 100, negated)."""
    return bool(written) and any(isinstance(v, int) and str(abs(v)) in written for v in values)


def _value(case: Case, name: str) -> str:
    value = case.params.get(name)
    return chosen(name) if value is None else str(value)




def with_launch_asked(entry: dict, params: list[str]) -> dict:
    """A case's diagnosis (its JSON: a failing output's, the case's own, its error's) in a puzzle whose
    launch chooses `params` (a persistent grid's program count): where it names or asks only about
    addresses, masks or loops — rows never written, two programs on one row, a row walked twice —
    a kernel that assumes how many programs run shows the same, so it asks about that too."""
    named = list(entry.get("candidates", []))
    text = entry.get("hint") or entry.get("message") or ""
    # a cause the run proves (a lane past the end, a mask's bound) stays as it is: only questions grow
    if entry.get("cause") or not named or not set(named) <= COVERAGE or not text:
        return entry
    readers = ", ".join(f"{reads(name)} ({name})" for name in params)
    said = (f" Or does the kernel assume how many programs the launch runs? It chooses that number: read it "
            f"with {readers}.")
    key = "hint" if entry.get("hint") else "message"
    return {**entry, key: text + ("\n" + said.lstrip() if "\n" in text else said), "cause": "",
            "candidates": [*named, "hardcoded"]}
