"""Puzzle 17: Histogram. Data-dependent output addresses: many hits per bin need tl.atomic_add."""
from checker.puzzle import case, custom, out, part, puzzle, variant


def data(B, hot=None, share=0.0, step=1):
    """[N] bins in [0, B), every step-th bin; the bin `hot` takes a `share` of the data."""
    def draw(gen, dims, sizes):
        import torch
        x = step * torch.randint(0, -(-B // step), dims, generator=gen)
        return x if hot is None else torch.where(torch.rand(dims, generator=gen) < share, hot, x)
    return {"x": custom("N", draw, dtype="int32", note=f"bins in [0, {B})")}


def histogram(x, B, pad=0):  # pad: padded lanes of the last block counted in bin 0 (a known bug)
    import torch
    return {"hist": torch.bincount(x, minlength=B).index_add(0, torch.zeros(1, dtype=torch.long),
                                                              torch.full((1,), pad))}


PUZZLE = puzzle(
    17, "histogram", "Histogram",
    skill="data-dependent output addresses: many programs add into one bin, so tl.atomic_add",
    chapter="Atomics and parameter gradients",
    inputs=data(5), reference=lambda x, B: histogram(x, B),
    parts=[part("forward", "Histogram", ["histogram_kernel"],
                outputs=[out("hist", accumulated=True, dtype="int32", share_unit="element",  # x[i] gets +1
                             shares=lambda x, N: (x, x.new_ones(N)))],
                launch=lambda k, x, hist, N, BLOCK: k.histogram_kernel[(-(-N // BLOCK),)](x, hist, N, BLOCK=BLOCK))],
    params={"BLOCK": 8},
    variants=[variant("padded_lanes_counted", "mask", "bin 0 holds exactly one extra hit per padded lane of the last block: "
                      "masked-off lanes were counted. Pass mask= to tl.atomic_add as well as to tl.load.",
                      lambda x, B, N, BLOCK: histogram(x, B, -N % BLOCK)),
              variant("offset_as_bin", "address", "hist[i] counts element i itself: an element's bin is its value x[i] "
                      "(the loaded data), not its offset i.",
                      lambda x, B, N: {"hist": (x.new_ones(B).cumsum(0) <= N).long()})],  # 1 in bins 0 .. N-1
    cases=[case(N=20, B=5, documented=True, inputs=data(5)),
           case("N=1, B=3: a single element", N=1, B=3, inputs=data(3)),
           case("N=16, B=3, BLOCK=16: one block, lanes that share a bin", N=16, B=3, BLOCK=16, inputs=data(3)),
           case("N=12, B=5, BLOCK=16: one partly filled block", N=12, B=5, BLOCK=16, inputs=data(5)),
           case("N=1000, B=16, BLOCK=128: a ragged last block", N=1000, B=16, BLOCK=128, inputs=data(16)),
           case("N=1024, B=32, BLOCK=256: four full blocks", N=1024, B=32, BLOCK=256, inputs=data(32)),
           case("N=777, B=100, BLOCK=64", N=777, B=100, BLOCK=64, inputs=data(100)),
           case("skewed: bin 3 takes 90% of the data (B=10)", N=500, B=10, BLOCK=64, inputs=data(10, 3, 0.9)),
           case("every element in bin 2 (B=4)", N=300, B=4, BLOCK=32, inputs=data(4, 2, 1.0)),
           case("odd bins never hit (B=20)", N=200, B=20, BLOCK=32, inputs=data(20, step=2)),
           case("N=40, B=64: most bins empty", N=40, B=64, BLOCK=16, inputs=data(64)),
           # GPU only; the checker spreads the shares out densely ([N, B] in float64): keep N * B modest
           case("skewed: bin 0 takes 95% of 2**18 elements (B=64)", N=1 << 18, B=64, BLOCK=1024, gpu_only=True,
                inputs=data(64, 0, 0.95)),
           case("N=100003, B=100", N=100_003, B=100, BLOCK=512, gpu_only=True, inputs=data(100))],
)
