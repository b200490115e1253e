"""Native kernels: hand-written implementations that replace a standard-library routine's
Star body on one backend (issue: "fast whole-algorithm paths", "fused associative search").

The Star body stays the specification: a native kernel must compute exactly the same
result, and the tests compare the two on random inputs. A kernel applies only to the
routine *from the standard library* (a program's own routine of the same name runs as
written) and only for the arguments its guard takes; otherwise the Star body runs.
A native kernel does not execute the Star body's base operations, but it reports the steps
the body would take (by formula, from the sizes and what the kernel counted) to the
machine's counters through its ``Meter`` (meter.py), and advances the --max-steps count the
same way, so a program's step counts do not depend on which route ran it. The meter also
records the kernel's calls and time (``Machine.native_timing``, shown by --profile).

One folder per accelerated routine, native/<routine>/ (registry.ROUTINES):

  __init__.py   HOME (the stdlib file of its Star body), ``body_steps`` (its step formula),
                ``routine`` (its argument guard around a backend's kernels), KERNELS (backend
                name -> "module:factory", distributed ranks included)
  numpy.py      its NumPy kernel          cuda.py + <name>.cu   its CUDA kernel (CuPy)
  emulated.py   the emulated device's     distributed/*.py      its kernel over MPI ranks

What several routines share lives in shared/ (NumPy's bit-sliced rows, the CUDA modules'
composition and launch helpers, the CUDA device helpers as .cuh/.cu, the emulated device's
conversions); guard.py holds what every guard builds on, steps.py the step arithmetic.
registry.py is the one place that says whether a native replaces a routine on a backend
(``native_for``): the machine installs what it answers, the compiled tier leaves it alone.
A factory ``make(star_body, backend, meter) -> routine`` gives a function that takes and
returns exactly what the generated Python function of the Star routine does (its arguments,
and the tuple of its var slices/words for the caller to copy back). Each backend's kernels
are imported only when that backend asks for them.

To add a kernel for a library routine: its folder (or the existing one), an entry in its
KERNELS, and, for a new routine, its name in registry.ROUTINES (docs/architecture.md).
"""
from __future__ import annotations

from .guard import Unusual
from .meter import Meter, ticks_left, timed_call
from .registry import ROUTINES, NativeRoutine, kernels_of, native_for
from .steps import Steps

__all__ = ["Meter", "NativeRoutine", "ROUTINES", "Steps", "Unusual", "kernels_of", "native_for", "ticks_left",
           "timed_call"]
