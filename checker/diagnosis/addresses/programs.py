"""Findings from how the blocks move, lane to lane and program to program, that both questions ask
(an access out of bounds, two programs meeting): a step that is no stride, programs that cover
the tensor wrongly, a block that starts outside, blocks that overlap, a block shifted.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from checker.diagnosis.addresses.readings import _axis_words, _elements, _extent, _found, _label, _layout_text, _origin_text, _program_words, name_of
from checker.diagnosis.model import Diagnosis
from checker.evidence.lanes import Layout, Pid, program_steps, Site


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
