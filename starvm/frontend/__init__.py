"""Front end: Star source text -> AST, every node with the ``Loc`` it was parsed from.

``parser.py`` (Lark LALR over ``grammar/star.lark``, names folded, Lark's errors turned into
``StarSyntaxError``), ``ast.py`` (the node classes), ``syntax_hints.py`` (what a student most
likely did wrong, from the tokens before a syntax error), ``integers.py`` (Star's unbounded
integers to and from decimal text at any length), ``deep.py`` (a big-stack thread for the
recursive passes over deeply nested programs) and ``program.py`` (a text parsed once,
``starvm.compile``'s ``Program`` base).
"""
