"""The mutation operators: each makes one small change at one site of a @triton.jit function, of one
bug class (the cause classes of checker/diagnosis/model.py), the way a learner's kernel goes wrong.

    mask        a mask= removed; `<` -> `<=` in a bound check; a bound off by one; one side of a
                mask's `&` dropped
    address     two strides swapped; a program or row offset off by one; an offset multiplied by
                the wrong block; program_id(0) <-> program_id(1)
    loop        a range's start, stop or step changed
    accumulate  `acc += x` -> `acc = x`; `acc = acc + x` -> `acc = x`; tl.dot's accumulator dropped
    atomic      tl.atomic_add -> a plain load + add + store, or a tl.store
    fill        the other= of a load, a reduction's start value or a masked tl.where's fill changed
                (-inf -> 0, 0 -> 1)
    formula     one operand of a sum, difference, product or quotient dropped
    precision   .to(tl.float32) removed; an fp32 accumulator made in the input dtype

Operators work on the syntax tree (checker/mutate/analysis.py says what each node is) and splice
the new text over the site's span in the solution's text, so the rest of the file, comments
included, is untouched. Each mutant has an id that survives unrelated edits of the solution: the
operator, the function, a hash of the site's statement and text, and which occurrence it is.
"""
from __future__ import annotations

import ast
import copy
import hashlib
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Callable, Iterator

from checker.mutate.analysis import (INDEX_KINDS, MEMORY_OPS, Kernel, is_range, keyword, kernels_of, method_name,
                                     pointer_arg, tl_name)


@dataclass(frozen=True)
class Mutant:
    id: str
    cls: str            # a cause class of checker.diagnosis.model.CAUSES
    operator: str       # e.g. "mask.lt_le"
    kernel: str         # the @triton.jit function it changes
    line: int           # 1-based line of the site in the solution
    description: str    # one line: what changed, where
    before: str         # the site's text
    after: str          # what replaced it
    text: str           # the whole mutated solution


@dataclass(frozen=True)
class Edit:
    """One change an operator proposes: `node`'s span becomes `new`."""
    operator: str
    node: ast.AST
    new: str


# operator -> (class, what it does, for the description)
OPERATORS: dict[str, tuple[str, str]] = {
    "mask.drop": ("mask", "mask= removed"),
    "mask.lt_le": ("mask", "`<` made `<=` in a bound check"),
    "mask.bound": ("mask", "a bound off by one"),
    "mask.keep_one": ("mask", "one side of a mask's `&` dropped"),
    "address.strides": ("address", "two strides swapped"),
    "address.offset": ("address", "a program or row offset off by one"),
    "address.block": ("address", "an offset multiplied by the wrong block"),
    "address.axis": ("address", "the other program_id axis"),
    "loop.start": ("loop", "a loop starts one step late"),
    "loop.stop": ("loop", "a loop stops one step early"),
    "loop.step": ("loop", "a loop's step doubled"),
    "accumulate.overwrite": ("accumulate", "a running value overwritten, not accumulated"),
    "accumulate.dot": ("accumulate", "tl.dot's accumulator dropped"),
    "atomic.race": ("atomic", "tl.atomic_add made a plain load + add + store"),
    "atomic.store": ("atomic", "tl.atomic_add made a tl.store"),
    "fill.other": ("fill", "a load's other= changed"),
    "fill.start": ("fill", "a reduction's start value changed"),
    "fill.where": ("fill", "the value a masked tl.where fills in changed"),
    "formula.drop": ("formula", "one operand dropped"),
    "precision.cast": ("precision", ".to(tl.float32) removed"),
    "precision.acc": ("precision", "an fp32 accumulator made in the input dtype"),
}
CLASSES = tuple(dict.fromkeys(cls for cls, _ in OPERATORS.values()))


# -- small helpers -----------------------------------------------------------------------------
def _text(node: ast.AST) -> str:
    return ast.unparse(node)


def _is_atom(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return not (isinstance(node.value, (int, float)) and node.value < 0)
    return isinstance(node, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.List, ast.Tuple))


PRECEDENCE = {ast.BitOr: 1, ast.BitXor: 2, ast.BitAnd: 3, ast.LShift: 4, ast.RShift: 4, ast.Add: 5, ast.Sub: 5,
              ast.Mult: 6, ast.Div: 6, ast.FloorDiv: 6, ast.Mod: 6, ast.MatMult: 6, ast.Pow: 8}


def _fits(kernel: Kernel, site: ast.AST, new: ast.AST) -> str:
    """new's text, in parentheses where it replaces `site` inside an expression that binds tighter."""
    text = _text(new)
    parent = kernel.parent(site)
    if _is_atom(new) or parent is None:
        return text
    if isinstance(parent, ast.BinOp):
        if not isinstance(new, ast.BinOp) or PRECEDENCE[type(new.op)] <= PRECEDENCE[type(parent.op)]:
            return f"({text})"
        return text
    if isinstance(parent, ast.UnaryOp) or (isinstance(parent, (ast.Subscript, ast.Attribute)) and parent.value is site):
        return f"({text})"
    if isinstance(parent, ast.Compare) and isinstance(new, (ast.Compare, ast.BoolOp)):
        return f"({text})"
    return text


def _minus_inf(node: ast.AST) -> bool:
    text = _text(node).replace(" ", "").replace("'", '"')
    return text in ('-float("inf")', "-inf", "float(\"-inf\")", "-math.inf", "-tl.inf")


def _zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and node.value == 0


def _changed_fill(node: ast.AST) -> str:
    """-inf -> 0 (a max that starts at 0), 0 -> 1, anything else -> 0."""
    if _zero(node):
        return "1.0"
    return "0.0"


def _binop(left: ast.AST, op: ast.operator, right: ast.AST) -> ast.BinOp:
    return ast.BinOp(left=left, op=op, right=right)


def _mask_position(call: ast.Call) -> int:
    """Where a memory operation takes mask= positionally (tl.load(p, mask, other), tl.store(p, v, mask))."""
    return 1 if tl_name(call) == "load" else 2


def _mask_of(call: ast.Call) -> ast.AST | None:
    kw = keyword(call, "mask")
    if kw is not None:
        return kw.value
    position = _mask_position(call)
    return call.args[position] if len(call.args) > position else None


def _terms(node: ast.AST) -> list[ast.AST]:
    """The terms of a chain of additions, left to right."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _chain(terms: list[ast.AST]) -> ast.AST:
    node = terms[0]
    for term in terms[1:]:
        node = _binop(node, ast.Add(), term)
    return node


# -- the operators -----------------------------------------------------------------------------
def mask_ops(kernel: Kernel) -> Iterator[Edit]:
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.Call) and tl_name(node) in MEMORY_OPS and _mask_of(node) is not None:
            new = copy.deepcopy(node)
            new.keywords = [kw for kw in new.keywords if kw.arg not in ("mask", "other")]
            new.args = new.args[:_mask_position(node)]
            yield Edit("mask.drop", node, _text(new))
        if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt)
                and "bound" in kernel.kinds_of(node)):
            new = copy.deepcopy(node)
            new.ops = [ast.LtE()]
            yield Edit("mask.lt_le", node, _text(new))
            bound = node.comparators[0]
            yield Edit("mask.bound", bound, _fits(kernel, bound, _binop(bound, ast.Sub(), ast.Constant(1))))
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd) and "mask" in kernel.context(node)
                and "bound" in kernel.kinds_of(node)):
            for side in (node.left, node.right):
                yield Edit("mask.keep_one", node, _fits(kernel, node, side))


def address_ops(kernel: Kernel) -> Iterator[Edit]:
    axes = {node.args[0].value for node in ast.walk(kernel.node)
            if tl_name(node) == "program_id" and node.args and isinstance(node.args[0], ast.Constant)}
    blocks = [c for c in kernel.constexprs if c.startswith("BLOCK")]
    for node in ast.walk(kernel.node):
        where = kernel.context(node)
        addressing = bool(where & {"address", "range"})
        # two strides swapped: a 2-D offset rows[:, None] * S1 + cols[None, :] * S2 (a bare term has stride 1)
        if (addressing and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
                and not (isinstance(kernel.parent(node), ast.BinOp) and isinstance(kernel.parent(node).op, ast.Add))):
            yield from _swapped_strides(kernel, node)
        # a program or row offset off by one: pid -> pid + 1 where it enters an offset
        if (addressing and isinstance(node, (ast.Name, ast.Call)) and kernel.pid_scalar(node)
                and isinstance(kernel.parent(node), ast.BinOp)):
            yield Edit("address.offset", node, _fits(kernel, node, _binop(node, ast.Add(), ast.Constant(1))))
        # an offset multiplied by the wrong block: row * N -> row * BLOCK_N, pid * BLOCK_M -> pid * BLOCK_N
        if addressing and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for size, other in ((node.right, node.left), (node.left, node.right)):
                if not (isinstance(size, ast.Name) and kernel.kinds_of(other) & INDEX_KINDS
                        and not kernel.kinds_of(size) & INDEX_KINDS):
                    continue
                if size.id in kernel.constexprs:
                    others = [b for b in blocks if b != size.id]
                    if others:
                        for b in others:
                            yield Edit("address.block", size, b)
                    else:
                        yield Edit("address.block", node, _fits(kernel, node, other))
                elif size.id in kernel.sizes:
                    own = f"BLOCK_{size.id}" if f"BLOCK_{size.id}" in blocks else ""
                    own = own or (blocks[0] if len(blocks) == 1 else "")
                    if own:
                        yield Edit("address.block", size, own)
                break
        # the other axis: program_id(0) <-> program_id(1)
        if tl_name(node) == "program_id" and node.args and isinstance(node.args[0], ast.Constant):
            for axis in sorted(axes - {node.args[0].value}):
                yield Edit("address.axis", node.args[0], str(axis))


def _swapped_strides(kernel: Kernel, root: ast.BinOp) -> Iterator[Edit]:
    terms = _terms(root)

    def split(term: ast.AST) -> tuple[ast.AST, ast.AST | None] | None:
        """(lanes, stride) of a term made from a block of lanes; stride None: 1."""
        if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
            left, right = kernel.kinds_of(term.left), kernel.kinds_of(term.right)
            if "vec" in left and "vec" not in right:
                return term.left, term.right
            if "vec" in right and "vec" not in left:
                return term.right, term.left
            return None
        return (term, None) if "vec" in kernel.kinds_of(term) else None

    found = [(i, split(t)) for i, t in enumerate(terms)]
    lanes = [(i, s) for i, s in found if s is not None]
    # only 2-D offsets: two blocks of lanes broadcast against each other, at least one with a stride
    if len(lanes) != 2 or (lanes[0][1][1] is None and lanes[1][1][1] is None):
        return
    if not all(isinstance(s[0], ast.Subscript) for _, s in lanes):
        return
    (i, (a, sa)), (j, (b, sb)) = lanes
    new_terms = list(terms)
    new_terms[i] = _binop(a, ast.Mult(), sb) if sb is not None else a
    new_terms[j] = _binop(b, ast.Mult(), sa) if sa is not None else b
    yield Edit("address.strides", root, _fits(kernel, root, _chain(new_terms)))


def loop_ops(kernel: Kernel) -> Iterator[Edit]:
    for node in ast.walk(kernel.node):
        if not (isinstance(node, ast.For) and is_range(node.iter)):
            continue
        call = node.iter
        args = list(call.args)
        start, stop, step = ({1: lambda: (ast.Constant(0), args[0], ast.Constant(1)),
                              2: lambda: (args[0], args[1], ast.Constant(1)),
                              3: lambda: tuple(args)}.get(len(args), lambda: (None, None, None)))()
        if stop is None:
            continue

        def rebuilt(new_start: ast.AST, new_stop: ast.AST, new_step: ast.AST) -> str:
            new = copy.deepcopy(call)
            one = isinstance(new_step, ast.Constant) and new_step.value == 1
            new.args = [new_start, new_stop] + ([] if one else [new_step])
            if one and _zero(new_start):
                new.args = [new_stop]
            return _text(new)

        later = step if _zero(start) else _binop(start, ast.Add(), step)
        yield Edit("loop.start", call, rebuilt(later, stop, step))
        yield Edit("loop.stop", call, rebuilt(start, _binop(stop, ast.Sub(), step), step))
        one = isinstance(step, ast.Constant) and step.value == 1
        doubled = ast.Constant(2) if one else _binop(ast.Constant(2), ast.Mult(), step)
        yield Edit("loop.step", call, rebuilt(start, stop, doubled))


def accumulate_ops(kernel: Kernel) -> Iterator[Edit]:
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
            overwrite = ast.Assign(targets=[node.target], value=node.value, lineno=0)
            yield Edit("accumulate.overwrite", node, _text(overwrite))
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add)):
            name = node.targets[0].id
            left, right = node.value.left, node.value.right
            for mine, rest in ((left, right), (right, left)):
                if isinstance(mine, ast.Name) and mine.id == name:
                    yield Edit("accumulate.overwrite", node.value, _text(rest))
                    break
        if tl_name(node) == "dot" and (len(node.args) >= 3 or keyword(node, "acc") is not None):
            new = copy.deepcopy(node)
            new.args = new.args[:2]
            new.keywords = [kw for kw in new.keywords if kw.arg != "acc"]
            yield Edit("accumulate.dot", node, _text(new))


def atomic_ops(kernel: Kernel) -> Iterator[Edit]:
    for node in ast.walk(kernel.node):
        if not (isinstance(node, ast.Expr) and tl_name(node.value) == "atomic_add"):
            continue
        call = node.value
        pointer = pointer_arg(call)
        value = call.args[1] if len(call.args) > 1 else getattr(keyword(call, "val"), "value", None)
        if pointer is None or value is None:
            continue
        mask = _mask_of(call)
        masked = f", mask={_text(mask)}" if mask is not None else ""
        p, v = _text(pointer), _text(value)
        yield Edit("atomic.race", call, f"tl.store({p}, tl.load({p}{masked}) + {v}{masked})")
        yield Edit("atomic.store", call, f"tl.store({p}, {v}{masked})")


def fill_ops(kernel: Kernel) -> Iterator[Edit]:
    for node in ast.walk(kernel.node):
        name = tl_name(node)
        if name == "load":
            other = keyword(node, "other")
            value = other.value if other is not None else (node.args[2] if len(node.args) > 2 else None)
            if value is not None:
                yield Edit("fill.other", value, _changed_fill(value))
        elif name == "full" and len(node.args) >= 2:
            yield Edit("fill.start", node.args[1], _changed_fill(node.args[1]))
        elif name == "zeros" and node.args:
            new = copy.deepcopy(node)
            new.func.attr = "full"
            new.args = [new.args[0], ast.Constant(1.0), *new.args[1:]]
            yield Edit("fill.start", node, _text(new))
        elif name == "where" and len(node.args) == 3 and "bound" in kernel.kinds_of(node.args[0]):
            yield Edit("fill.where", node.args[2], _changed_fill(node.args[2]))


def formula_ops(kernel: Kernel) -> Iterator[Edit]:
    for node in ast.walk(kernel.node):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div))):
            continue
        kinds = kernel.kinds_of(node)
        if "value" not in kinds or kinds & INDEX_KINDS or kernel.context(node) & {"address", "range"}:
            continue
        if isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant):
            continue
        yield Edit("formula.drop", node, _fits(kernel, node, node.left))
        if isinstance(node.op, (ast.Add, ast.Mult)):
            yield Edit("formula.drop", node, _fits(kernel, node, node.right))
        elif isinstance(node.op, ast.Sub):
            yield Edit("formula.drop", node, _fits(kernel, node, ast.UnaryOp(op=ast.USub(), operand=node.right)))


def precision_ops(kernel: Kernel) -> Iterator[Edit]:
    base = _first_load_base(kernel)
    for node in ast.walk(kernel.node):
        if (method_name(node) == "to" and node.args and _text(node.args[0]) == "tl.float32"):
            yield Edit("precision.cast", node, _fits(kernel, node, node.func.value))
        if tl_name(node) in ("zeros", "full") and base:
            dtype = keyword(node, "dtype")
            position = 1 if tl_name(node) == "zeros" else 2
            value = dtype.value if dtype is not None else (node.args[position] if len(node.args) > position else None)
            if value is not None and _text(value) == "tl.float32":
                yield Edit("precision.acc", value, f"{base}.dtype.element_ty")


def _first_load_base(kernel: Kernel) -> str:
    """The pointer the kernel loads first (its input, whose dtype a careless accumulator takes)."""
    loads = [n for n in ast.walk(kernel.node) if tl_name(n) == "load" and pointer_arg(n) is not None]
    for load in sorted(loads, key=lambda n: (n.lineno, n.col_offset)):
        first = _terms(pointer_arg(load))[0]
        if isinstance(first, ast.Name):
            return first.id
    return ""


OPERATOR_FAMILIES: tuple[Callable[[Kernel], Iterator[Edit]], ...] = (
    mask_ops, address_ops, loop_ops, accumulate_ops, atomic_ops, fill_ops, formula_ops, precision_ops)


# -- splicing and ids --------------------------------------------------------------------------
class _Source:
    """Text with ast's (line, UTF-8 byte column) positions turned into string offsets."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, byte_col: int) -> int:
        return self.starts[line - 1] + len(self.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def replaced(self, node: ast.AST, new: str) -> str:
        start, end = self.span(node)
        return self.text[:start] + new + self.text[end:]


def _code(line: str) -> str:
    """A line without its comment and its indentation."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):  # a line of a longer statement
        return re.split(r"\s#\s", line)[0].strip()
    comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
    return (line[:comment.start[1]] if comment else line).strip()


def _lines(text: str, first: int, last: int) -> str:
    return " ".join(_code(line) for line in text.splitlines()[first - 1:last])


def _statement(kernel: Kernel, node: ast.AST) -> str:
    """The statement holding a site, as canonical text (no comments, no layout): for a loop or an
    `if`, only its header."""
    stmt = node
    while not isinstance(stmt, ast.stmt) and kernel.parent(stmt) is not None:
        stmt = kernel.parent(stmt)
    if isinstance(stmt, ast.For):
        return f"for {_text(stmt.target)} in {_text(stmt.iter)}:"
    if isinstance(stmt, (ast.If, ast.While)):
        return f"{'if' if isinstance(stmt, ast.If) else 'while'} {_text(stmt.test)}:"
    return _text(stmt) if isinstance(stmt, ast.stmt) else ""


def _statement_lines(kernel: Kernel, node: ast.AST) -> tuple[int, int]:
    """The lines of the statement holding a site (of a loop or an `if`, its header), for the description."""
    stmt = node
    while not isinstance(stmt, ast.stmt) and kernel.parent(stmt) is not None:
        stmt = kernel.parent(stmt)
    if not isinstance(stmt, ast.stmt):
        return node.lineno, node.end_lineno
    if isinstance(stmt, (ast.For, ast.While, ast.If)):
        return stmt.lineno, max(stmt.lineno, stmt.body[0].lineno - 1)
    return stmt.lineno, stmt.end_lineno


def _digest(*parts: str) -> str:
    return hashlib.sha1("\n".join(parts).encode("utf-8")).hexdigest()[:8]


def mutants_of(text: str, classes: tuple[str, ...] | None = None) -> list[Mutant]:
    """Every mutant of a solution's text (of the given classes), in the order of the file.

    Mutants whose text is the original's, or another mutant's, are left out: they would count one
    change twice."""
    source = _Source(text)
    tree = ast.parse(text)
    found: list[Mutant] = []
    seen_texts = {text}
    occurrences: dict[tuple[str, str, str], int] = {}
    for kernel in kernels_of(tree):
        edits = [edit for family in OPERATOR_FAMILIES for edit in family(kernel)]
        edits.sort(key=lambda e: (e.node.lineno, e.node.col_offset, list(OPERATORS).index(e.operator)))
        for edit in edits:
            cls, what = OPERATORS[edit.operator]
            before = _text(edit.node)
            mutated = source.replaced(edit.node, edit.new)
            first, last = _statement_lines(kernel, edit.node)
            shrunk = last - (len(text.splitlines()) - len(mutated.splitlines()))
            if mutated in seen_texts:
                continue
            seen_texts.add(mutated)
            site = _digest(_statement(kernel, edit.node), before, edit.new)
            key = (edit.operator, kernel.name, site)
            occurrence = occurrences.get(key, 0)
            occurrences[key] = occurrence + 1
            mutant_id = f"{edit.operator}:{kernel.name}:{site}:{occurrence}"
            found.append(Mutant(mutant_id, cls, edit.operator, kernel.name, edit.node.lineno,
                                f"{what}, line {edit.node.lineno}: `{_lines(text, first, last)}` -> "
                                f"`{_lines(mutated, first, shrunk)}`",
                                before, edit.new, mutated))
    # filtered last: a mutant's id and presence must not depend on which classes were asked for
    return [m for m in found if classes is None or m.cls in classes]
