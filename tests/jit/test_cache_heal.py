"""The compiled-code cache heals and is checked (starvm/jit/cache.py): an entry's .py runs only
when its code matches the hash in its first line and the code it should hold, else it is
written anew with one warning; the markers of routines compiled from the old file go with
it; a cache folder that cannot be written is replaced by one under the temporary folder,
said once. None of these compile anything (tests/jit/test_background.py has the Numba side).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile

import pytest

from conftest import subprocess_env
from starvm.jit import cache

SOURCE = "VALUE = 41 + 1\n"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("STARVM_JIT_CACHE", str(tmp_path / "jit"))
    monkeypatch.setattr(cache, "_FOLDERS", {})
    monkeypatch.setattr(cache, "_WARNED", set())
    return tmp_path / "jit"


def _module_name(path):
    return f"starvm_jit_{path.stem[len('star_'):]}"


def test_an_entry_is_written_with_the_hash_of_its_code(folder, capsys):
    path = cache.write_entry(SOURCE, "test")
    assert path.parent == folder and path.name.startswith("star_")
    head, _, body = path.read_text().partition("\n")
    assert body == SOURCE and head.endswith(__import__("hashlib").sha256(SOURCE.encode()).hexdigest())
    assert cache.checked_source(path) == SOURCE
    assert cache.write_entry(SOURCE, "test") == path
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("damage", ["garbage", "edited", "edited and hashed again", "not utf-8"])
def test_a_damaged_entry_is_written_anew_with_one_warning(folder, capsys, damage):
    path = cache.write_entry(SOURCE, "test")
    marker = cache.ready_marker(path, "f_r_x", (("i",),))
    marker.write_text("1.0\n")
    other = "import os\nos._exit(9)\n"      # what must never run
    if damage == "garbage":
        path.write_text("\x00\x13 not python at all")
    elif damage == "edited":
        path.write_text(path.read_text().replace("41", "40"))
    elif damage == "edited and hashed again":
        path.write_text(cache.entry_text(other))
    else:
        path.write_bytes(b"\xff\xfe\xfa")
    if damage != "edited and hashed again":
        assert cache.checked_source(path) is None
    for _ in range(2):          # the second load finds it repaired: no second warning
        module = cache.load(SOURCE, "test")
        assert module.VALUE == 42
        sys.modules.pop(_module_name(path), None)
    err = capsys.readouterr().err
    assert err.count("starvm: warning:") == 1 and str(path) in err and "written anew" in err
    assert cache.checked_source(path) == SOURCE
    assert not marker.exists()                 # Numba's entries of the old file are stale: compiled again


def test_an_unwritable_cache_folder_is_replaced_with_one_warning(tmp_path, monkeypatch, capsys):
    """As root (CI) a folder's mode does not stop writing: a path under a plain file cannot be
    made by anyone."""
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("STARVM_JIT_CACHE", str(blocker / "jit"))
    monkeypatch.setattr(cache, "_FOLDERS", {})
    monkeypatch.setattr(cache, "_WARNED", set())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    first = cache.folder()
    assert first == tmp_path / "tmp" / f"starvm-jit-{cache._user()}"
    path = cache.write_entry(SOURCE, "test")
    assert path.parent == first and cache.load(SOURCE, "test").VALUE == 42
    sys.modules.pop(_module_name(path), None)
    assert cache.folder() == first
    err = capsys.readouterr().err
    assert err.count("starvm: warning:") == 1
    assert str(blocker / "jit") in err and str(first) in err and "cannot be written" in err


def test_a_run_with_an_unwritable_cache_folder_says_so_once_and_runs(tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    program = tmp_path / "p.star"
    program.write_text("var i, s: integer;\nbegin\n  s := 0;\n  for i := 1 to 10 do s := s + i;\n  writeln(s)\nend.\n")
    done = subprocess.run([sys.executable, "-m", "starvm", "run", str(program), "--jit", "auto"],
                          capture_output=True, text=True, timeout=300,
                          env=subprocess_env(STARVM_JIT_CACHE=str(blocker / "jit"), TMPDIR=str(tmp_path),
                                             STARVM_JIT_BACKGROUND="1"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "55\n"
    # the main block's first call asked the cache (the folder it found in its place)
    assert done.stderr.count("starvm: warning:") == 1 and "cannot be written" in done.stderr, done.stderr
    assert (tmp_path / f"starvm-jit-{cache._user()}").is_dir()


def test_the_worker_refuses_an_entry_that_does_not_match_its_hash(folder):
    path = cache.write_entry(SOURCE, "test")
    path.write_text(path.read_text() + "# appended\n")
    done = subprocess.run([sys.executable, "-m", "starvm.jit.compile_worker", "test", str(path), "[]"],
                          capture_output=True, text=True, timeout=120, env=subprocess_env())
    assert done.returncode == 3 and "does not hold the code its hash names" in done.stderr
    usage = subprocess.run([sys.executable, "-m", "starvm.jit.compile_worker"], capture_output=True, text=True,
                           timeout=120, env=subprocess_env())
    assert usage.returncode == 2 and "usage:" in usage.stderr


class _Terminal:
    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_a_foreground_compile_says_so_on_a_terminal_and_clears_the_line(monkeypatch):
    def f_r_bfs():
        pass

    class Dispatcher:
        py_func = f_r_bfs
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with cache._compiling_notice(Dispatcher()):
        assert terminal.text.startswith("starvm: compiling BFS with Numba")
    assert terminal.text.endswith("\r" + " " * (len(terminal.text.split("\r")[0])) + "\r")

    def h_r_bfs():                              # the host entry of a routine that compiled code calls too
        pass
    Dispatcher.py_func = h_r_bfs
    terminal.text = ""
    with cache._compiling_notice(Dispatcher()):
        assert terminal.text.startswith("starvm: compiling BFS with Numba")
    piped = _Terminal()
    piped.isatty = lambda: False
    monkeypatch.setattr(sys, "stderr", piped)
    with cache._compiling_notice(Dispatcher()):
        pass
    assert piped.text == ""                     # nothing where stderr is a file or a pipe
