"""The user interfaces over the machine: the ``star`` command line and the interactive prompt,
Jupyter's ``%%star`` magic, pictures and progress bars, the Pygments lexer.

- ``cli``: ``star`` (the console script) and ``python -m starvm``: parses the command line and
  hands each subcommand to its home (``star cost`` to ui/cost_cli.py, ``star debug`` to debug/cli.py,
  ``star bench`` to the benchmarking package, ``star compile`` to ``precompile``).
- ``repl``: the interactive prompt (``Session``: one input in, its output out; ``Repl``: the
  prompt_toolkit front end).
- ``precompile``: ``star compile``: a program's routines compiled ahead into the disk cache by
  jit/compile_worker.py processes.
- ``ipython``: ``%load_ext starvm.ui.ipython`` registers the ``%%star`` cell magic.
- ``pictures``: tables as bit images and profiles as bar charts (matplotlib, optional);
  ``cli_pictures``: ``star show`` and ``star run --plot`` over them; ``Table._repr_png_`` too.
- ``progress``: ``star run --progress``'s bars on outer for loops (tqdm, optional).
- ``highlight``: the Pygments lexer for Star (the ``pygments.lexers`` entry point ``star``).
- ``cost_cli``: ``star run --cost`` and ``star cost``; ``cost_plot`` its pictures;
  ``cost_validation``: ``star cost --validate``, each cost model (starvm/costs/) run beside a
  published figure.

Outside ui/ only starvm/__init__.py (which attaches ``Table._repr_png_`` from ``pictures``),
and starvm/__main__.py import it.
"""
