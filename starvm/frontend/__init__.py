"""Front end: Star source text -> AST (grammar in ``grammar/star.lark``)."""
