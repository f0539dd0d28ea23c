"""Tiles fed to tl.dot through tensor descriptors: what the descriptor-fed products of p26 and p28
share. triton is imported inside the function (a spec that imports this module loads without it)."""


def blocks_of(t, rows: int, cols: int):
    """A tensor descriptor: t seen as [rows, cols] blocks, which the GPU's copy engine (TMA) loads
    whole, with zeros past t's edges. Its row stride must be a multiple of 16 bytes."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    return TensorDescriptor.from_tensor(t, [rows, cols])
