"""The interpreter's target: IR to Python source (``codegen.py``); ``runtime/machine.py`` runs it."""
