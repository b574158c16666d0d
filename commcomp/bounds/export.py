"""Rows to JSON / CSV / Markdown / LaTeX strings, and parsers back (pure data formatting, no rich).

Numbers are written so that they parse back equal: integers as integers, floats with ``repr`` (the shortest
string that round-trips), unless ``digits`` asks for a rounded, paper-ready table.  Missing values are an
empty cell in CSV and ``--`` in Markdown and LaTeX.

Examples
--------
>>> from commcomp.bounds.calculator import compute_bounds
>>> rows = compute_bounds(400, 32, task="index-lookup", arch="elman", include_randomized=False)
>>> parse_csv(to_csv(rows))[0]["min_width"]
13
>>> parse_latex(to_latex(rows))[0]["value"] == rows[0].value
True
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from collections.abc import Iterable, Mapping

from commcomp.bounds.calculator import FIELDS
from commcomp.errors import InvalidParameterError, UnknownNameError

__all__ = ["FORMATS", "TABLE_COLUMNS", "export_rows", "parse_csv", "parse_json", "parse_latex",
           "parse_markdown", "parse_rows", "rows_to_dicts", "to_csv", "to_json", "to_latex", "to_markdown"]

FORMATS = ("json", "csv", "markdown", "latex")
#: Default columns of the Markdown and LaTeX tables: the DESIGN §4 fields plus width, tag and label.
TABLE_COLUMNS = ("task", "problem", "arch", "layers", "kind", "quantity", "value", "min_width", "formula",
                 "theorem", "tag", "label", "assumptions", "n", "precision", "heads")
_INT_FIELDS = {"n", "precision", "heads", "layers", "min_width", "width", "crossover_n"}
_NUM_FIELDS = {"value", "state_bits", "eps"}
_BOOL_FIELDS = {"randomized", "holds_at_precision"}
_MISSING = "--"
_INT_RE = re.compile(r"^-?\d+$")


def rows_to_dicts(rows: Iterable[object]) -> list[dict]:
    """BoundRow objects (or mappings) as plain dicts, field order kept."""
    out = []
    for row in rows:
        if dataclasses.is_dataclass(row):
            out.append(dataclasses.asdict(row))
        elif isinstance(row, Mapping):
            out.append(dict(row))
        else:
            raise InvalidParameterError(f"cannot export {type(row).__name__}; expected BoundRow or dict")
    return out


def _columns(columns: Iterable[str] | None, default: Iterable[str]) -> list[str]:
    chosen = list(default if columns is None else columns)
    unknown = [c for c in chosen if c not in FIELDS]
    if unknown:
        raise UnknownNameError(f"unknown column {', '.join(unknown)}; known: {', '.join(FIELDS)}")
    return chosen


def _number_text(value: object, digits: int | None, missing: str) -> str:
    if value is None:
        return missing
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if digits is None else f"{value:.{digits}g}"
    return str(value)


def _typed(name: str, text: str, missing: str = _MISSING) -> object:
    text = text.strip()
    if name in _INT_FIELDS | _NUM_FIELDS | _BOOL_FIELDS and text in ("", missing):
        return None
    if name in _BOOL_FIELDS:
        return text.lower() == "true"
    if name in _INT_FIELDS | _NUM_FIELDS:
        return int(text) if _INT_RE.match(text) else float(text)
    return None if text in ("", missing) else text


# --- JSON and CSV --------------------------------------------------------------------------------------
def to_json(rows: Iterable[object], indent: int | None = 2) -> str:
    """A JSON list of row objects with every field (DESIGN §4 names first)."""
    return json.dumps(rows_to_dicts(rows), indent=indent, ensure_ascii=False)


def parse_json(text: str) -> list[dict]:
    """Rows back from :func:`to_json`."""
    return json.loads(text)


def to_csv(rows: Iterable[object], columns: Iterable[str] | None = None) -> str:
    """CSV with a header line; every field by default."""
    cols = _columns(columns, FIELDS)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(cols)
    for row in rows_to_dicts(rows):
        writer.writerow([_number_text(row.get(c), None, "") if not isinstance(row.get(c), str)
                         else row[c] for c in cols])
    return buffer.getvalue()


def parse_csv(text: str) -> list[dict]:
    """Rows back from :func:`to_csv`, numbers typed."""
    reader = csv.DictReader(io.StringIO(text))
    return [{k: _typed(k, v, "") for k, v in record.items()} for record in reader]


# --- Markdown ------------------------------------------------------------------------------------------
def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(rows: Iterable[object], columns: Iterable[str] | None = None, digits: int | None = None) -> str:
    """A GitHub-flavoured Markdown table."""
    cols = _columns(columns, TABLE_COLUMNS)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in rows_to_dicts(rows):
        cells = [_md_cell(row[c]) if isinstance(row.get(c), str) else _number_text(row.get(c), digits, _MISSING)
                 for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _split_unescaped(line: str, sep: str) -> list[str]:
    cells, current, i = [], [], 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            current.append(line[i:i + 2])
            i += 2
            continue
        if ch == sep:
            cells.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    cells.append("".join(current))
    return cells


def parse_markdown(text: str) -> list[dict]:
    """Rows back from :func:`to_markdown` (the columns it has), numbers typed."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 2:
        return []
    header = [h.strip() for h in _split_unescaped(lines[0], "|")[1:-1]]
    out = []
    for line in lines[2:]:
        cells = _split_unescaped(line, "|")[1:-1]
        values = [re.sub(r"\\(.)", r"\1", cell) for cell in cells]
        out.append({h: _typed(h, v) for h, v in zip(header, values)})
    return out


# --- LaTeX ---------------------------------------------------------------------------------------------
_LATEX_ESCAPES = [("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                  ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"),
                  ("^", r"\textasciicircum{}"), ("✓", r"\checkmark{}"), ("§", r"\S{}")]


def _latex_escape(text: str) -> str:
    out = []
    for ch in text:
        out.append(next((esc for raw, esc in _LATEX_ESCAPES if raw == ch), ch))
    return "".join(out)


def _latex_unescape(text: str) -> str:
    pattern = "|".join(re.escape(esc) for _, esc in _LATEX_ESCAPES)
    table = {esc: raw for raw, esc in _LATEX_ESCAPES}
    return re.sub(pattern, lambda match: table[match.group(0)], text)


def to_latex(rows: Iterable[object], columns: Iterable[str] | None = None, digits: int | None = None) -> str:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs,amssymb}``); formulas in math mode."""
    cols = _columns(columns, TABLE_COLUMNS)
    lines = [r"\begin{tabular}{" + "l" * len(cols) + "}", r"\toprule",
             " & ".join(_latex_escape(c) for c in cols) + r" \\", r"\midrule"]
    for row in rows_to_dicts(rows):
        cells = []
        for col in cols:
            value = row.get(col)
            if col == "formula" and row.get("formula_latex"):
                cells.append(f"${row['formula_latex']}$")
            elif isinstance(value, str):
                cells.append(_latex_escape(value))
            else:
                cells.append(_number_text(value, digits, _MISSING))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def parse_latex(text: str) -> list[dict]:
    """Rows back from :func:`to_latex`; a math-mode formula comes back as its LaTeX source."""
    body = text.split(r"\toprule", 1)[-1].split(r"\bottomrule", 1)[0]
    head, _, rows_text = body.partition(r"\midrule")
    header = [_latex_unescape(h.strip()) for h in _split_unescaped(head.strip().removesuffix(r"\\"), "&")]
    out = []
    for line in rows_text.strip().splitlines():
        line = line.strip().removesuffix(r"\\").strip()
        if not line:
            continue
        cells = [cell.strip() for cell in _split_unescaped(line, "&")]
        record = {}
        for name, cell in zip(header, cells):
            is_math = cell.startswith("$") and cell.endswith("$") and len(cell) > 1
            record[name] = cell[1:-1] if is_math else _typed(name, _latex_unescape(cell))
        out.append(record)
    return out


# --- dispatch ------------------------------------------------------------------------------------------
_WRITERS = {"json": to_json, "csv": to_csv, "markdown": to_markdown, "latex": to_latex}
_READERS = {"json": parse_json, "csv": parse_csv, "markdown": parse_markdown, "latex": parse_latex}


def export_rows(rows: Iterable[object], fmt: str, **options: object) -> str:
    """Rows as a string in ``fmt`` (one of :data:`FORMATS`; ``md`` and ``tex`` also accepted)."""
    fmt = {"md": "markdown", "tex": "latex"}.get(fmt, fmt)
    if fmt not in _WRITERS:
        raise UnknownNameError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return _WRITERS[fmt](rows, **options)


def parse_rows(text: str, fmt: str) -> list[dict]:
    """Parse a string written by :func:`export_rows` in ``fmt``."""
    fmt = {"md": "markdown", "tex": "latex"}.get(fmt, fmt)
    if fmt not in _READERS:
        raise UnknownNameError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return _READERS[fmt](text)
