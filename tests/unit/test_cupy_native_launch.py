"""The native kernels' launch code without CuPy or a GPU (issue 18): imported against the
stand-in for CuPy (tests/gpu_sources/fake_cupy.py), every kernel function of
starvm/native/<routine>/cuda.py compiles its module with NVRTC, takes kernels that exist, and
launches each with arguments whose count and widths match the kernel's parameters, on
tables of several shapes (one row, lengths not a multiple of 64, more than 64 columns)."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_sources import fake_cupy
from gpu_sources.fake_cupy import LAUNCHES, fake_cupy_installed
from gpu_sources.native_kernels import CUDA_MODULES, Kernels

# a shared module before the modules that import it (fake_cupy_installed imports them in this order)
NATIVE = ["starvm.native.warshall_adapt.cuda", "starvm.native.hit.cuda", "starvm.native.setmin.cuda",
          "starvm.native.shared.cuda_search", "starvm.native.match.cuda", "starvm.native.min.cuda", *CUDA_MODULES]


class FakeTable:
    def __init__(self, n: int, k: int):
        self.n, self.k = n, k
        self.data = fake_cupy._dev(np.zeros((k, (n + 63) // 64), dtype=np.uint64))


def vec(n: int):
    return fake_cupy._dev(np.zeros((n + 63) // 64, dtype=np.uint64))


@pytest.fixture
def native(monkeypatch):
    with fake_cupy_installed(monkeypatch, *NATIVE) as (cp, warshall, hit, setmin, _, match, extreme, *rows):
        yield {"warshall": warshall, "hit": hit, "setmin": setmin, "match": match, "extreme": extreme,
               "rows": Kernels(rows)}


def launched() -> list[str]:
    names = [lc.kernel for lc in LAUNCHES]
    LAUNCHES.clear()
    return names


@pytest.mark.parametrize("n", [1, 63, 64, 65, 200])
def test_warshall_launches_per_block_of_64_pivots(native, n):
    native["warshall"].closure_in_place(FakeTable(n, n))
    names = launched()
    blocks = (n + 63) // 64
    assert names.count("pivots_close") == blocks and names.count("rows_update") == blocks


@pytest.mark.parametrize("n, k", [(1, 1), (65, 3), (200, 70)])
def test_hit_and_setmin_launch_one_kernel(native, n, k):
    for routine, name in (("hit", "hit_rows"), ("setmin", "less_rows")):
        getattr(native[routine], name)(FakeTable(n, k), FakeTable(n, k), vec(n))
        assert launched() == [name]


@pytest.mark.parametrize("k", [1, 7, 32, 64])
@pytest.mark.parametrize("n", [1, 65, 5000])
def test_match_min_max_launch_their_templates(native, n, k):
    T, X = FakeTable(n, k), vec(n)
    native["match"].match(T, X, vec(k), k)
    assert launched() == [f"match_rows<{k}, 8, 1, 256>"]
    for want_max in (False, True):
        native["extreme"].extreme(T, X, want_max)
        assert launched() == [f"extreme_local<{k}, 8, {'true' if want_max else 'false'}, 1, 256>", "extreme_fix"]


@pytest.mark.parametrize("n, k", [(1, 1), (65, 7), (300, 70)])
def test_row_moves_launch_matching_arguments(native, n, k):
    rc = native["rows"]
    idx_bits = max(1, n.bit_length())
    rc.iota(FakeTable(n, k))
    assert launched() == ["rows_iota"]
    rc.gather(FakeTable(n, k), FakeTable(n, idx_bits), vec(n), FakeTable(n, k))
    # the stand-in runs no kernel: rows_check's counter says 0 marked rows, so T's rows are
    # read as numbers only when T has at most 64 rows
    check = "rows_check_sliced" if rc.CHECK_SLICED else "rows_check"
    word = "_word" if rc.GATHER_WORDS else ""
    assert launched() == [check] + (["rows_gather"] if k > 64 or n > 64 else
                                    ["rows_values32", "rows_gather_values32" + word] if k <= rc.GATHER_NARROW_COLS
                                    else ["rows_values", "rows_gather_values" + word])
    rc.scatter(FakeTable(n, k), FakeTable(n, idx_bits), vec(n), FakeTable(n, k))
    assert launched() == [check, "rows_scatter_win_warp", "rows_scatter_write_warp"]
    kk = k if k <= 64 else 64
    rc.groupmin(FakeTable(n, min(idx_bits, 10)), FakeTable(n, kk), vec(n))
    # K and the row number in one 64-bit number: one atomic pass and the marks; else three
    packed = rc.packed_row_bits(n, kk) > 0
    assert launched() == (["rows_groupmin_packed", "rows_groupmin_mark_packed"] if packed else
                          ["rows_groupmin_key", "rows_groupmin_row", "rows_groupmin_mark"])


# GROUPMIN's sorted path for wide groups launches kernels of its own (rows_list, rows_values,
# rows_group_first): tests/unit/test_native_rows_launch.py runs it with a NumPy model of each.
