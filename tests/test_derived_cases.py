"""Cases the experiments derive (checker/experiment.py) are what they say, in a process that has
checked other kernels before: one derived case never takes another's cached reference, and the
experiments' time limit never interrupts the interpreter outside a checker worker."""
from __future__ import annotations

import os
import signal
import time

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")

from checker import experiment, registry  # noqa: E402
from checker.case import run_case  # noqa: E402
from checker.run import worker  # noqa: E402


def test_two_derived_cases_of_one_name_each_keep_their_own_reference():
    """p22's cases each declare their data's seed: the same change from two of them makes a case of one
    name on other data. The reference solution passes the second right after the first, whose
    reference is cached (it failed the second when references were cached by name)."""
    puzzle = registry.get("p22")
    part = next(p for p in puzzle.parts if p.name == "unfused")
    starts = [c for c in puzzle.cases() if not c.gpu_only and "recipe" in c.tags][:2]
    change = {"M": 1, "H": 2, "N": 1, "inputs": "plain"}
    kernels, source = worker._solution(puzzle)
    names, data = set(), set()
    for start in starts:
        case = puzzle.derive(start, change)
        names.add(case.name)
        data.add(puzzle.data_of(case))
        result = run_case(puzzle, part, case, kernels, source, "cpu", 0, diagnose=False)
        assert result["status"] == "pass", (case.name, puzzle.data_of(case))
    assert len(names) == 1 and len(data) == 2  # one name, two cases


def _slow() -> None:
    deadline = time.perf_counter() + 0.3
    while time.perf_counter() < deadline:
        pass


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timers here")
def test_the_experiments_alarm_is_taken_only_where_a_worker_allows_it(monkeypatch):
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0 or signal.getsignal(signal.SIGALRM) not in (
            signal.SIG_DFL, signal.SIG_IGN, None):
        pytest.skip("someone else's alarm runs in this process")
    monkeypatch.setattr(experiment, "ALARM_ALLOWED", False)
    with experiment._time_limit(0.05):
        _slow()  # not interrupted: outside a worker the budget is checked between cases
    monkeypatch.setattr(experiment, "ALARM_ALLOWED", True)
    monkeypatch.setattr(experiment, "interrupted", False)
    with pytest.raises(experiment.OutOfTime):
        with experiment._time_limit(0.05):
            _slow()
    assert experiment.interrupted  # the worker leaves after this check


LAUNCHES_CUT_SHORT = r'''
import os, random, signal, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl
import checker.run.worker  # noqa: F401  (the interpreter's fixes)
from checker.interpreter.compat import fix_interpreter, undo_leaked_patches
fix_interpreter()

@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(y_ptr + offs, tl.sum(v, axis=0) + tl.cdiv(N, 2) + v, mask=offs < N)

class Stop(KeyboardInterrupt):
    pass

def stop(*_):
    raise Stop()

signal.signal(signal.SIGALRM, stop)
x = torch.randn(4096)
y = torch.empty_like(x)
random.seed(0)
unclean = 0
for _ in range(60):
    signal.setitimer(signal.ITIMER_REAL, random.uniform(0.0005, 0.02))
    try:
        k[(256,)](x, y, 4096, BLOCK=16)
    except Exception:
        pass  # an interrupt can leave the interpreter itself broken: that process is not reused
    except Stop:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    unclean += not undo_leaked_patches()
print(unclean)
'''


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timers here")
def test_launches_cut_short_leave_the_language_as_it_was():
    """A launch interrupted anywhere (inside the interpreter's patching of triton.language or its
    undoing) leaves the language's names as they were before any launch, once restored: the GPU
    front end's check reads them. In a process of its own: the interrupts may break the interpreter."""
    import subprocess
    import sys
    from pathlib import Path
    run = subprocess.run([sys.executable, "-c", LAUNCHES_CUT_SHORT], capture_output=True, text=True, timeout=240,
                         cwd=Path(__file__).resolve().parents[1])
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-1] == "0", run.stdout
