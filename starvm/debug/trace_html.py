"""The replay page: one self-contained HTML file (its CSS, JavaScript and the trace inline;
no server, no network) that steps forwards and backwards through a recorded run
(``trace.py``). The page itself is ``trace_page.html``; the trace goes into its
``<script type="application/json">``."""
from __future__ import annotations

import json
from pathlib import Path

_TEMPLATE = Path(__file__).with_name("trace_page.html")
_PLACEHOLDER = "__TRACE_DATA__"


def trace_json(trace: dict) -> str:
    return json.dumps(trace, separators=(",", ":"))


def render_html(trace: dict) -> str:
    """The page for a trace, as one string."""
    # inside <script>, "</" could end the element early: JSON allows "<\/" for it
    data = trace_json(trace).replace("</", "<\\/").replace("<!--", "<\\u0021--")
    page = _TEMPLATE.read_text(encoding="utf-8")
    head, tail = page.split(_PLACEHOLDER)
    return head + data + tail


def write_html(trace: dict, path: str | Path) -> int:
    """Write the page; returns its size in bytes."""
    text = render_html(trace)
    Path(path).write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


def write_json(trace: dict, path: str | Path) -> int:
    text = trace_json(trace)
    Path(path).write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))
