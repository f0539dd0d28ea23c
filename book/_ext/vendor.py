"""Fetch the JavaScript the book needs, so the built HTML loads nothing from a CDN.

    python book/_ext/vendor.py            # fetch into book/_vendor/ (skips what is already there)
    python book/_ext/vendor.py --force    # fetch again
    python book/_ext/vendor.py --check    # exit 1 unless everything is in place

``jupyter-book build .`` runs this too (``_config.yml`` loads it as a local Sphinx extension),
so a build needs ``npm`` and the npm registry the first time, and nothing after that.

Two npm packages are used, each fetched with ``npm pack`` (the tarball only, without its
dependency tree) from the npm registry:

* ``mathjax@3``: renders the equations. We copy its ``es5/`` folder, which holds
  ``tex-chtml.js`` and the fonts and extensions it loads relative to itself.
* ``@jupyter-widgets/html-manager@1``: renders the saved ipywidgets state in static HTML.
  We copy ``dist/embed.js`` (a standalone bundle of the built-in widgets that needs no
  require.js) and the font files webpack emitted beside it.

Why ``book/_vendor/`` and not ``_static/``: jupyter-book 1.x injects every ``.js`` file found
under a root ``_static/`` folder into every page.  ``_config.yml`` lists ``book/_vendor`` in
``html_static_path`` instead, so the files are copied to ``_build/html/_static/`` but only
the pages that need them load them (MathJax on pages with math, the widget manager on pages
with saved widget state).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

BOOK = Path(__file__).resolve().parent.parent  # book/, this file being book/_ext/vendor.py
VENDOR = BOOK / "_vendor"

# name in _vendor -> (npm spec, folder inside the package to copy, files to leave out)
PACKAGES = {
    "mathjax": ("mathjax@3.2.2", "es5", ()),
    "widgets": (
        "@jupyter-widgets/html-manager@1.0.15",
        "dist",
        # the require.js flavours of the bundle and the source map are not needed
        ("embed-amd.js", "libembed-amd.js", "embed.js.map"),
    ),
}
# files that must exist after vendoring (checked by --check and after a fetch)
REQUIRED = ["mathjax/tex-chtml.js", "widgets/embed.js"]
STAMP = VENDOR / "VERSIONS.json"


def wanted_versions() -> dict:
    return {name: spec for name, (spec, _, _) in PACKAGES.items()}


def is_complete() -> bool:
    if not STAMP.is_file():
        return False
    try:
        if json.loads(STAMP.read_text()) != wanted_versions():
            return False
    except ValueError:
        return False
    return all((VENDOR / rel).is_file() for rel in REQUIRED)


def npm_pack(spec: str, dest: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("vendor.py: `npm` was not found; install Node.js/npm to fetch " + spec)
    out = subprocess.run(
        [npm, "pack", spec, "--pack-destination", str(dest), "--json"],
        cwd=dest,
        check=True,
        capture_output=True,
        text=True,
    )
    info = json.loads(out.stdout)
    return dest / info[0]["filename"]


def extract(tgz: Path, subdir: str, target: Path, skip: tuple) -> int:
    """Copy ``package/<subdir>/**`` from an npm tarball into ``target``; return the file count."""
    prefix = f"package/{subdir}/"
    count = 0
    with tarfile.open(tgz, "r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.startswith(prefix):
                continue
            rel = Path(member.name[len(prefix):])
            if rel.is_absolute() or ".." in rel.parts or rel.name in skip:
                continue
            out = target / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
            count += 1
    return count


def vendor(force: bool = False) -> None:
    if is_complete() and not force:
        print(f"vendor.py: {', '.join(wanted_versions().values())} already in place")
        return
    if VENDOR.exists():
        shutil.rmtree(VENDOR)
    VENDOR.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (spec, subdir, skip) in PACKAGES.items():
            tgz = npm_pack(spec, Path(tmp))
            n = extract(tgz, subdir, VENDOR / name, skip)
            print(f"vendor.py: {spec}: {n} files -> book/_vendor/{name}/")
    missing = [rel for rel in REQUIRED if not (VENDOR / rel).is_file()]
    if missing:
        sys.exit(f"vendor.py: missing after fetch: {missing}")
    STAMP.write_text(json.dumps(wanted_versions(), indent=1) + "\n")


def setup(app):
    """Sphinx hook (``_config.yml`` loads this file as a local extension).

    Vendor right here, while extensions load: Sphinx drops ``html_static_path`` entries that do not
    exist when it validates the configuration, which comes before any build event. Fetching later
    (at builder-inited) gave a first build in a fresh clone pages whose MathJax and widgets 404.
    """
    from sphinx.errors import ExtensionError
    try:
        vendor()
    except (subprocess.CalledProcessError, SystemExit, OSError) as err:
        detail = getattr(err, "stderr", None) or err
        raise ExtensionError(f"could not vendor the book's JavaScript: {detail}") from None
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="fetch again")
    parser.add_argument("--check", action="store_true", help="only check")
    args = parser.parse_args()
    if args.check:
        ok = is_complete()
        print("vendor.py: " + ("complete" if ok else "missing; run `python book/_ext/vendor.py`"))
        sys.exit(0 if ok else 1)
    vendor(force=args.force)


if __name__ == "__main__":
    main()
