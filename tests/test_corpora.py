"""Every corpus entry (tests/bugs/pNN.py and the blind sets under tests/bugs/corpora/) is a learner's kernel written as
patches on a reference solution: each must still apply, on today's solution or, through
bugs.written_against, on the one it was written against. A change to a solution that makes an
entry stale fails here, in CI, not later in a corpus run (tests/bugs/measure.py) that CI does not do."""
from __future__ import annotations

import importlib.util

import pytest
from bugs import HERE, Right, apply, entries, keys, written_against

from checker import registry

BLIND = sorted(p for p in (HERE / "corpora").iterdir() if p.is_dir() and p.name != "__pycache__")


def corpus(key: str) -> list[tuple[str, object]]:
    found = entries(key)
    listed = [("main", e) for e in found.pinned + found.passing + found.measured + found.right]
    for folder in BLIND:
        path = folder / f"{key}.py"
        if path.is_file():
            spec = importlib.util.spec_from_file_location(f"corpus_{folder.name}_{key}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            listed += [(folder.name, e) for e in [*getattr(module, "MEASURED", []), *getattr(module, "RIGHT", [])]]
    return listed


@pytest.mark.parametrize("key", keys())
def test_every_entry_applies_to_the_solution_it_was_written_against(key):
    solution = registry.get(key).solution.read_text(encoding="utf-8")
    stale = []
    for where, entry in corpus(key):
        try:
            apply(solution, entry.patches, f"{key} {entry.name}")
        except AssertionError as err:
            stale.append(f"{where}: {err}")
    assert not stale, "\n".join(stale)


def test_written_against_applies_the_way_back_first():
    then = (("new line", "old line", 1),)
    [entry] = written_against(then, [Right("r", (("old line", "old line, patched", 1),))])
    assert apply("a\nnew line\n", entry.patches) == "a\nold line, patched\n"
