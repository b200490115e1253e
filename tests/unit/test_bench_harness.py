"""The benchmark harness (starvm/benchmarking/): clocks with device synchronisation, repeat/median,
the watchdog and the budget, the machine and git description, result files with the common
header, and ``starvm.benchmarking.run`` on every backend."""
from __future__ import annotations

import io
import json
import statistics
import subprocess
import time

import pytest

import starvm
from starvm import benchmarking
from starvm.benchmarking import environment, program, results, timing
from starvm.benchmarking.watchdog import Budget, RunTimeout, caused_by_timeout, watchdog


# ---------------------------------------------------------------------- timing
def test_clock_synchronises_before_and_after():
    log = []
    secs = timing.clock(lambda: (log.append("fn"), time.sleep(0.01)), lambda: log.append("sync"))
    assert log == ["sync", "fn", "sync"] and 0.009 < secs < 1.0


def test_repeat_warms_up_untimed_and_sets_up_each_run():
    log = []
    t = timing.repeat(lambda: log.append("run"), 3, warmup=2, setup=lambda: log.append("setup"))
    assert log == ["setup", "run"] * 5 and len(t.runs_s) == 3
    slow = timing.repeat(lambda: time.sleep(0.02), 5, stop_after_s=0.01)
    assert len(slow.runs_s) == 1                       # a run over stop_after_s ends the series


def test_timing_statistics():
    t = timing.Timing([0.3, 0.1, 0.2, 0.5])
    assert (t.median_s, t.min_s, t.max_s) == (statistics.median([0.3, 0.1, 0.2, 0.5]), 0.1, 0.5)
    assert t.as_dict() == {"median_s": 0.25, "min_s": 0.1, "max_s": 0.5, "runs_s": [0.3, 0.1, 0.2, 0.5],
                           "n_runs": 4}


def test_synchronizer_of_a_machine_is_its_backends(backend):
    m = starvm.Machine(backend=backend)
    assert timing.synchronizer(m) == m.backend.synchronize
    timing.synchronizer(None)()                          # no device here, or CuPy's: callable either way


# ---------------------------------------------------------------------- watchdog and budget
def test_watchdog_stops_an_overrunning_call():
    t0 = time.perf_counter()
    with pytest.raises(RunTimeout):
        with watchdog(0.1):
            while True:
                pass
    assert time.perf_counter() - t0 < 5
    with watchdog(None):                                 # no limit
        time.sleep(0.01)
    with watchdog(5):                                    # disarmed on leaving
        pass
    time.sleep(0.02)


def test_a_wrapped_timeout_is_recognised():
    try:
        try:
            raise RunTimeout()
        except RunTimeout as e:
            raise ValueError("a library caught it") from e
    except ValueError as e:
        assert caused_by_timeout(e)
    assert not caused_by_timeout(ValueError("x")) and not caused_by_timeout(None)


def test_budget():
    b = Budget(10, reserve_s=2)
    assert 7.5 < b.left() <= 8 and b.spent() < 1
    assert b.fits(None) and b.fits(5) and not b.fits(9)
    assert Budget(1, start=time.perf_counter() - 5).left() < 0


# ---------------------------------------------------------------------- environment
def test_machine_info():
    info = environment.machine_info(("scipy",))
    for key in ("cpu_model", "cpu_count", "cpus_usable", "load_average_1min", "platform", "python", "numpy", "lark", "starvm",
                "starvm_path", "git", "scipy", "memory_available_bytes"):
        assert key in info, key
    assert info["starvm"] == starvm.__version__ and info["numpy"] == __import__("numpy").__version__


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, timeout=60)


def test_git_state(tmp_path, monkeypatch):
    monkeypatch.delenv("STARVM_GIT_COMMIT", raising=False)     # set on GPU-machine runs of a copy
    _git(tmp_path, "init", "-q")
    (tmp_path / "f").write_text("1")
    _git(tmp_path, "add", "f")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60).stdout.strip()
    assert environment.git_state(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "f").write_text("2")
    assert environment.git_state(tmp_path) == {"commit": head, "dirty": True}
    # without git: .git/HEAD and its ref read directly, else $STARVM_GIT_COMMIT
    monkeypatch.setenv("PATH", "")
    assert environment.git_state(tmp_path)["commit"] == head
    monkeypatch.setenv("STARVM_GIT_COMMIT", "abc")
    assert environment.git_state(tmp_path / "f")["commit"] == "abc"
    # a copy sent elsewhere names its commit, and that wins over a checkout around it
    assert environment.git_state(tmp_path)["commit"] == "abc"


def test_device_info_and_label(backend):
    m = starvm.Machine(backend=backend)
    d = environment.device_info(m)
    assert d["backend"] == m.backend.name
    assert (d["gpu"] is not None) == (backend == "cupy" or (m.backend.name == "auto" and m.backend.dev.name == "cupy"))
    assert environment.device_label({"gpu": None}, {"cpu_model": "X"}) == "X (CPU)"
    assert environment.device_label({"gpu": {"name": "H100"}}, {}) == "H100"
    assert environment.slug("NVIDIA H100 80GB HBM3") == "h100-80gb-hbm3"


# ---------------------------------------------------------------------- result files
def test_results_share_one_header(tmp_path):
    machine = {"cpu_model": "CPU X", "cpu_count": 8, "cpus_usable": 2, "load_average_1min": 3.5,
               "python": "3.11", "numpy": "2.0",
               "starvm": "0.1.0", "git": {"commit": "0123456789abcdef", "dirty": True}}
    gpu = {"name": "H100", "memory_total_bytes": 80 << 30, "cupy": "13", "cuda_runtime": "12.8",
           "cuda_driver": "12.9"}
    doc = results.document("demo", "A demo", machine=machine, device={"backend": "cupy", "gpu": gpu}, x=1)
    assert [k for k in doc][:6] == ["benchmark", "title", "date", "machine", "device", "device_info"]
    assert doc["device"] == "H100" and doc["x"] == 1
    js, md = results.write_results(doc, tmp_path / "sub" / "demo.json", ["| a |", "| 1 |"])
    assert json.loads(js.read_text()) == doc and not list(tmp_path.glob("sub/*.tmp"))
    lines = md.read_text().splitlines()
    assert lines[0] == "# A demo" and lines[4:] == ["| a |", "| 1 |"]
    assert lines[2] == (f"{doc['date']} · CPU X, 8 cores (2 usable), load 3.5 · Python 3.11 · NumPy 2.0 · starvm 0.1.0 · "
                        "GPU H100 (80 GiB) · CuPy 13 · CUDA runtime 12.8, driver 12.9 · git 0123456789ab, dirty")
    assert results.header_markdown(doc) == lines[:4]


# ---------------------------------------------------------------------- starvm.benchmarking.run
STATEFUL = """\
var T: table(66, 3); k: integer;
begin
  writeln('suppressed');
  if SOME(COL(1, T)) then k := NUMB(COL(1, T))
  else begin ROW(1, T) := BITS('111'); ROW(66, T) := BITS('101'); COL(2, T) := COL(1, T) or COL(3, T) end
end.
"""


def test_run_measures_the_same_work_every_run(backend, capsys):
    rep = benchmarking.run(STATEFUL, backends=[backend], repeat=3, warmup=2)
    (m,) = rep.measurements
    plain = starvm.Machine(backend=backend, out=io.StringIO())
    plain.run(STATEFUL)
    assert m.status == "ran" and len(m.timing.runs_s) == 3 and m.steps == plain.stats
    assert "suppressed" not in capsys.readouterr().out
    assert m.steps_per_s == pytest.approx(m.steps_total / m.timing.median_s)
    row = rep.document()["results"][0]
    assert row["steps"] == plain.stats and row["n_runs"] == 3 and row["backend_resolved"] == m.resolved


def test_run_a_routine_of_a_program_object(backend):
    prog = starvm.compile("function SQ(n: integer): integer; var T: table(5, 2); X: slice(T);\n"
                          "begin SET(X); SQ := n * n + NUMB(X) end;", "sq.star")
    rep = benchmarking.run(prog, call="SQ", args=(4,), backends=[backend], repeat=2, warmup=0)
    assert rep.what() == "SQ(4)" and rep.measurements[0].steps == {"SET": 1, "NUMB": 1}
    assert rep.measurements[0].timing.runs_s and "SQ(4)" in rep.text()


def test_run_reports_an_unavailable_backend(monkeypatch):
    real = program.Machine

    def machine(backend=None, **kw):
        if backend == "cupy":
            raise program.BackendUnavailable("no GPU in this test")
        return real(backend=backend, **kw)
    monkeypatch.setattr(program, "Machine", machine)
    rep = benchmarking.run("begin end.", backends=["numpy", "cupy"], repeat=1)
    assert [m.status for m in rep.measurements] == ["ran", "unavailable"]
    assert rep.measurements[1].error == "no GPU in this test" and len(rep.ran) == 1
    assert "cupy     unavailable: no GPU in this test" in rep.text()
    assert rep.document()["results"][1] == {"backend": "cupy", "jit": None, "status": "unavailable",
                                            "error": "no GPU in this test"}


def test_run_passes_machine_options(monkeypatch):
    seen = []
    real = program.Machine
    monkeypatch.setattr(program, "Machine", lambda **kw: seen.append(kw) or real(**kw))
    rep = benchmarking.run("var T: table(3, 3); X: slice(T); begin SET(X) end.", repeat=1, warmup=0, native=False,
                    max_steps=100)
    assert seen[0]["native"] is False and seen[0]["max_steps"] == 100 and rep.ran


def test_scalar_work_counts_no_step():
    rep = benchmarking.run("var i, s: integer; begin for i := 1 to 100 do s := s + i end.", repeat=1)
    assert rep.measurements[0].steps == {} and rep.measurements[0].steps_per_s is None
    assert "no step counted" in rep.text()


def test_run_settings_and_errors():
    with pytest.raises(ValueError):
        benchmarking.run("begin end.", repeat=0)
    with pytest.raises(starvm.StarTypeError, match="no main block"):
        benchmarking.run("proc P; begin end;")
    with pytest.raises(starvm.StarRuntimeError, match="step limit"):
        benchmarking.run("var i: integer; begin while true do i := i + 1 end.", max_steps=10, repeat=1)
    if not benchmarking.machine_has_jit():
        with pytest.raises(ValueError, match="compiled tier"):
            benchmarking.run("begin end.", jit=[True])


# ---------------------------------------------------------------------- the GPU side, with a stand-in CuPy
class _FakeRuntime:
    def getDeviceProperties(self, i):
        return {"name": b"NVIDIA Test GPU", "major": 9, "minor": 0}

    def runtimeGetVersion(self):
        return 12080

    def driverGetVersion(self):
        return 12090

    def memGetInfo(self):
        return (70 << 30, 80 << 30)

    def getDeviceCount(self):
        return 1


class _FakeCupy:
    __version__ = "13.9"

    def __init__(self, log):
        device = type("Device", (), {"synchronize": lambda _self: log.append("sync")})
        self.cuda = type("cuda", (), {"runtime": _FakeRuntime(), "Device": device})()


def test_gpu_description_and_sync_with_a_stand_in_cupy(monkeypatch):
    import sys
    log = []
    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy(log))
    d = environment.device_info(gpu=True)
    assert d["gpu"] == {"name": "NVIDIA Test GPU", "count": 1, "memory_total_bytes": 80 << 30,
                        "memory_free_bytes_at_start": 70 << 30, "cupy": "13.9", "cuda_runtime": "12.8",
                        "cuda_runtime_raw": 12080, "cuda_driver": "12.9", "cuda_driver_raw": 12090,
                        "compute_capability": "9.0"}
    timing.clock(lambda: log.append("fn"), timing.synchronizer())
    assert log == ["sync", "fn", "sync"]
    doc = results.document("x", "X", device=d)
    assert doc["device"] == "NVIDIA Test GPU"
    assert "GPU NVIDIA Test GPU (80 GiB) · CuPy 13.9 · CUDA runtime 12.8, driver 12.9" in results.header_line(doc)


def test_no_gpu_is_recorded_not_raised(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "cupy", None)          # import cupy -> ImportError
    d = environment.device_info(gpu=True)
    assert d["gpu"] is None and "cupy" in d["gpu_error"]


def test_run_process_times_a_fresh_process_whole():
    import sys
    done = timing.run_process([sys.executable, "-c", "import sys, time; time.sleep(0.2); print('out'); "
                               "print('err', file=sys.stderr); sys.exit(3)"])
    assert done.seconds >= 0.2 and done.returncode == 3 and not done.ok
    assert done.stdout == "out\n" and done.stderr == "err\n"
    quiet = timing.run_process([sys.executable, "-c", "print('x')"], keep_stdout=False)
    assert quiet.ok and quiet.stdout == ""
    late = timing.run_process([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.3)
    assert late.seconds is None and late.returncode is None and not late.ok and "timed out after 0.3 s" in late.stderr


# ---------------------------------------------------------------------- the scripts of bench/ use the harness
from pathlib import Path  # noqa: E402

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = [p.stem for p in sorted(BENCH.glob("*.py")) if not p.stem.startswith("fuzz_")]
OWN_COPIES = ["getDeviceProperties", "platform.python_version", "rev-parse", "signal.setitimer", "/proc/cpuinfo",
              "datetime.now", "write_text(json"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_bench_scripts_use_the_harness(name):
    path = BENCH / f"{name}.py"
    text = path.read_text()
    compile(text, str(path), "exec")                         # the GPU scripts cannot be imported here
    assert "from starvm.benchmarking import" in text
    assert [c for c in OWN_COPIES if c in text] == [], "machine info, clocks, watchdogs and files: starvm/benchmarking"
