"""The GPU tier's prelude for a kernel on one MPI rank of several (docs/scale.md, "Compiled code
on GPU ranks"): prelude.cu with ranks.cu's changes, so that the single GPU's text stays as it is.

A rank's kernel holds the rank's block of rows of every table and its words of every slice
(partition.py's blocks, whole words: the alignment a multiple of 64), words and scalars whole,
every length global. What crosses ranks is posted by block 0's thread 0 to the mailbox in
page-locked host memory (targets/mpi/mailbox.py) while the grid waits at its barrier: every grid
reduction (SOME, NUMB, FND, STEP, FRST, a slice's bit, `=` and the comparisons of slices, the
Ctrl-C poll), ROW(i, T) (a broadcast from its owner) and a slice made a word (an all-gather).
Positions become global before they are reduced; a bit or row written changes its owner's
words only. The rank, the number of ranks and the alignment are #defines of each rank's
instance (routine.instance: RK_RANK, RK_SIZE, RK_ALIGN), so a block's bounds are folded.
"""
from __future__ import annotations

from functools import lru_cache

from .. import mailbox_layout as mb
from .prelude import PRELUDE, cuda_text


def _definition_end(text: str, start: int) -> int:
    """The index just past the closing brace (at column 0) of the definition starting at start."""
    end = text.index("\n}\n", start)
    return end + 3


def apply(text: str, directives: str) -> str:
    """``text`` with ranks.cu's directives applied in order (each must match as written)."""
    blocks: list[tuple[str, str, list[str]]] = []
    for line in directives.splitlines(keepends=True):
        if line.startswith("//@ "):
            kind, _, arg = line[4:].rstrip("\n").partition(": ")
            blocks.append((kind, arg, []))
        elif blocks:
            blocks[-1][2].append(line)
    for kind, arg, lines in blocks:
        body = "".join(lines)
        if kind == "after":
            at = [i for i in range(len(text)) if text.startswith(arg, i) and (i == 0 or text[i - 1] == "\n")]
            assert len(at) == 1, f"ranks.cu: 'after' anchor found {len(at)} times: {arg!r}"
            eol = text.index("\n", at[0]) + 1
            text = text[:eol] + body + text[eol:]
        elif kind == "replace":
            assert text.count(arg) == 1, f"ranks.cu: 'replace' anchor found {text.count(arg)} times: {arg!r}"
            start = text.index(arg)
            text = text[:start] + body + text[_definition_end(text, start):]
        elif kind == "sub":
            old, _, new = arg.partition(" => ")
            assert text.count(old) >= 1 and not body.strip(), f"ranks.cu: 'sub' text not found: {old!r}"
            text = text.replace(old, new)
        else:
            raise AssertionError(f"ranks.cu: an unknown directive {kind!r}")
    return text


def defines() -> str:
    """The mailbox's slots and operations as the rank kernel's text names them."""
    names = {"RK_REQ": mb.M_REQ, "RK_DONE": mb.M_DONE, "RK_OP": mb.M_OP, "RK_VALUE": mb.M_VALUE,
             "RK_FLAGS": mb.M_FLAGS, "RK_ROOT": mb.M_ROOT, "RK_COUNT": mb.M_COUNT, "RK_PAYLOAD": mb.M_PAYLOAD,
             "RK_OP_SUM": mb.OP_SUM, "RK_OP_MIN": mb.OP_MIN, "RK_OP_OR": mb.OP_OR, "RK_OP_BCAST": mb.OP_BCAST,
             "RK_OP_GATHER": mb.OP_GATHER}
    return "".join(f"#define {k} {v}\n" for k, v in names.items())


@lru_cache(maxsize=None)
def prelude() -> str:
    """The rank kernels' prelude (PRELUDE with ranks.cu applied, the mailbox's numbers first)."""
    return "\n#define RANKS 1\n" + defines() + apply(PRELUDE, cuda_text("ranks.cu"))


def instance_defines(rank: int, size: int, align: int) -> str:
    """What an instance for rank ``rank`` of ``size`` with blocks of ``align`` rows #defines."""
    if align % 64 or align <= 0 or not 0 <= rank < size:
        raise ValueError(f"rank {rank} of {size}, alignment {align}: blocks must be whole words")
    return f"#define RK_RANK {rank}LL\n#define RK_SIZE {size}LL\n#define RK_ALIGN {align}LL\n"
