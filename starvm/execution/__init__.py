"""What running Star code needs, below the machine and the tiers that run it.

``context.py``: the ``ExecutionContext`` a machine (``starvm/runtime/machine.py``) builds and
hands to what runs code for it (the compiled tiers, ``starvm/jit``): its namespace, backend,
step counters, limits and output. Code that runs Star routines takes a context and never the
machine, so imports run one way: runtime -> jit -> execution.
"""
