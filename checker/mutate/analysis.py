"""What each expression of a Triton kernel is, read from its source: the ground the operators stand on.

A mutation operator must know an address from a value and a bound check from arithmetic: `N - 1`
in `offsets < N - 1` is a mask's bound, in `row * N` a stride, in `tl.sum(acc) / N` a formula.
No types are available, so this module infers a *kind* for every name by how it is made
(to a fixed point, since a name may be assigned twice):

    index   offsets and sizes of blocks: made from tl.arange or tl.program_id, or a pointer
    pid     made from a program id (a scalar program or row offset)
    vec     made from tl.arange (a block of lanes, not a scalar)
    ptr     a pointer (a parameter named *_ptr or *_desc)
    bound   a predicate that compares an index with a bound (a mask)
    pred    any predicate
    value   data: loaded, reduced, computed with floats

and a *context* for every node: inside an address (the pointer of a load, store or atomic, or the
right side of an index's assignment), a mask (mask=, a bound check), or a loop's range.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

INDEX_KINDS = frozenset({"index", "pid", "vec", "ptr"})
MEMORY_OPS = {"load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg",
              "atomic_and", "atomic_or", "atomic_xor"}
# tl functions whose result is data whatever their arguments are
VALUE_CALLS = {"zeros", "zeros_like", "full", "full_like", "sum", "max", "min", "dot", "exp", "exp2", "log",
               "log2", "sqrt", "sqrt_rn", "rsqrt", "sigmoid", "softmax", "cumsum", "cumprod", "sin", "cos",
               "fma", "xor_sum", "reduce", "erf", "tanh", "argmax", "argmin", "rand", "randn"}
RANGES = {"range", "static_range"}


def is_jit(fn: ast.FunctionDef) -> bool:
    """@triton.jit, @triton.jit(...), or @jit."""
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute) and target.attr == "jit":
            return True
        if isinstance(target, ast.Name) and target.id == "jit":
            return True
    return False


def tl_name(call: ast.AST) -> str:
    """'load' for tl.load(...) (or triton.language.load); '' for anything else."""
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        base = call.func.value
        if isinstance(base, ast.Name) and base.id in ("tl", "language"):
            return call.func.attr
        if isinstance(base, ast.Attribute) and base.attr == "language":
            return call.func.attr
    return ""


def method_name(call: ast.AST) -> str:
    """'to' for x.to(...), 'load' for desc.load(...) (not for tl.*)."""
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and not tl_name(call):
        return call.func.attr
    return ""


def is_range(call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    if isinstance(call.func, ast.Name) and call.func.id == "range":
        return True
    return tl_name(call) in RANGES


def pointer_arg(call: ast.Call) -> ast.AST | None:
    """The address a memory operation reads or writes (tl.load's pointer, a descriptor's coordinates)."""
    if tl_name(call) in MEMORY_OPS or method_name(call) in ("load", "store"):
        if call.args:
            return call.args[0]
        for kw in call.keywords:
            if kw.arg in ("pointer", "offsets"):
                return kw.value
    return None


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    return next((kw for kw in call.keywords if kw.arg == name), None)


def _targets(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _targets(elt)]
    return []


@dataclass
class Kernel:
    """One @triton.jit function and what its names and nodes are."""
    node: ast.FunctionDef
    kinds: dict[str, set[str]] = field(default_factory=dict)
    constexprs: list[str] = field(default_factory=list)
    sizes: list[str] = field(default_factory=list)       # parameters that are neither pointers nor constexpr
    parents: dict[int, ast.AST] = field(default_factory=dict)
    contexts: dict[int, frozenset[str]] = field(default_factory=dict)   # id(node) -> {"address", "mask", "range"}
    helpers: dict[str, "Kernel"] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.node.name

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def context(self, node: ast.AST) -> frozenset[str]:
        return self.contexts.get(id(node), frozenset())

    def kinds_of(self, expr: ast.AST) -> set[str]:
        """The kinds an expression's value has (see the module docstring)."""
        if isinstance(expr, ast.Name):
            return set(self.kinds.get(expr.id, ()))
        if isinstance(expr, ast.Constant):
            return {"value"} if isinstance(expr.value, float) else set()
        if isinstance(expr, ast.Compare):
            operands = set().union(*(self.kinds_of(e) for e in [expr.left, *expr.comparators]))
            return {"pred", "bound"} if operands & INDEX_KINDS or "bound" in operands else {"pred"}
        if isinstance(expr, ast.BoolOp):
            return set().union(*(self.kinds_of(e) for e in expr.values))
        if isinstance(expr, ast.Call):
            return self._call_kinds(expr)
        if isinstance(expr, ast.Attribute):
            return self.kinds_of(expr.value)
        if isinstance(expr, ast.Subscript):
            return self.kinds_of(expr.value)
        if isinstance(expr, ast.BinOp):
            return self.kinds_of(expr.left) | self.kinds_of(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return self.kinds_of(expr.operand)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return set().union(set(), *(self.kinds_of(e) for e in expr.elts))
        if isinstance(expr, ast.IfExp):
            return self.kinds_of(expr.body) | self.kinds_of(expr.orelse)
        return set()

    def _call_kinds(self, call: ast.Call) -> set[str]:
        name = tl_name(call)
        if name == "arange":
            return {"index", "vec"}
        if name in ("program_id", "num_programs"):
            return {"index", "pid"}
        if name in MEMORY_OPS or method_name(call) == "load" or name in VALUE_CALLS:
            return {"value"}
        if isinstance(call.func, ast.Name) and call.func.id == "float":
            return {"value"}
        if name == "where" and len(call.args) == 3:
            return self.kinds_of(call.args[1]) | self.kinds_of(call.args[2])
        if method_name(call) == "to" or (method_name(call) and not call.args):
            return self.kinds_of(call.func.value)
        if isinstance(call.func, ast.Name) and call.func.id in self.helpers:
            # a helper that returns data makes data (row_statistics); one that returns indices
            # passes on what its arguments are (grouped_tile(tl.program_id(0), ...))
            if "value" in self.helpers[call.func.id].returns():
                return {"value"}
        args = [*call.args, *(kw.value for kw in call.keywords)]
        return set().union(set(), *(self.kinds_of(a) for a in args))

    def returns(self) -> set[str]:
        found: set[str] = set()
        for node in ast.walk(self.node):
            if isinstance(node, ast.Return) and node.value is not None:
                found |= self.kinds_of(node.value)
        return found

    def pid_scalar(self, expr: ast.AST) -> bool:
        """A program or row offset: made from a program id, not a block of lanes, not a pointer."""
        kinds = self.kinds_of(expr)
        return "pid" in kinds and not kinds & {"vec", "ptr"}


def analyse(fn: ast.FunctionDef, helpers: dict[str, Kernel] | None = None) -> Kernel:
    kernel = Kernel(fn, helpers=dict(helpers or {}))
    for arg in fn.args.args:
        annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        if arg.arg.endswith(("_ptr", "_desc")):
            kernel.kinds[arg.arg] = {"ptr"}
        elif annotation.endswith("constexpr"):
            kernel.constexprs.append(arg.arg)
        else:
            kernel.sizes.append(arg.arg)
    for parent in ast.walk(fn):
        for child in ast.iter_child_nodes(parent):
            kernel.parents[id(child)] = parent
    # kinds, to a fixed point: a name may be assigned from names assigned later in the text (loops)
    for _ in range(10):
        before = {k: set(v) for k, v in kernel.kinds.items()}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                made = kernel.kinds_of(node.value)
                for target in node.targets:
                    for name in _targets(target):
                        kernel.kinds.setdefault(name, set()).update(made)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                for name in _targets(node.target):
                    kernel.kinds.setdefault(name, set()).update(kernel.kinds_of(node.value))
            elif isinstance(node, ast.For) and is_range(node.iter):
                made = {"index"} | kernel.kinds_of(node.iter) - {"vec"}
                for name in _targets(node.target):
                    kernel.kinds.setdefault(name, set()).update(made)
        if kernel.kinds == before:
            break
    _mark_contexts(kernel)
    return kernel


def _mark_contexts(kernel: Kernel) -> None:
    def mark(node: ast.AST, context: str) -> None:
        for sub in ast.walk(node):
            kernel.contexts[id(sub)] = kernel.contexts.get(id(sub), frozenset()) | {context}

    for node in ast.walk(kernel.node):
        if isinstance(node, ast.Call):
            pointer = pointer_arg(node)
            if pointer is not None:
                mark(pointer, "address")
            mask = keyword(node, "mask")
            if mask is not None:
                mark(mask.value, "mask")
            if is_range(node):
                for arg in node.args:
                    mark(arg, "range")
            if tl_name(node) == "where" and node.args and "bound" in kernel.kinds_of(node.args[0]):
                mark(node.args[0], "mask")
        elif isinstance(node, ast.Assign):
            kinds = kernel.kinds_of(node.value)
            if kinds & INDEX_KINDS and "value" not in kinds:
                mark(node.value, "address")
            if "bound" in kinds:
                mark(node.value, "mask")
        elif isinstance(node, (ast.If, ast.While)) and "bound" in kernel.kinds_of(node.test):
            mark(node.test, "mask")


def kernels_of(tree: ast.Module) -> list[Kernel]:
    """Every @triton.jit function of a module, analysed; helpers first, so kernels that call them
    know what they return."""
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef) and is_jit(node)]
    done: dict[str, Kernel] = {}
    for fn in functions:
        done[fn.name] = analyse(fn, done)
    return list(done.values())


def calls(kernel: Kernel) -> set[str]:
    """The names of the functions a kernel calls by plain name (its helpers)."""
    return {node.func.id for node in ast.walk(kernel.node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
