"""The headings of a puzzle's statement in the page's "Contents" sidebar (a local Sphinx extension).

A puzzle page shows its notebook's statement as the output of a code cell
(book/puzzle_page.py: the page has no copy of it, so it cannot drift). myst-nb renders a heading
inside an output as a rubric, not a section, and the sidebar lists sections only: p22's
"Part 1", "Part 2" and "Part 3" were missing from it. After Sphinx has collected the page's
table of contents, this adds every such rubric (one that has an anchor: myst gives those to
headings) to it, in the order of the page, at the level of the page's own `##` sections.
"""
from __future__ import annotations

from docutils import nodes
from sphinx import addnodes


def _entry(docname: str, title: str, anchor: str) -> nodes.list_item:
    reference = nodes.reference("", "", nodes.Text(title), internal=True, refuri=docname,
                                anchorname=f"#{anchor}")
    return nodes.list_item("", addnodes.compact_paragraph("", "", reference))


def _on_doctree_read(app, doctree) -> None:
    docname = app.env.docname
    toc = app.env.tocs.get(docname)
    title = next(iter(doctree.findall(nodes.section)), None)
    headings = [r for r in doctree.findall(nodes.rubric) if r.get("ids") and r.get("level")]
    if toc is None or title is None or not headings or not toc.children:
        return
    order = {id(node): i for i, node in enumerate(doctree.findall())}
    page = toc.children[0]  # the title's item; its list holds the `##` sections
    sections = next((child for child in page.children if isinstance(child, nodes.bullet_list)), None)
    if sections is None:
        sections = nodes.bullet_list()
        page.append(sections)
    where = {f"#{s['ids'][0]}": order[id(s)] for s in title.findall(nodes.section) if s.get("ids")}
    items = [(where.get(item.next_node(nodes.reference)["anchorname"], len(order)), item)
             for item in sections.children]
    items += [(order[id(r)], _entry(docname, r.astext(), r["ids"][0])) for r in headings]
    sections.children = []
    for _, item in sorted(items, key=lambda pair: pair[0]):
        sections.append(item)


def setup(app):
    # after Sphinx's own collector (priority 500) has built the page's table of contents
    app.connect("doctree-read", _on_doctree_read, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
