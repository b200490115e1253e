"""The row-moving kernels of distributed NumPy ranks (rows.py: IOTA, GATHER, SCATTER, GROUPMIN,
COMPACT, EXPAND) on ranks whose tables live on a device (CuPy, or the emulated device that
stands in for it in CI), by staging through the host: each table and vector of the call is
copied to the host, the NumPy all-to-all kernel runs there, and the tables it writes (and the
slice GROUPMIN returns) are copied back. Without this the Star bodies ran, row by row: hours
for BFS-adapt's arc tables on a GPU rank.

Cost per call: one device-to-host copy of every table argument and one host-to-device copy
of the written one, k·n/8 bytes each (a GATHER of BFS-adapt at R-MAT scale 18 moves some
20 MB each way, ~1 ms over PCIe), plus the NumPy kernel's all-to-all exchanges. A call the
kernel does not take runs the Star body on the device, with the caller's own arguments.
"""
from __future__ import annotations

import numpy as np

from ..runtime.values import Bits, Table
from .vectors import Fill, Shard, _host

NAMES = ("iota", "gather", "scatter", "groupmin", "compact", "expand")
WRITES = {"iota": (0,), "gather": (3,), "scatter": (3,), "compact": (2,), "expand": (2,), "groupmin": ()}


class _UseStarBody(Exception):
    """The host kernel declined the call (unusual arguments): the device Star body runs."""


def _host_backend(B):
    """The distributed backend over NumPy beside B, on B's communicator (host collectives)."""
    host = getattr(B, "_staging_host", None)
    if host is None:
        from ..backends import get_backend
        from .backend import DistributedBackend
        from .collectives import HostCollectives
        host = DistributedBackend(get_backend("numpy"), B.comm, B.align, HostCollectives(B.comm))
        host.bytes_moved = B.bytes_moved              # one count for the rank
        B._staging_host = host
    return host


class _Call:
    """One call's arguments on the host, and the way back."""

    def __init__(self, B, H):
        self.B, self.H = B, H
        self.tables: dict[int, tuple[Table, Table]] = {}
        self.vectors: dict[int, Bits] = {}        # a host copy -> the caller's variable

    def table(self, t: Table) -> Table:
        if id(t) not in self.tables:
            data = np.array(_host(t.aux.data), dtype=np.uint64, copy=True).reshape(t.k, -1)
            local = Table(data, t.aux.n, t.k, self.H.L)
            self.tables[id(t)] = (t, Table(data, t.n, t.k, self.H, aux=local))
        return self.tables[id(t)][1]

    def vector(self, x: Bits) -> Bits:
        v = x.v
        if isinstance(v, Fill):
            return Bits(v, x.n)
        if isinstance(v, Shard):
            n = self.B.layout(x.n).local_n
            return Bits(Shard(self.H.L.from_words(_host(self.B.L.to_words(v.v, n)), n), x.n), x.n)
        return Bits(self.H.L.from_words(_host(self.B.L.to_words(v, x.n)), x.n), x.n)

    def device_vector(self, x: Bits) -> Bits:
        v = x.v
        if isinstance(v, Shard):
            n = self.B.layout(x.n).local_n
            words = self.B.xp.asarray(self.H.L.to_words(v.v, n))
            return Bits(Shard(self.B.L.from_words(words, n), x.n), x.n)
        if isinstance(v, Fill):
            return Bits(v, x.n)
        return Bits(self.B.L.from_words(self.B.xp.asarray(self.H.L.to_words(v, x.n)), x.n), x.n)

    def arg(self, a):
        if isinstance(a, Table) and a.backend is self.B:
            return self.table(a)
        if isinstance(a, Bits):
            copy = self.vector(a)
            self.vectors[id(copy)] = a
            return copy
        return a

    def result(self, z):
        """A var slice the host routine hands back, on the device; the caller's variable
        takes the new value too (as the device kernels' routines do)."""
        if not isinstance(z, Bits):
            return z
        out = self.device_vector(z)
        mine = self.vectors.get(id(z))
        if mine is not None:
            mine.v = out.v
            return mine
        return out

    def write_back(self, t: Table) -> None:
        device, host = self.tables[id(t)]
        if device.aux.data.size:
            device.aux.data[...] = self.B.xp.asarray(host.aux.data).reshape(device.aux.data.shape)


def _factory(name: str):
    def make(star_body, backend, meter):
        from .rows import _factories
        H = _host_backend(backend)

        def decline(*args):
            raise _UseStarBody
        host_routine = _factories(H)[name](decline, H, meter)

        def routine(*args):
            call = _Call(backend, H)
            try:
                out = host_routine(*(call.arg(a) for a in args))
            except _UseStarBody:
                return star_body(*args)
            for i in WRITES[name]:
                call.write_back(args[i])
            if out is None:
                return None
            return tuple(call.result(z) for z in out)
        routine.star_body = star_body
        return routine
    return make


make_iota, make_gather, make_scatter, make_groupmin, make_compact, make_expand = (_factory(n) for n in NAMES)


def register() -> None:
    """These kernels in the native registry for the distributed backend over CuPy and over the
    emulated device."""
    from .. import native
    for local in ("cupy", "emulated"):
        for name in NAMES:
            native._REGISTRY[(name, f"mpi:{local}")] = f"starvm.distributed.staging:make_{name}"
