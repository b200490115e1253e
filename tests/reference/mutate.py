"""Front-end fuzzing: mutated and truncated Star programs and random bytes.

The only acceptable outcomes of checking or running any input are success or a StarError
with a source position (CLI exit 0 or 1). ``classify_run`` / ``classify_cli`` return
"ok", "star_error" or a failure label; anything else is a bug in starvm.
"""
from __future__ import annotations

import contextlib
import io
import re
import signal
from pathlib import Path

import starvm
from starvm import cli

ROOT = Path(__file__).resolve().parents[2]
SPECIAL = ["__import__", "open", "eval", "exec", "getattr", "__builtins__", "__class__", "v_x", "g_x", "r_p",
           "_op_or", "_writeln", "init_", "main_", "result_", "'", "''", "{", "}", "(*", "*)", "/*", "*/", "//",
           "\x00", "\u00e9", "\t", "\r", "\n", "99999999999999999999", "0", "-1", "parallel", "for", ":=", ": =",
           "=", "(", ")", ";", ",", ".", "begin", "end", "end.", "var", "proc", "function", "table(3, 4)",
           "table(-1, 2)", "BITS('')", "BITS('2')", "BITS('1')", "slice", "word", "integer", "boolean",
           "COL(0, P)", "ROW(1, P)", "STEP(X)", "writeln('x')", "while true do", "repeat", "until", "if", "then",
           "else", "not", "div 0", "mod 0", "xor", "TRIM(2, 1, w)", "REP(1, 1, BITS('11'), w)", "x(0)",
           "recurse(n)", "-", "WARSHALL-C", "WARSHALL(n, P)"]


def corpus() -> list[tuple[str, str]]:
    files = sorted((ROOT / "programs").glob("*.star")) + sorted((ROOT / "stdlib").glob("*.star")) \
        + sorted((ROOT / "tests" / "star").glob("*.star"))
    return [(f.name, f.read_text()) for f in files]


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|'[^'\n]*'|:=|<=|>=|<>|\s+|.", re.S)


def mutate(rnd, text: str, vocab: list[str]) -> str:
    """One to three random edits of a program text."""
    for _ in range(rnd.randint(1, 3)):
        toks = _TOKEN.findall(text) or [""]
        c = rnd.randint(0, 8)
        i = rnd.randrange(len(toks))
        if c == 0:                                   # truncate
            text = text[:rnd.randint(0, len(text))]
            continue
        if c == 1:                                   # delete tokens
            del toks[i:i + rnd.randint(1, 4)]
        elif c == 2:                                 # duplicate a span
            j = min(len(toks), i + rnd.randint(1, 30))
            toks[i:i] = toks[i:j]
        elif c == 3:                                 # insert a token
            toks.insert(i, rnd.choice(vocab) if rnd.random() < 0.7 else rnd.choice(SPECIAL))
        elif c == 4:                                 # replace a token
            toks[i] = rnd.choice(vocab) if rnd.random() < 0.6 else rnd.choice(SPECIAL)
        elif c == 5:                                 # swap two tokens
            j = rnd.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        elif c == 6:                                 # change a number
            nums = [k for k, t in enumerate(toks) if t.isdigit()]
            if nums:
                k = rnd.choice(nums)
                toks[k] = str(rnd.choice([0, 1, 2, 63, 64, 65, 1000, -1, 10 ** 6, 2 ** 40]))
        elif c == 7:                                 # a random character
            pos = rnd.randint(0, len(text))
            text = text[:pos] + chr(rnd.choice([rnd.randint(0, 127), rnd.randint(128, 0x2FFF)])) + text[pos:]
            continue
        else:                                        # splice with another part of the text
            j = rnd.randrange(len(toks))
            toks = toks[:i] + toks[j:j + rnd.randint(1, 40)] + toks[i:]
        text = "".join(toks)
    return text


def random_text(rnd) -> str:
    n = rnd.randint(0, 300)
    if rnd.random() < 0.5:
        return bytes(rnd.randrange(256) for _ in range(n)).decode("latin-1")
    return "".join(rnd.choice(SPECIAL + [" ", " ", "\n", "x", "P", "1"]) for _ in range(n // 5))


def inputs(rnd, count: int):
    """``count`` (name, text) inputs: mostly mutations of the shipped programs, some random."""
    base = corpus()
    vocab = sorted({t for _, text in base for t in _TOKEN.findall(text) if t.strip()})
    for k in range(count):
        if k % 10 == 9:
            yield "random", random_text(rnd)
        else:
            name, text = base[rnd.randrange(len(base))]
            yield name, mutate(rnd, text, vocab)


class Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise Timeout()


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise Timeout after ``seconds`` of this process's CPU time (not wall time: on a loaded
    machine a quick input can take many wall seconds, and a hang burns CPU all the same)."""
    old = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


# The step limit bounds every run; the time limit only catches a hang outside counted steps
# (parsing, checking), so it is generous: 5 s timed out once on a 16-worker GPU-machine run.
SECONDS = 20.0


def classify_run(text: str, max_steps: int = 20_000, seconds: float = SECONDS, fuse: bool = True) -> tuple[str, str]:
    """Run a text through Machine (like `star run`): ('ok' | 'star_error' | failure, detail)."""
    m = starvm.Machine(backend="numpy", out=io.StringIO(), max_steps=max_steps, fuse=fuse)
    try:
        with time_limit(seconds):
            m.run(text, "fuzz.star")
    except Timeout:
        return "timeout", ""
    except starvm.StarError as e:
        if e.loc is None and text.strip():
            return "error_without_position", e.render()
        e.render()          # rendering must work too
        return "star_error", e.message
    except RecursionError as e:     # e.g. the parser on deeply nested brackets
        return "crash", f"RecursionError: {e}"
    except Exception as e:  # noqa: BLE001
        return "crash", f"{type(e).__name__}: {e}"
    return "ok", ""


def classify_cli(path: str, command: str = "check") -> tuple[str, str]:
    """cli.main(['check' | 'run', path]) in-process: exit 0, or 1 with a positioned message."""
    err, out = io.StringIO(), io.StringIO()
    argv = [command, path] + (["--max-steps", "20000"] if command == "run" else [])
    try:
        with time_limit(SECONDS), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = cli.main(argv)
    except Timeout:
        return "timeout", ""
    except SystemExit as e:
        return "crash", f"SystemExit {e.code}: {err.getvalue()[:300]}"
    msg = err.getvalue()
    if rc == 0:
        return "ok", ""
    if rc == 1:
        if re.match(r"^.*:\d+:\d+: error: ", msg):
            return "star_error", msg.splitlines()[0]
        return "error_without_position", msg[:300]
    if rc == 2 and "cannot read" in msg:
        return "unreadable", msg.strip()   # not UTF-8: an I/O error (exit 2), not a Star error
    return "crash", f"exit {rc}: {msg[:500]}"
