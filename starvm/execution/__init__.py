"""What running Star code needs, below the machine and everything that runs code for it.

  * ``values.py``: the values Star code computes on: ``Bits`` (slices, words), ``Table``,
    ``Unassigned``; their storage is a backend's;
  * ``limits.py``: --max-steps (the ticker), the recursion limit's room, the memory checks;
  * ``context.py``: the ``ExecutionContext`` a machine (``starvm/runtime/machine.py``) builds and
    hands to what runs code for it (the compiled tiers, ``starvm/jit``): its namespace,
    backend, step counters, limits and output.

Backends, renderers, tiers, natives and the machine all import these, and this package imports
none of them: the machine never has to be imported by what it drives (runtime -> jit ->
execution, runtime -> backends -> execution).
"""
