"""Reading an input file the user named (a program text, a graph file) without reading
without end: a regular file is refused up front when reading it would need more memory than
is available; a pipe is read up to that bound; a device (/dev/zero, a disk) is refused.
Errors are OSError with ``strerror`` set, which the command line reports as
`star: error: cannot read FILE: REASON` (exit 2)."""
from __future__ import annotations

import errno
import os
import stat

_CHUNK = 1 << 20


def available_memory() -> int | None:
    """Bytes of host memory available now (MemAvailable), or None when it cannot be told."""
    from .execution.limits import free_bytes
    return free_bytes(None)


def _too_large(detail: str) -> OSError:
    return OSError(errno.EFBIG, detail)


def check_fits(need: int, what: str) -> None:
    """OSError unless ``need`` bytes fit in the available host memory."""
    free = available_memory()
    if free is not None and need > free:
        raise _too_large(f"{what} needs about {describe_size(need)} of memory, only {describe_size(free)} "
                         "is available")


def read_input(path, *, expansion: int = 1) -> bytes:
    """The bytes of the file at ``path``. ``expansion``: how many times its size the reader's
    work needs in memory (the parse of a graph file: about 8): the file must fit that way."""
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        free = available_memory()
        limit = None if free is None else free // max(1, expansion)
        if stat.S_ISREG(st.st_mode):
            if limit is not None and st.st_size > limit:
                raise _too_large(f"the file is {describe_size(st.st_size)}; reading it needs about "
                                 f"{describe_size(st.st_size * expansion)} of memory, only "
                                 f"{describe_size(free)} is available")
        elif not (stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)):
            raise OSError(errno.EINVAL, "not a regular file or a pipe (a device is not read)")
        parts, total = [], 0
        if st.st_size:                       # the size it has, in one buffer; what it grew by, bounded below
            with os.fdopen(os.dup(fd), "rb", buffering=0) as f:
                parts.append(f.read(st.st_size))
            total = len(parts[0])
        while True:
            block = os.read(fd, _CHUNK)
            if not block:
                break
            total += len(block)
            if limit is not None and total > limit:
                raise _too_large(f"more than {describe_size(limit)} to read; reading it would need more memory "
                                 f"than the {describe_size(free)} available")
            parts.append(block)
        return b"".join(parts)
    finally:
        os.close(fd)


def describe_size(b: int) -> str:
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:.1f} {unit}"
    return f"{b} bytes"
