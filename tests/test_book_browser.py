"""Check the built book's pages in a real (headless) Chromium.

    pytest -m book tests/test_book_browser.py -s  # builds, then browses every page
    BOOK_SKIP_BUILD=1 pytest -m book ...          # reuse an existing _build/html

What is checked, page by page, with the Chrome DevTools protocol:
  * no request leaves the machine (every URL the page asks for is on 127.0.0.1);
  * no JavaScript error and no console error;
  * math is rendered: on the derivation pages every Sphinx math element holds MathJax output;
  * widgets render from their saved state, and switching a choice works without a kernel;
  * figures are present and load, and their text is at least 10 px at page width;
  * every internal link points at a file that exists, and at an id that exists in it;
  * at 1280 px and 1400 px: no code line wraps (a long one scrolls in its block), no table column
    is out of its table's box, one search field; plotting code is folded; no internal label
    ("eq-...") is printed; equations are numbered (1), (2), ... on each page;
  * a puzzle page's "Contents" sidebar lists its statement's parts; its statement shows the facts of
    its declaration; its hints (the idea, the approach, the one line) and its solution are dropdowns
    that start closed.
A full-page screenshot of p22 (the one CI keeps) and of the landing page is kept under
_build/artifacts/; TRITON_PUZZLES_PAGE_SHOTS=1 keeps one of every page (a 1280 x up to 16000 px
capture and its 0.6 s settling, some 60 times: a minute and a half of the suite's critical path).

Needs the Debian package `chromium` and the PyPI package `websocket-client`.  Without
chromium the module is skipped, except in CI (env CI set), where that is a failure.
The build is the session-scoped fixture `built_book` (tests/book_fixtures.py).
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from book_pages import ARTIFACTS, HTML, PUZZLE_PAGES, ROOT, _title, _toc
from browser import CHROMIUM, CDP, chromium

# The book's tests share one xdist worker (--dist loadgroup), so the book builds once there:
# built_book is session-scoped, in tests/book_fixtures.py.
pytestmark = [pytest.mark.book, pytest.mark.xdist_group("book")]
pytest_plugins = ["book_fixtures"]

if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (apt-get install chromium); in CI this is an error",
                allow_module_level=True)

# Pages whose derivations must show rendered math, figures, widgets (file stem under book/).
MATH_PAGES = ["03_layernorm_forward", "04_linear_forward", "05_layernorm_backward",
              "06_linear_backward", "07_accumulating_gradients"]
# page -> the fewest figures (matplotlib images in cell outputs) it must show
FIGURE_PAGES = {"02_triton_model": 6, "03_layernorm_forward": 3, "04_linear_forward": 1,
                "05_layernorm_backward": 3, "06_linear_backward": 1, "07_accumulating_gradients": 3,
                "08_case_studies": 2}
WIDGET_PAGES = ["02_triton_model", "05_layernorm_backward"]


# ------------------------------------------------------------------------------------------
# Serving the book; the browser (tests/browser.py)
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(built_book):
    assert built_book["rc"] == 0 or (HTML / "index.html").is_file(), "the book did not build"
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    with chromium() as cdp:
        yield cdp


# ------------------------------------------------------------------------------------------
# Visit every page once; the tests below assert on what was recorded
# ------------------------------------------------------------------------------------------
PAGE_PROBE = r"""
(async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
  for (let i = 0; i < 100 && views > 0 &&
       document.querySelectorAll('.jupyter-widgets.widget-container, .widget-inline-hbox, .widget-html, .widget-toggle-buttons').length === 0; i++) {
    await sleep(100);
  }
  await sleep(300);
  const maths = [...document.querySelectorAll('.math')];
  return {
    title: document.title,
    math_nodes: maths.length,
    math_unrendered: maths.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 80)),
    mjx: document.querySelectorAll('mjx-container').length,
    mjx_errors: document.querySelectorAll('mjx-merror').length,
    widget_views: views,
    widgets_rendered: document.querySelectorAll('.widget-toggle-buttons, .widget-html, .widget-image, .widget-vbox').length,
    images: [...document.querySelectorAll('.cell_output img')].map(
        i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0,
               width: i.getBoundingClientRect().width})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    solution_passes: document.body.innerText.includes('Overall Result: ✅ ALL CORRECT'),
    // the statement's facts (the cell checker.stubs writes from the declaration), as the reader sees them
    facts_shown: [...document.querySelectorAll('article p')].some(
        p => p.offsetParent !== null && p.innerText.startsWith('What the checker runs.')),
    // the dropdowns (hints, the solution): their titles, and whether they start open
    dropdowns: [...document.querySelectorAll('article details')].map(
        d => ({title: (d.querySelector('summary') || d).innerText.trim().slice(0, 100), open: d.open,
               code: d.querySelectorAll('pre').length})),
    // inline code in a table cell broken over lines ("[M," above "H]")
    broken_cell_code: [...document.querySelectorAll('article td code')].filter(c => {
        const lh = parseFloat(getComputedStyle(c).lineHeight) || 1.2 * parseFloat(getComputedStyle(c).fontSize);
        return c.getClientRects().length > 1 || c.getBoundingClientRect().height > 1.6 * lh;
      }).map(c => c.textContent),
    folded_first_code: (() => { const cell = document.querySelector('article div.cell');
        return !!cell && (cell.classList.contains('tag_hide-input') || !!cell.closest('details')); })(),
    // what the copy button copies (innerText) against the code's own text
    copy_differs: [...document.querySelectorAll('article pre')].filter(
        p => p.offsetParent !== null && !p.closest('details:not([open])') &&
             p.innerText.replace(/\n+$/, '') !== p.textContent.replace(/\n+$/, '')).map(
        p => p.textContent.slice(0, 80)),
    // code that draws a figure, not folded away
    plot_code: [...document.querySelectorAll('article .cell_input')].filter(
        c => c.offsetParent !== null && !c.closest('details:not([open])') &&
             /\bplt\.|\bfig\b|\bax\.|\baxes\b|\bfigures[\w.]*\.\w+\(/.test(c.textContent)).map(
        c => c.textContent.trim().slice(0, 80)),
    eq_labels: (document.querySelector('article') || document.body).innerText.match(/\beq-[a-z0-9][\w-]*/g) || [],
    eqnos: [...document.querySelectorAll('article .eqno')].map(e => e.textContent.replace('#', '').trim()),
    links_in_order: [...document.querySelectorAll('article a.reference.internal[href]')].map(a => a.getAttribute('href')),
    // every figure: its text's smallest size on the screen, from the SVG's own font sizes and the
    // width the image is drawn at (a hidden one, in a widget, at the width it would take)
    figure_text: await Promise.all([...document.querySelectorAll('article img')].map(async img => {
      const src = img.currentSrc || img.src;
      const r = img.getBoundingClientRect();
      const column = (img.closest('.cell_output') || document.querySelector('article')).clientWidth;
      const out = {src: src.slice(0, 120), kind: 'raster', width: r.width, min_px: null, text: null};
      try {
        const body = await (await fetch(src)).text();
        if (!/<svg[\s>]/.test(body.slice(0, 4000))) return out;
        const svg = new DOMParser().parseFromString(body, 'image/svg+xml').documentElement;
        const vb = (svg.getAttribute('viewBox') || '').trim().split(/[\s,]+/).map(Number);
        const user = vb.length === 4 ? vb[2] : parseFloat(svg.getAttribute('width'));
        const width = r.width > 0 ? r.width : Math.min(img.naturalWidth, column);
        out.kind = 'svg'; out.width = width;
        for (const el of svg.querySelectorAll('text, tspan')) {
          if (!el.textContent.trim()) continue;
          let size = null;
          for (let e = el; size === null && e && e.getAttribute; e = e.parentNode) {
            const m = (e.getAttribute('style') || '').match(/font(?:-size)?:\s*(?:[a-z-]+\s+)*([\d.]+)px/);
            size = m ? parseFloat(m[1]) : (e.getAttribute('font-size') ? parseFloat(e.getAttribute('font-size')) : null);
          }
          if (size === null) continue;
          const px = size * width / user;
          if (out.min_px === null || px < out.min_px) { out.min_px = px; out.text = el.textContent.trim().slice(0, 40); }
        }
      } catch (e) { out.kind = 'unreadable: ' + e; }
      return out;
    })),
    height: Math.ceil(document.documentElement.scrollHeight),
  };
})()
"""

# What depends on the window's width, measured at each of WIDTHS (a laptop's 1280 px and 1400 px)
WIDTHS = (1280, 1400)
LAYOUT_PROBE = r"""
(() => {
  const shown = e => e.offsetParent !== null && !e.closest('details:not([open])');
  // a code block's lines as drawn against its lines as written: more drawn lines is a wrapped one
  const wrapped_code = [...document.querySelectorAll('article pre')].filter(shown).map(p => {
    const written = p.textContent.replace(/\n+$/, '').split('\n');
    const range = document.createRange(); range.selectNodeContents(p);
    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
    return {drawn: tops.size, written: written.filter(l => l.trim()).length,
            line: written.reduce((a, b) => a.length >= b.length ? a : b, '').slice(0, 80)};
  }).filter(c => c.drawn > c.written);
  // a table's columns beyond the right edge of the box it scrolls in (or of the article)
  const hidden_columns = [...document.querySelectorAll('article table')].filter(shown).map(t => {
    const box = (t.closest('.pst-scrollable-table-container, .tgp-scroll, .cell_output, article')).getBoundingClientRect();
    const cells = [...(t.querySelector('tr') || {children: []}).children];
    return {table: cells.map(c => c.textContent.trim().slice(0, 16)).join(' | ').slice(0, 120),
            hidden: cells.filter(c => c.getBoundingClientRect().right > box.right + 1).map(c => c.textContent.trim().slice(0, 40))};
  }).filter(t => t.hidden.length);
  const search_fields = [...document.querySelectorAll('.search-button-field, form.bd-search')].filter(
      e => e.offsetParent !== null && e.getBoundingClientRect().width > 0).length;
  return {wrapped_code, hidden_columns, search_fields};
})()
"""


def _pages() -> list[Path]:
    pages = []
    for p in sorted(HTML.rglob("*.html")):
        rel = p.relative_to(HTML)
        if rel.parts[0].startswith("_") or rel == Path("index.html"):  # index.html: a redirect
            continue
        pages.append(p)
    return pages


KEPT_SHOTS = {"p22"}  # the pages whose screenshot every run keeps (test_p22_screenshot_kept)


def _screenshot(cdp: CDP, path: Path, height: int):
    """A full-page screenshot at 1280 px wide (the layout of a laptop screen): make the viewport
    as tall as the page, let the layout settle, capture, and put the viewport back."""
    height = max(800, min(height, 16000))
    cdp.send("Emulation.setDeviceMetricsOverride",
             {"width": 1280, "height": height, "deviceScaleFactor": 1, "mobile": False})
    cdp.evaluate("new Promise(r => setTimeout(r, 600))")
    shot = cdp.send("Page.captureScreenshot", {"format": "png"})
    cdp.send("Emulation.setDeviceMetricsOverride",
             {"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


@pytest.fixture(scope="module")
def visits(server, browser):
    for old in ARTIFACTS.glob("*.png"):  # screenshots of pages that no longer exist
        old.unlink()
    results = {}
    for page in _pages():
        rel = page.relative_to(HTML).as_posix()
        browser.events.clear()
        url = f"{server}/{rel}"
        browser.send("Page.navigate", {"url": url})
        browser.wait_event("Page.loadEventFired", timeout=60)
        probe = browser.evaluate(PAGE_PROBE, timeout=90)
        probe["layout"] = {1280: browser.evaluate(LAYOUT_PROBE)}
        if page.stem in KEPT_SHOTS or os.environ.get("TRITON_PUZZLES_PAGE_SHOTS") == "1":
            _screenshot(browser, ARTIFACTS / (page.stem + ".png"), probe["height"])
        ev = list(browser.events)
        probe["requests"] = [e["params"]["request"]["url"] for e in ev
                             if e["method"] == "Network.requestWillBeSent"]
        probe["failed"] = [e["params"].get("errorText") for e in ev if e["method"] == "Network.loadingFailed"]
        probe["bad_status"] = [f'{e["params"]["response"]["status"]} {e["params"]["response"]["url"]}'
                               for e in ev if e["method"] == "Network.responseReceived"
                               and e["params"]["response"]["status"] >= 400]
        probe["js_errors"] = [e["params"]["exceptionDetails"].get("exception", {}).get("description")
                              or e["params"]["exceptionDetails"].get("text")
                              for e in ev if e["method"] == "Runtime.exceptionThrown"]
        probe["console_errors"] = (
            [e["params"]["entry"]["text"] for e in ev
             if e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"]
            + [" ".join(str(a.get("value", a.get("description", ""))) for a in e["params"]["args"])
               for e in ev if e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] == "error"])
        results[rel] = probe
    assert results, "no pages found under _build/html"
    (ARTIFACTS / "visits.json").write_text(json.dumps(results, indent=1))
    return results


@pytest.fixture(scope="module")
def layouts(server, browser, visits):
    """{width: {page: LAYOUT_PROBE's answer}} at every width of WIDTHS (1280 px from `visits`)."""
    found = {1280: {page: v["layout"][1280] for page, v in visits.items()}}
    for width in WIDTHS[1:]:
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        try:
            found[width] = {}
            for page in visits:
                # wait_event returns the first matching event already received: without this, every page
                # after the first matched the first page's load event and was probed while still loading
                # (p11 once showed no search field at 1400 px)
                browser.events.clear()
                browser.send("Page.navigate", {"url": f"{server}/{page}"})
                browser.wait_event("Page.loadEventFired", timeout=60)
                browser.evaluate("new Promise(r => setTimeout(r, 300))")
                found[width][page] = browser.evaluate(LAYOUT_PROBE)
        finally:
            browser.send("Emulation.setDeviceMetricsOverride",
                         {"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    return found


def _page(visits, stem):
    hits = [v for k, v in visits.items() if Path(k).stem == stem]
    assert hits, f"page {stem}.html was not built"
    return hits[0]


def test_every_toc_page_was_visited(visits):
    stems = {Path(k).stem for k in visits}
    for stem in ["index", "01_how_to_use", *PUZZLE_PAGES, *MATH_PAGES, *FIGURE_PAGES,
                 *WIDGET_PAGES]:
        assert stem in stems


def test_no_request_leaves_the_machine(visits, server):
    outside = {}
    for page, v in visits.items():
        bad = [u for u in v["requests"] if not (u.startswith(server + "/") or
                                                 u.split(":", 1)[0] in ("data", "blob", "about"))]
        if bad:
            outside[page] = bad
    assert not outside, json.dumps(outside, indent=1)


def test_every_request_succeeds(visits):
    bad = {p: v["bad_status"] + v["failed"] for p, v in visits.items() if v["bad_status"] or v["failed"]}
    assert not bad, json.dumps(bad, indent=1)


def test_no_javascript_errors(visits):
    errors = {p: v["js_errors"] + v["console_errors"] for p, v in visits.items()
              if v["js_errors"] or v["console_errors"]}
    assert not errors, json.dumps(errors, indent=1)


@pytest.mark.parametrize("stem", MATH_PAGES)
def test_math_is_rendered(visits, stem):
    v = _page(visits, stem)
    assert v["math_nodes"] > 0, f"{stem}: no math on a derivation page"
    assert v["mjx"] >= v["math_nodes"], f"{stem}: {v['mjx']} MathJax outputs for {v['math_nodes']} math nodes"
    assert not v["math_unrendered"], f"{stem}: math left as TeX: {v['math_unrendered'][:5]}"
    assert v["mjx_errors"] == 0, f"{stem}: MathJax reported {v['mjx_errors']} errors"


@pytest.mark.parametrize("stem", sorted(FIGURE_PAGES))
def test_figures_are_present(visits, stem):
    v = _page(visits, stem)
    broken = [i["src"] for i in v["images"] if not i["ok"]]
    assert not broken, f"{stem}: figures that did not load: {broken}"
    shown = [i for i in v["images"] if i["ok"] and i["width"] > 100]
    assert len(shown) >= FIGURE_PAGES[stem], (
        f"{stem}: {len(shown)} figures shown, expected at least {FIGURE_PAGES[stem]}")


@pytest.mark.parametrize("stem", WIDGET_PAGES)
def test_widgets_render_from_saved_state(visits, stem):
    v = _page(visits, stem)
    assert v["widget_views"] > 0, f"{stem}: no saved widget views (was widget state stored?)"
    assert v["widgets_rendered"] >= v["widget_views"], (
        f"{stem}: {v['widget_views']} widget views but {v['widgets_rendered']} rendered widgets")


def test_widgets_work_without_a_kernel(server, browser, visits):
    """Click 'H = 100' then 'BLOCK = 32' in chapter 2's explorer: the picture must change."""
    page = next(k for k in visits if Path(k).stem == "02_triton_model")
    browser.send("Page.navigate", {"url": f"{server}/{page}"})
    browser.events.clear()
    browser.wait_event("Page.loadEventFired")
    browser.evaluate(PAGE_PROBE)
    script = r"""
    (async () => {
      const sleep = ms => new Promise(r => setTimeout(r, ms));
      const visibleText = () => [...document.querySelectorAll('.tgp-explorer')]
          .filter(e => e.offsetParent !== null).map(e => e.innerText).join('\n');
      const click = label => {
        const b = [...document.querySelectorAll('button')].find(
            b => b.innerText.trim() === label && b.offsetParent !== null);
        if (!b) throw new Error('no visible button ' + label);
        b.click();
      };
      const before = visibleText();
      click('H = 100'); await sleep(300);
      click('BLOCK = 32'); await sleep(300);
      return {before, after: visibleText()};
    })()
    """
    res = browser.evaluate(script)
    assert "H = 40, BLOCK = 16" in res["before"], res
    assert "H = 100, BLOCK = 32" in res["after"], res
    assert res["after"] != res["before"]


def _ids(path: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', path.read_text(errors="replace")))


def test_internal_links_resolve(visits, server):
    ids_cache: dict[Path, set[str]] = {}
    broken = []
    for page, v in visits.items():
        for href in v["links"]:
            if not href.startswith(server + "/"):
                continue
            parts = urlsplit(href)
            target = HTML / unquote(parts.path).lstrip("/")
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page} -> {href} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = ids_cache.setdefault(target, _ids(target))
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page} -> {href} (no id #{parts.fragment})")
    assert not broken, "\n".join(sorted(set(broken)))


@pytest.mark.parametrize("stem", PUZZLE_PAGES)
def test_puzzle_page_shows_the_solution_passing_and_its_math(visits, stem):
    v = _page(visits, stem)
    assert v["solution_passes"], f"{stem}: the checker's report for the solution is not on the page"
    assert not v["math_unrendered"] and v["mjx_errors"] == 0, f"{stem}: math left as TeX {v['math_unrendered'][:3]}"
    assert not [i["src"] for i in v["images"] if not i["ok"]], f"{stem}: a figure did not load"


@pytest.mark.parametrize("stem", PUZZLE_PAGES)
def test_a_puzzle_page_states_the_facts_of_its_declaration(visits, stem):
    assert _page(visits, stem)["facts_shown"], f"{stem}: no 'What the checker runs.' paragraph in the statement"


@pytest.mark.parametrize("stem", PUZZLE_PAGES)
def test_a_puzzle_pages_hints_and_solution_start_closed(visits, stem):
    """The hints graduate (the idea, the approach, the one line) and the solution is one click
    away: each a dropdown, closed until the reader opens it."""
    drops = _page(visits, stem)["dropdowns"]
    hints = [d["title"] for d in drops if d["title"].startswith("Hint ")]
    assert [h.split(" — ")[1].split(":")[0] for h in hints[:3]] == ["the idea", "the approach",
                                                                      "the line to get right"], hints
    solution = [d for d in drops if d["title"].startswith("The reference solution")]
    assert len(solution) == 1 and solution[0]["code"] >= 1, drops
    assert not [d["title"] for d in drops if d["open"]], f"{stem}: dropdowns open on arrival"


@pytest.mark.parametrize("width", WIDTHS)
def test_no_code_line_wraps(layouts, width):
    """A code line is drawn as one line: a long one scrolls in its block. Wrapped at the column's
    ~85 characters, lines broke mid-phrase on p22, p25, p31 and chapter 3 (issue 35, item 10)."""
    wrapped = {page: v["wrapped_code"] for page, v in layouts[width].items() if v["wrapped_code"]}
    assert not wrapped, json.dumps(wrapped, indent=1, ensure_ascii=False)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_table_column_is_out_of_sight(layouts, width):
    """Every column of every table is inside the box the table sits in: p25's benchmark hid its
    "best other / yours", its ncu table 5 of its 13 columns (issue 35, item 10)."""
    hidden = {page: v["hidden_columns"] for page, v in layouts[width].items() if v["hidden_columns"]}
    assert not hidden, json.dumps(hidden, indent=1, ensure_ascii=False)


@pytest.mark.parametrize("width", WIDTHS)
def test_one_search_field(layouts, width):
    """The sidebar's search field, and not a second one in a header bar above it (issue 35, item 17)."""
    counts = {page: v["search_fields"] for page, v in layouts[width].items()
              if v["search_fields"] != 1 and page != "search.html"}  # the search page's own form is its content
    assert not counts, counts


@pytest.mark.parametrize("stem", PUZZLE_PAGES)
def test_a_puzzle_pages_contents_list_its_parts(visits, stem):
    """The right-hand "Contents" of a puzzle page lists the parts of its statement ("Part 1: ...",
    the notebook's headings, shown by a code cell): p22's listed none (issue 35, item 17)."""
    sys.path.insert(0, str(ROOT / "book"))
    import puzzle_page  # book/puzzle_page.py: what a puzzle page shows of its notebook

    parts = [m.group(1) for kind, text in puzzle_page.statement(stem) if kind == "markdown"
             for m in re.finditer(r"^#+\s+(Part \d+:)", text, re.M)]
    page = (HTML / "book" / f"{stem}.html").read_text(encoding="utf-8")
    nav = re.search(r'<nav id="pst-page-toc-nav".*?</nav>', page, re.S)
    listed = _strip_tags(nav.group(0)) if nav else ""
    missing = [part for part in parts if part not in listed]
    assert not missing, f"{stem}: the page's contents miss {missing}"


def test_code_in_table_cells_stays_on_one_line(visits):
    """Shapes like `[M, H]` in a table are one unit: never "[M," above "H]"."""
    broken = {stem: v["broken_cell_code"] for stem, v in visits.items() if v.get("broken_cell_code")}
    assert not broken, broken


def test_copying_code_gives_its_lines(visits):
    """The copy button copies a block's innerText: one line per line, as written."""
    bad = {stem: v["copy_differs"] for stem, v in visits.items() if v["copy_differs"]}
    assert not bad, bad


def test_plotting_code_is_folded(visits):
    """Code that only draws a picture is hidden (remove-input) or folded (hide-input)."""
    shown = {stem: v["plot_code"] for stem, v in visits.items() if v["plot_code"]}
    assert not shown, json.dumps(shown, indent=1)


def test_no_internal_label_is_printed(visits):
    printed = {stem: v["eq_labels"] for stem, v in visits.items() if v["eq_labels"]}
    assert not printed, printed


def test_equations_are_numbered_on_each_page(visits):
    """(1), (2), ... from the top of each page, not one count across the book."""
    bad = {stem: v["eqnos"] for stem, v in visits.items()
           if v["eqnos"] != [f"({i})" for i in range(1, len(v["eqnos"]) + 1)]}
    assert not bad, bad


MIN_FIGURE_TEXT_PX = 10


def test_figure_text_is_legible_at_page_width(visits):
    """Every figure is SVG, whose text can be measured, and its smallest text is drawn at least
    10 px high in a 1280 px window."""
    figures = [(stem, f) for stem, v in visits.items() for f in v["figure_text"]]
    assert len(figures) >= 40, f"only {len(figures)} figures measured"
    raster = [f"{stem}: {f['src']} ({f['kind']})" for stem, f in figures if f["kind"] != "svg"]
    assert not raster, "figures that are not SVG cannot be measured:\n" + "\n".join(raster)
    small = [f"{stem}: {f['text']!r} at {f['min_px']:.1f} px (figure {f['width']:.0f} px wide)"
             for stem, f in figures if f["min_px"] is not None and f["min_px"] < MIN_FIGURE_TEXT_PX]
    assert not small, "figure text below 10 px:\n" + "\n".join(small)


def _strip_tags(html_text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html_text)).replace("’", "'").strip()


def test_sidebar_shows_the_reading_order_with_its_numbers(visits):
    """The built sidebar lists the parts and pages of _toc.yml in order, each page under its
    title (which carries its chapter or puzzle number)."""
    page = HTML / "book" / "p01.html"
    nav = re.search(r'<nav class="bd-links bd-docs-nav".*?</nav>', page.read_text(encoding="utf-8"), re.S).group(0)
    shown = [("caption", _strip_tags(m.group(1))) if m.group(1) is not None else ("page", _strip_tags(m.group(2)))
             for m in re.finditer(r'<span class="caption-text">(.*?)</span>|<li class="toctree-l1[^"]*">'
                                  r'<a [^>]*>(.*?)</a>', nav, re.S)]
    expected, caption = [], None
    for cap, stem in _toc()[1:]:
        if cap != caption:
            expected.append(("caption", cap))
            caption = cap
        expected.append(("page", _title(stem).replace("`", "")))
    assert shown == expected


def test_home_page_lists_the_reading_order(visits):
    """The home page's contents come in the order of the sidebar."""
    links = [Path(urlsplit(h).path).stem for h in _page(visits, "index")["links_in_order"]]
    order = [stem for _, stem in _toc()[1:]]
    listed = [s for s in dict.fromkeys(links) if s in order]
    assert listed == order, listed


def test_chapter_8_opens_with_its_setup_code_folded(visits):
    assert _page(visits, "08_case_studies")["folded_first_code"], "chapter 8 opens with a wall of code"


def test_p22_screenshot_kept(visits):
    shot = ARTIFACTS / "p22.png"
    assert shot.is_file() and shot.stat().st_size > 10_000, "no screenshot of the p22 page"


def test_root_index_redirects_to_the_first_page(server, browser, visits):
    """The root index.html is a meta-refresh redirect: follow it, and keep a screenshot of where
    a reader lands (a screenshot of the redirect itself would be blank)."""
    browser.events.clear()
    browser.send("Page.navigate", {"url": f"{server}/index.html"})
    href = ""
    for _ in range(50):
        try:
            href = browser.evaluate("new Promise(r => setTimeout(() => r(location.href), 200))")
        except RuntimeError:  # the page navigated away while we asked: the redirect is happening
            time.sleep(0.2)
            continue
        if href.endswith("book/index.html"):
            break
    time.sleep(1.0)  # let the landing page finish loading
    assert href.endswith("book/index.html"), href
    height = browser.evaluate("document.documentElement.scrollHeight")
    _screenshot(browser, ARTIFACTS / "landing.png", height)
    assert browser.evaluate("document.body.innerText.includes('Part 1:')")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v", "-s"]))
