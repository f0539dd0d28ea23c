"""Code that several puzzles' specs share, one family of puzzles per module: the LayerNorm puzzles
(p21-p26), the cross-entropy puzzles (p27, p28), the descriptor-fed products (p26, p28). A spec
imports `checker.puzzle` and its family; no spec imports another spec. These modules define no
PUZZLE, so the registry passes over them; like the specs, they import torch only inside functions.
"""
