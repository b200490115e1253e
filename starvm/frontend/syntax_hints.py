"""Turn the LALR parser's "unexpected X; expected one of ..." into what a student did wrong.

Each diagnosis looks at the tokens before the one the parser stopped at and, when it
recognises a typical mistake, names it and puts the caret where the mistake is (not where
the parser noticed it): the line that lacks its ';', the 'begin' that no 'end' closes,
the comparison that needs parentheses. Returns None when it recognises nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import lark
from lark import Token

# Tokens that can only start a statement: after one of these on a new line a ';' is missing.
_STATEMENT_START = {"NAME", "IF", "WHILE", "REPEAT", "FOR", "PARALLEL", "BEGIN"}
# Tokens that only occur at the top level of a program (outside every begin ... end).
_TOP_LEVEL = {"var", "proc", "procedure", "function", "program"}
_OPENS = {"BEGIN": "END", "REPEAT": "UNTIL"}
_KEYWORD_TYPES = {"IF", "WHILE", "REPEAT", "FOR", "BEGIN", "END", "UNTIL", "THEN", "DO", "ELSE"}


@dataclass
class Diagnosis:
    message: str
    line: int
    column: int
    hint: str | None = None


def _tokens_before(lark_parser: lark.Lark, text: str, pos: int) -> list[Token]:
    """The tokens of text[:pos] as the plain lexer reads them (keywords as keywords)."""
    try:
        return list(lark_parser.lex(text[:pos]))
    except lark.exceptions.LarkError:
        return []


def _indent(text: str, line: int) -> int:
    s = text.split("\n")[line - 1]
    return len(s.expandtabs(4)) - len(s.expandtabs(4).lstrip())


def _typed(tok: Token) -> str:
    """The token's kind with keywords recognised even where the contextual lexer said NAME."""
    word = str(tok).upper()
    if tok.type == "NAME" and word in _KEYWORD_TYPES:
        return word
    return tok.type


def unclosed_block(text: str, before: list[Token], at: str) -> Diagnosis | None:
    """A 'begin' or 'repeat' still open where only the top level (or the end) may follow.

    Of the blocks open at the error, the culprit is usually the innermost one whose closing
    word went to an outer block: a 'begin' whose matching 'end' sits at another indentation
    ('end' written for the outer block). Without such a pair, the innermost open block."""
    stack: list[Token] = []
    mismatched: list[Token] = []
    owner: dict[int, str] = {}          # id of a routine body's 'begin' -> the routine's name
    pending, prev = None, None
    for tok in before:
        kind = _typed(tok)
        if prev is not None and str(prev).lower() in ("proc", "procedure", "function") and kind == "NAME":
            pending = str(tok)
        prev = tok
        if kind in _OPENS:
            if pending and kind == "BEGIN":
                owner[id(tok)], pending = pending, None
            stack.append(tok)
        elif kind in ("END", "UNTIL") and stack:
            opener = stack.pop()
            if _indent(text, opener.line) != _indent(text, tok.line):
                mismatched.append(opener)
    if not stack:
        return None
    culprit = mismatched[-1] if mismatched else stack[-1]
    word = str(culprit).lower()
    closer = "'until'" if word == "repeat" else "'end'"
    of = f" of {owner[id(culprit)]}" if id(culprit) in owner else ""
    return Diagnosis(f"'{word}'{of} at line {culprit.line} is never closed: no {closer} matches it "
                     f"(the parser reached {at} still inside it)",
                     culprit.line, culprit.column,
                     hint=f"add the {closer} of this '{word}' where its statements end")


def _after(tok: Token) -> tuple[int, int]:
    return (tok.end_line or tok.line), (tok.end_column or tok.column + 1)


def _would_accept(parser, inserted: Token, tok: Token) -> bool:
    """Would the parser take ``tok`` had ``inserted`` come before it?"""
    if parser is None:
        return False
    try:
        p = parser.copy()
        p.feed_token(inserted)
        return tok.type in p.accepts()
    except lark.exceptions.LarkError:
        return False


def missing_word(tok: Token, before: list[Token], parser) -> Diagnosis | None:
    """A ';', 'then' or 'do' left out: the one whose insertion makes the parser take ``tok``,
    reported at the end of the token before it (the end of the line that lacks it)."""
    if not before or _typed(tok) not in _STATEMENT_START:
        return None
    prev = before[-1]
    for typ, word in (("SEMICOLON", ";"), ("THEN", "then"), ("DO", "do")):
        if _would_accept(parser, Token(typ, word), tok):
            line, col = _after(prev)
            if line == tok.line:
                return Diagnosis(f"missing '{word}' before {str(tok)!r}", tok.line, tok.column)
            return Diagnosis(f"missing '{word}' at the end of this line", line, col)
    return None


def chained_comparison(tok: Token, before: list[Token]) -> Diagnosis | None:
    """`a > 0 and b > 0`: 'and' binds tighter than '>' (Pascal precedence), so the parser
    reads `a > (0 and b) > 0` and stops at the second comparison."""
    if tok.type not in ("RELOP", "EQ") and str(tok) not in ("=", "<>", "<", ">", "<=", ">="):
        return None
    joiner = None
    for prev in reversed(before):
        kind = _typed(prev)
        if kind in ("SEMICOLON", "THEN", "DO", "IF", "WHILE", "UNTIL", "ASSIGN", "BEGIN"):
            break
        if str(prev).lower() in ("and", "or", "xor"):
            joiner = str(prev).lower()
        elif kind in ("RELOP", "EQ") and joiner:
            return Diagnosis(f"two comparisons joined by '{joiner}' need parentheses",
                             tok.line, tok.column,
                             hint=f"'{joiner}' binds tighter than comparisons (as in Pascal): "
                                  f"write (a > 0) {joiner} (b > 0)")
    return None


_OPERATORS = {"ADDOP", "MULOP", "RELOP", "SIGN", "MINUS", "EQ"}


def bare_expression(tok: Token, before: list[Token]) -> Diagnosis | None:
    """`x + 1;` or `NUMB(X) > 0;` as a statement: an operator after a name that starts one."""
    if tok.type not in _OPERATORS and str(tok).lower() not in ("and", "or", "xor", "div", "mod"):
        return None
    start = len(before)
    while start > 0 and _typed(before[start - 1]) not in (
            "SEMICOLON", "BEGIN", "THEN", "DO", "ELSE", "REPEAT"):
        start -= 1
    stmt = before[start:]
    if not stmt or stmt[0].type != "NAME" or any(t.type in ("ASSIGN", "EQ") for t in stmt):
        return None
    return Diagnosis("a statement cannot be just an expression", stmt[0].line, stmt[0].column,
                     hint="assign its value (x := x + 1) or print it (writeln(...))")


def lexical_hint(ch: str) -> str | None:
    """A hint for a character no Star token starts with."""
    if ch in ("[", "]"):
        return "Star indexes with parentheses: a row ROW(i, T), a column COL(i, T), a bit X(i)"
    if ch == '"':
        return "Star strings are written in single quotes: writeln('hello')"
    return None


def double_equals(tok: Token, before: list[Token]) -> Diagnosis | None:
    """`if s == 10`: C's equality operator; Star compares with one '='."""
    if str(tok) != "=" or not before or str(before[-1]) != "=" or before[-1].end_pos != tok.start_pos:
        return None
    first = before[-1]
    return Diagnosis("'==' is not a Star operator", first.line, first.column,
                     hint="Star compares with a single '=' (if s = 10 then ...) and assigns with ':='")


def assignment_in_condition(tok: Token, before: list[Token]) -> Diagnosis | None:
    """`if n := 5 then`: an assignment where a condition is expected."""
    if tok.type != "ASSIGN":
        return None
    for prev in reversed(before):
        kind = _typed(prev)
        if kind in ("SEMICOLON", "BEGIN", "THEN", "DO", "ELSE", "REPEAT"):
            return None
        if kind in ("IF", "WHILE", "UNTIL"):
            word = kind.lower()
            left = " ".join(str(t) for t in before[before.index(prev) + 1:]) or "..."
            return Diagnosis(f"':=' assigns; the condition of '{word}' compares with '='", tok.line, tok.column,
                             hint=f"write '{word} {left} = ...': one '=' compares (as in Pascal)")
    return None


def diagnose(lark_parser: lark.Lark, text: str, tok: Token, expected: set[str],
             parser=None) -> Diagnosis | None:
    """``parser``: the LALR interactive parser at the error (to try inserting a word)."""
    at_end = tok.type == "$END"
    pos = len(text) if at_end else tok.start_pos
    before = _tokens_before(lark_parser, text, pos)
    if at_end or str(tok).lower() in _TOP_LEVEL or (before and str(before[-1]).lower() in _TOP_LEVEL) \
            or str(tok) == ".":
        where = "the end of the file" if at_end else f"{str(tok)!r} at line {tok.line}"
        if before and str(before[-1]).lower() in _TOP_LEVEL and not at_end:
            where = f"{str(before[-1])!r} at line {before[-1].line}"
        found = unclosed_block(text, before, where)
        if found:
            return found
    if at_end:
        if expected == {"DOT"} and before:
            return Diagnosis("missing '.' after the program's final 'end'", *_after(before[-1]))
        return None
    if len(before) >= 2 and str(before[-1]).lower() == "else" and before[-2].type == "SEMICOLON":
        semi = before[-2]
        return Diagnosis("';' before 'else' ends the 'if' statement", semi.line, semi.column,
                         hint="remove the ';' (Pascal: no ';' between the 'then' part and 'else')")
    kind = _typed(tok)
    if (kind == "END" and "UNTIL" in expected) or (kind == "UNTIL" and "END" in expected):
        # the closing word of another block: the innermost open block lacks its own
        found = unclosed_block(text, before, f"{str(tok)!r} at line {tok.line}")
        if found:
            return found
    return (double_equals(tok, before) or assignment_in_condition(tok, before)
            or chained_comparison(tok, before) or bare_expression(tok, before)
            or missing_word(tok, before, parser))
