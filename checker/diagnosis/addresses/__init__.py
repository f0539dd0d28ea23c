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

Split by the question asked: out_of_bounds.py (why an access left its tensor: one ordered decision,
the first finding the lanes prove wins), meeting.py (why two programs reached one element),
wrong_results.py (what the addresses show after a wrong result); the findings both of the first
two try are in programs.py, the readings and words all share in readings.py.
"""
from __future__ import annotations

from checker.diagnosis.addresses.meeting import overlapping_writes, shared_overlap
from checker.diagnosis.addresses.out_of_bounds import out_of_bounds
from checker.diagnosis.addresses.programs import _coverage_finding
from checker.diagnosis.addresses.readings import _elements, name_of, size_name
from checker.diagnosis.addresses.wrong_results import at, audit, seen_in_addresses, unused_program_ids
from checker.evidence.lanes import Layout, Site, lane_steps

__all__ = ["Layout", "Site", "_coverage_finding", "_elements", "at", "audit", "lane_steps", "name_of",
           "out_of_bounds", "overlapping_writes", "seen_in_addresses", "shared_overlap", "size_name",
           "unused_program_ids"]
