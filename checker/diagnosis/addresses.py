"""Where a kernel's addresses went wrong: the learner's address function, recovered from its lanes.

The sanitizer sees, for every load, store and atomic, the address of every lane of the pointer
block and the program that made it. From the lanes of one access this module recovers how the
learner's offsets move: the step between neighbouring lanes along each axis of the block, and
where the block starts (its first lane, the block's origin). From the origin of each program at
the same line it recovers how far each program id moves the block. Compared with the tensor's own
layout (shape and strides), that evidence tells the two causes of an out-of-bounds access apart:

- a **mask** problem: the block's steps follow the tensor's strides and it starts inside the
  tensor; only its last lanes stick out past the edge. A mask is the fix.
- an **address** problem: a step that matches none of the tensor's strides (a row stride of M
  instead of N, a stride in bytes), or a block that starts outside the tensor (rows at
  row * BLOCK_N, a program id used for the wrong axis, an offset off by one). A mask would only
  hide it.

Where the evidence fits both, the finding says so and asks. Each finding is a Diagnosis with a
stable code ("addr.step", "addr.start", "addr.transposed", ...); the
lanes it reads are facts of checker/evidence/lanes.py. Pure NumPy, no Triton: the sanitizer's
faults and records feed it, tests drive it directly.

Why one module of some 700 lines: its findings are one ordered decision (out_of_bounds tries them
in turn, the first that the lanes prove wins) over the same few readings of the lanes (steps,
origins, reach); apart, the order would live in one file and the readings it depends on in others.
Split it by the question asked (out of bounds, two programs meeting) when either grows further.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from checker.diagnosis.model import Diagnosis, Span, Strength
from checker.evidence.lanes import Layout, Pid, Site, lane_steps, program_steps
from checker.evidence.model import MemoryEvidence, Place


def _found(code: str, text: str, cls: str = "", asked: tuple[str, ...] = (), **data) -> Diagnosis:
    """One finding: the run proves a cause class (lanes and strides), or several fit and it asks.
    data: the number it rests on (a step, a mask's bound), for a reader that knows the kernel's text
    (checker/diagnosis/written_numbers.py)."""
    return Diagnosis(text, cls, tuple(asked), code=code, strength=Strength.PROOF if cls else Strength.FIT,
                     data=data)


def _elements(n: int, scalars: Optional[dict[str, int]] = None) -> str:
    """'1 element', '16 (= N) elements': a count of elements, and the size that equals it where one does."""
    return f"{n}{name_of(n, scalars) if scalars else ''} element{'' if n == 1 else 's'}"


def _label(layout: Layout) -> str:
    return f"`{layout.name}`"


def _layout_text(layout: Layout) -> str:
    if len(layout.shape) <= 1:
        return f"{_label(layout)} has {_elements(layout.span)}, 1 apart"
    return f"{_label(layout)} has shape {tuple(layout.shape)}, strides {tuple(layout.strides)}"


def name_of(value: int, scalars: dict[str, int]) -> str:
    """' (= M)' when exactly one of the kernel's integer arguments has this value."""
    names = [n for n, v in scalars.items() if v == value]
    return f" (= {names[0]})" if len(names) == 1 else ""


# ---------------------------------------------------------------------------------------------
# The pieces of evidence, each a finding or None


def _axis_words(block: tuple[int, ...], axis: int) -> str:
    if len(block) == 1:
        return "neighbouring lanes"
    return "neighbouring rows of the block" if axis == 0 else "neighbouring columns of the block"


def _step_finding(layout: Layout, steps: tuple[Optional[int], ...], block: tuple[int, ...],
                  scalars: dict[str, int]) -> Optional[Diagnosis]:
    """A lane step that matches none of the tensor's strides: the address is wrong."""
    big = layout.big_dims()
    if not big:
        return None
    fit = layout.steps_that_fit()
    for axis, step in enumerate(steps):
        if step is None or step == 0 or abs(step) in fit:
            continue
        which = _axis_words(block, axis)
        # a step that some integer argument of the kernel equals (BLOCK_N, M) is that argument, not bytes
        if layout.itemsize > 1 and step % layout.itemsize == 0 and abs(step) not in scalars.values() and \
                any(layout.strides[d] == abs(step) // layout.itemsize for d in big):
            meant = abs(step) // layout.itemsize
            return _found("addr.bytes",
                f"The addresses themselves are wrong: {which} are {_elements(step)} apart, {layout.itemsize} "
                f"times {_label(layout)}'s stride of {meant}: the offsets count bytes. In Triton, ptr + i moves by i "
                f"elements whatever their size, so drop the factor {layout.itemsize} (no element_size()).",
                "address", factor=layout.itemsize)
        if len(big) == 1:
            expected = layout.strides[big[0]]
            want = "1 apart" if expected == 1 else f"{expected} apart"
            return _found("addr.step",
                f"The addresses themselves are wrong: {which} are {_elements(step, scalars)} "
                f"apart, but {_label(layout)}'s elements are {want} ({_layout_text(layout)}).", "address",
                step=abs(step))
        rows_apart = layout.row_stride()
        expected = rows_apart if axis == 0 and len(block) > 1 and rows_apart is not None else None
        hint = f" Row i of {_label(layout)} starts at i * {expected}{name_of(expected, scalars)}." if expected else ""
        text = (f"The addresses themselves are wrong: {which} are {_elements(step, scalars)} apart, "
                f"a step that matches none of {_label(layout)}'s strides ({_layout_text(layout)}).{hint}")
        if scalars and abs(step) not in scalars.values():
            # a step that is no argument of the kernel was written into it
            return _found("addr.step_hardcoded",
                          text + f" {abs(step)} is none of the sizes the kernel was given: is it hard-coded?", "",
                          ("address", "hardcoded"), step=abs(step))
        return _found("addr.step",
                      text, "address", step=abs(step))
    return None


def _origin_text(layout: Layout, origin: int) -> str:
    where = layout.coordinates(origin)
    if where is None:
        return f"element {origin}"
    return f"element {origin} (row {where[0]}, column {where[1]})"


def _program_words(pid: Pid, origins: dict[Pid, int], grid: tuple[int, int, int],
                   scalars: dict[str, int]) -> str:
    """'the programs before it started at 0, 32, 64 (32 apart, = BLOCK_N)' where that is known."""
    steps = program_steps(origins, grid)
    if steps is None:
        return ""
    moved = [(axis, g) for axis, g in enumerate(steps) if g is not None and grid[axis] > 1]
    if not moved:
        return ""
    parts = [f"tl.program_id({axis}) moves it by {_elements(g, scalars)}" for axis, g in moved]
    return " " + "; ".join(parts) + "."


def _coverage_finding(layout: Layout, block: tuple[int, ...], origins: dict[Pid, int], grid: tuple[int, int, int],
                      scalars: dict[str, int], site: Optional[Site] = None) -> Optional[Diagnosis]:
    """Does the way each program id moves the block fit the tensor? A move by whole rows must not
    send the grid's last program past the last row; a move by less than a row (column blocks) must
    not send it past the last column; any other move must be one flat walk over the tensor. A grid
    the checker fixes is exactly as large as the work, so a program that starts outside is an
    address bug, also where its wrapped-around offsets happen to stay inside the tensor."""
    moved = program_steps(origins, grid)
    if moved is None or not origins:
        return None
    base = origins[min(origins)]
    rows_apart = layout.row_stride()
    axes = [a for a in range(3) if grid[a] > 1]
    flat_walk = len(axes) == 1 and len(block) == 1 and (site is None or site.flat_walk(grid))
    for axis, g in enumerate(moved):
        if g is None or g <= 0 or grid[axis] < 2:
            continue
        # the furthest program that reached this line (a line only some programs reach, such as the
        # first program of each group, says nothing about the others)
        furthest = max(pid[axis] for pid in origins)
        last = base + (furthest - min(origins)[axis]) * g
        named = f"tl.program_id({axis}) moves this access by {_elements(g, scalars)}"
        if flat_walk and last < layout.span:
            continue
        if rows_apart is not None and g % rows_apart == 0:
            rows = layout.span // rows_apart
            if last // rows_apart < rows:
                continue
            problem = (f"{g // rows_apart} rows; program {furthest} along axis {axis} starts at row "
                       f"{last // rows_apart}, past the last row ({rows - 1})")
            if g // rows_apart == layout.itemsize > 1 and layout.itemsize not in scalars.values():
                problem += (f". {layout.itemsize} rows is {layout.itemsize} times one row, the size of an element in "
                            f"bytes: do the offsets count bytes? ptr + i moves by i elements")
        elif rows_apart is not None and g < rows_apart:
            columns = layout.shape[-1]
            column = base % rows_apart + (furthest - min(origins)[axis]) * g
            if column < columns:
                continue
            problem = (f"{g} columns; program {furthest} along axis {axis} starts at column {column}, past the last "
                       f"column ({columns - 1})")
        elif rows_apart is not None:
            problem = (f"not a whole number of rows: {_label(layout)}'s rows are "
                       f"{_elements(rows_apart, scalars)} apart")
        elif last < layout.span:
            continue
        else:
            problem = (f"and program {furthest} along axis {axis} starts at element {last}, beyond {_label(layout)}'s "
                       f"{_elements(layout.span)}")
        others = [a for a in axes if a != axis]
        steps = layout.span // g  # the moves of this size the tensor holds
        whole_matrices = g in layout.strides[:-2]  # each move is one matrix of a stack (a head of [B, KV, S, D])
        if whole_matrices and 1 < steps < grid[axis] and grid[axis] % steps == 0:
            # a stack with fewer matrices than the grid (the checker's, as large as the work) has programs,
            # a whole number per matrix: the programs are meant to share them (grouped-query attention:
            # H query heads reading KV key/value heads). A step that is no matrix of the stack (a doubled
            # row stride) is an offset bug, not sharing: no such question there
            share = grid[axis] // steps
            swap = (f" Axis {axis} has {grid[axis]} programs and {_label(layout)} holds {steps} such steps, "
                    f"{share} programs per step: do {share} programs share each one (the offset from "
                    f"tl.program_id({axis}) // {share})?")
        elif len(axes) == 2 and grid[axes[0]] != grid[axes[1]]:
            swap = (f" Are the grid's axes swapped? Axis {axis} has {grid[axis]} programs, axis {others[0]} has "
                    f"{grid[others[0]]}.")
        else:
            swap = ""
        text = f"The addresses themselves are wrong: {named}, {problem}.{swap}"
        if scalars and g > 1 and not any(v > 1 and g % v == 0 for v in scalars.values()):
            # a move that no argument of the kernel (nor a multiple of one) explains was written into it
            return _found("addr.program_move_hardcoded",
                          text + f" {g} is none of the sizes the kernel was given, nor a multiple of one: is a size "
                                 f"hard-coded?", "", ("address", "hardcoded"), step=g)
        return _found("addr.program_move",
                      text, "address", step=g)
    return None


def _outside_finding(layout: Layout, origin: int, pid: Pid, origins: dict[Pid, int],
                     grid: tuple[int, int, int], scalars: dict[str, int], in_loop: bool) -> Optional[Diagnosis]:
    """The block starts outside the tensor (before it, past its end, or past the last column of a
    row): its start is computed wrongly. A grid the checker fixes never needs a block that starts
    outside; a loop that runs one step too far does."""
    rows_apart = layout.row_stride()
    where = layout.coordinates(origin)
    if origin < 0:
        # inside a loop, a counter that starts a step early (or a walk backwards that runs a step too
        # far) reaches back by a block, as a wrong offset does
        loop = (" Or, in this loop, does its counter start a step early, or a walk backwards run a step too "
                "far?") if in_loop else ""
        return _found("addr.starts_before",
                      f"Program {pid} starts this access at element {origin}, before the start of {_label(layout)}. If "
                      f"the block is not meant to reach back, an offset is off (by {-origin}?): fix the offset, not "
                      f"the mask.{loop} If it is meant to (a neighbour's value), switch the lanes before the start off "
                      f"with a mask.", "", ("address", "loop", "mask") if in_loop else ("address", "mask"))
    if origin >= layout.span:
        problem = f"beyond the {_elements(layout.span)} of {_label(layout)}"
    elif where is not None and len(layout.shape) >= 2 and where[1] >= layout.shape[-1]:
        problem = f"past the last column of its row ({layout.shape[-1] - 1})"
    else:
        return None
    moved = _program_words(pid, origins, grid, scalars)
    rows = ""
    if rows_apart is not None:
        rows = f" {_label(layout)}'s rows are {_elements(rows_apart, scalars)} apart."
    text = (f"The block's start is wrong, not its edge: program {pid} starts this access at "
            f"{_origin_text(layout, origin)}, already {problem}.{moved}{rows}")
    if origin == layout.span:
        # the first element past the end, exactly: a guard written with `<=` (row <= M) lets it through
        return _found("addr.one_past_the_end",
                      text + " It starts exactly one past the end: does a guard let the index one past the "
                             "last through (`<=` where `<` belongs, row <= M)? Or is the start computed wrongly, "
                             "or does a loop run a step too far?", "", ("mask", "address", "loop"))
    if in_loop:
        return _found("addr.start_or_loop",
                      text + " Is the start computed wrongly (a stride, a block size, a program id), or "
                             "does the loop run a step too far?", "", ("address", "loop"))
    return _found("addr.start",
                  text + " Check how the start is computed: the row or block offset (row * the row "
                         "stride, pid * BLOCK), which program id picks which axis, and any ± 1.", "address")


def _overlap_finding(layout: Layout, steps: tuple[Optional[int], ...], block: tuple[int, ...], pid: Pid,
                     origins: dict[Pid, int], grid: tuple[int, int, int],
                     scalars: dict[str, int], sizes: Optional[dict[str, int]] = None,
                     sharing: bool = False) -> Optional[Diagnosis]:
    """Two programs write one element: do their blocks overlap by construction? (the program id
    unused, or moving the block by less than its width). A move by one of the sizes the kernel was
    given (HQ heads per token, say) in a block padded wider than it (BLOCK_H) fits a right start
    whose padded rows are not masked as well as a wrong start: then it asks. sharing: the tensor
    sums shares, and the programs along an axis that does not move the block are meant to meet."""
    moved = program_steps(origins, grid)
    if moved is None:
        return None
    for axis, g in enumerate(moved):
        if g is None or grid[axis] < 2 or (sharing and g == 0):
            continue
        if g == 0:
            return _found("addr.same_start",
                          f"Every program along grid axis {axis} starts this access at the same element: the "
                          f"offsets do not depend on tl.program_id({axis}), so those programs all write one "
                          f"block. Add the program's own offset (e.g. tl.program_id({axis}) * BLOCK).", "address")
        width, unit = _extent(layout, steps, block, g)
        if width and 0 < g // unit < width:
            moved = g // unit
            words = "elements" if unit == 1 and len(block) == 1 else ("columns" if unit == 1 else "rows")
            text = (f"tl.program_id({axis}) moves this access by {moved}{name_of(moved, scalars)} {words}, "
                    f"but each block is {width}{name_of(width, scalars)} {words} wide: neighbouring programs' "
                    f"blocks overlap. Program p's block starts at p * {width}.")
            if scalars and moved > 1 and moved not in scalars.values():
                return _found("addr.overlap_hardcoded",
                              text + f" {moved} is none of the sizes the kernel was given: is it hard-coded?", "",
                              ("address", "hardcoded"))
            if scalars and width > 1 and width not in scalars.values() and moved in scalars.values():
                # the move is a size the kernel was given, the width is none: the width was written in
                return _found("addr.width_hardcoded",
                              text + f" {width} is none of the sizes the kernel was given: is the block's width "
                              f"hard-coded (tl.arange(0, {width}) where the block size belongs)?", "",
                              ("hardcoded", "address"))
            if moved in (sizes or {}).values():
                return _found("addr.overlap_or_mask",
                              text.rsplit(" Program p's", 1)[0] + f" {moved}{name_of(moved, sizes)} is a size the "
                              f"kernel was given: if each program owns {moved} {words}, its block's {words} past "
                              f"them need a mask; if not, the start is wrong (program p's block would start at "
                              f"p * {width}).", "", ("mask", "address"))
            return _found("addr.overlap",
                          text, "address")
    return None


def _extent(layout: Layout, steps: tuple[Optional[int], ...], block: tuple[int, ...], g: int) -> tuple[int, int]:
    """(how many units the block spans in the direction a program move of g goes, the unit in
    elements): lanes along a block axis of step 1 for a move within a row, rows along a block axis
    that steps by the row stride for a move by whole rows. (0, 1) where the block does not span
    that direction."""
    rows_apart = layout.row_stride()
    if rows_apart is not None and g % rows_apart == 0:
        spans = [n for n, s in zip(block, steps) if s == rows_apart]
        return (spans[0], rows_apart) if spans else (0, 1)
    spans = [n for n, s in zip(block, steps) if s == 1]
    return (spans[0], 1) if spans else (0, 1)


def _shift_finding(layout: Layout, origins: dict[Pid, int], block: tuple[int, ...]) -> Optional[Diagnosis]:
    """Program 0 starts a little past element 0: an offset off by one, unless that start is meant
    (the second half of a row, say): both fit, so ask."""
    first = origins.get((0, 0, 0))
    if first is None or first == 0 or first < 0 or first >= int(np.prod(block)):
        return None
    return _found("addr.shifted_start",
                  f"Program (0, 0, 0) starts this access at element {first}, not 0. If it should start at 0, an "
                  f"offset is off by {first} (the addresses, not the mask); if that start is meant, the mask lets "
                  f"the block's last lanes through.", "", ("address", "mask"))


# ---------------------------------------------------------------------------------------------
# The diagnoses


def _other_tensor_finding(layout: Layout, offsets: np.ndarray, active: np.ndarray,
                          others: dict[str, int]) -> Optional[Diagnosis]:
    """The lanes the mask lets through fit another tensor of the launch exactly, one of another
    size: the offsets (or the mask) were made for that tensor. Either the address is built from
    the wrong index, or the mask compares with the wrong size: ask."""
    lanes = offsets[np.broadcast_to(active, offsets.shape)]
    if lanes.size == 0:
        return None
    low, high = int(lanes.min()), int(lanes.max())
    fits = [(name, span) for name, span in others.items() if span != layout.span and low >= 0 and high < span]
    if not fits:
        return None
    name, span = max(fits, key=lambda item: item[1])
    return _found("addr.other_tensor",
                  f"The lanes this access lets through reach element {high}: they fit `{name}` ({_elements(span)}), "
                  f"not {_label(layout)} ({layout.span}). Is this address built from an index meant for "
                  f"`{name}` (an element's position where its value, or another row, belongs)? Or does the "
                  f"mask compare with `{name}`'s size instead of {_label(layout)}'s?", "", ("address", "mask"))


def _literal_width_finding(layout: Layout, offsets: np.ndarray, scalars: dict[str, int]) -> Optional[Diagnosis]:
    """A block as wide as none of the sizes the kernel was given: tl.arange takes compile-time
    widths, so one that matches no argument is most likely a number written into the kernel."""
    widths = [n for n in offsets.shape if n > 1]
    given = set(scalars.values())
    if not widths or not given or any(w in given for w in widths):
        return None
    named = ", ".join(f"{k} = {v}" for k, v in scalars.items())
    return _found("addr.literal_width",
                  f"This block is {' x '.join(map(str, widths))} lanes wide, but none of the sizes the kernel was given "
                  f"is {widths[0]} ({named}): is a size hard-coded (tl.arange(0, {widths[0]}))? Use the "
                  f"block size argument. Or, if the width is meant, the mask must switch off the lanes past the end.",
                  "", ("hardcoded", "mask"))


def _reach(active: np.ndarray, axis: int) -> tuple[np.ndarray, int]:
    """Along one axis of a block: which lanes the mask lets through in any row or column, and how far
    they reach (the last such lane + 1; 0 if none). active: already of the block's shape."""
    lanes = active.any(axis=tuple(a for a in range(active.ndim) if a != axis))
    return lanes, (int(np.nonzero(lanes)[0].max()) + 1 if lanes.any() else 0)


def _hard_coded_bound(layout: Layout, offsets: np.ndarray, active: np.ndarray, steps: tuple[Optional[int], ...],
                      scalars: dict[str, int], had_mask: bool = False) -> Optional[Diagnosis]:
    """The mask switches lanes off, but at a bound none of the kernel's sizes explains (rows < 10
    where M is 1): the bound was written into the kernel. Or it reaches one past a size (`<=`)."""
    if not scalars or None in steps or offsets.ndim == 0:
        return None
    active = np.broadcast_to(active, offsets.shape)
    if not active.any():
        return None
    if active.all():
        # a mask that let the whole block through says where it stops only when the block ends one
        # past a size (N = 7 in a block of 8): `<=`, or a comparison with the block's size
        return _whole_block_through(layout, offsets, steps, scalars) if had_mask else None
    origin = int(offsets.flat[0])
    rows_apart = layout.row_stride()
    for axis, step in enumerate(steps):
        _, extent = _reach(active, axis)
        if extent == offsets.shape[axis] or not step:
            continue
        start = origin // step if step == rows_apart and rows_apart else origin % rows_apart if rows_apart and step == 1 \
            else origin // step
        bound = start + extent
        if bound - 1 in scalars.values() and bound not in scalars.values():
            size = next(k for k, v in scalars.items() if v == bound - 1)
            return _found("addr.mask_le",
                          f"The mask lets lanes through up to index {bound - 1} = {size}: one past the last valid "
                          f"index. Written with `<=` where `<` belongs (index < {size})?", "mask", bound=bound)
        # a bound the kernel computes from its sizes (half of D for a rotation's halves, a tensor's
        # own dimension) is no number written in
        derived = {v // 2 for v in scalars.values()} | {2 * v for v in scalars.values()} | set(layout.shape)
        if bound not in scalars.values() and bound not in derived:
            return _found("addr.mask_hardcoded",
                          f"The mask lets lanes through up to index {bound - 1} along this block's "
                          f"{'rows' if offsets.ndim > 1 and axis == 0 else 'lanes'}, a bound of {bound}, and {bound} is "
                          f"none of the sizes the kernel was given: is the mask's bound hard-coded? It must compare "
                          f"with this tensor's size.", "", ("mask", "hardcoded"), bound=bound)
    return None


def _axis_unmasked_finding(layout: Layout, offsets: np.ndarray, active: np.ndarray,
                           steps: tuple[Optional[int], ...], scalars: dict[str, int]) -> Optional[Diagnosis]:
    """A 2-D tile whose mask switches off nothing along one of its axes while lanes along it lie past
    the tensor's edge: that axis's condition is missing from the mask (rows masked, columns not)."""
    if offsets.ndim != 2 or len(layout.shape) != 2 or None in steps or 0 in layout.shape:
        return None
    strides = tuple(abs(s) for s in layout.strides)
    dims = [strides.index(st) if strides.count(st) == 1 else None for st in steps]
    if None in dims or dims[0] == dims[1]:
        return None
    big, small = (0, 1) if strides[0] >= strides[1] else (1, 0)
    origin = int(offsets.flat[0])
    if origin < 0 or strides[small] == 0 or strides[big] < layout.shape[small] * strides[small]:
        return None
    start = {big: origin // strides[big], small: (origin % strides[big]) // strides[small]}
    active = np.broadcast_to(active, offsets.shape)
    if active.all():
        # a mask that switches nothing off says nothing of which axis it meant to cut: a mask
        # missing, or strides swapped (checker/diagnosis/addresses.py's _swapped_steps_finding asks)
        return None
    index = [start[dims[a]] + np.arange(offsets.shape[a]) for a in (0, 1)]
    outside = [index[a] >= layout.shape[dims[a]] for a in (0, 1)]
    names = {k: v for k, v in scalars.items() if not k.lower().startswith("stride")}
    for a in (0, 1):
        other = 1 - a
        # the mask does not depend on this axis (each line along it all on or all off) ...
        if not (active == active.take([0], axis=a)).all():
            continue
        # ... and lanes past the edge along it are on
        spill = active & (outside[a][:, None] if a == 0 else outside[a][None, :])
        if not spill.any():
            continue
        what, kept = ("rows", "columns")[dims[a]], ("rows", "columns")[dims[other]]
        size = layout.shape[dims[a]]
        name = size_name(names, size, ("n_rows", "n_cols")[dims[a]])
        first, last = int(index[a][outside[a]][0]), int(index[a][-1])
        other_out = outside[other][:, None] if other == 0 else outside[other][None, :]
        masked = (f" The {kept} past the edge are switched off, so the mask has their condition only."
                  if outside[other].any() and not (active & other_out).any() else "")
        lane = ("rows", "cols")[a]
        cond = f"({lane}[:, None] < {name})" if a == 0 else f"({lane}[None, :] < {name})"
        span = f"{what[:-1]} {first} lies" if first == last else f"{what} {first} to {last} lie"
        return _found("addr.axis_unmasked",
                      f"The mask switches off none of this block's {what}, and {span} past the edge "
                      f"({what} run to {name} - 1 = {size - 1}).{masked} The {what} need their own condition in "
                      f"the mask, e.g. `mask = ... & {cond}`.", "mask")
    return None


def size_name(scalars: dict[str, int], size: int, default: str) -> str:
    """The kernel's own name for a size (N, n_cols), where exactly one of its arguments that is not a
    stride holds it; else `default`."""
    named = [k for k, v in scalars.items() if v == size and not k.lower().startswith("stride")]
    return named[0] if len(named) == 1 else default


def _whole_block_through(layout: Layout, offsets: np.ndarray, steps: tuple[Optional[int], ...],
                         scalars: dict[str, int]) -> Optional[Diagnosis]:
    """A mask that switched no lane off, in a block whose last lane is one past a size's last index."""
    if offsets.ndim != 1 or steps[0] != 1:
        return None
    last = int(offsets.flat[-1])
    sizes = [k for k, v in scalars.items() if v == last and v == layout.span]
    if not sizes:
        return None
    blocks = [k for k, v in scalars.items() if v == offsets.shape[0] and k not in sizes]
    also = f", or compared with the block's size ({blocks[0]}) instead of {sizes[0]}" if blocks else ""
    return _found("addr.mask_le_or_block" if blocks else "addr.mask_le",
                  f"The mask let every lane of this block through, up to index {last} = {sizes[0]}: one past the "
                  f"last valid index. Written with `<=` where `<` belongs (index < {sizes[0]}){also}?", "mask",
                  bound_at_least=last + 1)


def _shifted_block_finding(layout: Layout, offsets: np.ndarray, active: np.ndarray,
                           steps: tuple[Optional[int], ...]) -> Optional[Diagnosis]:
    """The lanes the mask let through are as many as the rest of the row needs from the last multiple
    of the block's width, but the block starts a little past that multiple (columns 32..39 of 40,
    from a block that starts at 33; or a whole row of 16 from column 1): the mask counts right and
    the start is off. A start that is meant (a window) fits a `<=` too, so it asks, offset first."""
    if 1 not in steps or offsets.ndim == 0:
        return None
    axis = steps.index(1)
    width = offsets.shape[axis]
    lanes, extent = _reach(np.broadcast_to(active, offsets.shape), axis)
    if extent == 0 or not lanes[:extent].all():
        return None
    rows_apart = layout.row_stride()
    origin = int(offsets.flat[0])
    start = origin % rows_apart if rows_apart else origin
    off = start % width
    aligned = start - off
    if off == 0 or aligned + extent != layout.shape[-1]:
        return None
    return _found("addr.shifted_block",
                  f"The block starts at index {start} of its row, {off} past a multiple of its {width} lanes, and "
                  f"the mask lets {extent} lanes through: exactly indices {aligned}..{aligned + extent - 1}, the lanes "
                  f"a block starting at {aligned} would need. Is the start off by {off} (the row's or the block's "
                  f"offset, not the mask)? If that start is meant, the mask lets lanes through past the end: `<=` "
                  f"where `<` belongs?", "", ("address", "mask"))


def _in_order_stays_inside(layout: Layout, offsets: np.ndarray, active: np.ndarray) -> bool:
    """Would the same lanes, with the strides in order, stay inside the tensor? The block's origin
    read back as (column, row) is where it starts in order. Then the lanes outside come from the
    swapped strides alone (a mask that is all true in this block, not one that is missing): a block
    that sticks out past the tensor's edge sticks out in either order."""
    if len(layout.strides) != 2:  # a head of a [B, H, L, D] tensor: its origin holds the head's offset too
        return False
    rows_apart, cols_apart = layout.strides
    origin = int(offsets.flat[0])
    outer, inner = max(rows_apart, cols_apart), min(rows_apart, cols_apart)
    if inner != 1 or outer <= 1 or origin < 0:  # a dense layout, row- or column-major
        return False
    first, second = divmod(origin, outer)
    row, col = (first, second) if rows_apart == outer else (second, first)
    i, j = np.indices(offsets.shape)
    in_order = col * rows_apart + row * cols_apart + i * rows_apart + j * cols_apart
    lanes = in_order[np.broadcast_to(active, offsets.shape)]
    return bool(lanes.size) and int(lanes.min()) >= 0 and int(lanes.max()) < layout.span


def _transposed_finding(layout: Layout, steps: tuple[Optional[int], ...], offsets: np.ndarray,
                        active: np.ndarray, scalars: dict[str, int]) -> Optional[Diagnosis]:
    """A 2-D block whose axes step by the tensor's strides in the other order walks it transposed:
    right for a transposed tile whose masks follow suit, wrong where the strides were swapped. Which
    of the two, the addresses cannot say; that they disagree with the masks, the access shows.
    A tensor of more dimensions ([B, H, L, D]) is read through its last two: the tile of one head, even
    of one row (L = 1), whose row stride is still the row length; a column of one (a [M, 1] view of a
    [1, M] row, strides (1, M)) alike."""
    if len(steps) != 2 or len(layout.shape) < 2 or max(layout.shape[-2:]) < 2 or None in steps:
        return None
    rows_apart, cols_apart = layout.strides[-2:]
    if rows_apart == cols_apart or (abs(steps[0]), abs(steps[1])) != (abs(cols_apart), abs(rows_apart)):
        return None
    outside = active & ((offsets < 0) | (offsets >= layout.span))
    if not _in_order_stays_inside(layout, offsets, active):
        for axis in (0, 1):
            unmasked = bool((active == active.take([0], axis=axis)).all())
            if unmasked and not bool((outside == outside.take([0], axis=axis)).all()):
                return None  # the lanes outside run along an axis the mask leaves alone: a mask missing there
    return _found("addr.transposed",
        f"The block walks {_label(layout)} transposed: its axis 0 steps by {steps[0]}, {_label(layout)}'s step from "
        f"one column to the next, and its axis 1 by {steps[1]}{name_of(steps[1], scalars)}, the step from one "
        f"row to the next ({_layout_text(layout)}). Are the strides swapped (rows[:, None] * "
        f"{rows_apart}{name_of(rows_apart, scalars)} + cols[None, :] walks it in order)? If the transposed "
        f"tile is meant, each axis's mask must compare with the size of the dimension that axis walks.",
        "", ("address", "mask"))


def _masks_transposed_finding(layout: Layout, steps: tuple[Optional[int], ...], offsets: np.ndarray,
                              active: np.ndarray, scalars: dict[str, int]) -> Optional[Diagnosis]:
    """A 2-D block that walks a [R, C] matrix in order, R != C, whose masks fit it transposed: each
    axis stops at the other dimension's size (the mask stops it there, or it runs past its own size
    up to exactly there). A tile meant to walk the matrix transposed, with its strides swapped, looks
    exactly so; so do two masks written with each other's size. Ask, the strides first."""
    if len(layout.shape) != 2 or len(steps) != 2 or None in steps or layout.row_stride() is None:
        return None
    rows, cols = layout.shape
    if rows == cols or steps != (layout.row_stride(), 1):
        return None
    where = layout.coordinates(int(offsets.flat[0]))
    if where is None:
        return None
    active = np.broadcast_to(active, offsets.shape)
    own, other = (rows, cols), (cols, rows)
    for axis in (0, 1):
        # both axes must say so (one mask written with the other size is a mask bug, and looks the same
        # on its own axis): stopped by the mask exactly at the other dimension's size, or run past its
        # own size up to exactly the other's
        _, extent = _reach(active, axis)
        if extent == 0:
            return None
        end = where[axis] + extent
        if end != other[axis] or end == own[axis]:
            return None
        if extent == offsets.shape[axis] and end <= own[axis]:
            return None
    return _found("addr.masks_transposed",
                  f"The block walks {_label(layout)} in order ({_layout_text(layout)}), but its masks fit it "
                  f"transposed: they let its rows run to {cols}{name_of(cols, scalars)}, the number of columns, and "
                  f"its columns to {rows}{name_of(rows, scalars)}, the number of rows. Are the strides swapped (a "
                  f"tile meant to walk it transposed: rows[:, None] + cols[None, :] * {layout.row_stride()})? Or do "
                  f"the masks compare each index with the other dimension's size?", "", ("address", "mask"))


def _one_mask_transposed_finding(layout: Layout, steps: tuple[Optional[int], ...], offsets: np.ndarray,
                                 active: np.ndarray, scalars: dict[str, int]) -> Optional[Diagnosis]:
    """A 2-D block of a [R, C] matrix, R != C, whose lanes leave it along one axis (past that axis's
    dimension), while the mask cuts the other axis inside the block exactly at the size of the first
    axis's dimension, not of its own: the mask fits the matrix transposed. The lanes inside the
    matrix are then misplaced too, so a mask alone would hide the bug, not fix it: the strides
    swapped against masks that are right look exactly so, and so do masks written with each other's
    size. Ask, the strides first. (One axis's evidence suffices here, where the masks-transposed
    finding wants both: the axis that leaves the matrix is not cut inside this block.)"""
    if len(layout.shape) != 2 or len(steps) != 2 or None in steps:
        return None
    rows_apart = layout.row_stride()
    rows, cols = layout.shape
    if rows_apart is None or rows_apart == 1 or rows == cols:
        return None
    walks = [{rows_apart: 0, 1: 1}.get(step) for step in steps]   # the matrix dimension each axis walks
    where = layout.coordinates(int(offsets.flat[0]))
    if None in walks or walks[0] == walks[1] or where is None:
        return None
    active = np.broadcast_to(active, offsets.shape)
    if not bool((active & ((offsets < 0) | (offsets >= layout.span))).any()):
        return None
    shape, names = (rows, cols), ("rows", "columns")

    def end(axis: int) -> Optional[int]:
        lanes = active.any(axis=1 - axis)
        return where[walks[axis]] + int(np.nonzero(lanes)[0].max()) + 1 if lanes.any() else None

    for out in (0, 1):
        cut = 1 - out
        out_end, cut_end = end(out), end(cut)
        if out_end is None or cut_end is None or out_end <= shape[walks[out]]:
            continue
        if cut_end - where[walks[cut]] == offsets.shape[cut]:
            continue  # the mask does not cut that axis inside this block: it says nothing of its bound
        if cut_end == shape[walks[out]] and cut_end != shape[walks[cut]]:
            return _found("addr.one_mask_transposed",
                f"The block's axis {out} steps by {steps[out]}{name_of(steps[out], scalars)}, so it walks "
                f"{_label(layout)}'s {names[walks[out]]} ({shape[walks[out]]} of them), but the mask lets its lanes "
                f"run to {out_end}; and the mask stops axis {cut}, which walks the {names[walks[cut]]} "
                f"({shape[walks[cut]]}), at {cut_end}{name_of(cut_end, scalars)}: the number of "
                f"{names[walks[out]]}. The masks fit {_label(layout)} transposed ({_layout_text(layout)}), so the "
                f"lanes inside it are misplaced too. Are the strides swapped (each axis's offset multiplied by "
                f"the other's stride)? Or does each mask compare its index with the other dimension's size?",
                "", ("address", "mask"))
    return None


def _swapped_steps_finding(layout: Layout, steps: tuple[Optional[int], ...], offsets: np.ndarray,
                           active: np.ndarray) -> Optional[Diagnosis]:
    """A 2-D block whose lanes leave the tensor, though with its two axes' steps exchanged every lane
    the mask lets through would lie inside: strides swapped fit what the addresses show as well as a
    mask missing does (and then the lanes inside are misplaced too, which a mask would not fix). The
    addresses cannot tell the two apart: ask."""
    rows_apart = layout.row_stride()
    if (offsets.ndim != 2 or min(offsets.shape) < 2 or rows_apart is None or rows_apart == 1
            or tuple(steps) not in ((rows_apart, 1), (1, rows_apart))):
        return None
    where = layout.coordinates(int(offsets.flat[0]))
    lanes = np.broadcast_to(active, offsets.shape)
    if where is None or not bool(lanes.any()):
        return None
    # exchanged, the index that walked the rows walks the columns from the same start, and back
    row, col = where
    i, j = np.indices(offsets.shape)
    exchanged = (col * rows_apart + row + i * steps[1] + j * steps[0])[lanes]
    if int(exchanged.min()) < 0 or int(exchanged.max()) >= layout.span:
        return None
    return _found("addr.swapped_steps",
                  f"With the block's two axes' steps exchanged ({steps[1]} along axis 0, {steps[0]} along axis 1), "
                  f"every lane the mask lets through would lie inside {_label(layout)} ({_layout_text(layout)}). Is "
                  f"a mask missing (or comparing with the wrong size) along the axis that leaves it? Or are the "
                  f"strides swapped, each index multiplied by the other's stride? Then the lanes inside are "
                  f"misplaced too, and a mask would only hide the bug.", "", ("mask", "address"))


def _masked_off_index_finding(layout: Layout, offsets: np.ndarray, active: np.ndarray) -> Optional[Diagnosis]:
    """An index loaded from lanes a load's mask switched off (no other=): the interpreter reads the
    integer pattern LANE_INT there, and an offset made from it lands that far out. The pattern proves
    the lanes were masked off at the load and are not at this access: its mask is missing."""
    from checker.poison import LANE_INT  # the sanitizer's process has torch already
    outside = offsets[np.broadcast_to(active, offsets.shape) & ((offsets < 0) | (offsets >= layout.span))]
    if outside.size == 0:
        return None
    near = max(layout.span, 1 << 16)
    patterns = [bits for bits in LANE_INT.values() if bits > near]
    hits = [int(o) for o in outside if any(abs(int(o) - bits) < near for bits in patterns)]
    if not hits:
        return None
    return _found("addr.masked_off_index",
                  f"Offset {hits[0]} comes from the pattern the interpreter reads in the lanes a load's mask "
                  f"switched off (that load has no other=): this access uses an index loaded with a mask, "
                  f"but is not masked itself. Give it the same mask as the load that read the index.",
                  "mask")


def out_of_bounds(layout: Layout, offsets: np.ndarray, active: np.ndarray, site: Site, pid: Pid,
                  grid: tuple[int, int, int], scalars: dict[str, int], in_loop: bool,
                  others: Optional[dict[str, int]] = None, had_mask: bool = False) -> Diagnosis:
    """Why an access left its tensor: offsets are the lanes' element offsets (the block's shape,
    masked-off lanes included), active the lanes the mask let through; others the sizes (in
    elements) of the launch's other tensors."""
    steps = lane_steps(offsets)
    origin = int(offsets.flat[0])
    origins = {**site.origins, pid: site.origins.get(pid, origin)}
    finding = (_masked_off_index_finding(layout, offsets, active)
               or _step_finding(layout, steps, offsets.shape, scalars)
               or _transposed_finding(layout, steps, offsets, active, scalars)
               or _masks_transposed_finding(layout, steps, offsets, active, scalars)
               or _one_mask_transposed_finding(layout, steps, offsets, active, scalars)
               or _coverage_finding(layout, offsets.shape, origins, grid, scalars, site)
               or _outside_finding(layout, origin, pid, origins, grid, scalars, in_loop)
               or _shift_finding(layout, origins, offsets.shape)
               or _shifted_block_finding(layout, offsets, active, steps)
               or _axis_unmasked_finding(layout, offsets, active, steps, scalars)
               or _hard_coded_bound(layout, offsets, active, steps, scalars, had_mask)
               or _other_tensor_finding(layout, offsets, active, others or {})
               or _literal_width_finding(layout, offsets, scalars))
    if finding is not None:
        return finding
    finding = _swapped_steps_finding(layout, steps, offsets, active)
    if finding is not None:
        return finding
    if None in steps and offsets.ndim >= 1 and offsets.size > 1:
        # a gather: the lanes do not follow one stride, so their addresses cannot be checked here
        return _found("addr.gather",
                      "These lanes' offsets do not follow one stride (a gather?), so the checker cannot tell a "
                      "wrong index from a missing mask: check both.", "", ("address", "mask"))
    return _found("addr.mask",
                  "", "mask")


def overlapping_writes(layout: Layout, offsets: np.ndarray, site: Site, pid: Pid, grid: tuple[int, int, int],
                       scalars: dict[str, int], sizes: Optional[dict[str, int]] = None) -> Optional[Diagnosis]:
    """Why two programs reached one element of a tensor that each element of belongs to one
    program; None when the addresses look right (then the lanes past a block's edge may be
    reaching the next block: a mask). sizes: the launch's integer arguments that are not
    constexprs (the tensor sizes it was given), where known."""
    steps = lane_steps(offsets)
    origin = int(offsets.flat[0])
    origins = {**site.origins, pid: site.origins.get(pid, origin)}
    return (_step_finding(layout, steps, offsets.shape, scalars)
            or _coverage_finding(layout, offsets.shape, origins, grid, scalars, site)
            or _outside_finding(layout, origin, pid, origins, grid, scalars, in_loop=False)
            or _overlap_finding(layout, steps, offsets.shape, pid, origins, grid, scalars, sizes or {}))


def shared_overlap(layout: Layout, offsets: np.ndarray, sites: dict, key, pid: Pid, other: Pid,
                   grid: tuple[int, int, int], scalars: dict[str, int],
                   sizes: Optional[dict[str, int]] = None) -> Optional[Diagnosis]:
    """Two programs reached one element of an output that sums shares from several programs: None
    where that fits shares by design (atomics are the fix), a finding where the evidence says the
    programs were never meant to meet there. sites: the launch's sites by (file, line, tensor name);
    key: the racing access's.

    Shares by design come from programs whose blocks of the output coincide (the same columns of
    dgamma for every block of rows), or whose lanes are gathered (a histogram, rows picked by token
    id). Two things are evidence of something else:
    - the two programs made the same accesses at every line both reached, an input's included: they
      do the same work, and an atomic would only count it twice (a program id unused, or the wrong
      axis);
    - their blocks at this line start at different elements and step evenly: blocks meant to tile
      the output overlap (a wrong start), or lanes past a block's edge reach the next one (a mask)."""
    common = [(k, s) for k, s in sites.items() if pid in s.origins and other in s.origins]
    if (len(common) >= 2 and any(k[2] != layout.name for k, _ in common)
            and all(s.origins[pid] == s.origins[other] for _, s in common)):
        axes = [a for a in range(3) if pid[a] != other[a]]
        which = " or ".join(f"tl.program_id({a})" for a in axes)
        return _found("addr.same_work",
                      f"Programs {pid} and {other} made the same accesses at every line both reached, inputs "
                      f"included: they do the same share of the work, and adding it with an atomic would only "
                      f"count it twice. Each program's offsets must move with its own program id: is {which} "
                      f"unused, or used for the wrong axis?", "address")
    site = sites.get(key)
    if site is None or other not in site.origins or site.origins[other] == site.origins.get(pid):
        return None
    steps = lane_steps(offsets)
    if offsets.size < 2 or None in steps:
        return None  # a gather (or one lane): its shares may meet anywhere
    origin = int(offsets.flat[0])
    origins = {**site.origins, pid: site.origins.get(pid, origin)}
    found = (_step_finding(layout, steps, offsets.shape, scalars)
             or _coverage_finding(layout, offsets.shape, origins, grid, scalars, site)
             or _outside_finding(layout, origin, pid, origins, grid, scalars, in_loop=False)
             or _overlap_finding(layout, steps, offsets.shape, pid, origins, grid, scalars, sizes or {},
                                 sharing=True))
    if found is not None:
        return found
    return _found("addr.shared_overlap",
                  f"Programs {pid} and {other} start their blocks of {_label(layout)} at different elements "
                  f"({site.origins[other]} and {site.origins[pid]}), yet both reach this one: blocks that tile the "
                  f"output should not overlap. Is a block's start computed wrongly (a program or row offset, a "
                  f"block size), or do lanes past a block's edge reach into the next block (a mask missing)? "
                  f"Only if the blocks are meant to overlap: add the shares with tl.atomic_add.",
                  "", ("address", "mask", "atomic"))


def audit(layout: Layout, site: Site, grid: tuple[int, int, int], scalars: dict[str, int]) -> Optional[Diagnosis]:
    """After a launch whose results are wrong: a site whose lanes step by none of the tensor's
    strides, or whose program ids move the block outside the tensor, is evidence of a wrong address
    even where nothing left the tensor."""
    return _step_finding(layout, site.steps, site.block, scalars) or \
        _coverage_finding(layout, site.block, site.origins, grid, scalars, site)


def unused_program_ids(sites: dict, grid: tuple[int, int, int]) -> Optional[Diagnosis]:
    """No access of the launch moves with some program id: every program along that grid axis
    reads and writes exactly the same elements, so they all do the same work. Only blocks count as
    evidence: a scalar every program loads (a count, an upstream gradient) is shared by design, and
    programs whose loops never ran made no other access (their outputs say "never written")."""
    blocks = {key: site for key, site in sites.items() if int(np.prod(site.block)) > 1}
    for axis in range(3):
        if grid[axis] < 2:
            continue
        moves = []
        for site in blocks.values():
            steps = program_steps(site.origins, grid)
            if steps is None:
                return None  # offsets that are not one affine function of the program id: a loop
            moves.append(steps[axis])
        if moves and all(g == 0 for g in moves):
            return _found("addr.program_id_unused",
                          f"Every access is the same in every program along grid axis {axis}: no offset depends "
                          f"on tl.program_id({axis}), so the {grid[axis]} programs all do the same block. Start each "
                          f"program's block at its own offset (tl.program_id({axis}) * BLOCK).", "address")
    return None


def at(place: Place) -> str:
    """'`kernel`, cell 4, line 3:' and the line's code below it (ends with the colon either way)."""
    return f"{place.label}:\n    {place.code}" if place.code else f"{place.label}:"


def seen_in_addresses(memory: MemoryEvidence) -> list[Diagnosis]:
    """After a case whose results are wrong, from what its launches saw: each line whose lanes step by
    none of its tensor's strides, or whose program ids move its block outside the tensor, and each
    launch where some program id moves nothing. Evidence of a wrong address even where nothing left
    a tensor."""
    found: list[tuple[Optional[Place], Diagnosis]] = []
    for launch in memory.launches:
        unused = unused_program_ids(launch.sites, launch.grid)
        if unused is not None:
            found.append((None, unused))
        for key, site in launch.sites.items():
            finding = audit(launch.layouts[key], site, launch.grid, launch.scalars)
            if finding is not None and all(f.text != finding.text for _, f in found):
                found.append((launch.places[key], finding))
    return [replace(f, observed=(f"seen in the addresses at {at(place)}" if place else "seen in the addresses:")
                    + f"\n{f.text}", where=Span(line=place.lineno, code=place.code) if place else None)
            for place, f in found]
