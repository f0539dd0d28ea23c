"""The reasons several puzzles' EQUIVALENT lists share, once each.

`python -m checker.mutate` reports every surviving mutant that tests/bugs/pNN.py's EQUIVALENT does
not list as a failure, and every listed one that is caught (or no longer exists) too: the lists stay
true as the solutions change. Ids are those the tool prints (operator:function:site:occurrence); a
reason says why the mutant computes what the solution computes, for every input the puzzle allows.

Most are a load's other= changed where the padded lanes cannot matter: the reasons below say why.
"""

# the padded lanes (masked off in the load) flow only into stores and atomics with the same mask
MASKED_OUT = "its padded lanes reach only masked stores and atomics: what they hold is never written"
# the padded lanes are multiplied by a factor that is 0 on exactly those lanes before any sum
# (the other operand's padded 0, or a tl.where that zeroes them), or end in rows or columns no
# masked store writes (a matrix product's padded rows, a partial sum's padded columns)
ZERO_PARTNER = ("its padded lanes are multiplied by another operand's padded 0 before any sum, or reach only "
                "rows or columns that no masked store writes")
# a tl.where(mask, ..., 0.0) replaces the padded lanes before anything uses them
WHERE_ZEROES = "a tl.where(mask, ..., 0.0) replaces its padded lanes before anything uses them"

# a bf16 value meets an fp32 operand in its first operation, and Triton promotes it to fp32 there:
# the cast only makes explicit what the promotion does (bf16 -> fp32 is exact)
PROMOTED = ("the bf16 value's first operation is with an fp32 operand, which promotes it to fp32 exactly as "
            "the cast does")
RESCALE_DROPPED = ("dropping the rescale of a running value (an online softmax's sum or output) leaves it not "
                   "carried from block to block: the class its hint names, accumulate")
