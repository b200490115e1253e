"""The sandbox rule (docs/sandbox.md): a Star program reaches no Python object, no environment
variable and no file other than those the user named. Generated code runs with a tiny
__builtins__; Star names are prefixed (g_, v_, r_) so they cannot collide with generated names;
string literals are emitted with ascii() and cannot escape into code."""
from __future__ import annotations

import io
import types

import pytest

import starvm
from starvm.runtime import machine as machine_mod


def run(src: str) -> str:
    out = io.StringIO()
    starvm.Machine(out=out).run(src, "sandbox.star")
    return out.getvalue()


DANGEROUS = ["__import__", "open", "eval", "exec", "compile", "getattr", "setattr", "globals", "locals", "vars",
             "print", "input", "breakpoint", "__builtins__", "__loader__", "__spec__", "range", "str", "type",
             "object", "None", "_op_or", "_writeln", "_write", "_new_table", "_Bits", "_UN", "_tick", "g_x",
             "v_x", "r_p", "init_", "main_", "_SAFE_BUILTINS", "os", "sys", "self", "machine", "starvm"]


@pytest.mark.parametrize("name", DANGEROUS)
def test_python_names_are_unknown_star_names(name):
    for src in (f"begin {name}('os') end.", f"begin writeln({name}) end.", f"var x: integer;\nbegin x := {name} end."):
        with pytest.raises(starvm.StarTypeError) as e:
            run(src)
        assert e.value.loc is not None and "unknown" in e.value.message, e.value.message


def test_identifiers_that_look_like_generated_names_are_ordinary_variables():
    src = """var v_x, g_x, _op_or, __builtins__, _tick, result_, init_, main_, _k0_0, _t0, _saved0: integer;
proc r_p(var _op_or: integer); var v_x: integer; begin v_x := 5; _op_or := v_x + 1 end;
function g_x_(__import__: integer): integer; begin g_x_ := __import__ * 2 end;
proc __builtins__2(var open: slice); begin SET(open) end;
var eval: slice;
begin
  v_x := 1; g_x := 2; __builtins__ := 3; r_p(_op_or); _tick := 7; result_ := 8; init_ := 9; main_ := 10;
  _k0_0 := g_x_(21); _t0 := 11; _saved0 := 12;
  eval := BITS('010'); __builtins__2(eval);
  writeln(v_x, ' ', g_x, ' ', __builtins__, ' ', _op_or, ' ', _tick, ' ', result_, ' ', init_, ' ', main_, ' ',
          _k0_0, ' ', _t0, ' ', _saved0, ' ', eval)
end.
"""
    assert run(src) == "1 2 3 6 7 8 9 10 42 11 12 111\n"


def test_string_literals_cannot_escape_into_code():
    src = ("begin\n"
           "  writeln('\\''); __import__(''os'').system(''echo pwned'') #');\n"
           "  writeln('\"\"\"; raise SystemExit #', '\\x00\\n{}', '''');\n"
           "  writeln('\u00e9\u4e2d')\n"
           "end.\n")
    assert run(src) == ("\\'); __import__('os').system('echo pwned') #\n"
                        "\"\"\"; raise SystemExit #\\x00\\n{}'\n"
                        "\u00e9\u4e2d\n")


def test_generated_code_sees_only_a_tiny_builtins():
    assert set(machine_mod._SAFE_BUILTINS) == {"range", "str", "True", "False", "None"}
    m = starvm.Machine(out=io.StringIO())
    m.run("var x: integer; T: table(2, 2);\nbegin x := 1; writeln(x) end.")
    assert m.ns["__builtins__"] is machine_mod._SAFE_BUILTINS
    for name, value in m.ns.items():
        assert not isinstance(value, types.ModuleType), name
        assert value not in (open, eval, exec, getattr, __import__, compile), name


def test_generated_source_uses_only_prefixed_star_names():
    gen = starvm.Machine().compile("var open, eval: integer;\nproc exec(var getattr: integer);\n"
                                   "begin getattr := 1 end;\nbegin exec(open); eval := open end.")
    import re
    idents = set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", gen.source))
    assert not idents & {"open", "eval", "exec", "getattr"}
    assert {"g_open", "g_eval", "r_exec", "v_getattr"} <= idents


def test_bits_literal_accepts_only_binary_digits():
    with pytest.raises(starvm.StarError):
        run("var w: word;\nbegin w := BITS('1 or __import__'); writeln(w) end.")


def test_stdlib_lookup_cannot_name_a_path():
    for name in ["..", "etc/passwd", "WARSHALL/../x"]:
        with pytest.raises(starvm.StarError):
            run(f"var P: table(2, 2);\nbegin {name}(2, P) end.")
