"""Every CUDA source compiles in CI, without a GPU (issue 18): NVRTC (cuda-bindings and the
nvidia-cuda-nvrtc-cu12 wheel, in the test extra) compiles to PTX the CuPy backend's kernels,
the hand-written native kernels and the kernel generated for every `parallel for` of a corpus
of loops (tests/gpu_sources/corpus.py); golden files pin a few generated kernels."""
from __future__ import annotations

import os
import re

import pytest

from gpu_sources import corpus
from gpu_sources.corpus import cuda_corpus, forall_loops

GOLDEN = corpus.HERE / "golden"
UPDATE_GOLDEN = os.environ.get("STARVM_UPDATE_GOLDEN") == "1"   # rewrite the golden files


@pytest.fixture(scope="module")
def nvrtc():
    from gpu_sources import nvrtc as mod
    mod.require()
    return mod


# ---------------------------------------------------------------- the corpus is complete
def test_corpus_holds_every_kind_of_source():
    names = [s.name for s in cuda_corpus()]
    assert "backend:cupy_backend" in names
    from starvm.native.shared import cuda_text
    assert {f"native:{m}" for m in cuda_text.MODULES} <= set(names)
    assert set(corpus.native_files()) == corpus.native_module_files(), "a native .cu file in no CUDA module"
    loops = forall_loops()
    assert len([s for s in names if s.startswith("forall:")]) >= 10
    assert not [lp.where for lp in loops if lp.template is None and "gpu_sources" in lp.where], \
        "constructs.star is meant to hold only loops the translator handles"


def test_every_file_with_cuda_code_is_in_the_corpus():
    """A new CUDA source in starvm/ fails here until a collector of corpus.py compiles it."""
    covered = {corpus.ROOT / "starvm/backends/cuda_backend_kernels.cu",
               corpus.ROOT / "starvm/targets/cuda/forall_kernel.cu", *corpus.native_files(),   # forall_sources
               corpus.ROOT / "starvm/targets/cuda/routine_kernel.cu",      # gpu_tier_sources
               corpus.ROOT / "starvm/native/shared/cuda_text.py"}   # composes native_sources' modules
    with_cuda = {p for pattern in ("*.py", "*.cu") for p in (corpus.ROOT / "starvm").rglob(pattern)
                 if "__global__" in p.read_text()}
    assert with_cuda <= covered, (f"CUDA code in {sorted(str(p.relative_to(corpus.ROOT)) for p in with_cuda - covered)}: "
                                  "add a @collector to tests/gpu_sources/corpus.py that yields its sources, and "
                                  "list the file here (docs/architecture.md, 'CUDA code without a GPU')")


def test_every_kernel_the_python_code_asks_for_is_in_its_source():
    """A misspelt get_function name shows here (and in the PTX check below), not only on a GPU."""
    from starvm.backends import cuda_backend_kernels as k
    asked = corpus.requested_kernel_names(corpus.ROOT / "starvm/backends/cupy_backend.py") | set(k.NAMES)
    assert asked == set(corpus.extern_kernels(k.SOURCE))
    from starvm.native.shared import cuda_text
    defined = {name for m in cuda_text.MODULES for name in cuda_text.kernel_names(m)}
    for path in (corpus.ROOT / "starvm" / "native").rglob("*.py"):
        asked = corpus.requested_kernel_names(path) | corpus.subscripted_kernel_names(path)
        assert asked <= defined, (str(path), sorted(asked - defined))


# ---------------------------------------------------------------- NVRTC
# One test per collector, not per source: the corpus is built inside the test, not while pytest
# collects (building it loads every Star file of the corpus: ~18 s of CPU, which each xdist
# worker paid at collection, whichever tests it then ran). Every source is still compiled, and a
# failure names each source that failed, with NVRTC's log.
@pytest.mark.parametrize("collect", corpus.COLLECTORS, ids=lambda c: c.__name__)
def test_every_source_compiles_to_ptx(nvrtc, collect):
    sources = list(collect())
    assert sources, f"{collect.__name__} yields no source"
    failed = []
    for source in sources:
        try:
            ptx = nvrtc.compile_ptx(source.code, source.name.replace(":", "_") + ".cu", source.options,
                                    source.name_expressions)
            assert ptx.text.startswith("//") and ".target sm_90" in ptx.text, "not PTX for sm_90"
            missing = [kernel for kernel in source.kernels if ptx.entry(kernel) is None]
            assert not missing, f"no entry for {missing}"
        except (nvrtc.NvrtcError, AssertionError, KeyError) as e:
            failed.append(f"{source.name}: {type(e).__name__}: {e}" + (f"\n{e.log}" if hasattr(e, "log") else ""))
    assert not failed, f"{len(failed)} of {len(sources)} sources of {collect.__name__} fail:\n" + "\n".join(failed)


def test_generated_kernels_compile_for_several_words_per_thread(nvrtc):
    from starvm.targets.cuda.forall import KERNEL_NAME, kernel_source
    template = forall_loops()[0].template
    widths = {R: nvrtc.compile_ptx(kernel_source(template, R), f"r{R}.cu").entry(KERNEL_NAME) for R in (1, 4, 32)}
    assert widths[1] == widths[4] == widths[32]


def test_a_syntax_error_gives_nvrtc_error_compilation_with_its_line(nvrtc):
    from starvm.backends.cuda_backend_kernels import SOURCE
    lines = SOURCE.split("\n")
    line = next(i for i, text in enumerate(lines) if "out[w] = x;" in text)
    lines[line] = lines[line].replace("out[w] = x;", "out[w] = x")          # a missing semicolon
    with pytest.raises(nvrtc.NvrtcError) as e:
        nvrtc.compile_ptx("\n".join(lines), "broken.cu")
    assert e.value.result == "NVRTC_ERROR_COMPILATION"
    # NVRTC reports the line after the statement that lacks its ';' (1-based: line + 2)
    assert re.search(rf"broken\.cu\({line + 2}\): error: expected a \";\"", e.value.log), e.value.log


def test_a_misspelt_kernel_name_is_not_in_the_ptx(nvrtc):
    from starvm.backends.cuda_backend_kernels import SOURCE
    ptx = nvrtc.compile_ptx(SOURCE, "backend.cu")
    assert ptx.entry("row_gather") == [64] * 5
    with pytest.raises(KeyError, match="no kernel 'row_gahter'"):
        ptx.entry("row_gahter")


# ---------------------------------------------------------------- golden generated sources
GOLDEN_LOOPS = {
    "warshall_adapt": "stdlib/warshall.star:55",
    "logic": "tests/gpu_sources/loops/constructs.star:9",
    "arith": "tests/gpu_sources/loops/constructs.star:23",
    "inner": "tests/gpu_sources/loops/constructs.star:36",
}


@pytest.mark.parametrize("name", sorted(GOLDEN_LOOPS))
def test_generated_kernel_equals_its_golden_file(name):
    """The CUDA text generated for a few loops, character for character (a change to the
    translator shows here as a diff to review; STARVM_UPDATE_GOLDEN=1 rewrites the files)."""
    loop = next(lp for lp in forall_loops() if lp.where == GOLDEN_LOOPS[name])
    path = GOLDEN / f"{name}.cu"
    if UPDATE_GOLDEN:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(loop.template)
    assert loop.template == path.read_text(), (
        f"the kernel generated for {loop.where} differs from {path.relative_to(corpus.ROOT)}: review the "
        "difference, then STARVM_UPDATE_GOLDEN=1 python3 -m pytest tests/unit/test_cuda_sources.py -k golden")
