"""Which program touched which element: the memory map's data, folded from the accesses the
interpreter recorded while the kernels ran (checker/interpreter/trace.py), never from a second run.

A launch's trace is its accesses as they came (program, kind, every lane's address and mask);
`fold` replays them into per-element arrays of one tensor argument (who wrote it first and last,
how many programs wrote or read it, whether two programs met there without atomics, the masked-off
lanes that pointed there, the lanes that left it). `memory_map` lays those arrays out as the
report draws them: each tensor as panels of rows of cells, one cell an element (or, for a large
tensor, a tile of elements: said in `tile`), with the lanes that left the tensor drawn past its
edge where they pointed. The result is plain JSON (the worker sends it; checker/report/map_figure.py
draws it). Pure NumPy, no Triton, no sentences.

Cell states. Inside the tensor: "w" one program wrote it (read it, for an input no kernel writes),
"s" several programs, all with atomics or under a lock (read it, for an input), "r" a race: two
programs met there and one of them stored without an atomic, "n" no program touched it, "m" no
program touched it but a masked-off lane pointed there. Past its edge: "O" an active lane pointed
there (an out-of-bounds access: the checks stopped it), "M" a masked-off lane pointed there, "."
nothing (a cell that only fills the row).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

LOAD, STORE, ATOMIC = "load", "store", "atomic"   # the kinds of access (as checker/interpreter/memory.py)
MAX_SIDE = 64        # cells a side of a panel; a larger tensor is drawn in tiles of several elements
MAX_PANELS = 4       # panels of a stacked tensor (batches, heads) drawn; the rest counted
PAST_ROWS = 4        # rows drawn past a 2-D tensor's edge (the lanes further out are counted)
KEPT_OUTSIDE = 4096  # lanes outside a tensor argument kept per launch
_RANK = {"r": 6, "O": 5, "n": 4, "m": 3, "M": 2, "s": 1, "w": 0, ".": -1}   # what a tile shows first


@dataclass(frozen=True)
class TensorArg:
    """One tensor argument of a launch: its parameter, the caller's address of its first byte, the
    bytes [arena, end) it had in the checks' arena, and its zone there (the checks' buffer)."""
    name: str
    address: int
    arena: int
    end: int
    itemsize: int
    shape: tuple
    strides: tuple
    zone: int


@dataclass
class LaunchTrace:
    """One launch's accesses, as they came: (linear program id, kind, lanes' addresses, mask or None,
    guarded: under a lock). complete: False when the recording stopped keeping them (too many)."""
    kernel: str
    grid: tuple
    args: list[TensorArg]
    zone_los: list[int]
    accesses: list[tuple] = field(default_factory=list)
    complete: bool = True

    def program(self, linear: int) -> tuple[int, int, int]:
        _, ny, nz = self.grid
        return (linear // (ny * nz), linear // nz % ny, linear % nz)


class Touches:
    """One tensor argument of one launch, element by element of its span (-1: no program)."""

    def __init__(self, span: int) -> None:
        none = lambda: np.full(span, -1, dtype=np.int32)  # noqa: E731
        self.first_writer, self.last_writer, self.first_reader, self.first_toucher, self.masked = (
            none(), none(), none(), none(), none())
        self.last_reader = none()
        self.writers = np.zeros(span, dtype=np.int32)   # distinct programs that wrote (programs run one by one)
        self.readers = np.zeros(span, dtype=np.int32)
        self.plain = np.zeros(span, dtype=bool)         # some program stored here without an atomic
        # a race: the program that came (met_by) and the one it met there (met_with), the first seen
        self.met_by, self.met_with = none(), none()
        self.outside: list[tuple[np.ndarray, int, str]] = []   # (offsets, program, "O" or "M")
        self.n_outside = 0

    def note_outside(self, offsets: np.ndarray, pid: int, state: str) -> None:
        if offsets.size and self.n_outside < KEPT_OUTSIDE:
            offsets = np.unique(offsets)[:KEPT_OUTSIDE - self.n_outside]
            self.outside.append((offsets, pid, state))
            self.n_outside += offsets.size

    @property
    def race(self) -> np.ndarray:
        return self.met_by >= 0

    def _met(self, idx: np.ndarray, met: np.ndarray, pid: int, other: np.ndarray) -> None:
        first = met & (self.met_by[idx] < 0)
        self.met_by[idx[first]] = pid
        self.met_with[idx[first]] = other[first]

    def read(self, idx: np.ndarray, pid: int) -> None:
        writer = self.last_writer[idx]
        self._met(idx, self.plain[idx] & (writer >= 0) & (writer != pid), pid, writer)
        self.readers[idx] += self.last_reader[idx] != pid
        self.first_reader[idx] = np.where(self.first_reader[idx] < 0, pid, self.first_reader[idx])
        self.last_reader[idx] = pid

    def write(self, idx: np.ndarray, pid: int, guarded: bool) -> None:
        """A store (guarded False) or an atomic / a store under a lock (True). As the race check has
        it: a plain store meets any other program's earlier access; a guarded one, a plain store."""
        if guarded:
            other = self.last_writer[idx]
            met = self.plain[idx] & (other >= 0) & (other != pid)
        else:
            other = self.first_toucher[idx]
            met = (other >= 0) & (other != pid)
            self.plain[idx] = True
        self._met(idx, met, pid, other)
        self.writers[idx] += self.last_writer[idx] != pid
        self.first_writer[idx] = np.where(self.first_writer[idx] < 0, pid, self.first_writer[idx])
        self.last_writer[idx] = pid


def fold(launch: LaunchTrace) -> list[Touches]:
    """Replay a launch's accesses into one Touches per tensor argument (in launch.args' order)."""
    touches = [Touches(max(0, (a.end - a.arena) // a.itemsize)) for a in launch.args]
    by_zone: dict[int, list[int]] = {}
    for i, a in enumerate(launch.args):
        by_zone.setdefault(a.zone, []).append(i)
    zone_los = np.asarray(launch.zone_los, dtype=np.int64)
    for pid, kind, addrs, mask, guarded in launch.accesses:
        lanes = np.asarray(addrs).astype(np.int64).ravel()
        on = (np.ones(lanes.shape, dtype=bool) if mask is None
              else np.broadcast_to(np.asarray(mask, dtype=bool), np.shape(addrs)).ravel())
        zones = np.maximum(np.searchsorted(zone_los, lanes, side="right") - 1, 0)
        for zone in np.unique(zones):
            here = zones == zone
            members = by_zone.get(int(zone), [])
            if not members:
                continue
            first = int(lanes[here & on][0]) if (here & on).any() else int(lanes[here][0])
            i = next((j for j in members if launch.args[j].arena <= first < launch.args[j].end), members[0])
            arg, t = launch.args[i], touches[i]
            offsets = (lanes[here] - arg.arena) // arg.itemsize
            active = on[here]
            inside = (offsets >= 0) & (offsets < t.writers.size)
            idx = offsets[active & inside]
            if idx.size:
                if kind == LOAD:
                    t.read(idx, pid)
                else:
                    t.write(idx, pid, guarded or kind == ATOMIC)
                t.first_toucher[idx] = np.where(t.first_toucher[idx] < 0, pid, t.first_toucher[idx])
            t.masked[offsets[~active & inside]] = pid
            t.note_outside(offsets[active & ~inside], pid, "O")
            t.note_outside(offsets[~active & ~inside], pid, "M")
    return touches


@dataclass(frozen=True)
class Tensor:
    """A tensor the puzzle names, as the caller allocated it (address of its first element)."""
    name: str
    role: str            # "output" or "input"
    address: int
    shape: tuple
    strides: tuple
    itemsize: int

    @property
    def extent(self) -> int:
        """Elements of storage from its first element to its last (its span)."""
        if not self.shape or 0 in self.shape:
            return int(not self.shape)
        return 1 + sum((n - 1) * abs(s) for n, s in zip(self.shape, self.strides))


def memory_map(launches: list[LaunchTrace], tensors: list[Tensor], stopped: Optional[dict] = None) -> dict:
    """The map of every tensor some launch touched, as JSON: {"tensors": [...], "stopped": ...,
    "complete": ...}. stopped: the fault that ended the last launch (kind, program, tensor), if one did."""
    folded = [(launch, fold(launch)) for launch in launches]
    drawn = []
    for tensor in tensors:
        found = _touching(folded, tensor)
        if found is not None:
            drawn.append(_tensor_map(tensor, *found))
    return {"tensors": drawn, "stopped": stopped, "complete": all(launch.complete for launch in launches)}


def _touching(folded: list, tensor: Tensor) -> Optional[tuple]:
    """(launch, argument, its touches) of the launch that wrote the tensor last, else of the first
    that read it (or sent a lane past it), else of the first that had it as an argument; None if
    no launch had it."""
    lo, hi = tensor.address, tensor.address + tensor.extent * tensor.itemsize
    written = read = passed = None
    for launch, touches in folded:
        for arg, t in zip(launch.args, touches):
            arg_hi = arg.address + (arg.end - arg.arena)
            if arg.itemsize != tensor.itemsize or not (arg.address < hi and lo < arg_hi) \
                    or (tensor.address - arg.address) % arg.itemsize:
                continue
            if t.writers.any():
                written = (launch, arg, t)
            elif read is None and (t.readers.any() or t.outside):
                read = (launch, arg, t)
            elif passed is None:
                passed = (launch, arg, t)
    return written or read or passed


def _tensor_map(tensor: Tensor, launch: LaunchTrace, arg: TensorArg, t: Touches) -> dict:
    delta = (tensor.address - arg.address) // tensor.itemsize   # the tensor's element 0 in the argument
    shape = tuple(tensor.shape) or (1,)
    strides = tuple(tensor.strides) or (1,)
    offsets = sum(np.arange(n, dtype=np.int64).reshape([-1 if d == k else 1 for k in range(len(shape))]) * s
                  for d, (n, s) in enumerate(zip(shape, strides)))
    offsets = np.broadcast_to(offsets, shape) + delta
    writes = bool(t.writers[offsets].any()) or tensor.role == "output"
    count = (t.writers if writes else t.readers)[offsets]
    who = (t.first_writer if writes else t.first_reader)[offsets]
    masked = t.masked[offsets]
    if len(shape) > 1:   # a masked lane past a row's end points into the next row: drawn nowhere inside
        masked = np.full(shape, -1, dtype=np.int32)
    race = t.race[offsets] if writes else np.zeros(shape, dtype=bool)
    state = np.where(race, "r", np.where(count >= 2, "s", np.where(count == 1, "w", np.where(masked >= 0, "m", "n"))))
    # a race's cell: the program met there, and (met) the one that came and met it
    program = np.where(race, t.met_with[offsets], np.where(count > 0, who, masked))
    values = {"program": program, "count": count, "met": np.where(race, t.met_by[offsets], -1)}
    out, unplaced = _outside(t, delta, tensor, shape, strides)
    entry = {"tensor": tensor.name, "role": tensor.role, "param": arg.name, "kernel": launch.kernel,
             "grid": list(launch.grid), "shape": list(tensor.shape), "what": "written" if writes else "read",
             "counts": {"elements": int(count.size), "never": int((count == 0).sum()),
                        "masked_only": int(((count == 0) & (masked >= 0)).sum()), "several": int((count >= 2).sum()),
                        "race": int(race.sum()),
                        "out_of_bounds": int(sum(o.size for o, _, s in t.outside if s == "O")),
                        "masked_past_the_edge": int(sum(o.size for o, _, s in t.outside if s == "M"))}}
    entry.update(_layout(state, values, out, shape))
    entry["far_outside"] += unplaced
    return entry


def _outside(t: Touches, delta: int, tensor: Tensor, shape: tuple, strides: tuple) -> tuple[list, int]:
    """The lanes that left the tensor, as (position, program, state): a position in the order of
    its elements, before 0 or from its size on (a 1-D tensor's offset / stride; a row-major one's
    flat index); and how many lanes its layout gives no such place (counted, not drawn)."""
    size = math.prod(shape)
    contiguous = all(s == math.prod(shape[d + 1:]) for d, s in enumerate(strides))
    step = strides[0] if len(shape) == 1 else 1
    found, unplaced = [], 0
    for offsets, pid, state in t.outside:
        rel = offsets - delta
        if not contiguous and len(shape) > 1 or step < 1:
            unplaced += rel.size
            continue
        if step > 1:   # a strided vector: its elements step apart, and so are the lanes past it
            rel = rel // step
        found += [(p, pid, state) for p in rel.tolist() if p < 0 or p >= size]
    return found, unplaced


FILL = {"program": -1, "count": 0, "met": -1}   # a cell's values where nothing is


def _blank(shape: tuple) -> tuple[np.ndarray, dict]:
    return np.full(shape, ".", dtype="<U1"), {k: np.full(shape, v, dtype=np.int64) for k, v in FILL.items()}


def _layout(state: np.ndarray, values: dict, out: list, shape: tuple) -> dict:
    """The cells as drawn: panels of rows (a 1-D tensor wrapped into rows), lanes past the edge in
    cells beyond it, large panels in tiles. JSON: panels of {"label", "rows" (state strings),
    "program", "count", "met"}, and the geometry the figure labels its axes with."""
    if len(shape) == 1:
        return _layout_1d(state, values, out)
    rows, cols = shape[-2], shape[-1]
    stacks = math.prod(shape[:-2])
    total = stacks * rows * cols
    state = state.reshape(stacks, rows, cols)
    values = {k: v.reshape(stacks, rows, cols) for k, v in values.items()}
    shown = min(stacks, MAX_PANELS)
    # each lane outside: (panel, row, column); before the first element, rows above panel 0; past
    # the last, rows below the last panel (where that panel is drawn)
    placed = [(0, p // cols, p % cols, pid, st) if p < 0 else
              (stacks - 1, rows + (p - total) // cols, (p - total) % cols, pid, st) for p, pid, st in out]
    row0 = max(-PAST_ROWS, min((r for k, r, _, _, _ in placed if r < 0), default=0))
    past = min(PAST_ROWS, max((r - rows + 1 for k, r, _, _, _ in placed if r >= rows), default=0))
    if shown < stacks:
        past = 0
    far = sum(1 for k, r, _, _, _ in placed if r < row0 or r >= rows + past or k >= shown)
    panels = []
    for k in range(shown):
        top = row0 if k == 0 else 0
        bottom = rows + (past if k == shown - 1 else 0)
        s, v = _blank((bottom - top, cols))
        s[-top:rows - top] = state[k]
        for name in v:
            v[name][-top:rows - top] = values[name][k]
        for panel, r, col, pid, st in placed:
            if panel == k and top <= r < bottom and _RANK[st] > _RANK[s[r - top, col]]:
                s[r - top, col], v["program"][r - top, col] = st, pid
        label = "" if stacks == 1 else "[" + ", ".join(str(int(i)) for i in np.unravel_index(k, shape[:-2])) + "]"
        panels.append(_panel(label, s, v, top))
    return {"panels": panels, "more_panels": stacks - shown, "far_outside": far, "wrap": 0,
            "tile": panels[0]["tile"] if panels else [1, 1]}


def _layout_1d(state: np.ndarray, values: dict, out: list) -> dict:
    n = state.size
    before = [p for p, _, _ in out if p < 0]
    after = [p for p, _, _ in out if p >= n]
    lo = max(min(before, default=0), -max(8, n // 4))
    hi = min(max(after, default=n - 1) + 1, n + max(8, n // 4))
    far = sum(1 for p in before if p < lo) + sum(1 for p in after if p >= hi)
    total = hi - lo
    s, v = _blank((total,))
    s[-lo:n - lo] = state
    for name in v:
        v[name][-lo:n - lo] = values[name]
    for p, pid, st in out:
        if lo <= p < hi and _RANK[st] > _RANK[s[p - lo]]:
            s[p - lo], v["program"][p - lo] = st, pid
    wrap = total if total <= MAX_SIDE else (32 if total <= 32 * MAX_SIDE else MAX_SIDE)
    tile = max(1, math.ceil(total / (wrap * MAX_SIDE)))
    per_row = wrap * tile
    rows = math.ceil(total / per_row)
    pad = rows * per_row - total
    s = np.concatenate([s, np.full(pad, ".", dtype=s.dtype)]).reshape(rows, per_row)
    v = {k: np.concatenate([a, np.full(pad, FILL[k], dtype=a.dtype)]).reshape(rows, per_row) for k, a in v.items()}
    panel = _panel("", s, v, 0, (1, tile))
    return {"panels": [panel], "more_panels": 0, "far_outside": far, "wrap": per_row, "start": lo,
            "tile": panel["tile"]}


def _panel(label: str, s: np.ndarray, v: dict, row0: int, tile: Optional[tuple] = None) -> dict:
    """One panel's cells; tiled (each cell the tile's most telling element) where it is larger than
    MAX_SIDE a side. "met" only where some cell is a race."""
    rows, cols = s.shape
    tr, tc = tile or (math.ceil(rows / MAX_SIDE), math.ceil(cols / MAX_SIDE))
    if (tr, tc) != (1, 1):
        pr, pc = -rows % tr, -cols % tc
        s = np.pad(s, ((0, pr), (0, pc)), constant_values=".")
        v = {k: np.pad(a, ((0, pr), (0, pc)), constant_values=FILL[k]) for k, a in v.items()}
        R, C = s.shape[0] // tr, s.shape[1] // tc
        blocks = lambda a: a.reshape(R, tr, C, tc).transpose(0, 2, 1, 3).reshape(R, C, tr * tc)  # noqa: E731
        pick = blocks(np.vectorize(_RANK.get)(s)).argmax(axis=2)[..., None]
        s = np.take_along_axis(blocks(s), pick, 2)[..., 0]
        v = {k: (blocks(a).max(axis=2) if k == "count" else np.take_along_axis(blocks(a), pick, 2)[..., 0])
             for k, a in v.items()}
    found = {"label": label, "rows": ["".join(r) for r in s.tolist()], "program": v["program"].tolist(),
             "count": v["count"].tolist(), "row0": row0, "tile": [int(tr), int(tc)]}
    if (v["met"] >= 0).any():
        found["met"] = v["met"].tolist()
    return found


def cells(panel: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A panel's (states, programs, counts) as arrays (the JSON's rows are strings)."""
    states = np.array([list(r) for r in panel["rows"]], dtype="<U1").reshape(len(panel["rows"]), -1)
    return states, np.asarray(panel["program"], dtype=np.int64), np.asarray(panel["count"], dtype=np.int64)


def as_json(value: Any) -> Any:
    """NumPy scalars and tuples made plain for json.dumps."""
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
