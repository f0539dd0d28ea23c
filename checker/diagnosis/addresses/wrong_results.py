"""After a case whose results are wrong, from what its launches saw: lines whose lanes step by no
stride or whose blocks move outside the tensor, and program ids that move nothing; evidence of a
wrong address even where nothing left a tensor.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from checker.diagnosis.addresses.programs import _coverage_finding, _step_finding
from checker.diagnosis.addresses.readings import _found
from checker.diagnosis.model import Diagnosis, Span
from checker.evidence.lanes import Layout, program_steps, Site
from checker.evidence.model import MemoryEvidence, Place


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
