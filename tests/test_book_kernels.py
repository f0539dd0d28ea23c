"""The book's pages run in kernels that start without a warning (book/_ext/jupyter_kernel_keys.py).

ipykernel 7 warns on stderr, once per kernel and so once per page of the book's build, that the
kernel "is running over TCP without encryption" unless its kernel manager gives it CurveZMQ keys.
The book's local Sphinx extension makes the build's kernel managers do so; here a notebook runs
the way myst-nb runs a page (jupyter-cache's single_nb_execution, in a process of its own), with
the extension set up as the build sets it up.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import yaml

from checker.puzzle.model import REPO_ROOT

RUN_A_PAGE = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1] + "/_ext")
    import jupyter_kernel_keys
    jupyter_kernel_keys.setup(None)
    from jupyter_cache.executors.utils import single_nb_execution
    from nbformat import v4
    page = v4.new_notebook(cells=[v4.new_code_cell("print(6 * 7)")],
                           metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                    "language": "python"}})
    result = single_nb_execution(page, cwd=sys.argv[1], timeout=120, allow_errors=False)
    assert result.err is None, result.err
    print(page.cells[0].outputs[0]["text"].strip())
""")


def test_the_books_kernels_start_without_the_unencrypted_tcp_warning():
    run = subprocess.run([sys.executable, "-c", RUN_A_PAGE, str(REPO_ROOT / "book")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "42"
    assert "without encryption" not in run.stderr, run.stderr[-3000:]


def test_the_build_loads_the_extension():
    sphinx = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]
    assert sphinx["local_extensions"]["jupyter_kernel_keys"] == "book/_ext"
    assert "jupyter_kernel_keys" in sphinx["config"]["extensions"]
