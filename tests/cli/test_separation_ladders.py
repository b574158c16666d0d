"""The main job rebuilt around the crossover: crossovers against brute force, checks that can fail,
the table at 80 columns with no word broken, the JSON, Markdown, LaTeX and the plot."""

import importlib.util

import json
import math
import re

import pytest

import cli
from models.constructions import get_construction
from reductions.separations import (WidthCurves, crossover, find_separations, separation_ladders,
                                    separations)
from reductions.separations.checks import (Check, construction_check, protocol_check, witness_check)
from reductions.separations.rows import row_status


def test_crossover_matches_a_brute_force_scan():
    # IL: Elman state m numbers of p = 8 bits must hold the N = n symbols (m >= ceil(n/8)); the
    # 1-layer Transformer's weights have the width of the registered construction at n.
    sep = find_separations(["index-lookup"], 8, weak=["elman"])[0]
    curves = WidthCurves(sep, 8)
    spec = get_construction(sep.construction)
    first = next(n for n in range(2, 400) if math.ceil(n / 8) > spec.make(n).width)
    assert crossover(curves.lower, curves.explicit, 1) == first
    assert curves.lower(first) == math.ceil(first / 8)


def test_crossover_of_plain_functions():
    assert crossover(lambda n: n, lambda n: 10) == 11
    assert crossover(lambda n: 1, lambda n: 10, limit=1 << 10) is None
    assert crossover(lambda n: n, lambda n: None) is None
    assert crossover(lambda n: n, lambda n: 10 if n < 8 else None) is None   # unknown before crossing


def test_construction_check_fails_on_a_construction_that_is_wrong():
    ok = construction_check("index-lookup", "index-lookup-1tf", 8, "float32", samples=16)
    assert ok.status == "passed" and ok.data["exhaustive"] and ok.data["correct"] == ok.data["checked"]
    # the same construction with its weights replaced by random ones of the same shape
    import dataclasses

    from models.registry import build_model

    built = get_construction("index-lookup-1tf").make(8, "float32")
    noise = build_model("transformer", vocab_size=built.model.config["vocab_size"], width=built.width,
                        n_outputs=2, layers=1, heads=1, precision="float32", seed=5, max_len=64)
    broken = construction_check("index-lookup", None, 8, "float32", samples=16,
                                construction_object=dataclasses.replace(built, model=noise))
    assert broken.status == "FAILED" and broken.data["correct"] < broken.data["checked"]
    # Match2's width-6 weights at 8-bit fixed point: rounding breaks them (counts from the judge)
    bad = construction_check("match2", "match2-1tf", 16, "fixed:8:4", samples=64)
    assert bad.status == "FAILED" and bad.data["correct"] < bad.data["checked"]


def test_witness_check_finds_one_below_the_bound_and_none_above():
    found = witness_check("index-lookup", "elman", 1, 24, "fixed:4:2", lower_width=6, weak_width=1,
                          budget=4096, seed=0)
    assert found.status == "found" and found.data["wrong_on"] in ("x", "x_prime")
    assert found.data["bits_per_message"] < found.data["lower_bound_bits"] and found.data["method"]
    with_heads = witness_check("index-lookup", "elman", 1, 24, "fixed:4:2", lower_width=6, budget=4096, heads=2)
    assert with_heads.status == "found"   # H is the attention heads: an RNN takes none
    # a float32 Elman of width 8 (256 state bits) against n = 6: every x has its own message,
    # so no witness exists and the check says so (claiming a bound of 100 to force the run)
    none = witness_check("index-lookup", "elman", 1, 6, "float32", lower_width=100, weak_width=8, seed=0)
    assert none.status == "not found" and "exhaustive" in none.detail or "none among" in none.detail
    skipped = witness_check("index-lookup", "elman", 1, 6, "float32", lower_width=1, weak_width=1)
    assert skipped.status == "not checked"


def test_witness_check_found_only_below_what_the_problem_needs():
    # a fixed:4:2 Elman of width 2 sends 8 bits against INDEX_6's 6: its collision (the search finds
    # one) is no witness of a bound, so (b) must not read "found" (it did before: "8 bits < 6")
    above = witness_check("index-lookup", "elman", 1, 6, "fixed:4:2", lower_width=100, weak_width=2)
    assert above.status == "not checked" and "witnesses no bound" in above.detail
    assert above.data["found"] and above.data["bits_per_message"] >= above.data["lower_bound_bits"]


def test_witness_check_fails_a_complete_search_without_collision_below_the_bound(monkeypatch):
    # pigeonhole: an exhaustive search with fewer message bits than the problem needs must collide;
    # a search that says otherwise contradicts the bound, and (b) reads FAILED, never "not found"
    import reductions.search.witness as witness_module

    def no_collision(*args, **kwargs):
        return {"found": False, "complete": True, "method": "reachable-states", "tried": 64,
                "bits_per_message": 4, "lower_bound_bits": 6, "width": 1}

    monkeypatch.setattr(witness_module, "find_witness", no_collision)
    failed = witness_check("index-lookup", "elman", 1, 6, "fixed:4:2", lower_width=100, weak_width=1)
    assert failed.status == "FAILED" and "contradicts the bound" in failed.detail
    monkeypatch.setattr(witness_module, "find_witness",
                        lambda *a, **k: {**no_collision(), "bits_per_message": 6})
    assert witness_check("index-lookup", "elman", 1, 6, "fixed:4:2", lower_width=100,
                         weak_width=1).status == "not found"


def test_witness_check_takes_a_weights_file(tmp_path):
    from models.files import save_model
    from models.registry import build_model
    from reductions.registry import get_reduction

    r = get_reduction("index-lookup")
    model = build_model("elman", vocab_size=r.task.vocab_size(r.task_size(20)), width=1, n_outputs=2,
                        precision="fixed:4:2", seed=3)
    path = save_model(model, tmp_path / "weak.npz")
    out = witness_check("index-lookup", "elman", 1, 20, "fixed:4:2", lower_width=5, weights=str(path),
                        budget=4096)
    assert out.status == "found" and out.data["weights"] not in (None, "random")


def test_protocol_check_fails_when_the_split_is_not_faithful(monkeypatch):
    good = protocol_check("index-lookup", "transformer", 1, 8, "float32", construction="index-lookup-1tf",
                          instances=8)
    assert good.status == "passed" and good.data["faithful"] == 1.0
    import reductions.simulate as sim

    real = sim.verify
    monkeypatch.setattr(sim, "verify", lambda *a, **k: {**real(*a, **k), "faithful": 0.5})
    bad = protocol_check("index-lookup", "transformer", 1, 8, "float32", construction="index-lookup-1tf",
                         instances=8)
    assert bad.status == "FAILED"
    # a 2-layer Transformer splits (keys and values per layer): faithful, and at least the n bits EQ_n needs
    monkeypatch.setattr(sim, "verify", real)
    deep = protocol_check("string-equality", "transformer", 2, 8, "float32", construction="string-equality-2tf")
    assert deep.status == "passed" and deep.data["faithful"] == 1.0 and deep.data["rounds"] == 1
    assert deep.data["bits"] >= deep.data["lower_bound_bits"] == 8
    monkeypatch.setattr(sim, "verify", lambda *a, **k: {**real(*a, **k), "bits_per_message": 7})
    short = protocol_check("string-equality", "transformer", 2, 8, "float32", construction="string-equality-2tf")
    assert short.status == "FAILED" and "7 bits vs 8" in short.detail  # fewer bits than the problem needs
    refused = protocol_check("string-equality", "transformer", 2, 8, "float32", construction=None)
    assert refused.status == "not checked" and refused.detail


def test_a_row_where_nothing_ran_is_not_checked_never_yes():
    skip = Check("construction", "not checked", "why")
    assert row_status([skip, skip]) == "not checked"
    assert row_status([skip, Check("witness", "found", "")]) == "yes"
    assert row_status([Check("construction", "FAILED", ""), Check("witness", "found", "")]) == "NO"
    assert row_status([Check("witness", "not found", "")]) == "not checked"


def test_ladder_rows_and_json_contract():
    lad = separation_ladders(["index-lookup"], "fixed:8:4", sizes=[16, 64], samples=8, budget=512,
                             weak=["elman"], check_all=True)[0]
    assert lad.crossover_n_explicit is not None
    rows = [r.to_json() for r in lad.rows]
    assert [r["lower_bound_width"] for r in rows] == [2, 8]         # ceil(n / 8)
    assert rows[1]["separated"] is False or rows[1]["lower_bound_width"] > rows[1]["construction_width"]
    assert set(rows[0]["checks"]) == {"construction", "witness", "protocol"}
    assert rows[1]["checks"]["witness"]["status"] == "found" and rows[1]["status"] == "yes"


def test_multi_index_lookup_uses_the_number_of_symbols():
    # item 1: D^{A->B}(DISJ_8) = 8 bits, not the 32-token sequence length
    row = separations(n=8, precision=32, instances=4, tasks=["multi-index-lookup"], archs=["elman"])[0]
    assert row.length == 32 and row.lower_bound_value == 8 and row.lower_bound_width == 1


def _tokens(text):
    """Words of a rendered table, without box characters and the run's timing (``12.3 s.``)."""
    text = re.sub(r"\d+\.\d s\.", " ", re.sub(r"[│─━┃┏┓┗┛┡┩╇┼]", " ", text))
    return set(text.split())


@pytest.mark.parametrize("argv", [
    ["separations", "--task", "index-lookup", "dyck", "--sizes", "16", "64", "--samples", "4", "--budget", "256",
     "--precision", "fixed:8:4"],
    ["bounds", "--n", "64", "4096", "--task", "string-equality", "index-lookup"],
    ["separations", "--n", "3", "--instances", "4", "--task", "string-equality"],
])
def test_tables_read_at_80_columns_with_no_word_broken(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    lines = out.split("───")[-1].splitlines()[1:]
    body = lines[:next(i for i, line in enumerate(lines) if not line.strip())]   # the rows, one line each
    assert cli.main(argv + ["--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = set()

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                expected.update(str(k).split())
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        else:
            expected.update(str(v).split())
    walk(data)
    if argv[0] == "bounds":
        assert len(body) == len(data)
    # every token of the table is a whole word of the data, a label or the caption's text
    monkeypatch.setenv("COLUMNS", "400")
    assert cli.main(argv) == 0
    wide_out = capsys.readouterr().out
    assert _tokens(out) <= _tokens(wide_out) | expected


def test_markdown_latex_and_plot(tmp_path, capsys):
    argv = ["separations", "--task", "index-lookup", "--sizes", "16", "64", "--samples", "4", "--budget", "256",
            "--precision", "fixed:8:4"]
    plot = tmp_path / "sep.png"
    have_matplotlib = importlib.util.find_spec("matplotlib") is not None  # the `plot` extra
    assert cli.main(argv + ["--format", "markdown"] + (["--plot", str(plot)] if have_matplotlib else [])) == 0
    md = capsys.readouterr().out
    assert md.count("\n| ") >= 3 and "BHBK-IL-RNN" in md
    if have_matplotlib:
        assert plot.stat().st_size > 1000 and plot.read_bytes()[:4] == b"\x89PNG"
    assert cli.main(argv + ["--format", "latex"]) == 0
    tex = capsys.readouterr().out
    assert "\\begin{tabular}" in tex and "\\end{table}" in tex


def test_bad_input_is_one_line(capsys):
    for argv in (["separations", "--task", "nope"], ["separations", "--precision", "float7"],
                 ["separations", "--sizes", "0"], ["separations", "--weights", "/no/such.npz"],
                 ["separations", "--weak", "nope"]):
        assert cli.main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1


def test_cli_weights_file_goes_to_check_b(tmp_path, capsys):
    from models.files import save_model
    from models.registry import build_model
    from reductions.registry import get_reduction

    r = get_reduction("index-lookup")
    model = build_model("elman", vocab_size=r.task.vocab_size(r.task_size(20)), width=1, n_outputs=2,
                        precision="fixed:4:2", seed=3)
    path = str(save_model(model, tmp_path / "weak.npz"))
    assert cli.main(["separations", "--task", "index-lookup", "--weak", "elman", "--sizes", "20",
                     "--precision", "fixed:4:2", "--weights", path, "--samples", "4", "--check-all",
                     "--format", "json"]) == 0
    witness = json.loads(capsys.readouterr().out)["separations"][0]["rows"][0]["checks"]["witness"]
    assert witness["status"] == "found" and witness["weights"] == path


@pytest.mark.parametrize("name", ["reductions.separations.rows", "reductions.separations.render",
                                  "reductions.separations.special", "reductions.separations.grid",
                                  "commcomp.tables", "commcomp.bounds.table"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
