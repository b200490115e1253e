"""Pictures of the STAR-machine: a table as a bit image, the profile as a bar chart.

matplotlib is optional (``pip install "starvm[plot]"``) and imported only when a picture is
drawn, with the non-interactive Agg backend, so nothing here needs a display.

    from starvm.ui import pictures
    pictures.table_png(P, "P.png", title="P")       # set bits dark, row 1 at the top
    pictures.profile_png(machine, "profile.png")     # steps (and times) per operation kind
    pictures.table_png_bytes(P)                      # the PNG as bytes (Jupyter display)
"""
from __future__ import annotations

import io

import numpy as np

__all__ = ["MatplotlibMissing", "table_image", "table_layout", "table_png", "table_png_bytes", "profile_png", "plt"]

# One bit is drawn as a square block of at least this many pixels, up to a picture of about
# MAX_PIXELS on its longer side (larger tables get one pixel per bit, or less).
BLOCK_PIXELS = 16
MAX_PIXELS = 1200


class MatplotlibMissing(ImportError):
    """matplotlib is not installed."""

    def __init__(self):
        super().__init__("pictures need matplotlib, which is not installed "
                         "(pip install matplotlib, or pip install \"starvm[plot]\")")


def plt():
    """matplotlib.pyplot with the Agg backend (raises MatplotlibMissing)."""
    try:
        import matplotlib
    except ImportError:
        raise MatplotlibMissing() from None
    if matplotlib.get_backend().lower() != "agg":
        try:
            matplotlib.use("Agg")
        except Exception:   # pragma: no cover - a backend already in use elsewhere
            pass
    import matplotlib.pyplot as pyplot
    return pyplot


def _bits(value, backend=None) -> np.ndarray:
    """A table, vector or array as a 2-D bool array (a slice is a column, a word a row)."""
    if hasattr(value, "to_numpy") and hasattr(value, "k"):        # a Table
        return np.asarray(value.to_numpy(), dtype=bool)
    if hasattr(value, "v") and hasattr(value, "n"):               # Bits / BitVector
        b = getattr(value, "backend", backend)
        bits = np.asarray(b.to_bools(value.v, value.n), dtype=bool)
        return bits[None, :]
    arr = np.asarray(value, dtype=bool)
    return arr[None, :] if arr.ndim == 1 else arr


def table_image(value, backend=None, vertical: bool = False) -> np.ndarray:
    """The bits as a 2-D bool array, rows top-down (``vertical``: a vector as a column)."""
    bits = _bits(value, backend)
    return bits.T if vertical and bits.shape[0] == 1 else bits


# The layout of a table picture, in pixels: the bits start LEFT pixels from the left edge and
# TOP (TOP_TITLED with a title) from the top; the picture is LEFT + k*block + RIGHT wide and
# TOP + n*block + BOTTOM high (``table_layout`` gives the numbers).
LEFT, RIGHT, TOP, TOP_TITLED, BOTTOM = 60, 16, 12, 30, 46


def block_size(n: int, k: int) -> int:
    """Pixels per bit (a square block) for an n x k table."""
    return max(1, min(BLOCK_PIXELS, MAX_PIXELS // max(n, k, 1)))


def table_layout(n: int, k: int, titled: bool = True) -> dict:
    """Where the bits of an n x k table lie in its picture: ``block`` (pixels per bit),
    ``left``/``top`` (the pixel of bit (1, 1)'s top-left corner), ``width``/``height``."""
    block = block_size(n, k)
    top = TOP_TITLED if titled else TOP
    return {"block": block, "left": LEFT, "top": top,
            "width": LEFT + k * block + RIGHT, "height": top + n * block + BOTTOM}


def _draw_table(bits: np.ndarray, title: str | None):
    pyplot = plt()
    n, k = bits.shape
    lay = table_layout(n, k, bool(title))
    dpi = 100
    w, h = lay["width"], lay["height"]
    fig = pyplot.figure(figsize=(w / dpi, h / dpi), dpi=dpi)
    ax = fig.add_axes((lay["left"] / w, BOTTOM / h, k * lay["block"] / w, n * lay["block"] / h))
    # 1 -> dark, 0 -> light; extent puts bit (r, c) at x = c, y = r with row 1 at the top
    ax.imshow(bits.astype(float), cmap="Greys", vmin=0, vmax=1, interpolation="nearest",
              aspect="auto", extent=(0.5, k + 0.5, n + 0.5, 0.5))
    for spine in ax.spines.values():     # a frame line would cover the outer bits
        spine.set_visible(False)
    ax.set_xlabel("columns", fontsize=8)
    ax.set_ylabel("rows", fontsize=8)
    ax.tick_params(labelsize=7, length=0)   # tick marks would bleed into the outer bits
    ax.xaxis.set_major_locator(_int_locator())
    ax.yaxis.set_major_locator(_int_locator())
    if title:
        ax.set_title(title, fontsize=8)
    return fig


def _int_locator():
    from matplotlib.ticker import MaxNLocator
    return MaxNLocator(nbins=8, integer=True, min_n_ticks=1)


def _save(fig, target, dpi=100) -> None:
    pyplot = plt()
    try:
        fig.savefig(target, dpi=dpi, format="png")
    finally:
        pyplot.close(fig)


def table_png(value, path, title: str | None = None, backend=None, vertical: bool = False) -> str:
    """Draw a table (or slice / word / bool array) as a bit image into the PNG file ``path``:
    one square block of pixels per bit, set bits dark, clear bits light, row 1 at the top,
    axes labelled rows and columns. Returns the path."""
    bits = table_image(value, backend, vertical)
    if title is None and hasattr(value, "k"):
        title = f"table {bits.shape[0]} x {bits.shape[1]}"
    _save(_draw_table(bits, title), path)
    return str(path)


def table_png_bytes(value, title: str | None = None, backend=None) -> bytes:
    """The picture of ``table_png`` as PNG bytes."""
    buf = io.BytesIO()
    table_png(value, buf, title, backend)
    return buf.getvalue()


def profile_png(machine, path, title: str | None = None) -> str:
    """The machine's steps per operation kind as a horizontal bar chart in the PNG ``path``;
    with the times next to it when the machine was profiled (``machine.profile``)."""
    from ..ir.ops import BASE_OPS, OP_TITLES
    rows = [(OP_TITLES[op], c, t) for op, c, t in zip(BASE_OPS, machine.counts, machine.times) if c]
    timed = machine.profile and any(t for _, _, t in rows)
    pyplot = plt()
    names = [r[0] for r in rows] or ["(no steps)"]
    counts = [r[1] for r in rows] or [0]
    height = 1.2 + 0.3 * len(names)
    fig, axes = pyplot.subplots(1, 2 if timed else 1, figsize=(10 if timed else 6, height), dpi=100,
                                squeeze=False, sharey=True)
    ypos = np.arange(len(names))
    ax = axes[0][0]
    ax.barh(ypos, counts, color="#4c72b0")
    ax.set_yticks(ypos, names)
    ax.invert_yaxis()
    ax.set_xlabel("steps")
    if timed:
        ax2 = axes[0][1]
        ax2.barh(ypos, [r[2] * 1e3 for r in rows], color="#dd8452")
        ax2.set_xlabel("time, ms")
    fig.suptitle(title or f"STAR-machine steps ({machine.backend.name} backend, total {sum(counts)})", fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    return str(path)


def png_or_none(value, title: str | None = None):
    """``table_png_bytes``, or None where matplotlib is missing or the picture cannot be
    drawn (what Jupyter's ``_repr_png_`` wants: None means "no picture")."""
    try:
        return table_png_bytes(value, title)
    except Exception:
        return None
