"""starvm/ui/pictures.py, `star show`, `star run --plot` and the REPL's :plot: the PNGs are read
back and checked pixel by pixel (set bits dark, clear bits light, row 1 at the top)."""
from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import starvm
from starvm.ui import cli

pytest.importorskip("matplotlib", reason="pictures need matplotlib (pip install \".[test]\")")
from matplotlib.image import imread  # noqa: E402

from starvm.ui import pictures  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

PROGRAM = """\
var P: table(5, 7); n: integer;
begin
  ROW(1, P) := BITS('1000000');
  ROW(3, P) := BITS('0011010');
  ROW(5, P) := BITS('1111111');
  n := 3
end.
"""
EXPECTED = ["1000000", "0000000", "0011010", "0000000", "1111111"]


def _read_bits(png, n: int, k: int, titled: bool = True) -> list[str]:
    """The bits drawn in a table picture: the shade at the centre of each bit's block."""
    img = imread(png)
    lay = pictures.table_layout(n, k, titled)
    assert img.shape[:2] == (lay["height"], lay["width"])
    b = lay["block"]
    rows = []
    for r in range(n):
        row = ""
        for c in range(k):
            shade = img[lay["top"] + r * b + b // 2, lay["left"] + c * b + b // 2, :3].mean()
            assert shade < 0.25 or shade > 0.75, f"bit ({r + 1}, {c + 1}) is neither dark nor light"
            row += "1" if shade < 0.5 else "0"
        rows.append(row)
    return rows


def _bits(rows):
    return np.array([[c == "1" for c in r] for r in rows])


def test_table_png_pixels(tmp_path):
    m = starvm.Machine(backend="numpy")
    T = m.table(_bits(EXPECTED))
    out = pictures.table_png(T, tmp_path / "t.png", title="T")
    assert Path(out).read_bytes()[:8] == PNG_MAGIC
    assert _read_bits(out, 5, 7) == EXPECTED
    # every bit is a square block of the same size; the whole image is that size
    lay = pictures.table_layout(5, 7)
    assert lay["block"] == pictures.BLOCK_PIXELS
    assert imread(out).shape[:2] == (lay["top"] + 5 * lay["block"] + pictures.BOTTOM,
                                     pictures.LEFT + 7 * lay["block"] + pictures.RIGHT)


def test_table_png_big_table_one_pixel_per_bit(tmp_path):
    rng = np.random.default_rng(3)
    bits = rng.random((700, 90)) < 0.3
    m = starvm.Machine(backend="numpy")
    out = pictures.table_png(m.table(bits), tmp_path / "big.png")
    lay = pictures.table_layout(700, 90)
    assert lay["block"] == 1
    got = _read_bits(out, 700, 90)
    assert _bits(got).tolist() == bits.tolist()


def test_png_bytes_and_repr_png():
    m = starvm.Machine(backend="numpy")
    T = m.table(np.eye(3, dtype=bool))
    data = T._repr_png_()
    assert data[:8] == PNG_MAGIC
    assert _read_bits(io.BytesIO(data), 3, 3) == ["100", "010", "001"]


def test_repr_png_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    m = starvm.Machine(backend="numpy")
    assert m.table(np.eye(2, dtype=bool))._repr_png_() is None


def test_vector_picture(tmp_path):
    m = starvm.Machine(backend="numpy")
    out = pictures.table_png(m.word([1, 0, 1, 1]), tmp_path / "w.png", title="w")
    assert _read_bits(out, 1, 4) == ["1011"]
    out = pictures.table_png(m.slice([1, 0, 1]), tmp_path / "s.png", title="s", vertical=True)
    assert _read_bits(out, 3, 1) == ["1", "0", "1"]


def test_profile_png(tmp_path):
    m = starvm.Machine(backend="numpy", out=io.StringIO())
    m.profile = True
    m.run((ROOT / "programs" / "warshall_c.star").read_text(), "warshall_c.star")
    out = pictures.profile_png(m, tmp_path / "prof.png")
    img = imread(out)
    assert Path(out).read_bytes()[:8] == PNG_MAGIC and img.ndim == 3 and img.shape[1] > 500
    m2 = starvm.Machine(backend="numpy")   # no steps at all: still a valid picture
    assert imread(pictures.profile_png(m2, tmp_path / "empty.png")).ndim == 3


# ---------------------------------------------------------------------- the command line
def test_star_show(tmp_path, capsys):
    src = tmp_path / "p.star"
    src.write_text(PROGRAM)
    png = tmp_path / "P.png"
    assert cli.main(["show", str(src), "--table", "p", "--png", str(png)]) == 0
    err = capsys.readouterr().err
    assert "wrote" in err and "5 x 7" in err
    assert _read_bits(png, 5, 7) == EXPECTED


def test_star_show_warshall(tmp_path, capsys):
    png = tmp_path / "w.png"
    assert cli.main(["show", str(ROOT / "programs" / "warshall_c.star"), "--table", "P", "--png", str(png)]) == 0
    closure = capsys.readouterr().out.split(":\n", 1)[1].split()
    assert _read_bits(png, 8, 8) == closure


@pytest.mark.parametrize("name, message", [("Q", "no global variable 'Q' (its global tables: P)"),
                                           ("n", "'n' is an integer, not a table")])
def test_star_show_bad_name(tmp_path, capsys, name, message):
    src = tmp_path / "p.star"
    src.write_text(PROGRAM)
    png = tmp_path / "x.png"
    assert cli.main(["show", str(src), "--table", name, "--png", str(png)]) == 2
    assert message in capsys.readouterr().err
    assert not png.exists()


def test_star_show_errors(tmp_path, capsys):
    bad = tmp_path / "bad.star"
    bad.write_text("var P: table(2, 2);\nbegin ROW(3, P) := BITS('11') end.\n")
    assert cli.main(["show", str(bad), "--table", "P", "--png", str(tmp_path / "x.png")]) == 1
    assert "bad.star:2:" in capsys.readouterr().err
    assert cli.main(["show", str(tmp_path / "missing.star"), "--table", "P", "--png", "x.png"]) == 2
    with pytest.raises(SystemExit) as e:     # --table and --png are required
        cli.main(["show", str(bad)])
    assert e.value.code == 2


def test_star_run_profile_plot(tmp_path):
    png = tmp_path / "prof.png"
    r = subprocess.run([sys.executable, "-m", "starvm", "run", "--profile", "--plot", str(png),
                        str(ROOT / "programs" / "warshall_c.star")], capture_output=True, text=True,
                       cwd=str(ROOT), timeout=120)
    assert r.returncode == 0, r.stderr
    assert "COL read" in r.stderr and f"wrote {png}" in r.stderr
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert imread(png).ndim == 3


# ---------------------------------------------------------------------- the REPL
def test_repl_plot_uses_pictures(tmp_path):
    from starvm.ui.repl import Session
    s = Session(backend="numpy", out=io.StringIO())
    s.feed("var P: table(5, 7); X: slice(P);")
    s.feed("ROW(1, P) := BITS('1000000'); ROW(3, P) := BITS('0011010'); ROW(5, P) := BITS('1111111')")
    png = tmp_path / "P.png"
    assert s.feed(f":plot P {png}").strip() == f"wrote {png}"
    assert _read_bits(png, 5, 7) == EXPECTED
    s.feed("X := COL(1, P)")
    assert _read_bits(s.feed(f":plot X {tmp_path / 'x.png'}").split()[-1], 5, 1) == list("10001")
