"""`python -m checker lab`: JupyterLab for the puzzles, started so that opening a notebook changes nothing.

A plain `jupyter lab` writes the kernel's Python version into every notebook it opens (its
language_info), marks the notebook modified and autosaves it: `git status` then lists notebooks
the learner never touched, and a notebook only opened differs from its stubs. Here the kernel
reports everything the puzzle notebooks carry (checker.stubs.NOTEBOOK_METADATA) but the version,
so JupyterLab finds the metadata as it already is and leaves the notebook unmodified; the
server's pre-save hook (checker.stubs.keep_metadata) keeps the version out of notebooks
saved by any other kernel. As root (a container, our CI machines) JupyterLab refuses to start
without --allow-root: the launcher adds it.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from checker.stubs import NOTEBOOK_METADATA

REPO_ROOT = Path(__file__).resolve().parent.parent
KERNEL_NAME = NOTEBOOK_METADATA["kernelspec"]["name"]  # the name the notebooks ask for: ours shadows it


def kernel_class() -> type:
    """An IPython kernel whose language_info leaves out the Python version (built on first use:
    `python -m checker` must not import ipykernel)."""
    from ipykernel.ipkernel import IPythonKernel as base

    class PuzzleKernel(base):
        language_info = {k: v for k, v in base.language_info.items() if k != "version"}

    return PuzzleKernel


def kernel_spec() -> dict:
    """kernel.json of the python3 kernel the launcher puts first on JupyterLab's path."""
    spec = NOTEBOOK_METADATA["kernelspec"]
    return {"argv": [sys.executable, "-m", "checker.lab", "--kernel", "-f", "{connection_file}"],
            "display_name": spec["display_name"], "language": spec["language"],
            "env": {"PYTHONPATH": _pythonpath()}, "metadata": {"debugger": True}}


def _pythonpath() -> str:
    return os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))


def write_kernel_spec(data_dir: Path) -> Path:
    """data_dir/kernels/python3/kernel.json; data_dir goes first on JUPYTER_PATH."""
    folder = data_dir / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.json").write_text(json.dumps(kernel_spec(), indent=1), encoding="utf-8")
    return folder


def lab_command(extra: list[str], root: bool) -> list[str]:
    """The JupyterLab command line: the puzzles' folder, the save hook, --allow-root as root."""
    command = [sys.executable, "-m", "jupyterlab", "--ContentsManager.pre_save_hook=checker.stubs.keep_metadata"]
    if not any("root_dir" in a or "notebook-dir" in a or "notebook_dir" in a for a in extra):
        command.append(f"--ServerApp.root_dir={REPO_ROOT}")
    if root and "--allow-root" not in extra:
        command.append("--allow-root")
    return command + extra


def lab_environment(data_dir: Path) -> dict:
    return dict(os.environ, PYTHONPATH=_pythonpath(),
                JUPYTER_PATH=os.pathsep.join(filter(None, [str(data_dir), os.environ.get("JUPYTER_PATH")])))


def kernel_spec_folder() -> Path:
    """Where the launcher keeps its kernel spec: one folder per user, checkout and Python, rewritten
    at each start (JupyterLab reads it while it runs; nothing is left to clean up)."""
    import hashlib
    uid = os.getuid() if hasattr(os, "getuid") else 0
    mark = hashlib.sha256(f"{REPO_ROOT}|{sys.executable}".encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"triton-puzzles-lab-{uid}" / mark


def main(argv: list[str] | None = None) -> int:
    """Become JupyterLab (arguments after `lab` go to it): the same process, so that Ctrl-C and
    a kill reach JupyterLab itself and leave no server behind."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--kernel"]:  # the kernel process JupyterLab starts from kernel_spec()
        from ipykernel.kernelapp import IPKernelApp
        IPKernelApp.launch_instance(argv=argv[1:], kernel_class=kernel_class())
        return 0
    data_dir = kernel_spec_folder()
    write_kernel_spec(data_dir)
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    command = lab_command(argv, root)
    os.chdir(REPO_ROOT)
    os.execve(command[0], command, lab_environment(data_dir))
    return 1  # not reached: execve replaced this process


if __name__ == "__main__":
    sys.exit(main())
