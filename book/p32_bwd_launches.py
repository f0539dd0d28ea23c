"""Puzzle 32's backward: the launches its designs are timed at (research/attention/bwd_designs.py has the
kernels, bwd_sweep.py times them). A launch is a Walk (tiles, warps, stages, switches) per kernel, or
a Fused; `own` marks a walk run by the reference's own kernel. Here, beside the page, because the page
names every launch the sweep times where no sweep is committed (attention_speed.not_swept); the
research imports them from here. No torch, no Triton: plain data."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Walk:
    """One walk's launch: BLOCK_Q x BLOCK_K tiles, warps, pipeline stages, and the design's switches.
    own: the reference's own kernel (every switch off)."""
    block_q: int
    block_k: int
    warps: int
    stages: int
    slice: int = 1
    split: bool = False
    reverse: bool = False
    own: bool = False

    @property
    def tiles(self) -> str:
        return f"{self.block_q}x{self.block_k} w{self.warps} s{self.stages}"

    @property
    def name(self) -> str:
        switches = [f"slice {self.slice}"] * (self.slice > 1) + ["split"] * self.split + ["reverse"] * self.reverse
        return ("reference kernel " if self.own else "") + self.tiles + "".join(f", {s}" for s in switches)

    def at(self, causal: bool) -> "Walk":
        """The launch as it runs: not causal, slice and reverse change nothing (no diagonal, walks of one
        length), and a design with them is the design without them."""
        if causal:
            return self
        # all switches off, a design's kernel is the reference's: its launch is the reference kernel's
        return Walk(self.block_q, self.block_k, self.warps, self.stages, split=self.split, own=self.own or not self.split)


@dataclass(frozen=True)
class Fused:
    """fused_kernel's launch: dK/dV tiles BLOCK_Q1 x BLOCK_K1, dQ tiles BLOCK_K1 x BLOCK_K2."""
    block_q1: int
    block_k1: int
    block_k2: int
    warps: int
    stages: int
    slice: int = 1
    split: bool = False

    def at(self, causal: bool) -> "Fused":
        return self if causal else Fused(self.block_q1, self.block_k1, self.block_k2, self.warps, self.stages,
                                         split=self.split)

    @property
    def name(self) -> str:
        switches = [f"slice {self.slice}"] * (self.slice > 1) + ["split"] * self.split
        return (f"fused: dK/dV {self.block_q1}x{self.block_k1}, dQ {self.block_k1}x{self.block_k2}, w{self.warps} "
                f"s{self.stages}" + "".join(f", {s}" for s in switches))


# The reference's benchmark launches (checker/specs/p32: FAST_D64 for both walks at D = 64; FAST and
# its DQ_TILES at D = 128) come first; then the launches tried per head dim. Triton's tutorial 06
# launches its fused kernel at dK/dV 32 x 128, dQ 128 x 32, 4 warps, 5 stages (written for D = 64).
DKDV = {64: [Walk(64, 64, 4, 3, own=True), Walk(32, 64, 4, 4, own=True), Walk(32, 128, 4, 5, own=True),
             Walk(64, 128, 8, 3, own=True), Walk(32, 128, 8, 3, own=True)],
        128: [Walk(32, 64, 4, 4, own=True), Walk(32, 64, 4, 3, own=True), Walk(64, 64, 8, 3, own=True),
              Walk(32, 128, 8, 2, own=True), Walk(16, 64, 4, 4, own=True)]}
DQ = {64: [Walk(64, 64, 4, 3, own=True), Walk(128, 32, 4, 5, own=True), Walk(128, 64, 8, 3, own=True),
           Walk(128, 64, 4, 3, own=True), Walk(64, 32, 4, 4, own=True)],
      128: [Walk(128, 64, 8, 3, own=True), Walk(128, 32, 4, 4, own=True), Walk(64, 64, 4, 3, own=True),
            Walk(128, 32, 8, 4, own=True), Walk(64, 32, 4, 3, own=True)]}


def runs(walks: list, causal: bool) -> list:
    """The launches as they run at one causal setting, each once, in order."""
    return list(dict.fromkeys(walk.at(causal) for walk in walks))


def switched(walk: Walk, kind: str) -> list[Walk]:
    """The designs at one launch: slice 2, split, and (dQ) reverse, each alone, then all together."""
    designs = [Walk(walk.block_q, walk.block_k, walk.warps, walk.stages, slice=2),
               Walk(walk.block_q, walk.block_k, walk.warps, walk.stages, split=True)]
    if kind == "dq":
        designs.append(Walk(walk.block_q, walk.block_k, walk.warps, walk.stages, reverse=True))
    designs.append(Walk(walk.block_q, walk.block_k, walk.warps, walk.stages, slice=2, split=True,
                        reverse=kind == "dq"))
    return designs


# the designs' switches at the reference's launch, and at D = 64 at the tutorial's launch as well
DKDV_DESIGNS = {64: switched(DKDV[64][0], "dkdv") + switched(DKDV[64][2], "dkdv"), 128: switched(DKDV[128][0], "dkdv")}
DQ_DESIGNS = {64: switched(DQ[64][0], "dq") + switched(DQ[64][1], "dq"), 128: switched(DQ[128][0], "dq")}
FUSED = {64: [Fused(32, 128, 32, 4, 5, slice=2, split=True), Fused(64, 64, 64, 4, 3)],
         128: [Fused(32, 64, 64, 4, 3), Fused(32, 64, 32, 4, 3, slice=2, split=True)]}
