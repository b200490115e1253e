"""Map a Python traceback through generated code back to Star positions and a Star call stack."""
from __future__ import annotations

import dis

from ..errors import Frame, Loc
from ..targets.python.codegen import GeneratedUnit


def _position(tb) -> tuple[int | None, int | None, int | None]:
    """The (line, col, end_col) of the instruction a traceback entry stopped at."""
    code = tb.tb_frame.f_code
    try:
        positions = list(code.co_positions())
        line, _end_line, col, end_col = positions[tb.tb_lasti // 2]
    except (AttributeError, IndexError):
        return tb.tb_lineno, None, None
    if line is None and tb.tb_lineno is None:   # an instruction of no line: a loop's back edge
        return _line_near(code, tb.tb_lasti, positions), None, None
    return (line or tb.tb_lineno), col, end_col


def _line_near(code, lasti: int, positions: list) -> int | None:
    """The line of an instruction that has none (a Ctrl-C taken there): a jump's target's (a
    loop's back edge: the loop's statement, as the compiled tier's poll there reports), else
    the nearest preceding instruction's with one."""
    for ins in dis.get_instructions(code):
        if ins.offset == lasti:
            if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
                target = positions[ins.argval // 2][0] if isinstance(ins.argval, int) else None
                if target is not None:
                    return target
            break
    for line, *_ in reversed(positions[:lasti // 2]):
        if line is not None:
            return line
    return None


def star_frames(tb, units: dict[str, GeneratedUnit], limit: int = 200) -> list[Frame]:
    """Star frames of a traceback, outermost first."""
    frames: list[Frame] = []
    while tb is not None:
        code = tb.tb_frame.f_code
        unit = units.get(code.co_filename)
        if unit is not None and code.co_name in unit.routine_names:
            line, col, end_col = _position(tb)
            frame = Frame(unit.routine_names[code.co_name], _loc_at(unit, line, col, end_col))
            if code.co_name in unit.outlined and frames:
                frames[-1] = frame    # a deeply nested statement's closure: its routine's frame, further in
            else:
                frames.append(frame)
        tb = tb.tb_next
    return shortened(frames, limit)


def shortened(frames: list[Frame], limit: int) -> list[Frame]:
    """A deep stack as its outermost and innermost limit/2 frames."""
    if len(frames) > limit:
        keep = limit // 2
        frames = frames[:keep] + [Frame(f"... {len(frames) - 2 * keep} more frames ...", None)] + frames[-keep:]
    return frames


def _loc_at(unit: GeneratedUnit, line: int | None, col: int | None, end_col: int | None) -> Loc | None:
    info = unit.lines.get(line)
    if info is None:
        return None
    if col is not None and end_col is not None:
        best = None
        for start, end, loc in info.spans:
            if start <= col and end_col <= end:
                if best is None or (end - start) < (best[1] - best[0]):
                    best = (start, end, loc)
        if best is not None:
            return best[2]
    return info.loc
