"""check(...) for a notebook cell: the kernels as currently defined in the notebook, the report
printed inline, and a picture of where wrong outputs differ. Runs in a child process, so a hang or
a GPU fault cannot take the notebook's kernel down."""
from __future__ import annotations

import inspect

from checker import registry
from checker.report import Report
from checker.runner import DEFAULT_TIMEOUT
from checker.session import run_check
from checker.source import from_file, from_namespace, from_notebook
from checker.spec import REPO_ROOT


def check(puzzle: str = "p22", part: str | list[str] | None = None, *, solution: bool = False,
          namespace: dict | None = None, backend: str = "auto", timeout: float = DEFAULT_TIMEOUT,
          seed: int = 0, sanitize: bool = True, verbose: bool = False, plot: bool = True,
          only_documented: bool = False) -> Report:
    """Check `part` ("unfused", "fused", "backward"; None: all) of `puzzle`.

    The kernels come from `namespace` (default: the calling notebook's globals), or from the
    reference solution with solution=True. Returns a Report (truthy when everything passed).
    """
    spec = registry.get(puzzle)
    parts = [p.name for p in spec.parts] if part is None else ([part] if isinstance(part, str) else list(part))
    if solution:
        source = from_file(spec.solution, str(spec.solution.relative_to(REPO_ROOT)))
    else:
        namespace = namespace if namespace is not None else inspect.currentframe().f_back.f_globals
        source = from_namespace(namespace)
        if not source.chunks:  # not called from a notebook that defines kernels: use the saved one
            source = from_notebook(spec.notebook, str(spec.notebook.relative_to(REPO_ROOT)))
    report = run_check(spec, parts, source, backend=backend, timeout=timeout, seed=seed, sanitize=sanitize,
                       verbose=verbose, only_documented=only_documented, write=lambda line: print(line, flush=True))
    if plot and not report.passed:
        from checker.plot import plot_failures
        plot_failures(report)
    return report
