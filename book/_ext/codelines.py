"""Long code lines wrap with a visible continuation (a local Sphinx extension).

Code on these pages wraps within the column rather than scrolling sideways (a scrollbar that a
laptop hides is code the reader never sees). A wrapped line must not look like the next line,
though: `def f(a, b,` continued at the left margin reads as a mis-indented body. So every line of
every `<pre>` becomes its own box, `<span class="line" style="--indent:N">`, where N is the
line's own indentation; `custom.css` starts its continuation rows further right than the
line itself began and marks them with a bar in the margin. The text is untouched: copying a
block still gives the original lines, and a line that fits looks as before.

The rewrite runs on each page's body as it is written (`html-page-context`), after Pygments
has coloured it, so it covers code cells, their outputs and literal blocks alike.
"""
from __future__ import annotations

import html
import re

PRE = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.S)
TOKEN = re.compile(r"(<[^>]+>)")
TAG_NAME = re.compile(r"<\s*(/)?\s*([a-zA-Z0-9]+)")


def _lines(inner: str) -> list[tuple[list[str], str]]:
    """Split the HTML inside a <pre> into lines: (tags open at the start of the line, the
    line's HTML without its newline). Tags that span a newline (a docstring's span) are closed
    at the end of one line and opened again at the start of the next."""
    out: list[tuple[list[str], str]] = []
    stack: list[str] = []  # open tags, outermost first
    start_stack: list[str] = []
    current: list[str] = []
    for part in TOKEN.split(inner):
        if not part:
            continue
        if part.startswith("<"):
            m = TAG_NAME.match(part)
            if m and not part.endswith("/>"):
                if m.group(1):
                    if stack:
                        stack.pop()
                else:
                    stack.append(part)
            current.append(part)
            continue
        pieces = part.split("\n")
        for k, piece in enumerate(pieces):
            if k:  # a newline: close what is open, end the line, open it again
                current.extend(f"</{TAG_NAME.match(t).group(2)}>" for t in reversed(stack))
                out.append((start_stack, "".join(current)))
                start_stack = list(stack)
                current = list(stack)
            current.append(piece)
    out.append((start_stack, "".join(current)))
    return out


def _indent(line_html: str) -> int:
    text = html.unescape(TOKEN.sub("", line_html))
    return len(text) - len(text.lstrip(" "))


def wrap_lines(inner: str) -> str:
    lines = _lines(inner)
    # a trailing newline leaves an empty last "line" (made only of re-opened tags): keep it bare
    tail = ""
    if lines and not html.unescape(TOKEN.sub("", lines[-1][1])):
        tail = "\n" + lines.pop()[1]
    body = []
    for _, line in lines:
        if not TOKEN.sub("", line):
            body.append(line)  # an empty line needs no box
        else:
            body.append(f'<span class="line" style="--indent:{_indent(line)}">{line}</span>')
    return "\n".join(body) + tail


def rewrite(body: str) -> str:
    return PRE.sub(lambda m: m.group(1) + wrap_lines(m.group(2)) + m.group(3), body)


def _on_page(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = rewrite(context["body"])


def setup(app):
    app.connect("html-page-context", _on_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
