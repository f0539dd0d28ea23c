"""Addresses before masks: the evidence that tells a wrong address from a missing mask
(checker/diagnosis/addresses.py), on lane offsets built by hand (no interpreter), then through the sanitizer."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported (conftest does it too)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from checker.diagnosis import addresses  # noqa: E402

from checker.interpreter import sanitizer
from checker.diagnosis.addresses import Layout, Site  # noqa: E402
from checker.interpreter.sanitizer import KernelFault  # noqa: E402


def matrix(m: int, n: int, name: str = "z_ptr") -> Layout:
    return Layout(name, (m, n), (n, 1), 4, m * n)


def tile(rows: np.ndarray, cols: np.ndarray, row_step: int) -> np.ndarray:
    return rows[:, None] * row_step + cols[None, :]


def site_of(offsets_by_pid: dict, active: dict | None = None) -> Site:
    first = next(iter(offsets_by_pid.values()))
    site = Site(addresses.lane_steps(first), first.shape)
    for pid, offsets in offsets_by_pid.items():
        site.origins[pid] = int(offsets.flat[0])
        site.active[pid] = (active or {}).get(pid, offsets.size)
    return site


def test_a_row_stride_of_m_instead_of_n_is_an_address_not_a_mask():
    layout = matrix(100, 5)
    lanes = tile(np.arange(8), np.arange(8), row_step=100)        # rows * M
    active = (np.arange(8)[:, None] < 100) & (np.arange(8)[None, :] < 5)
    finding = addresses.out_of_bounds(layout, lanes, active, site_of({(0, 0, 0): lanes}), (0, 0, 0), (13, 1, 1),
                                      {"M": 100, "N": 5}, in_loop=False)
    assert finding.cause == "address"
    assert "100 (= M) elements apart" in finding.text and "i * 5 (= N)" in finding.text


def test_swapped_strides_ask_about_the_strides_before_the_mask():
    """rows[:, None] + cols[None, :] * N: every step is one of the tensor's strides, in the other
    order. A transposed tile can be meant, so the finding asks (address first), never 'add a mask'."""
    layout = matrix(37, 50, "x_ptr")
    rows, cols = np.arange(16), np.arange(32)
    lanes = rows[:, None] + cols[None, :] * 50
    active = (rows[:, None] < 37) & (cols[None, :] < 50)
    finding = addresses.out_of_bounds(layout, lanes, active, site_of({(0, 1, 0): lanes}), (0, 1, 0), (2, 3, 1),
                                      {"M": 37, "N": 50}, in_loop=False)
    assert finding.cause == "" and finding.candidates == ("address", "mask")
    assert "transposed" in finding.text and "rows[:, None] * 50 (= N) + cols[None, :]" in finding.text


@pytest.mark.parametrize(("layout", "block"), [(Layout("a_ptr", (4, 20), (20, 1), 4, 80), (4, 16)),   # row-major
                                               (Layout("a_ptr", (20, 4), (1, 20), 4, 80), (16, 4))])  # column-major
def test_swapped_strides_are_asked_about_where_the_in_order_walk_stays_inside(layout, block):
    """Every lane's mask is true (the block lies within the tensor's rows and columns): in order it
    stays inside the tensor, with the strides swapped it leaves it. Not a missing mask: ask, address first."""
    rows, cols = np.arange(block[0]), np.arange(block[1])
    lanes = rows[:, None] * layout.strides[1] + cols[None, :] * layout.strides[0]
    assert lanes.max() >= layout.span
    finding = addresses.out_of_bounds(layout, lanes, np.ones(block, bool), site_of({(0, 0, 0): lanes}), (0, 0, 0),
                                      (1, 1, 1), {"M": layout.shape[0], "N": layout.shape[1]}, in_loop=False)
    assert finding.cause == "" and finding.candidates == ("address", "mask") and "transposed" in finding.text


def test_swapped_strides_in_one_head_of_a_four_dimensional_tensor_are_asked_about():
    """[B, H, L, D]: a tile of one head walked rows + dims * D is read through the last two
    dimensions, as a matrix's tile is."""
    layout = Layout("q_ptr", (1, 2, 40, 16), (1280, 640, 16, 1), 4, 1280)
    rows, dims = np.arange(16) + 32, np.arange(16)
    lanes = 640 + rows[:, None] + dims[None, :] * 16                 # head 1, query block 2
    active = (rows[:, None] < 40) & (dims[None, :] < 16)
    finding = addresses.out_of_bounds(layout, lanes, active, site_of({(2, 1, 0): lanes}), (2, 1, 0), (3, 2, 1),
                                      {"L": 40, "S": 40}, in_loop=False)
    assert finding.cause == "" and finding.candidates == ("address", "mask") and "transposed" in finding.text
    one_row = Layout("q_ptr", (1, 2, 1, 24), (48, 24, 24, 1), 4, 48)   # L = 1: a head of one query
    rows, dims = np.arange(16), np.arange(32)
    lanes = 24 + rows[:, None] + dims[None, :] * 24
    active = (rows[:, None] < 1) & (dims[None, :] < 24)
    finding = addresses.out_of_bounds(one_row, lanes, active, site_of({(0, 1, 0): lanes}), (0, 1, 0), (1, 2, 1),
                                      {"L": 1, "S": 47}, in_loop=False)
    assert finding.candidates == ("address", "mask") and "transposed" in finding.text


def test_a_stride_in_bytes_is_named():
    layout = Layout("x_ptr", (64,), (1,), 4, 64)
    lanes = np.arange(16) * 4
    finding = addresses.out_of_bounds(layout, lanes, np.ones(16, bool), site_of({(0, 0, 0): lanes}), (0, 0, 0),
                                      (4, 1, 1), {"N": 64, "BLOCK": 16}, in_loop=False)
    assert finding.cause == "address" and "count bytes" in finding.text


def test_rows_at_row_times_block_are_not_a_whole_number_of_rows():
    layout = matrix(4, 20, "x_ptr")
    cols = np.arange(32)
    by_pid = {(p, 0, 0): p * 32 + cols for p in range(3)}          # row * BLOCK_N, BLOCK_N = 32
    active = {pid: 20 for pid in by_pid}                            # cols < N in every row: not a flat walk
    finding = addresses.out_of_bounds(layout, by_pid[(2, 0, 0)], cols < 20, site_of(by_pid, active), (2, 0, 0),
                                      (4, 1, 1), {"N": 20, "BLOCK_N": 32}, in_loop=False)
    assert finding.cause == "address" and "not a whole number of rows" in finding.text and "(= BLOCK_N)" in finding.text


def test_the_last_block_sticking_out_is_a_mask():
    layout = Layout("x_ptr", (100,), (1,), 4, 100)
    by_pid = {(p, 0, 0): p * 32 + np.arange(32) for p in range(4)}
    finding = addresses.out_of_bounds(layout, by_pid[(3, 0, 0)], np.ones(32, bool), site_of(by_pid), (3, 0, 0),
                                      (4, 1, 1), {"N": 100, "BLOCK": 32}, in_loop=False)
    assert finding.cause == "mask" and finding.text == ""


def test_program_ids_on_the_wrong_axes_are_named():
    layout = matrix(10, 13)                                          # grid (cdiv(10, 4), cdiv(13, 8)) = (3, 2)
    rows, cols = np.arange(4), np.arange(8)
    by_pid = {(a, b, 0): tile(b * 4 + rows, a * 8 + cols, 13) for a in range(3) for b in range(2)}
    finding = addresses.audit(layout, site_of(by_pid), (3, 2, 1), {"BLOCK_M": 4, "BLOCK_N": 8, "M": 10, "N": 13})
    assert finding is not None and finding.cause == "address" and "axes swapped" in finding.text


def test_a_block_that_starts_before_the_tensor_asks_between_offset_and_mask():
    layout = Layout("x_ptr", (64,), (1,), 4, 64)
    lanes = np.arange(32) - 1
    finding = addresses.out_of_bounds(layout, lanes, lanes < 64, site_of({(0, 0, 0): lanes}), (0, 0, 0),
                                      (2, 1, 1), {}, in_loop=False)
    assert finding.cause == "" and finding.candidates == ("address", "mask")


def test_a_flat_walk_over_a_matrix_is_right():
    layout = matrix(4, 300, "x_ptr")                                # 1200 elements in blocks of 128
    by_pid = {(p, 0, 0): p * 128 + np.arange(128) for p in range(10)}
    assert addresses.audit(layout, site_of(by_pid), (10, 1, 1), {"BLOCK": 128}) is None


def test_overlapping_blocks_are_named():
    layout = Layout("z_ptr", (64,), (1,), 4, 64)
    by_pid = {(p, 0, 0): p + np.arange(16) for p in range(2)}        # pid + arange: no * BLOCK
    finding = addresses.overlapping_writes(layout, by_pid[(1, 0, 0)], site_of(by_pid), (1, 0, 0), (4, 1, 1),
                                           {"BLOCK": 16})
    assert finding is not None and "overlap" in finding.text and finding.cause == "address"


def test_a_block_wider_than_any_size_the_kernel_was_given_asks_whether_its_width_is_written_in():
    """tl.arange(0, 128) where BLOCK (64) belongs: the programs move by BLOCK, their blocks are 128 wide."""
    layout = Layout("db_ptr", (512,), (1,), 4, 512)
    by_pid = {(p, 0, 0): p * 64 + np.arange(128) for p in range(4)}
    finding = addresses.overlapping_writes(layout, by_pid[(1, 0, 0)], site_of(by_pid), (1, 0, 0), (4, 1, 1),
                                           {"BLOCK": 64, "n_elements": 500})
    assert finding.code == "addr.width_hardcoded" and finding.candidates == ("hardcoded", "address")
    assert "tl.arange(0, 128)" in finding.text


def test_a_move_by_a_given_size_in_a_wider_padded_block_asks_mask_or_address():
    layout = Layout("q_ptr", (3, 3, 8), (24, 8, 1), 4, 72)           # [tokens, heads, D]: 3 heads per token
    rows, cols = np.arange(4), np.arange(8)                          # a block of 4 heads, the 4th unmasked
    by_pid = {(p, 0, 0): tile(rows + 3 * p, cols, 8) for p in range(3)}
    finding = addresses.overlapping_writes(layout, by_pid[(1, 0, 0)], site_of(by_pid), (1, 0, 0), (3, 1, 1),
                                           {"HQ": 3, "BLOCK_H": 4}, {"HQ": 3})
    assert finding.cause == "" and finding.candidates == ("mask", "address") and "(= HQ)" in finding.text
    # the same move by a block size (a constexpr) stays an address
    finding = addresses.overlapping_writes(layout, by_pid[(1, 0, 0)], site_of(by_pid), (1, 0, 0), (3, 1, 1),
                                           {"HQ": 3, "BLOCK_H": 4}, {})
    assert finding.cause == "address"
    # one head per token (HK = 1) in a block of 2
    layout = Layout("k_ptr", (3, 1, 8), (8, 8, 1), 4, 24)
    by_pid = {(p, 0, 0): tile(np.arange(2) + p, cols, 8) for p in range(2)}
    finding = addresses.overlapping_writes(layout, by_pid[(1, 0, 0)], site_of(by_pid), (1, 0, 0), (3, 1, 1),
                                           {"HK": 1, "BLOCK_H": 2}, {"HK": 1})
    assert finding.candidates == ("mask", "address")


def test_lanes_that_fit_another_tensor_ask_about_the_index():
    layout = Layout("hist_ptr", (5,), (1,), 4, 5)
    lanes = np.arange(8)
    active = lanes < 20
    finding = addresses.out_of_bounds(layout, lanes, active, site_of({(0, 0, 0): lanes}), (0, 0, 0), (3, 1, 1),
                                      {}, in_loop=False, others={"x_ptr": 20})
    assert finding.candidates == ("address", "mask") and "`x_ptr`" in finding.text


def test_every_program_doing_the_same_block_is_named():
    sites = {("k", 1, "x_ptr"): site_of({(p, 0, 0): np.arange(8) for p in range(3)}),
             ("k", 2, "z_ptr"): site_of({(p, 0, 0): np.arange(8) for p in range(3)})}
    finding = addresses.unused_program_ids(sites, (3, 1, 1))
    assert finding is not None and "tl.program_id(0)" in finding.text


def test_scalars_every_program_loads_are_no_evidence_of_an_unused_program_id():
    """A count and an upstream gradient that every program loads are shared by design: programs whose
    row loop never ran made no other access, and their outputs say "never written" instead."""
    sites = {("k", 1, "n_valid_ptr"): site_of({(p, 0, 0): np.arange(1) for p in range(3)}),
             ("k", 2, "dloss_ptr"): site_of({(p, 0, 0): np.arange(1) for p in range(3)})}
    assert addresses.unused_program_ids(sites, (3, 1, 1)) is None


@triton.jit
def add_rows_wrong_stride(x_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    tl.store(z_ptr + rows[:, None] * M + cols[None, :], x, mask=mask)  # the bug: M for N


def test_the_sanitizer_reports_the_wrong_stride_with_its_cause():
    x, z = torch.randn(12, 3), torch.zeros(12, 3)
    with sanitizer.sanitized():
        with pytest.raises(KernelFault) as info:
            add_rows_wrong_stride[(3,)](x, z, 12, 3, BLOCK_M=4, BLOCK_N=4)
    fault = info.value
    assert fault.kind == "out_of_bounds" and fault.cause == "address"
    assert "12 (= M) elements apart" in str(fault) and "switch off" not in str(fault)


# -- races on an output that sums shares: atomics, or programs that were never meant to meet --------
@triton.jit
def column_sums_plain(x_ptr, z_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """z[cols] += the column sums of this program's rows, with a plain load, add and store."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    z = tl.load(z_ptr + cols)
    tl.store(z_ptr + cols, z + tl.sum(x, axis=0))


@triton.jit
def tiles_wrong_axis(x_ptr, z_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """z[tile] += x[tile], one tile per program; the bug: the rows from program_id(1), not (0)."""
    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    offsets = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offsets)
    z = tl.load(z_ptr + offsets)
    tl.store(z_ptr + offsets, z + x)


@triton.jit
def tiles_half_step(x_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The same, the bug: programs start BLOCK_M // 2 rows apart, so their tiles overlap."""
    rows = tl.program_id(0) * (BLOCK_M // 2) + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    offsets = rows[:, None] * N + cols[None, :]
    mask = rows[:, None] < M
    x = tl.load(x_ptr + offsets, mask=mask)
    z = tl.load(z_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, z + x, mask=mask)


def _shared_race(kernel, grid, x, z, *args, **blocks) -> KernelFault:
    sanitizer.expect_shared([z])
    try:
        with sanitizer.sanitized():
            with pytest.raises(KernelFault) as info:
                kernel[grid](x, z, *args, **blocks)
    finally:
        sanitizer.expect_shared([])
    assert info.value.kind == "race"
    return info.value


def test_a_race_on_a_shared_output_whose_blocks_coincide_calls_for_atomics():
    fault = _shared_race(column_sums_plain, (2,), torch.randn(8, 4), torch.zeros(4), 4, BLOCK_M=4, BLOCK_N=4)
    assert fault.cause == "atomic" and "tl.atomic_add" in str(fault)


def test_programs_doing_the_same_work_on_a_shared_output_is_an_address():
    # programs (0, 0, 0) and (1, 0, 0) load the same x tile and add it to the same z tile: an atomic
    # would count it twice
    fault = _shared_race(tiles_wrong_axis, (2, 1, 1), torch.randn(8, 4), torch.zeros(8, 4), 4, BLOCK_M=4,
                         BLOCK_N=4)
    assert fault.cause == "address" and "same accesses" in str(fault)


def test_overlapping_tiles_of_a_shared_output_are_an_address():
    fault = _shared_race(tiles_half_step, (2,), torch.randn(8, 4), torch.zeros(8, 4), 8, 4, BLOCK_M=4,
                         BLOCK_N=4)
    # a move of 2 rows, which no size the kernel was given explains: also asks whether it is hard-coded
    assert (fault.cause or fault.candidates[0]) == "address" and "overlap" in str(fault)
    assert "atomic" not in fault.candidates


# -- a scratch buffer read where nothing was written: the NaN that spreads has a source -------------
@triton.jit
def half_partials(x_ptr, part_ptr, N, BLOCK: tl.constexpr):
    """The bug: the partial row's store stops one lane short (offsets < N - 1)."""
    offsets = tl.arange(0, BLOCK)
    tl.store(part_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < N) * 2, mask=offsets < N - 1)


@triton.jit
def sum_partials(part_ptr, z_ptr, N, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(z_ptr, tl.sum(tl.load(part_ptr + offsets, mask=offsets < N, other=0.0), axis=0))


def test_a_scratch_buffer_read_unwritten_is_noted_and_named_in_the_hint():
    import types

    from checker.evidence.compare import compare
    from checker.puzzle import scratch
    from checker.diagnosis.values import Evidence, output_hint
    from checker.puzzle.model import Output, Reference, Tolerance
    x, z = torch.randn(6), torch.zeros(1)
    with sanitizer.sanitized() as seen:
        part = scratch(6, like=x)
        half_partials[(1,)](x, part, 6, BLOCK=8)
        sum_partials[(1,)](part, z, 6, BLOCK=8)
        reads = [(name, place.label) for name, place in seen.poison_reads]
    assert [name for name, _ in reads] == ["part_ptr"] and torch.isnan(z).all()
    ref, tol = {"z": (2 * x.double()).sum().reshape(1)}, Tolerance(atol=1e-5, rtol=1e-5)
    hint = output_hint(types.SimpleNamespace(patterns=[]), Output("z", "z", True), z, Reference(ref, {"z": 1.0}),
                       tol, compare("z", z, ref["z"], 1.0, tol, None),
                       Evidence(sanitized=True, poison_read=dict(reads)))
    assert "`part_ptr`" in hint.text and hint.candidates[:2] == ("address", "mask")


def test_swapped_strides_of_a_one_column_view_are_asked_about():
    """x.T of a [1, 9] row: shape (9, 1), strides (1, 9). Rows walked by 9 and columns by 1 leave it
    after the first row: the strides are swapped, or the tile is meant transposed and its masks are not."""
    layout = Layout("x_ptr", (9, 1), (1, 9), 4, 9)
    rows, cols = np.arange(16), np.arange(4)
    lanes = rows[:, None] * 9 + cols[None, :] * 1
    active = (rows[:, None] < 9) & (cols[None, :] < 1)
    finding = addresses.out_of_bounds(layout, lanes, active, site_of({(0, 0, 0): lanes}), (0, 0, 0), (1, 1, 1),
                                      {"M": 9, "N": 1}, in_loop=False)
    assert finding.cause == "" and finding.candidates == ("address", "mask") and "transposed" in finding.text


def test_an_in_order_walk_whose_masks_fit_the_tensor_transposed_asks_strides_or_masks():
    """w is [N, K] = (12, 16); a tile meant to walk it transposed (ks along axis 0, masked ks < K;
    cols along axis 1, masked cols < N) with its strides swapped walks it in order: its rows run to
    16, the number of columns, and its columns stop at 12, the number of rows."""
    layout = matrix(12, 16, "w_ptr")
    ks, cols = np.arange(16), np.arange(16)
    lanes = ks[:, None] * 16 + cols[None, :]
    finding = addresses.out_of_bounds(layout, lanes, (ks[:, None] < 16) & (cols[None, :] < 12),
                                      site_of({(0, 0, 0): lanes}), (0, 0, 0), (1, 1, 1), {"K": 16, "N": 12},
                                      in_loop=True)
    assert finding.cause == "" and finding.candidates == ("address", "mask") and "transposed" in finding.text
    # one mask with the other's size (rows < 16), the columns masked right: the lanes say no more than
    # that the rows run past 12, and that this [16, 8] block would fit w with its steps exchanged: a
    # mask missing or strides swapped, asked in that order, not named
    finding = addresses.out_of_bounds(layout, lanes[:, :8], (ks[:, None] < 16) & (cols[None, :8] < 16),
                                      site_of({(0, 0, 0): lanes[:, :8]}), (0, 0, 0), (1, 2, 1), {"K": 16, "N": 12},
                                      in_loop=True)
    assert "fit it transposed" not in finding.text and finding.candidates == ("mask", "address")
    # a block that would stick out with its steps exchanged too ([16, 16] on [12, 16]): a mask, named
    finding = addresses.out_of_bounds(layout, lanes, np.ones((16, 16), dtype=bool), site_of({(0, 0, 0): lanes}),
                                      (0, 0, 0), (1, 1, 1), {"K": 16, "N": 12}, in_loop=True)
    assert finding.cause == "mask"


def test_lanes_past_the_rows_with_a_mask_cut_at_the_number_of_rows_ask_strides_or_masks():
    """W is [N, H] = (12, 40). A tile meant as Wᵀ (cols along axis 0, masked cols < H; outs along axis 1,
    masked outs < N) whose strides were swapped walks W in order: axis 0 runs past W's 12 rows, and
    the mask cuts axis 1 (W's columns) at 12, the number of rows. Masks for the transposed matrix:
    the lanes inside W are misplaced too, so it asks about the strides first."""
    layout = matrix(12, 40, "w_ptr")
    cols, outs = np.arange(32), np.arange(16)
    lanes = cols[:, None] * 40 + outs[None, :]
    finding = addresses.out_of_bounds(layout, lanes, (cols[:, None] < 40) & (outs[None, :] < 12),
                                      site_of({(0, 0, 0): lanes}), (0, 0, 0), (1, 1, 1), {"H": 40, "N": 12},
                                      in_loop=True)
    assert finding.cause == "" and finding.candidates == ("address", "mask")
    assert "transposed" in finding.text and "12 (= N)" in finding.text


def test_a_block_that_starts_exactly_one_past_the_end_asks_about_a_guard_first():
    """`if row <= M:` lets row M through: its block starts at the first element past the end. An
    offset off by a row looks the same, so it asks, the guard first."""
    layout = matrix(4, 8, "x_ptr")
    lanes = 32 + np.arange(8)
    finding = addresses.out_of_bounds(layout, lanes, np.ones(8, dtype=bool), site_of({(4, 0, 0): lanes}),
                                      (4, 0, 0), (5, 1, 1), {"M": 4, "H": 8}, in_loop=False)
    assert finding.cause == "" and finding.candidates == ("mask", "address", "loop") and "`<=`" in finding.text


def test_a_block_one_column_late_whose_mask_counts_right_asks_about_the_offset_first():
    """`g_row = g_ptr + row * V + 1` with `mask = cols < V`: the last row's last block (columns 32..39
    of 40, blocks of 16) starts at 33 and its last lane is one past the end. The mask let exactly the 8
    lanes through that columns 32..39 need: the offset is the likelier mistake, so it asks, offset first."""
    layout = matrix(4, 40, "g_ptr")
    cols = 32 + np.arange(16)
    sizes = {"M": 4, "V": 40, "BLOCK_V": 16}
    lanes = 3 * 40 + 1 + cols
    finding = addresses.out_of_bounds(layout, lanes, cols < 40, site_of({(0, 0, 0): lanes}), (0, 0, 0), (1, 1, 1),
                                      sizes, in_loop=True)
    assert finding.cause == "" and finding.candidates == ("address", "mask") and "off by 1" in finding.text
    # the block on its columns, with `<=` in the mask: one lane too many, the mask alone
    lanes = 3 * 40 + cols
    finding = addresses.out_of_bounds(layout, lanes, cols <= 40, site_of({(0, 0, 0): lanes}), (0, 0, 0), (1, 1, 1),
                                      sizes, in_loop=True)
    assert finding.cause == "mask" and "`<=`" in finding.text


def test_a_count_of_one_element_is_singular():
    """'moves it by 1 element', never 'by 1 elements' (issue 35, item 12)."""
    assert addresses._elements(1) == "1 element"
    assert addresses._elements(16, {"N": 16}) == "16 (= N) elements"
    assert addresses._elements(1, {"N": 1}) == "1 (= N) element"


def _finding_text(layout, g, programs):
    """The coverage finding of a 2-D grid (3 programs on axis 0, `programs` on axis 1, moving by g)."""
    origins = {(a, b, 0): a * 16 + b * g for a in range(3) for b in range(programs)}
    found = addresses._coverage_finding(layout, (16, 16), origins, (3, programs, 1), {"S": 40, "D": 16})
    return found.text if found is not None else ""


def test_programs_sharing_a_stack_of_matrices_are_asked_about_only_where_each_move_is_one_matrix():
    # k of grouped-query attention, [B=2, KV=2, S=40, D=16]: 8 programs (B · H query heads) each moving
    # one head of 640 elements, two per head; the grid's axes are not what is wrong
    heads = Layout("k_ptr", (2, 2, 40, 16), (1280, 640, 16, 1), 4, 2560)
    text = _finding_text(heads, 640, 8)
    assert "2 programs per step: do 2 programs share each one" in text and "swapped" not in text
    # a [40, 16] matrix walked 2 rows a program where 1 belongs: the same count of programs per move,
    # but a move is no matrix of a stack, so no sharing is suggested
    rows = Layout("x_ptr", (40, 16), (16, 1), 4, 640)
    assert "share each one" not in _finding_text(rows, 32, 40)
