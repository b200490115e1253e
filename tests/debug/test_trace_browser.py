"""The replay page in a real headless Chromium (Debian's chromium and chromium-driver, driven
by Selenium): stepping forwards and backwards by clicking and by keys, jumping to a
variable's next change, and at every position the marked line, the drawn bits, the scalar
values and the marked (changed) bits checked against the debugger at the same event.

Skips only when Chromium or its driver is not installed (.ci/run installs both); with
STARVM_DOCS_SCREENSHOT=PATH the test also saves the screenshot docs/debugging.md shows."""
from __future__ import annotations

import io
import os
import shutil

import pytest

from star_programs import RECURSIVE, random_digraph, warshall_c_program
from starvm.debug import Debugger
from starvm.debug.trace import record
from starvm.debug.trace_html import write_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,1000"]

pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="Chromium and chromedriver are not installed "
                                "(apt-get install chromium chromium-driver; .ci/run does)")

_READ_PAGE = """
const cur = document.querySelector('#code .ln.cur');
return {
  event: +document.body.dataset.event,
  line: cur ? +cur.dataset.line : null,
  status: document.getElementById('status').textContent,
  vars: [...document.querySelectorAll('#vars .var')].map(v => ({
    name: v.dataset.name, scope: v.dataset.scope, type: v.dataset.type,
    rows: [...v.querySelectorAll('.row .bits')].map(b => b.textContent),
    marks: [...v.querySelectorAll('.row')].flatMap(r => [...r.querySelectorAll('b')].map(b => [+r.dataset.row, +b.dataset.col])),
  })),
  scalars: [...document.querySelectorAll('#vars .scalars span')].map(s => [s.dataset.name, s.textContent]),
};
"""


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _key(browser, key):
    from selenium.webdriver.common.by import By
    browser.find_element(By.TAG_NAME, "body").send_keys(key)


def _click(browser, element_id):
    from selenium.webdriver.common.by import By
    browser.find_element(By.ID, element_id).click()


def _key_of(var: dict, routine: str | None) -> str:
    return var["name"] if var["scope"] == "global" else f"{var['scope']}.{var['name']}"


def _check_page_against_debugger(page: dict, d: Debugger, previous: dict | None) -> None:
    e = page["event"]
    stop = d.run_to(e)
    assert page["line"] == stop.line, page["status"]
    assert f"event {e} / " in page["status"] and f"steps {stop.steps}" in page["status"]
    state = d.variables()
    for var in page["vars"]:
        key = _key_of(var, None)
        want = state[key]
        if want is None:
            assert var["rows"] == []
            continue
        if var["type"] == "slice":          # a slice is drawn as a column: one bit per row
            assert all(len(r) == 1 for r in var["rows"]), key
            got = "".join(var["rows"])
        else:
            got = tuple(var["rows"]) if isinstance(want, tuple) else var["rows"][0]
        assert got == want, key
        # the marked bits are exactly those the statement just run flipped
        if previous is not None and previous.get(key) is not None and len(previous[key]) == len(want):
            if isinstance(want, tuple):
                flips = {(r + 1, c + 1) for r, (a, b) in enumerate(zip(previous[key], want))
                         for c in range(len(a)) if a[c] != b[c]}
            elif var["type"] == "slice":    # bit r of a slice: row r, its only column
                flips = {(c + 1, 1) for c in range(len(want)) if previous[key][c] != want[c]}
            else:
                flips = {(1, c + 1) for c in range(len(want)) if previous[key][c] != want[c]}
            assert set(map(tuple, var["marks"])) == flips, key
    for name, text in page["scalars"]:
        key = name if f"{stop.routine}.{name}" not in state else f"{stop.routine}.{name}"
        value = state[key]
        shown = "(not assigned)" if value is None else ("true" if value is True else "false" if value is False else str(value))
        assert text == f"{name} = {shown}"


def _state_before(d: Debugger, event: int) -> dict | None:
    if event <= 1:
        return None
    d.run_to(event - 1)
    return d.variables()


def test_step_forward_and_back_by_clicks_and_keys(browser, tmp_path):
    from selenium.webdriver.common.keys import Keys
    adj = random_digraph(9, 31, p=0.3)
    text = warshall_c_program(adj)
    trace = record(text, "wc.star")
    page_file = tmp_path / "wc.html"
    write_html(trace, page_file)
    browser.get(page_file.as_uri())
    assert browser.execute_script("return document.body.dataset.ready") == "1"
    assert browser.get_log("browser") == [] if hasattr(browser, "get_log") else True
    moves = [("click", "fwd")] * 4 + [("key", Keys.ARROW_RIGHT)] * 3 + [("click", "back"), ("key", Keys.ARROW_LEFT),
             ("key", "j"), ("click", "nextchg"), ("key", "]"), ("key", Keys.ARROW_RIGHT), ("click", "prevchg"),
             ("key", "k"), ("key", Keys.END), ("key", Keys.ARROW_LEFT), ("key", Keys.HOME)]
    events = []
    with Debugger(text, "wc.star", out=io.StringIO()) as d:
        d.start()
        for how, what in moves:
            if how == "click":
                _click(browser, what)
            else:
                _key(browser, what)
            page = browser.execute_script(_READ_PAGE)
            events.append(page["event"])
            if page["line"] is None:        # the final event: the state after the run
                assert "finished" in page["status"]
                continue
            previous = _state_before(d, page["event"])
            _check_page_against_debugger(page, d, previous)
    assert events[:9] == [2, 3, 4, 5, 6, 7, 8, 7, 6]
    assert events[-3:] == [len(trace["events"]), len(trace["events"]) - 1, 1]
    shot = os.environ.get("STARVM_DOCS_SCREENSHOT")
    if shot:   # docs/img/trace_page.png: the page at a Warshall pivot, a column just written
        inside = [i + 1 for i, ev in enumerate(trace["events"]) if ev[5] == 2 and 0 in ev[6]]   # depth, changed
        browser.execute_script("document.getElementById('slider').value = arguments[0];"
                               "document.getElementById('slider').dispatchEvent(new Event('input'));",
                               inside[len(inside) // 2])
        browser.save_screenshot(shot)


def test_jump_to_next_change_of_a_chosen_variable_and_play(browser, tmp_path):
    from selenium.webdriver.support.ui import Select
    from selenium.webdriver.common.by import By
    trace = record(RECURSIVE, "rec.star")
    page_file = tmp_path / "rec.html"
    write_html(trace, page_file)
    browser.get(page_file.as_uri())
    X = next(i for i, v in enumerate(trace["vars"]) if v["name"] == "X" and v["scope"] == "global")
    option = browser.find_element(By.CSS_SELECTOR, '#chvar option[data-name="X"][data-scope="global"]')
    Select(browser.find_element(By.ID, "chvar")).select_by_value(option.get_attribute("value"))
    seen = []
    for _ in range(len(trace["vars"][X]["ch"])):
        _click(browser, "nextchg")
        seen.append(browser.execute_script(_READ_PAGE)["event"])
    assert seen == [c[0] for c in trace["vars"][X]["ch"]]
    with Debugger(RECURSIVE, "rec.star", out=io.StringIO()) as d:
        d.start()
        for e in seen:
            browser.execute_script("document.getElementById('slider').value = arguments[0];"
                                   "document.getElementById('slider').dispatchEvent(new Event('input'));", e)
            page = browser.execute_script(_READ_PAGE)
            _check_page_against_debugger(page, d, _state_before(d, e))
    # a local: the changes of every activation of the routine, in order
    want = sorted({c[0] for v in trace["vars"] if v["name"] == "a" and v["scope"] == "FIB" for c in v["ch"]})
    option = browser.find_element(By.CSS_SELECTOR, '#chvar option[data-name="a"][data-scope="FIB"]')
    assert "activations" in option.text
    Select(browser.find_element(By.ID, "chvar")).select_by_value(option.get_attribute("value"))
    _key(browser, "\ue011")                 # Home
    seen = []
    for _ in range(len(want)):
        _key(browser, "]")
        seen.append(browser.execute_script(_READ_PAGE)["event"])
    assert seen == want and len(want) > 3
    # play runs to the end by itself
    _key(browser, "\ue011")                 # Home
    Select(browser.find_element(By.ID, "speed")).select_by_visible_text("fast")
    _click(browser, "play")
    import time
    deadline = time.time() + 30
    while time.time() < deadline and browser.execute_script("return +document.body.dataset.event") < len(trace["events"]):
        time.sleep(0.2)
    assert browser.execute_script("return +document.body.dataset.event") == len(trace["events"])


_LAYOUT = """
const out = {};
for (const v of document.querySelectorAll('#vars .var')) {
  const cols = v.querySelector('.cols');
  const cell = v.querySelector('.row .bits > *');
  const r = cell ? cell.getBoundingClientRect() : null;
  out[v.dataset.scope + '.' + v.dataset.name] = {
    head: v.querySelector('.head').textContent, type: v.dataset.type,
    columns: cols ? [...cols.querySelectorAll('.bits > u')].map(u => u.textContent) : null,
    rows: v.querySelectorAll('.row').length,
    cell: r ? [r.width, r.height] : null,
    x: [...v.querySelectorAll('.row .bits > *')].map(c => Math.round(c.getBoundingClientRect().left)),
  };
}
const code = document.getElementById('code');
const long = [...code.querySelectorAll('.ln')].find(l => l.textContent.includes('LONG-COMMENT'));
out.code = {overflows: code.scrollWidth > code.clientWidth + 1,
            long_height: long.getBoundingClientRect().height,
            line_height: [...code.querySelectorAll('.ln')].find(l => l.querySelector('.tx').textContent === 'begin').getBoundingClientRect().height,
            long_text: long.querySelector('.tx').textContent};
out.options = [...document.querySelectorAll('#chvar option')].map(o => o.textContent);
return out;
"""

LAYOUT_PROGRAM = """\
var T: table(3, 12); Wide: table(2, 120); X, Y: slice(T); w: word(T);
{ LONG-COMMENT: a comment line much longer than the source pane is wide, which the page wraps under its own text instead of clipping it at the right edge }
begin
  X(2) := 1;
  Y := X;
  COL(5, T) := X;
  w := ROW(2, T)
end.
"""


def test_layout_slices_vertical_column_numbers_readable_cells_wrapped_lines(browser, tmp_path):
    """Issue 37: a slice is drawn as a column (one bit per row, top down), tables and words
    carry their column numbers, cells are at least 16 px, "1 one" (not "1 ones"), and a long
    source line wraps instead of being clipped."""
    trace = record(LAYOUT_PROGRAM, "layout.star")
    page_file = tmp_path / "layout.html"
    write_html(trace, page_file)
    browser.get(page_file.as_uri())
    browser.execute_script("document.getElementById('slider').value = arguments[0];"
                           "document.getElementById('slider').dispatchEvent(new Event('input'));", len(trace["events"]))
    got = browser.execute_script(_LAYOUT)
    x, t, w, wide = got["global.X"], got["global.T"], got["global.w"], got["global.Wide"]
    assert x["type"] == "slice" and x["rows"] == 3 and x["columns"] is None
    assert len(set(x["x"])) == 1                           # its bits one above the other
    assert x["head"] == "X: slice of 3 bits, 1 one"
    assert t["head"] == "T: table 3 x 12, 1 one" and t["rows"] == 3
    assert t["columns"] == [str(c) for c in range(1, 13)]
    assert w["head"] == "w: word of 12 bits, 1 one" and w["rows"] == 1 and w["columns"] == [str(c) for c in range(1, 13)]
    assert wide["columns"] == ["1" if c == 1 else str(c) if c % 10 == 0 else "" for c in range(1, 121)]
    assert wide["head"] == "Wide: table 2 x 120, 0 ones"
    assert min(t["cell"]) >= 16 and min(x["cell"]) >= 16
    assert not got["code"]["overflows"]                   # nothing clipped: the long line wraps
    assert got["code"]["long_height"] >= 2 * got["code"]["line_height"]
    assert got["code"]["long_text"].startswith("{ LONG-COMMENT") and got["code"]["long_text"].endswith("right edge }")
    assert "X · 1 change" in got["options"] and "Y · 1 change" in got["options"]
    if os.environ.get("STARVM_LAYOUT_SCREENSHOT"):
        browser.save_screenshot(os.environ["STARVM_LAYOUT_SCREENSHOT"])
