"""Every known-buggy kernel is rejected, for the right reason (the report names it)."""
from __future__ import annotations

import pytest

from catalog_p22 import BUGS, Bug, patched_solution
from checker import registry
from checker.session import run_check
from checker.source import from_file

pytestmark = pytest.mark.p22
PUZZLE = registry.get("p22")


def check_bug(bug: Bug, tmp_path, **options):
    path = tmp_path / f"{bug.name}.py"
    path.write_text(patched_solution(bug), encoding="utf-8")
    lines: list[str] = []
    report = run_check(PUZZLE, [bug.part], from_file(path, f"catalog/{bug.name}.py"), write=lines.append,
                       **options)
    return report, "\n".join(lines)


def assert_reasons(text: str, reasons: tuple, bug: Bug) -> None:
    for alternatives in reasons:
        assert any(r.lower() in text.lower() for r in alternatives), (
            f"{bug.name}: the report should say one of {alternatives}:\n{text}")
    for wrong in bug.misleading:
        assert wrong.lower() not in text.lower(), f"{bug.name}: misleading hint {wrong!r}:\n{text}"


def test_catalog_is_large_enough():
    assert len(BUGS) >= 11
    assert len({bug.name for bug in BUGS}) == len(BUGS)


@pytest.mark.parametrize("bug", BUGS, ids=lambda b: b.name)
def test_rejected_in_the_interpreter(bug, tmp_path):
    report, text = check_bug(bug, tmp_path, backend="interpreter")
    assert not report.passed, f"{bug.name} passed:\n{text}"
    assert_reasons(text, bug.reasons, bug)


@pytest.mark.parametrize("bug", [b for b in BUGS if b.reasons_unsanitized or b.cpu_blind_without_sanitizer],
                         ids=lambda b: b.name)
def test_hints_without_the_sanitizer(bug, tmp_path):
    """The value checks alone: hints name the bug; races are invisible to the plain interpreter."""
    report, text = check_bug(bug, tmp_path, backend="interpreter", sanitize=False)
    if bug.cpu_blind_without_sanitizer:
        # the hole the sanitizer closes: programs run one after another, so the race cannot show
        assert report.passed, text
        return
    assert not report.passed, f"{bug.name} passed:\n{text}"
    assert_reasons(text, bug.reasons_unsanitized, bug)


@pytest.mark.gpu
@pytest.mark.parametrize("bug", BUGS, ids=lambda b: b.name)
def test_rejected_on_the_gpu(bug, tmp_path):
    report, text = check_bug(bug, tmp_path, backend="gpu")
    assert not report.passed, f"{bug.name} passed on the GPU:\n{text}"
    if bug.cpu_blind_without_sanitizer:
        assert "contributions were lost" in text or "share of row" in text or "overwrote" in text, text
