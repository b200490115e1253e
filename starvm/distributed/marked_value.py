"""The value a marked row of a table holds, read from the device in one 16-byte copy: what a
distributed MIN or MAX (search.py) sends to the other ranks.

After MIN's (MAX's) kernel every row that Z marks holds the same value, the extreme of the
rank's rows, so the value of *any* marked row is the answer; no first row is needed. On a
CuPy rank one element-wise pass over Z's words does it: the first thread to find a word
with a 1 claims the result (atomicCAS on ``res[0]``) and gathers that row's k <= 64 bits
into ``res[1]``; one 16-byte copy brings (found, value) to pinned host memory, and its wait
on the stream is the call's only synchronisation (FND, ROW and to_bools took three
launches and two waits, each a point where ranks sharing a GPU wait for each other's
kernels). The emulated device runs the NumPy model below (its first marked row).
"""
from __future__ import annotations

import threading

import numpy as np

# The element-wise body (CuPy's ElementwiseKernel; also compiled by NVRTC in
# tests/distributed/test_marked_value.py): z is word i of Z, tab the ncols x nwords table
# words (row-major: column c's word i at c * nwords + i), res = (found, value); column 1 is
# the most significant bit of the value, as ROW(i, T) read as an integer.
BODY = r"""
if (z != 0ULL && res[0] == 0ULL && atomicCAS(&res[0], 0ULL, 1ULL) == 0ULL) {
    const int b = __ffsll((long long)z) - 1;
    unsigned long long v = 0ULL;
    for (int c = 0; c < ncols; ++c)
        v = (v << 1) | ((tab[(long long)c * nwords + i] >> b) & 1ULL);
    res[1] = v;
}
"""

# (device, stream, thread) -> (kernel, device result, pinned host result): ranks that are
# threads of one process (tests) share a stream, and each needs its own result buffers
_cupy_state: dict = {}


def model(table_words, z) -> tuple[int, int]:
    """(1, the value of Z's first marked row) or (0, 0): the NumPy model (the emulated device).
    ``table_words``: the k x W words of the rank's rows; ``z``: Z's W words."""
    z = np.asarray(z, dtype=np.uint64)
    hit = np.flatnonzero(z)
    if not hit.size:
        return 0, 0
    w = int(hit[0])
    word = int(z[w])
    b = (word & -word).bit_length() - 1
    value = 0
    for col in np.asarray(table_words, dtype=np.uint64)[:, w]:
        value = (value << 1) | ((int(col) >> b) & 1)
    return 1, value


def _cupy_parts():
    import cupy as cp
    key = (cp.cuda.runtime.getDevice(), cp.cuda.get_current_stream().ptr, threading.get_ident())
    parts = _cupy_state.get(key)
    if parts is None:
        kernel = cp.ElementwiseKernel("uint64 z, raw uint64 tab, int64 nwords, int32 ncols", "raw uint64 res",
                                      BODY, "star_marked_value")
        host = np.ndarray((2,), dtype=np.uint64, buffer=cp.cuda.alloc_pinned_memory(16))
        parts = _cupy_state[key] = (kernel, cp.empty(2, dtype=cp.uint64), host)
    return parts


def launch_on_cupy(table_words, z, k: int):
    """Queue the read of a CuPy rank (one memset, one element-wise pass, one 16-byte copy to
    pinned memory) and return finish(), which waits for the stream and gives (found, value).
    ``table_words``: k x W (C order), ``z``: W."""
    import cupy as cp
    kernel, res, host = _cupy_parts()
    stream = cp.cuda.get_current_stream()
    res.fill(0)                          # a memset of 16 bytes on the stream
    kernel(z, cp.ascontiguousarray(table_words).ravel(), np.int64(z.size), np.int32(k), res)
    cp.cuda.runtime.memcpyAsync(host.ctypes.data, res.data.ptr, 16, _DEVICE_TO_HOST, stream.ptr)

    def finish() -> tuple[int, int]:
        stream.synchronize()             # the call's one wait
        return int(host[0]), int(host[1])
    return finish


_DEVICE_TO_HOST = 2                      # cudaMemcpyDeviceToHost


def on_cupy(table_words, z, k: int) -> tuple[int, int]:
    """(found, value) of a CuPy rank (launch_on_cupy, then its wait)."""
    return launch_on_cupy(table_words, z, k)()
