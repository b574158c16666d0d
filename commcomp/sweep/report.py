"""Sweep rows as flat records, and their exports (CSV, JSON, Markdown) for ``commcomp sweep show``.

A flat record has the columns ``sweep, operation``, one column per parameter, ``seed, status``, one per
result field, then ``wall_seconds, error, version, git_revision, finished_at``. A result field whose name
is already taken (``n`` and ``arch`` echo the parameters in most operations' JSON) is left out when it
equals the parameter and kept as ``result.NAME`` otherwise. CSV writes nested values (lists, objects) as
JSON text; JSON keeps them as they are.

Examples
--------
>>> from commcomp.sweep.store import StoredRow
>>> row = StoredRow("s", "selftest", {"n": 2}, 7, "ok", {"draw": 0.5, "n": 2}, None, None, 0.1, "0.1.0", None, "t")
>>> columns, records = flatten([row])
>>> columns[:6], records[0]["draw"]
(['sweep', 'operation', 'n', 'seed', 'status', 'draw'], 0.5)
>>> print(to_markdown(["n", "draw"], records))
| n | draw |
| --- | --- |
| 2 | 0.5 |
"""

from __future__ import annotations

import csv
import io
import json

from .store import StoredRow

__all__ = ["flatten", "sort_rows", "compact_columns", "to_csv", "to_json", "to_markdown", "cell_text",
           "operations_text", "fit_columns"]

_HEAD = ["sweep", "operation"]
_MID = ["seed", "status"]
_TAIL = ["wall_seconds", "error", "version", "git_revision", "finished_at"]


def _natural(value):
    """Sort key: numbers by value before strings, so n = 4, 8, 16 (not 16, 4, 8)."""
    if isinstance(value, bool) or value is None:
        return (0, int(bool(value)), "")
    if isinstance(value, (int, float)):
        return (1, value, "")
    return (2, 0, json.dumps(value, sort_keys=True) if not isinstance(value, str) else value)


def sort_rows(rows: list[StoredRow], axes: dict | list | None = None) -> list[StoredRow]:
    """Rows in grid order: by sweep, then each axis (in the order of its values when ``axes`` maps names to
    values), then the other parameters (numbers numerically), then the seed."""
    axes = dict(axes) if isinstance(axes, dict) else {name: None for name in axes or []}
    names = list(axes)
    for row in rows:
        names.extend(k for k in sorted(row.params) if k not in names)
    rank = {name: {json.dumps(v, sort_keys=True): i for i, v in enumerate(values)}
            for name, values in axes.items() if values is not None}

    def key(row):
        out = []
        for name in names:
            value = row.params.get(name)
            position = rank.get(name, {}).get(json.dumps(value, sort_keys=True))
            out.append((0, position, (0, 0, "")) if position is not None else (1, 0, _natural(value)))
        return (row.sweep, out, row.seed)

    return sorted(rows, key=key)


def flatten(rows: list[StoredRow], order: list[str] | None = None) -> tuple[list[str], list[dict]]:
    """``(columns, records)``: one flat dict per row, columns in a stable order (see module docstring)."""
    params: list[str] = [n for n in (order or []) if any(n in r.params for r in rows)]
    fields: list[str] = []
    records = []
    for row in rows:
        params.extend(k for k in sorted(row.params) if k not in params)
    taken = set(_HEAD + _MID + _TAIL) | set(params)
    for row in rows:
        record = {"sweep": row.sweep, "operation": row.operation, **row.params, "seed": row.seed,
                  "status": row.status}
        for key, value in row.result.items():
            if key in taken:
                if key in row.params and row.params[key] == value or key == "seed" and value == row.seed:
                    continue
                key = f"result.{key}"
            record[key] = value
            if key not in fields:
                fields.append(key)
        record.update(wall_seconds=row.wall_seconds, error=row.error, version=row.version,
                      git_revision=row.git_revision, finished_at=row.finished_at)
        records.append(record)
    return _HEAD + params + _MID + fields + _TAIL, records


def compact_columns(columns: list[str], records: list[dict], headline=(), axes=()) -> list[str]:
    """Columns for a terminal: the axes and the parameters that vary, status, headline fields, time, errors."""
    params = columns[columns.index("operation") + 1:columns.index("seed")]
    varying = [p for p in params if p in axes or len({json.dumps(r.get(p), sort_keys=True) for r in records}) > 1]
    fields = columns[columns.index("status") + 1:columns.index("wall_seconds")]
    shown = [f for f in headline if f in fields]
    if not shown:
        shown = [f for f in fields if all(not isinstance(r.get(f), (list, dict)) for r in records)][:8]
    sweeps = ["sweep"] if len({r["sweep"] for r in records}) > 1 else []
    errors = ["error"] if any(r.get("error") for r in records) else []
    return sweeps + varying + ["seed", "status"] + shown + ["wall_seconds"] + errors


def fit_columns(columns: list[str], cells: list[list[str]], width: int,
                first_out=("wall_seconds", "seed")) -> list[str]:
    """The columns of a bordered table that fit ``width`` with no word split: ``first_out`` are left
    out first, then the others from the right; the first column always stays.

    >>> fit_columns(["n", "seed", "status", "bits_per_message"], [["4", "4313186", "ok", "128"]], 40)
    ['n', 'status', 'bits_per_message']
    """
    from commcomp.tables import longest_words

    longest = dict(zip(columns, longest_words(columns, cells)))
    order = [c for c in first_out if c in columns[1:]] + [c for c in reversed(columns[1:]) if c not in first_out]
    kept = list(columns)
    for name in order:  # a bordered rich table: 3 characters a column (border, padding) and 1 edge
        if sum(longest[c] + 3 for c in kept) + 1 <= width:
            break
        kept.remove(name)
    return kept


def cell_text(value, width: int | None = None) -> str:
    """A value as table text: floats to 4 significant digits, nested values as compact JSON."""
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = str(value).lower()
    elif isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, (list, dict)):
        text = json.dumps(value, separators=(",", ":"))
    else:
        text = str(value)
    if width and len(text) > width:
        text = text[:width - 1] + "…"
    return text


def to_csv(columns: list[str], records: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for r in records:
        writer.writerow(["" if r.get(c) is None else
                         json.dumps(r[c]) if isinstance(r.get(c), (list, dict, bool)) else r[c]
                         for c in columns])
    return buffer.getvalue()


def to_json(columns: list[str], records: list[dict]) -> str:
    return json.dumps([{c: r.get(c) for c in columns} for r in records], indent=2)


def to_markdown(columns: list[str], records: list[dict]) -> str:
    def cell(value):
        return cell_text(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in columns) + " |" for r in records]
    return "\n".join(lines)


def operations_text(rows: list[dict], wide: bool = False) -> str:
    """The ``sweep ops`` table: one short line per operation (``wide``: modules, descriptions, reasons).

    >>> rows = [{"name": "verify", "available": True, "wraps": "reductions.simulate.verify",
    ...          "required": ["task", "arch"], "description": "a reduction checked", "why": ""}]
    >>> operations_text(rows).splitlines()[4].split()
    ['verify', 'yes', 'task,', 'arch', 'verify']
    """
    from commcomp.tables import text_table

    def cells(r):
        available = "yes" if r["available"] else r["why"] if wide else "no"
        wraps = r["wraps"] if wide else r["wraps"].rsplit(".", 1)[-1]
        return [r["name"], available, ", ".join(r["required"]), wraps] + ([r["description"]] if wide else [])

    columns = ["name", "available", "required", "wraps"] + (["description"] if wide else [])
    caption = None if wide else "Modules, descriptions and why one is unavailable: --wide or --format json."
    return text_table("sweep operations", columns, [cells(r) for r in rows], caption, one_line=not wide)
