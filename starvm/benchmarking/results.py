"""Result files: every benchmark writes NAME.json and NAME.md, both opening with the same
header (what ran, when, on which machine and device, at which git state)."""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from .environment import device_info, device_label, machine_info


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def document(benchmark: str, title: str, *, machine: dict | None = None, device: dict | None = None,
             extra_versions: tuple[str, ...] = (), **fields) -> dict:
    """A result document's header fields — ``benchmark``, ``title``, ``date``, ``machine``
    (environment.machine_info), ``device`` (its name in words) and ``device_info``
    (environment.device_info) — then ``fields``."""
    machine = machine if machine is not None else machine_info(extra_versions)
    device = device if device is not None else device_info()
    return {"benchmark": benchmark, "title": title, "date": now(), "machine": machine,
            "device": device_label(device, machine), "device_info": device, **fields}


def header_line(doc: dict) -> str:
    """date · CPU, cores, load · Python · NumPy [· SciPy] · starvm [· GPU · CuPy · CUDA] [· git]."""
    mi, dev = doc["machine"], doc.get("device_info") or {}
    usable = mi.get("cpus_usable")
    cores = f"{mi.get('cpu_count')} cores" + (f" ({usable} usable)" if usable and usable != mi.get("cpu_count") else "")
    if mi.get("load_average_1min") is not None:
        cores += f", load {mi['load_average_1min']:g}"
    parts = [doc["date"], f"{mi.get('cpu_model', '?')}, {cores}", f"Python {mi.get('python')}",
             f"NumPy {mi.get('numpy')}"]
    if mi.get("scipy"):
        parts.append(f"SciPy {mi['scipy']}")
    parts.append(f"starvm {mi.get('starvm')}")
    gpu = dev.get("gpu")
    if gpu:
        parts += [f"GPU {gpu['name']} ({gpu['memory_total_bytes'] / 2**30:.0f} GiB)", f"CuPy {gpu['cupy']}",
                  f"CUDA runtime {gpu['cuda_runtime']}, driver {gpu['cuda_driver']}"]
    git = mi.get("git") or {}
    if git.get("commit"):
        parts.append(f"git {git['commit'][:12]}{', dirty' if git.get('dirty') else ''}")
    return " · ".join(parts)


def header_markdown(doc: dict) -> list[str]:
    """The Markdown file's first lines: the title and the header line."""
    return [f"# {doc['title']}", "", header_line(doc), ""]


def write_json(doc: dict, path: Path) -> None:
    """Write atomically (a reader never sees half a file; a run stopped midway keeps the last)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2, default=float) + "\n")
    tmp.replace(path)


def write_results(doc: dict, json_path: Path, markdown_body: list[str] | str | None = None,
                  md_path: Path | None = None) -> tuple[Path, Path | None]:
    """NAME.json (the document) and NAME.md (the header, then ``markdown_body``)."""
    json_path = Path(json_path)
    write_json(doc, json_path)
    if markdown_body is None:
        return json_path, None
    md_path = Path(md_path) if md_path is not None else json_path.with_suffix(".md")
    body = markdown_body if isinstance(markdown_body, str) else "\n".join(markdown_body)
    md_path.write_text("\n".join(header_markdown(doc)) + "\n" + body.rstrip("\n") + "\n")
    return json_path, md_path
