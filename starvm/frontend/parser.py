"""Parse Star source text into the AST of ``ast.py`` (Lark LALR, positions on every node)."""
from __future__ import annotations

import sys
from functools import lru_cache

import lark
from lark import Token, Transformer_NonRecursive, Tree, v_args

from ..errors import Loc, Source, StarSyntaxError, StarWarning
from ..resources import grammar_path
from . import ast as A
from .deep import MAX_NESTING, deep
from .integers import int_of_decimal
from .syntax_hints import diagnose, lexical_hint


_LARK_OPTIONS = dict(parser="lalr", propagate_positions=True, maybe_placeholders=True)


@lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    """The LALR parser of the grammar. Building its tables takes a third of a second, most of
    `star run`'s start-up after NumPy's import: they are kept in the compiled-code cache
    folder (STARVM_JIT_CACHE), under a name that hashes the grammar, Lark's version and
    Python's, and built again where that file is missing, unreadable or cannot be written."""
    import hashlib
    import os
    import threading
    text = grammar_path().read_text()
    key = hashlib.sha256(repr((text, lark.__version__, sys.version_info[:2], sorted(_LARK_OPTIONS.items())))
                         .encode()).hexdigest()[:24]
    from ..config import jit_cache_dir
    path = os.path.join(jit_cache_dir(), f"star-parser-{key}.lark")
    try:
        with open(path, "rb") as f:
            return lark.Lark.load(f)
    except Exception:  # noqa: BLE001 - not there yet, or a partial or foreign file: build it
        pass
    parser = lark.Lark(text, cache=False, **_LARK_OPTIONS)
    try:                # a whole file or none: written aside, then renamed
        os.makedirs(os.path.dirname(path), exist_ok=True)
        part = f"{path}.{os.getpid()}.{threading.get_ident()}.part"
        with open(part, "wb") as f:
            parser.save(f)
        os.replace(part, path)
    except OSError:
        pass
    return parser


def fold(name: str) -> str:
    """Star names are case-insensitive and ``A-B`` names the same routine as ``A_B``."""
    return name.lower().replace("-", "_")


# How the parser's terminal names read in an error message.
_TERMINAL_TEXT = {
    "SEMICOLON": "';'", "COLON": "':'", "COMMA": "','", "DOT": "'.'", "LPAR": "'('",
    "RPAR": "')'", "ASSIGN": "':='", "EQ": "'='", "EQUAL": "'='", "RELOP": "a comparison",
    "ADDOP": "an operator", "MULOP": "an operator", "SIGN": "'-'", "MINUS": "'-'",
    "NAME": "a name", "NUMBER": "a number", "STRING": "a string", "$END": "end of file",
    "<END-OF-FILE>": "end of file",
}


def _describe(terminal: str) -> str:
    if terminal in _TERMINAL_TEXT:
        return _TERMINAL_TEXT[terminal]
    try:
        pattern = _lark().get_terminal(terminal).pattern
        if pattern.type == "str":
            return f"'{pattern.value}'"
    except KeyError:
        pass
    return terminal.lower()


def _expected(names) -> str:
    texts = sorted({_describe(n) for n in names if not n.startswith("__")})
    if not texts:
        return ""
    if len(texts) > 8:
        texts = texts[:8] + ["..."]
    return "; expected " + (texts[0] if len(texts) == 1 else "one of " + ", ".join(texts))


# Words of the language: never the name of a variable, parameter or routine.
RESERVED = frozenset({
    "program", "var", "proc", "procedure", "function", "begin", "end", "if", "then", "else",
    "while", "do", "repeat", "until", "for", "to", "downto", "parallel", "integer", "boolean",
    "slice", "word", "table", "not", "and", "or", "xor", "div", "mod", "true", "false"})


def parse(text: str, filename: str = "<string>") -> A.Program:
    """The AST of a Star text; a StarSyntaxError (with its position) if it is not one."""
    # Windows editors save UTF-8 with a byte-order mark; it is not part of the program.
    text = text.removeprefix("\ufeff")
    return deep(_parse, text, Source(filename, text))


def _parse(text: str, source: Source) -> A.Program:
    try:
        tree = _lark().parse(text)
    except lark.exceptions.UnexpectedToken as e:
        tok = e.token
        if tok.type == "LPAR" and text.startswith("(*", tok.start_pos):
            raise StarSyntaxError("unterminated comment", Loc(source, tok.line, tok.column)) from None
        if str(tok) == "*" and tok.start_pos and text.startswith("(*", tok.start_pos - 1):
            # '(' was read as a parenthesis because no '*)' closes the comment
            raise StarSyntaxError("unterminated comment", Loc(source, tok.line, tok.column - 1)) from None
        found = _diagnosis(text, tok, set(e.expected), getattr(e, "interactive_parser", None))
        if found:
            raise StarSyntaxError(found.message, Loc(source, found.line, found.column),
                                  hint=found.hint) from None
        if tok.type == "$END":
            line, col = _end_position(text)
            what = "unexpected end of file"
        else:
            line, col = tok.line, tok.column
            what = f"unexpected string {tok}" if tok.type == "STRING" else f"unexpected {str(tok)!r}"
        raise StarSyntaxError(what + _expected(e.expected), Loc(source, line, col)) from None
    except lark.exceptions.UnexpectedCharacters as e:
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        msg = f"unexpected character {ch!r}"
        if ch == "'":
            msg = "unterminated string literal"
        elif text.startswith(("/*", "(*", "{"), e.pos_in_stream):
            msg = "unterminated comment"
        hint = lexical_hint(ch)
        raise StarSyntaxError(msg, Loc(source, e.line, e.column), hint=hint) from None
    except lark.exceptions.UnexpectedEOF as e:
        found = _diagnosis(text, Token("$END", ""), set(e.expected))
        if found:
            raise StarSyntaxError(found.message, Loc(source, found.line, found.column),
                                  hint=found.hint) from None
        line, col = _end_position(text)
        raise StarSyntaxError("unexpected end of file" + _expected(e.expected), Loc(source, line, col)) from None
    depth = _check_nesting(tree, source)
    try:
        prog = _Builder(source).transform(tree)
        prog.depth = depth
        return prog
    except lark.exceptions.VisitError as e:   # a StarSyntaxError raised while building the AST
        if isinstance(e.orig_exc, StarSyntaxError):
            raise e.orig_exc.with_traceback(None) from None
        raise


def _diagnosis(text: str, tok, expected: set[str], interactive=None):
    """What the mistake is (starvm/frontend/syntax_hints.py), or None: the plain report then."""
    try:
        return diagnose(_lark(), text, tok, expected, interactive)
    except Exception:   # a hint must never replace the error it explains with a traceback
        return None


def _check_nesting(tree, source: Source) -> int:
    """The depth of the parse tree; a text nested deeper than every later pass is given room
    for (deep.py) is refused."""
    stack, deepest = [(tree, 1)], 0
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_NESTING:
            meta = node.meta
            raise StarSyntaxError(f"nested too deeply: more than {MAX_NESTING} levels of statements and "
                                  "expressions", Loc(source, getattr(meta, "line", 1), getattr(meta, "column", 1)),
                                  hint="split the expression or the statements into routines or steps")
        stack.extend((c, depth + 1) for c in node.children if isinstance(c, Tree))
    return deepest


def _end_position(text: str) -> tuple[int, int]:
    lines = text.rstrip().splitlines() or [""]
    return len(lines), len(lines[-1]) + 1


class _Builder(Transformer_NonRecursive):
    """Lark tree -> AST. Each rule gets its ``meta`` (positions) to build a ``Loc``."""

    def __init__(self, source: Source):
        super().__init__()
        self.source = source
        self.warnings: list[StarWarning] = []

    def _loc(self, meta_or_tok) -> Loc:
        if isinstance(meta_or_tok, Token):
            end = meta_or_tok.end_column if meta_or_tok.end_line == meta_or_tok.line else None
            return Loc(self.source, meta_or_tok.line, meta_or_tok.column, end)
        m = meta_or_tok
        if getattr(m, "empty", False):
            return Loc(self.source, 1, 1)
        end = m.end_column if m.end_line == m.line else None
        return Loc(self.source, m.line, m.column, end)

    def _name(self, tok: Token) -> A.Name:
        self._not_reserved(tok)
        return A.Name(self._loc(tok), name=fold(str(tok)), display=str(tok))

    def _not_reserved(self, tok: Token) -> None:
        """The contextual lexer reads a keyword as a name where only a name fits (`var true:
        integer`); a declared `true` would then shadow the constant."""
        if str(tok).lower() in RESERVED:
            raise StarSyntaxError(f"'{tok}' is a reserved word of Star; it cannot name a variable, "
                                  "parameter or routine", self._loc(tok), hint="choose another name")

    def _empty_after(self, meta, keyword: str, what: str) -> None:
        """Warn about `if c then;` / `while c do;`: the ';' ends the statement, which does nothing,
        and the statement after it runs unconditionally (or the loop spins on nothing)."""
        text = self.source.text
        i = getattr(meta, "end_pos", None)
        if i is None:
            return
        if text[max(0, i - len(keyword)):i].lower() != keyword:   # the rule's span ends after the keyword
            while i < len(text) and text[i].isspace():
                i += 1
            if text[i:i + len(keyword)].lower() != keyword:
                return
            i += len(keyword)
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] == ";":
            line = text.count("\n", 0, i) + 1
            col = i - (text.rfind("\n", 0, i) + 1) + 1
            self.warnings.append(StarWarning(
                f"';' right after '{keyword}' is an empty statement: {what}", Loc(self.source, line, col),
                hint="remove the ';' if the next statement is meant to be "
                     + ("what 'then' runs" if keyword == "then" else "the loop's body")))

    # ---- program structure ----
    @v_args(meta=True)
    def start(self, meta, items):
        name, globals_, routines, main = None, [], [], None
        for it in items:
            if isinstance(it, str):
                name = it
            elif isinstance(it, list):
                globals_.extend(it)
            elif isinstance(it, A.Routine):
                routines.append(it)
            elif isinstance(it, A.Block):
                main = it
        prog = A.Program(self._loc(meta), name, globals_, routines, main)
        prog.warnings = self.warnings
        return prog

    def program_header(self, items):
        return str(items[0])

    def var_section(self, items):
        return [d for group in items for d in group]

    @v_args(meta=True)
    def var_decl(self, meta, items):
        names, type_ = items
        return [A.VarDecl(n.loc, n.name, n.display, type_) for n in names]

    def const_section(self, items):
        return items[1:]          # the CONST keyword, then one VarDecl per constant

    @v_args(meta=True)
    def const_int(self, meta, items):
        name, _eq, sign, number = items
        value = -int(number) if sign is not None and str(sign) == "-" else int(number)
        return self._constant(name, A.TypeSpec(self._loc(number), "integer"), value)

    @v_args(meta=True)
    def const_bool(self, meta, items):
        name, _eq, literal = items
        return self._constant(name, A.TypeSpec(self._loc(literal), "boolean"), literal.type == "TRUE")

    def _constant(self, tok, spec, value) -> A.VarDecl:
        n = self._name(tok)
        return A.VarDecl(n.loc, n.name, n.display, spec, value)

    def name_list(self, items):
        return [self._name(t) for t in items]

    @v_args(meta=True)
    def t_integer(self, meta, items):
        return A.TypeSpec(self._loc(meta), "integer")

    @v_args(meta=True)
    def t_boolean(self, meta, items):
        return A.TypeSpec(self._loc(meta), "boolean")

    @v_args(meta=True)
    def t_slice(self, meta, items):
        return A.TypeSpec(self._loc(meta), "slice", of=self._name(items[1]) if len(items) > 1 else None)

    @v_args(meta=True)
    def t_word(self, meta, items):
        return A.TypeSpec(self._loc(meta), "word", of=self._name(items[1]) if len(items) > 1 else None)

    @v_args(meta=True)
    def t_table(self, meta, items):
        dims = (items[1], items[2]) if len(items) > 1 else None
        return A.TypeSpec(self._loc(meta), "table", dims=dims)

    def hname(self, items):
        if len(items) == 1:
            self._not_reserved(items[0])
        return items  # list of NAME tokens

    def params(self, items):
        return [p for group in items if group is not None for p in group]

    @v_args(meta=True)
    def param(self, meta, items):
        by_ref, names, type_ = items
        return [A.Param(n.loc, n.name, n.display, type_, by_ref is not None) for n in names]

    def _routine(self, meta, hname, params, result, rest):
        *sections, body = rest
        locals_ = [d for s in sections for d in s]
        display = "-".join(str(t) for t in hname)
        return A.Routine(self._loc(hname[0]), fold(display), display, params or [], result, locals_, body)

    @v_args(meta=True)
    def proc_decl(self, meta, items):
        _kw, hname, params, *rest = items
        return self._routine(meta, hname, params, None, rest)

    @v_args(meta=True)
    def func_decl(self, meta, items):
        _kw, hname, params, result, *rest = items
        return self._routine(meta, hname, params, result, rest)

    @v_args(meta=True)
    def body(self, meta, items):
        return A.Block(self._loc(meta), items[0])

    main_block = body

    # ---- statements ----
    def stmt_list(self, items):
        return [s for s in items if s is not None]

    @v_args(meta=True)
    def compound(self, meta, items):
        return A.Block(self._loc(meta), items[0])

    @v_args(meta=True)
    def stmt_head(self, meta, items):
        *names, lpar, args = items
        return (names, lpar, args or [])

    @v_args(meta=True)
    def assign(self, meta, items):
        (names, lpar, args), op, value = items
        if len(names) > 1:
            raise StarSyntaxError("cannot assign to a hyphenated name (only procedures may have one)",
                                  self._loc(names[1]))
        target = self._name(names[0])
        if lpar is not None:
            target = A.Apply(target.loc, func=target, args=args)
        return A.Assign(self._loc(op), target, value)

    @v_args(meta=True)
    def call_stmt(self, meta, items):
        names, _lpar, args = items[0]
        display = "-".join(str(t) for t in names)
        return A.CallStmt(self._loc(names[0]), fold(display), display, args)

    @v_args(meta=True)
    def if_stmt(self, meta, items):
        cond, then, orelse = items
        if then is None and orelse is None:
            self._empty_after(meta, "then", "the 'if' does nothing and the statement after it always runs")
        return A.If(self._loc(meta), cond, then, orelse)

    @v_args(meta=True)
    def while_stmt(self, meta, items):
        if items[1] is None:
            self._empty_after(meta, "do", "the loop body is empty and the statement after it is not repeated")
        return A.While(self._loc(meta), items[0], items[1])

    @v_args(meta=True)
    def repeat_stmt(self, meta, items):
        return A.Repeat(self._loc(meta), items[0], items[1])

    @v_args(meta=True)
    def for_stmt(self, meta, items):
        parallel, var, _assign, start, direction, stop, body = items
        if body is None:
            self._empty_after(meta, "do", "the loop body is empty and the statement after it is not repeated")
        return A.For(self._loc(meta), self._name(var), start, stop,
                     str(direction).lower() == "downto", body, parallel is not None)

    # ---- expressions ----
    @v_args(meta=True)
    def compare(self, meta, items):
        left, op, right = items
        return A.BinOp(self._loc(op), op=str(op), left=left, right=right)

    @v_args(meta=True)
    def binop(self, meta, items):
        left, op, right = items
        return A.BinOp(self._loc(op), op=str(op).lower(), left=left, right=right)

    @v_args(meta=True)
    def unary(self, meta, items):
        op, operand = items
        return A.Unary(self._loc(op), op=str(op).lower(), operand=operand)

    @v_args(meta=True)
    def apply(self, meta, items):
        func, _lpar, args = items
        return A.Apply(func.loc, func=func, args=args or [])

    def args(self, items):
        return items

    def number(self, items):
        return A.Num(self._loc(items[0]), value=int_of_decimal(str(items[0])))

    def string(self, items):
        tok = items[0]
        return A.Str(self._loc(tok), value=str(tok)[1:-1].replace("''", "'"))

    def true(self, items):
        return A.BoolLit(self._loc(items[0]), value=True)

    def false(self, items):
        return A.BoolLit(self._loc(items[0]), value=False)

    def name(self, items):
        return self._name(items[0])
