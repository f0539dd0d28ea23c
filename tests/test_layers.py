"""The checker's rooms import downwards only, and never in a circle.

Each module sits on a floor (bottom first); a module may import from its own floor or below.
An import inside a function counts as much as one at the top: the order of loading is no excuse.
Package __init__ modules of checker.puzzle re-export the author vocabulary and sit with it.
"""
from __future__ import annotations

import ast
from pathlib import Path

CHECKER = Path(__file__).resolve().parent.parent / "checker"

FLOORS = [  # bottom first: (floor name, module prefixes)
    ("facts of no one", ("checker.diagnosis.model", "checker.poison", "checker.tensors", "checker.instruments", "checker.parsed",
                         "checker.source", "checker.cell_history", "checker.run.client", "checker.words")),
    ("what a puzzle is", ("checker.puzzle",)),
    ("declarations and evidence", ("checker.specs", "checker.evidence")),
    ("finding puzzles, explaining evidence", ("checker.registry", "checker.diagnosis")),
    ("instruments", ("checker.interpreter",)),
    ("one case", ("checker.case", "checker.experiment")),
    ("runs and reports", ("checker.run", "checker.report", "checker.bench", "checker.history")),
    ("faces", ("checker.cli", "checker.notebook", "checker.server", "checker.stubs", "checker.statement", "checker.new",
               "checker.reset",
               "checker.open_notebooks",
               "checker.selftime", "checker.mutate", "checker.grade", "checker.lab", "checker.release", "checker.__main__",
               "checker")),
]


def _floor(module: str) -> int:
    best = (-1, -1)  # (prefix length, floor)
    for i, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best[0]:
                best = (len(prefix), i)
    assert best[1] >= 0, f"{module} sits on no floor: add it to FLOORS"
    return best[1]


def _module_name(path: Path) -> str:
    parts = path.relative_to(CHECKER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str) -> set[str]:
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("checker")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if not base.startswith("checker"):
                continue
            for alias in node.names:  # `from checker.report import html`: the submodule, where it is one
                sub = f"{base}.{alias.name}"
                found.add(sub if (CHECKER.parent / sub.replace(".", "/")).with_suffix(".py").exists()
                          or (CHECKER.parent / sub.replace(".", "/") / "__init__.py").exists() else base)
    return found


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in CHECKER.rglob("*.py"):
        name = _module_name(path)
        graph[name] = {m for m in _imports(path, name) if m != name}
    return graph


def test_no_module_imports_from_a_floor_above_its_own():
    graph = _graph()
    upward = sorted(f"{a} ({FLOORS[_floor(a)][0]}) -> {b} ({FLOORS[_floor(b)][0]})"
                    for a, targets in graph.items() for b in targets
                    if b in graph and _floor(b) > _floor(a) and not (a == "checker" or a.endswith("__init__")))
    assert not upward, "\n".join(upward)


def test_no_import_circle():
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph or nxt == "checker":
                continue
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif not state.get(nxt):
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [node])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_no_checker_module_is_found_through_sys_modules():
    hits = [f"{p.relative_to(CHECKER.parent)}:{i}" for p in CHECKER.rglob("*.py")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if 'sys.modules.get("checker' in line or "sys.modules['checker" in line]
    assert not hits, hits


def test_no_spec_imports_another_spec_or_more_than_the_vocabulary_and_its_family():
    specs = CHECKER / "specs"
    wrong = []
    for path in specs.rglob("*.py"):
        name = _module_name(path)
        for imported in _imports(path, name):
            allowed = (imported == "checker.puzzle" or imported.startswith("checker.specs.families")
                       or (name.startswith("checker.specs.families") and imported.startswith("checker.puzzle"))
                       or imported == "checker.specs")
            if not allowed:
                wrong.append(f"{name} imports {imported}")
    assert not wrong, "\n".join(sorted(wrong))


def test_one_hint_type():
    """A hint's cause and candidates are fields of one record, checker.diagnosis.model.Diagnosis."""
    holders = sorted(str(p.relative_to(CHECKER.parent)) for p in CHECKER.rglob("*.py")
                     if "candidates: tuple" in p.read_text(encoding="utf-8"))
    assert holders == ["checker/diagnosis/model.py"], holders
