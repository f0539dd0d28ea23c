"""Why an access left its tensor: one ordered decision (`out_of_bounds`) over the findings, the first
that the lanes prove wins; a mask where every reading says the addresses are right.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from checker.diagnosis.addresses.programs import _coverage_finding, _outside_finding, _shift_finding, _step_finding
from checker.diagnosis.addresses.readings import _elements, _found, _label, _layout_text, _reach, name_of, size_name
from checker.diagnosis.model import Diagnosis
from checker.evidence.lanes import lane_steps, Layout, Pid, Site


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
