"""Device cost models as data: the TOML files of starvm/costs/models/, read and checked.

A model names the primitives of its device (a DRAM row read, a bit-serial logic step, a CAM
compare cycle, ...) with their time and energy, and maps every base operation of Star
(``starvm.ir.ops.BASE_OPS``) to a number of those primitives. Each number that comes from a
publication carries its source in the file; a derived one says how it was derived; one that
no source gives says "assumed" and why. docs/costs.md describes the format.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..ir.ops import BASE_OPS

WHERE = ("array", "control")     # an operation over the machine's rows, or one of its control unit
SCALES = ("none", "width", "width64", "log2rows")


class ModelError(ValueError):
    """A model file that cannot be used: what is wrong and where."""


@dataclass(frozen=True)
class Primitive:
    name: str
    title: str
    time: float                  # in the model's time unit, per use (per bit with per_bit)
    energy_pj: float | None      # per use, per energy_bits lanes when energy_bits > 0
    energy_bits: int             # 0: energy per use; else energy_pj per this many lanes
    per_bit: bool                # time and energy scale with the lanes the use covers (a transfer)
    source: str


@dataclass(frozen=True)
class OpCost:
    kind: str                    # a BASE_OPS name: AND, COL_GET, ...
    where: str                   # "array": repeated per pass over the rows; "control": once
    scale: str                   # none | width (x k) | width64 (x ceil(k/64)) | log2rows (x ceil(log2 p))
    uses: dict[str, float]       # primitive name -> uses per operation (per pass on the array)
    note: str


@dataclass(frozen=True)
class Model:
    name: str
    title: str
    family: str
    time_unit: str               # "ns" (reported in seconds) or "step" (the unit-cost model)
    lanes: int                   # rows the device processes in one pass (0: all of them)
    lanes_source: str
    large_tables: str            # how tables taller than the device are handled
    background_mw: float | None  # static power while the run lasts; None: not modelled
    background_source: str
    primitives: dict[str, Primitive]
    ops: dict[str, OpCost]
    words: OpCost                # a shared kind (and, or, ..., SOME) the program applies to words
    sources: list[str] = field(default_factory=list)
    leaves_out: list[str] = field(default_factory=list)
    validation: list[dict] = field(default_factory=list)
    path: str = ""

    @property
    def has_energy(self) -> bool:
        return any(p.energy_pj is not None for p in self.primitives.values())


def _need(table: dict, key: str, where: str, kind: type):
    """table[key], which must be there and of ``kind`` (a bool is not an int here)."""
    if key not in table:
        raise ModelError(f"{where}: missing '{key}'")
    value = table[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ModelError(f"{where}: '{key}' must be {kind.__name__}, not {value!r}")
    return value


_REQUIRED = object()


def _number(table: dict, key: str, where: str, default=_REQUIRED) -> float | None:
    if key not in table:
        if default is _REQUIRED:
            raise ModelError(f"{where}: missing '{key}'")
        return default
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ModelError(f"{where}: '{key}' must be a number >= 0, not {value!r}")
    return float(value)


def parse_model(data: dict, path: str = "<model>") -> Model:
    """A Model from the parsed TOML of a model file; ModelError says what is wrong."""
    name = _need(data, "name", path, str)
    where = f"{path} ({name})"
    time_unit = data.get("time_unit", "ns")
    if time_unit not in ("ns", "step"):
        raise ModelError(f"{where}: time_unit must be 'ns' or 'step', not {time_unit!r}")
    device = _need(data, "device", where, dict)
    lanes = _need(device, "lanes", f"{where} [device]", int)
    if lanes < 0:
        raise ModelError(f"{where} [device]: lanes must be >= 0 (0: every row in one pass)")
    prims: dict[str, Primitive] = {}
    for pname, p in _need(data, "primitives", where, dict).items():
        pw = f"{where} [primitives.{pname}]"
        if not isinstance(p, dict):
            raise ModelError(f"{pw}: must be a table")
        prims[pname] = Primitive(
            name=pname, title=p.get("title", pname), time=_number(p, "time", pw),
            energy_pj=_number(p, "energy_pj", pw, None), energy_bits=int(_number(p, "energy_bits", pw, 0.0)),
            per_bit=bool(p.get("per_bit", False)), source=_need(p, "source", pw, str))
    ops: dict[str, OpCost] = {}
    table = _need(data, "ops", where, dict)
    kinds = [op.name for op in BASE_OPS]
    unknown = sorted(set(table) - set(kinds))
    if unknown:
        raise ModelError(f"{where} [ops]: not base operations: {', '.join(unknown)} (they are {', '.join(kinds)})")
    missing = [k for k in kinds if k not in table]
    if missing:
        raise ModelError(f"{where} [ops]: every base operation needs a cost; missing {', '.join(missing)}")
    for kind in kinds:
        ops[kind] = _op_cost(kind, table[kind], f"{where} [ops.{kind}]", prims)
    words = _op_cost("words", _need(data, "words", where, dict), f"{where} [words]", prims, on="control")
    return Model(
        name=name, title=_need(data, "title", where, str), family=_need(data, "family", where, str),
        time_unit=time_unit, lanes=lanes, lanes_source=_need(device, "lanes_source", f"{where} [device]", str),
        large_tables=_need(device, "large_tables", f"{where} [device]", str),
        background_mw=_number(device, "background_mw", f"{where} [device]", None),
        background_source=device.get("background_source", ""),
        primitives=prims, ops=ops, words=words, sources=list(data.get("sources", [])),
        leaves_out=list(data.get("leaves_out", [])), validation=list(data.get("validation", [])), path=path)


def _op_cost(kind: str, o, ow: str, prims: dict, on: str | None = None) -> OpCost:
    if not isinstance(o, dict):
        raise ModelError(f"{ow}: must be a table")
    where = on or o.get("on", "array")
    if where not in WHERE:
        raise ModelError(f"{ow}: 'on' must be one of {', '.join(WHERE)}, not {where!r}")
    scale = o.get("scale", "none")
    if scale not in SCALES:
        raise ModelError(f"{ow}: 'scale' must be one of {', '.join(SCALES)}, not {scale!r}")
    uses = {}
    for key in o:
        if key in ("on", "scale", "note"):
            continue
        if key not in prims:
            raise ModelError(f"{ow}: '{key}' is no primitive of this model (it has {', '.join(prims)})")
        uses[key] = _number(o, key, ow)
    return OpCost(kind, where, scale, uses, o.get("note", ""))


def load_file(path: str | Path) -> Model:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise ModelError(f"cannot read {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ModelError(f"{path}: not valid TOML: {e}") from None
    return parse_model(data, str(path))


def _shipped() -> dict[str, Path]:
    folder = resources.files(__package__) / "models"
    return {p.name[:-5]: Path(str(p)) for p in folder.iterdir() if p.name.endswith(".toml")}


def model_names() -> list[str]:
    """The models shipped with starvm, by name (the file name without .toml)."""
    return sorted(_shipped())


def load_model(name: str) -> Model:
    """A shipped model by name, or a model file by path (a name ending in .toml)."""
    if name.endswith(".toml"):
        return load_file(name)
    files = _shipped()
    if name not in files:
        raise ModelError(f"unknown cost model '{name}' (available: {', '.join(sorted(files))})")
    return load_file(files[name])
