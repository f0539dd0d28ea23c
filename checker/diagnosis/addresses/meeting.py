"""Why two programs reached one element: of an output that each element of belongs to one program
(`overlapping_writes`), or of one that sums shares from several programs (`shared_overlap`).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from checker.diagnosis.addresses.programs import _coverage_finding, _outside_finding, _overlap_finding, _step_finding
from checker.diagnosis.addresses.readings import _found, _label
from checker.diagnosis.model import Diagnosis
from checker.evidence.lanes import lane_steps, Layout, Pid, Site


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
