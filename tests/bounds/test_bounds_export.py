"""Exports parse back to the same numbers and names; the plot path works or skips cleanly."""

import json

import pytest

from commcomp.bounds import (
    FIELDS, FORMATS, PlotUnavailableError, compute_bounds, export_rows, parse_rows, plot_min_width,
)
from commcomp.errors import CommcompError, InvalidParameterError, UnknownNameError

DESIGN_FIELDS = ("task", "problem", "arch", "kind", "quantity", "value", "formula", "theorem", "assumptions",
                 "n", "precision", "heads")
CHECKED = ("task", "problem", "arch", "kind", "quantity", "value", "theorem", "n", "precision", "heads",
           "layers", "min_width", "tag", "label")


@pytest.fixture(scope="module")
def rows():
    return compute_bounds([400, 8192], 32, heads=2, task=["index-lookup", "dyck", "match3", "qsa"],
                          arch=["lstm", "mamba", "transformer", "feedforward"])


def test_rows_carry_the_design_fields(rows):
    assert FIELDS[:len(DESIGN_FIELDS)] == DESIGN_FIELDS
    assert any(r.value is None for r in rows) and any(isinstance(r.value, float) for r in rows)


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip(rows, fmt):
    back = parse_rows(export_rows(rows, fmt), fmt)
    assert len(back) == len(rows)
    for row, parsed in zip(rows, back):
        for name in CHECKED:
            assert parsed[name] == getattr(row, name), (fmt, name, row.theorem)


def test_json_is_a_list_of_complete_objects(rows):
    data = json.loads(export_rows(rows, "json"))
    assert [set(d) for d in data] == [set(FIELDS)] * len(rows)


def test_csv_round_trips_every_field(rows):
    back = parse_rows(export_rows(rows, "csv"), "csv")
    for row, parsed in zip(rows, back):
        for name in FIELDS:
            expected = getattr(row, name)
            assert parsed[name] == (None if expected == "" else expected), name


NASTY = {name: None for name in FIELDS}
NASTY.update(task="dyck", arch="lstm", kind="lower", quantity="width", theorem="X_1", n=5, precision=8, heads=1,
             value=0.1 + 0.2, min_width=3, tag="[D✓]", label="proved lower bound",
             assumptions=r"a|b & c % d $e$ #f {g} ~h ^i \j _k §8.3 ✓", formula="m >= N/p | x", randomized=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_special_characters_survive(fmt):
    back = parse_rows(export_rows([NASTY], fmt, **({"columns": tuple(NASTY)} if fmt != "json" else {})), fmt)[0]
    for name in ("assumptions", "formula", "theorem", "tag", "value", "min_width", "randomized"):
        assert back[name] == NASTY[name], (fmt, name)


def test_rounded_tables_for_papers(rows):
    text = export_rows(rows, "latex", digits=3)
    assert r"\toprule" in text and r"\checkmark{}" not in text.split(r"\midrule")[0]
    back = parse_rows(text, "latex")
    pairs = [(row.value, parsed["value"]) for row, parsed in zip(rows, back) if isinstance(row.value, float)]
    assert pairs and all(parsed == float(f"{value:.3g}") for value, parsed in pairs)


def test_bad_format_or_column(rows):
    with pytest.raises(UnknownNameError):
        export_rows(rows, "xlsx")
    with pytest.raises(UnknownNameError):
        export_rows(rows, "csv", columns=("task", "colour"))
    with pytest.raises(InvalidParameterError):
        export_rows([object()], "csv")


def test_plot_needs_matplotlib_or_says_how(tmp_path, rows, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(PlotUnavailableError, match=r"pip install commcomp\[plot\]") as info:
        plot_min_width(rows, tmp_path / "w.svg")
    assert isinstance(info.value, CommcompError)


def test_plot_rejects_bad_suffix(tmp_path, rows):
    with pytest.raises(InvalidParameterError):
        plot_min_width(rows, tmp_path / "w.pdf")


@pytest.mark.parametrize("suffix", [".svg", ".png"])
def test_plot_writes_file(tmp_path, rows, suffix):
    pytest.importorskip("matplotlib")
    path = plot_min_width(rows, tmp_path / f"widths{suffix}")
    data = open(path, "rb").read()
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in data
