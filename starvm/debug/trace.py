"""Record a whole run, statement event by statement event, for the replay page (``star trace``).

Event N of a trace is event N of the debugger (``events.py``): the program stands *before*
the statement of that event. What a trace holds:

* ``events``: for each event (an array, ``EVENT_FIELDS``) its file and line, the step
  counter, the current activation and its callers (an index into ``stacks``: serials and
  lines), the stack depth and the variables whose value differs from the event before (the
  statement just run changed them);
* ``vars``: one record per variable instance (a global, or a local of one activation of a
  routine; a table is one record however many names it has, so ``var P`` and the caller's
  table are one), with its first value and each change: for tables, slices and words the
  bits that flipped inside a row window (``max_rows`` rows, ``max_cols`` columns) and the
  number of ones of the whole value; for integers and booleans the new value;
* ``frames``: for each activation its routine and its variables (name -> record);
* ``output``: what the program printed, with the event it was printed during;
* a final event (file and line None; ``end``: finished, error or limit) with the state after
  the last statement.

The page replays forwards by applying changes and backwards by undoing them (a flip undoes
itself), so it never holds more than one state.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import StarError
from ..ir.ops import BASE_OPS
from ..execution.values import Bits, Table, Unassigned, host_array
from ..types import T
from .events import EventSource, bypass_note, debug_machine, routine_of, star_stack

DEFAULT_MAX_EVENTS = 200_000
DEFAULT_MAX_ROWS = 64
MAX_COLS = 256
STACK_SHOWN = 32               # innermost frames kept per event
# one event: [file, line, steps, frame, callers, depth, changed] (arrays: a page of 10^5 events
# must open in about a second). frame: the current activation's serial (None at the end);
# callers: an index into `stacks`; depth: how many Star frames are on the stack.
EVENT_FIELDS = ["file", "line", "steps", "frame", "callers", "depth", "changed"]


class _TraceFull(BaseException):
    """Stops the program once the trace holds ``max_events`` events."""


class _Output:
    def __init__(self, recorder):
        self.recorder = recorder

    def write(self, text: str) -> None:
        self.recorder.output.append([self.recorder.events_source.count, text])

    def flush(self) -> None:
        pass


class Recorder:
    def __init__(self, machine, max_events: int, max_rows: int, max_cols: int = MAX_COLS):
        self.m = machine
        self.max_events, self.max_rows, self.max_cols = max_events, max_rows, max_cols
        self.events: list[dict] = []
        self.vars: list[dict] = []
        self.frames: list[dict] = []
        self.globals: list[list] = []        # [name, var id]
        self._global_py: list[str] = []
        self.output: list[list] = []
        self.stacks: list[list] = []                  # distinct caller stacks, outermost first
        self._stack_ids: dict[tuple, int] = {}
        self.files: dict[str, int] = {}
        self.file_texts: list[dict] = []
        self._live: list[tuple[object, int]] = []     # (Python frame, serial), outermost first
        self._slots: dict[tuple, int] = {}            # (frame serial, pyname) -> var id
        self._tables: dict[int, int] = {}             # id(Table) -> var id
        self._keep: list[Table] = []                  # tables stay alive: ids are not reused
        self._state: dict[int, object] = {}
        self._globals_done = False
        self.events_source: EventSource | None = None

    # ------------------------------------------------------------------ events
    def on_event(self, n: int, frame, entry: int) -> None:
        if n > self.max_events:
            raise _TraceFull()
        stack = star_stack(self.m, frame)
        live = self._live
        i = 0
        while i < len(live) and i < len(stack) and live[i][0] is stack[i].frame:
            i += 1
        del live[i:]
        for sf in stack[i:]:
            live.append((sf.frame, self._new_frame(sf)))
        changed: list[int] = []
        self._visit_globals(n, changed)
        self._visit_frame(n, frame, live[-1][1], changed)
        loc = stack[-1].loc
        first = max(0, len(stack) - STACK_SHOWN)
        callers = tuple((live[j][1], stack[j].loc.line if stack[j].loc else None, self._file(stack[j].loc))
                        for j in range(first, len(stack) - 1))
        idx = self._stack_ids.get(callers)
        if idx is None:
            idx = self._stack_ids[callers] = len(self.stacks)
            self.stacks.append([list(c) for c in callers])
        self.events.append([self._file(loc), loc.line if loc else None, sum(self.m.counts), live[-1][1], idx,
                            len(stack), changed])

    def finish(self, status: str, message: str = "") -> None:
        """The final event: the state after the last statement (globals only: the frames are gone)."""
        n = len(self.events) + 1
        changed: list[int] = []
        self._visit_globals(n, changed)
        self.events.append([None, None, sum(self.m.counts), None, None, 0, changed])

    def _file(self, loc) -> int | None:
        if loc is None:
            return None
        name = loc.filename
        if name not in self.files:
            self.files[name] = len(self.file_texts)
            self.file_texts.append({"name": name, "text": loc.source.text})
        return self.files[name]

    def _new_frame(self, sf) -> int:
        serial = len(self.frames)
        self.frames.append({"r": sf.routine, "v": None})
        return serial

    # ------------------------------------------------------------------ variables
    def _visit_globals(self, n: int, changed: list[int]) -> None:
        ns = self.m.ns
        if not self._globals_done:
            self._globals_done = True
            for sym in self.m.env.globals.values():
                if sym.pyname in ns:
                    vid = self._slot(("g", sym.pyname), sym, "global", ns[sym.pyname], n)
                    self.globals.append([sym.display, vid])
                    self._global_py.append(sym.pyname)
        for (name, vid), py in zip(self.globals, self._global_py):
            self._compare(vid, ns.get(py), n, changed)

    def _visit_frame(self, n: int, frame, serial: int, changed: list[int]) -> None:
        info = routine_of(self.m, frame.f_code.co_name)
        if info is None:
            if self.frames[serial]["v"] is None:
                self.frames[serial]["v"] = []
            return
        local = frame.f_locals
        rec = self.frames[serial]
        if rec["v"] is None:
            rec["v"] = []
            for sym in info.params + info.locals:
                vid = self._slot((serial, sym.pyname), sym, info.display, local.get(sym.pyname), n)
                rec["v"].append([sym.display, vid])
        for (name, vid), sym in zip(rec["v"], info.params + info.locals):
            self._compare(vid, local.get(sym.pyname), n, changed)

    def _slot(self, key, sym, scope: str, value, n: int) -> int:
        if isinstance(value, Table) and id(value) in self._tables:
            vid = self._tables[id(value)]
            self._slots[key] = vid
            return vid
        vid = len(self.vars)
        kind = {T.TABLE: "table", T.SLICE: "slice", T.WORD: "word", T.INT: "integer", T.BOOL: "boolean"}[sym.type]
        rec = {"name": sym.display, "scope": scope, "t": kind, "first": n, "ch": []}
        self.vars.append(rec)
        self._slots[key] = vid
        if isinstance(value, Table):
            self._tables[id(value)] = vid
            self._keep.append(value)
        self._state[vid] = None
        self._set_initial(vid, value)
        return vid

    def _encode(self, rec: dict, value):
        """(state, text, ones, n, k): what is kept to compare and what the page draws."""
        if isinstance(value, Table):
            bits = value.to_numpy()
            wr, wc = min(value.n, self.max_rows), min(value.k, self.max_cols)
            win = np.ascontiguousarray(bits[:wr, :wc])
            words = host_array(value.data).tobytes()
            return (words, win, value.n, value.k), _bits_text(win), int(bits.sum()), value.n, value.k
        if isinstance(value, Bits) and not isinstance(value, Unassigned):
            bools = np.asarray(self.m.backend.to_bools(value.v, value.n), dtype=bool)
            w = self.max_rows if rec["t"] == "slice" else self.max_cols
            win = bools[:w].copy()
            return (value.v, win, value.n, 1), _bits_text(win), int(bools.sum()), value.n, 1
        if isinstance(value, Unassigned) or value is None:
            return None, None, 0, 0, 0
        return value, None, 0, 0, 0

    def _set_initial(self, vid: int, value) -> None:
        rec = self.vars[vid]
        state, text, ones, n, k = self._encode(rec, value)
        self._state[vid] = state
        if rec["t"] in ("integer", "boolean"):
            rec["init"] = state
        else:
            rec.update(init=text, o=ones, n=n, k=k, **self._window(rec, n, k))

    def _window(self, rec, n, k) -> dict:
        if rec["t"] == "table":
            return {"wr": min(n, self.max_rows), "wc": min(k, self.max_cols)}
        return {"wr": min(n, self.max_rows if rec["t"] == "slice" else self.max_cols), "wc": 1}

    def _compare(self, vid: int, value, n: int, changed: list[int]) -> None:
        rec, old = self.vars[vid], self._state[vid]
        if rec["t"] in ("integer", "boolean"):
            new = None if isinstance(value, Unassigned) else value
            if new != old or type(new) is not type(old):
                self._state[vid] = new
                rec["ch"].append([n, new])
                changed.append(vid)
            return
        if isinstance(value, Table):
            if old is not None and old[0] == host_array(value.data).tobytes():   # bytes: cheaper than array_equal
                return
        elif isinstance(value, Bits) and not isinstance(value, Unassigned):
            if old is not None and old[0] is value.v:
                return
        elif old is None:
            return                                      # still unassigned
        state, text, ones, nn, k = self._encode(rec, value)
        if state is not None and old is not None and old[2:] == state[2:]:
            flips = np.flatnonzero(old[1].ravel() != state[1].ravel())
            self._state[vid] = state
            prev_ones = rec["ch"][-1][2] if rec["ch"] else rec["o"]
            if flips.size == 0 and ones == prev_ones:
                return
            rec["ch"].append([n, flips.tolist(), ones])
        else:   # assigned for the first time, or a new length: the whole value
            self._state[vid] = state
            win = self._window(rec, nn, k)
            rec["ch"].append([n, None, ones, text, nn, k, win["wr"], win["wc"]])
        changed.append(vid)


def _bits_text(win: np.ndarray) -> str:
    return np.where(win.ravel(), 49, 48).astype(np.uint8).tobytes().decode("ascii")


def record(text: str, filename: str = "<string>", *, max_events: int = DEFAULT_MAX_EVENTS,
           max_rows: int = DEFAULT_MAX_ROWS, profile: bool = False, **machine_options) -> dict:
    """Run a program with events on and return its trace (a JSON-ready dict). A Star error
    while compiling is raised; one while running ends the trace (``end``: error)."""
    t0 = time.perf_counter()
    m = debug_machine(**machine_options)
    m.profile = profile
    rec = Recorder(m, max_events, max_rows)
    m.out = _Output(rec)
    rec.events_source = EventSource(m, rec.on_event)
    m.compile(text, filename)
    if m._main is None:
        raise StarError("the program has no main block (begin ... end.) to trace")
    status, message = "finished", "the program has finished"
    try:
        m._guard(m._main)
    except _TraceFull:
        status = "limit"
        message = (f"the trace stops at event {max_events} (--max-events {max_events}); "
                   "the program was stopped there")
    except StarError as e:
        status, message = "error", e.render()
    rec.finish(status, message)
    seconds = time.perf_counter() - t0
    return {
        "format": "starvm-trace-2",
        "event_fields": EVENT_FIELDS,
        "program": filename,
        "backend": m.backend.name,
        "files": rec.file_texts,
        "events": rec.events,
        "vars": rec.vars,
        "frames": rec.frames,
        "stacks": rec.stacks,
        "globals": rec.globals,
        "output": rec.output,
        "end": status,
        "message": message,
        "limits": {"max_events": max_events, "max_rows": max_rows, "max_cols": MAX_COLS},
        "steps": {op.name: c for op, c in zip(BASE_OPS, m.counts) if c},
        "seconds": round(seconds, 4),
        "note": bypass_note(m),
        "profile": m.profile_report() if profile else None,
    }
