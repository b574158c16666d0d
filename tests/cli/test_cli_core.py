"""CLI contract: formats, --out, one line and exit 2 on bad input (DESIGN §4)."""

import json
import os

import pytest

import cli
from commcomp.bounds import parse_rows


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [
    ["bounds", "--n", "1"],
    ["bounds", "--n", "100", "--precision", "0"],
    ["bounds", "--n", "100", "--task", "no-such-task"],
    ["bounds", "--n", "100", "--arch", "no-such-arch"],
    ["bounds", "--n", "100", "--heads", "0"],
    ["bounds", "--n", "x"],
    ["list", "nothing"],
    [],
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_list_problems_json(capsys):
    code, out, _ = run(capsys, "list", "problems", "--format", "json")
    names = [r["name"] for r in json.loads(out)]
    assert code == 0 and names == sorted(["index", "disjointness", "equality", "inner-product", "greater-than"])


def test_list_theorems_reads_the_catalogue(capsys):
    from commcomp.bounds import BOUNDS

    code, out, _ = run(capsys, "list", "theorems", "--format", "json")
    assert code == 0 and [r["id"] for r in json.loads(out)] == [b.id for b in BOUNDS]


@pytest.mark.parametrize("fmt", ["json", "csv", "markdown", "latex"])
def test_bounds_formats_parse_back(capsys, fmt):
    code, out, _ = run(capsys, "bounds", "--n", "400", "8192", "--precision", "32", "--task", "index-lookup",
                       "--arch", "lstm", "--no-randomized", "--format", fmt)
    assert code == 0
    rows = parse_rows(out, fmt)
    got = {(int(r["n"]), r["arch"]): float(r["value"]) for r in rows if r["kind"] == "lower"}
    # BHBK-IL-RNN: the state must hold N bits; the LSTM carries 2m numbers of p bits
    assert got == {(400, "lstm"): 400.0, (8192, "lstm"): 8192.0}
    widths = {int(r["n"]): int(r["min_width"]) for r in rows if r["kind"] == "lower"}
    assert widths == {400: -(-400 // 64), 8192: 8192 // 64}


def test_out_file_is_written_atomically_and_not_on_error(tmp_path, capsys):
    target = tmp_path / "b.json"
    code, out, _ = run(capsys, "bounds", "--n", "100", "--format", "json", "--out", str(target))
    assert code == 0 and out == "" and json.loads(target.read_text())
    bad = tmp_path / "bad.json"
    code, _, err = run(capsys, "bounds", "--n", "1", "--format", "json", "--out", str(bad))
    assert code == 2 and not bad.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".commcomp-")]


def test_matrix_equality_matches_brute_force(capsys):
    """EQ_3: 8 distinct rows, rank 8, fooling set 8, D = n + 1 = 4 (computed here by hand)."""
    code, out, _ = run(capsys, "matrix", "equality", "--n", "3", "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert (data["rows"], data["cols"], data["distinct_rows"], data["one_way_bits"]) == (8, 8, 8, 3)
    assert (data["rank_rational"], data["fooling_set_size"], data["deterministic_cc"]) == (8, 8, 4)
    assert data["certificates_checked"] is True
    for field in ("problem", "n", "rank_gf2", "log_rank_bound", "fooling_set", "partition_number"):
        assert field in data


@pytest.mark.parametrize("argv", [["matrix", "nope", "--n", "3"], ["matrix", "eq", "--n", "0"],
                                  ["matrix", "eq", "--n", "30"]])
def test_matrix_bad_input(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
