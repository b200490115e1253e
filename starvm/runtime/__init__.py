"""Runtime: the ``Machine`` and what the interpreter runs on.

``machine.py`` (``Machine``: loads Star code through the front end and the Python renderer,
runs it on a backend, installs natives and the compiled tiers, counts its steps), ``ops.py``
(each base operation as one checked, counted function over a backend), ``tracemap.py``
(a Python traceback through generated code back to Star positions and a Star call stack),
``counters.py`` (per-call step counters), ``globals_view.py`` (``Machine.globals``),
``params.py`` (program parameters, ``--param``) and ``routine_profile.py`` (`--profile`'s
per-routine listing).
"""
