"""``commcomp sweep run|show|ops`` end to end (in this process, plus one real subprocess for exit codes)."""

import csv
import io
import json

import pytest

import cli
from commcomp.sweep.store import ResultStore

from sweep_helpers import run_cli, signature

SWEEP = """
[sweep]
operation = "selftest"
seed = 2
repeats = 2

[params]
seconds = 0

[axes]
arch = ["lstm", "elman"]
n = [16, 4]
fail = [false, true]
"""


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def done_db(tmp_path, capsys, monkeypatch):
    (tmp_path / "sweeps").mkdir()
    path = tmp_path / "sweeps" / "grid.toml"
    path.write_text(SWEEP)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "sweep", "run", path, "--workers", "0", "--format", "json")
    assert code == 0, err
    return path, tmp_path / "grid.sqlite", json.loads(out)


def test_run_writes_into_the_current_directory_and_reports(done_db):
    path, db, payload = done_db
    assert db.exists()  # the default database: FILE's stem + .sqlite in the current directory
    assert not list(path.parent.glob("grid.sqlite*"))  # nothing beside the sweep file
    assert payload["summary"]["points"] == 16 and payload["summary"]["failed"] == 8
    rows = payload["rows"]
    assert len(rows) == 16
    assert [(r["arch"], r["n"]) for r in rows[::4]] == [("lstm", 16), ("lstm", 4), ("elman", 16), ("elman", 4)]
    assert all((r["status"] == "error") == r["fail"] for r in rows)
    assert all(r["error"].startswith("InvalidParameterError") for r in rows if r["fail"])


def test_show_exports_parse_back(done_db, capsys):
    _, db, payload = done_db
    with ResultStore(str(db), readonly=True) as store:
        stored = {(r.point, r.seed): r for r in store.rows()}
    code, out, _ = run(capsys, "sweep", "show", db, "--format", "json")
    records = json.loads(out)
    assert code == 0 and len(records) == 16
    by_seed = {r["seed"]: r for r in records}
    for row in stored.values():
        rec = by_seed[row.seed]
        assert {k: rec[k] for k in row.params} == row.params
        assert rec["status"] == row.status and rec["error"] == row.error
        assert rec.get("draw") == row.result.get("draw")

    code, out, _ = run(capsys, "sweep", "show", db, "--format", "csv")
    parsed = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(parsed) == 16
    for rec, back in zip(records, parsed):
        assert back["seed"] == str(rec["seed"]) and back["arch"] == rec["arch"] and back["n"] == str(rec["n"])
        assert back["fail"] == json.dumps(rec["fail"])
        assert (back["draw"] and float(back["draw"])) == (rec["draw"] if rec.get("draw") is not None else "")

    code, out, _ = run(capsys, "sweep", "show", db, "--format", "markdown", "--columns", "arch,n,repeat,status,draw")
    lines = out.strip().splitlines()
    assert code == 0 and lines[0] == "| arch | n | repeat | status | draw |" and len(lines) == 18
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    assert [c[:3] for c in cells] == [[r["arch"], str(r["n"]), str(r["repeat"])] for r in records]

    code, out, _ = run(capsys, "sweep", "show", db, "--status", "error", "--format", "json", "--columns", "seed,error")
    assert code == 0 and len(json.loads(out)) == 8 and set(json.loads(out)[0]) == {"seed", "error"}

    code, out, _ = run(capsys, "sweep", "show", db)  # the rich table
    assert code == 0 and "lstm" in out and "InvalidParameterError" in out


def test_show_out_file_and_force(done_db, capsys, tmp_path):
    path, db, _ = done_db
    before = signature(str(db))
    code, out, _ = run(capsys, "sweep", "run", path, "--workers", "0", "--format", "json")
    assert code == 0 and json.loads(out)["summary"]["skipped"] == 16
    code, out, _ = run(capsys, "sweep", "run", path, "--workers", "0", "--force", "--format", "json")
    assert code == 0 and json.loads(out)["summary"]["ran"] == 16
    assert signature(str(db)) == before
    target = tmp_path / "out.csv"
    assert run(capsys, "sweep", "show", db, "--format", "csv", "--out", target)[0] == 0
    assert len(list(csv.DictReader(target.open()))) == 16


def test_command_line_grid_and_dry_run(tmp_path, capsys):
    db = tmp_path / "x.sqlite"
    code, out, _ = run(capsys, "sweep", "run", "--op", "selftest", "--axis", "n=1,2,3", "--param", "mode=spin",
                       "--db", db, "--dry-run", "--format", "json")
    points = json.loads(out)["points"]
    assert code == 0 and [p["n"] for p in points] == [1, 2, 3] and not db.exists()
    code, out, _ = run(capsys, "sweep", "run", "--op", "selftest", "--axis", "n=1,2,3", "--param", "mode=spin",
                       "--db", db, "--workers", "0", "--format", "json")
    assert code == 0 and [r["seed"] for r in json.loads(out)["rows"]] == [p["seed"] for p in points]
    assert run(capsys, "sweep", "ops", "--format", "json")[0] == 0


@pytest.mark.parametrize("argv, message", [
    (["sweep", "run", "--op", "nope", "--axis", "n=1"], "unknown operation"),
    (["sweep", "run", "--op", "selftest", "--axis", "n"], "bad axis"),
    (["sweep", "run", "--op", "selftest", "--axis", "n=1,,2"], "empty value"),
    (["sweep", "run", "/nonexistent/grid.toml"], "not found"),
    (["sweep", "run"], "give a sweep FILE or --op"),
    (["sweep", "run", "--op", "bounds", "--axis", "n=64", "--param", "precision=8", "--axis", "widht=1"], "widht"),
    (["sweep", "run", "--op", "selftest", "--workers", "-1"], "--workers"),
    (["sweep", "show", "/nonexistent/r.sqlite"], "not found"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys, tmp_path):
    code, out, err = run(capsys, *argv, *(["--db", tmp_path / "d.sqlite"] if argv[1] == "run" else []))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_show_unknown_sweep_and_column(done_db, capsys):
    _, db, _ = done_db
    code, _, err = run(capsys, "sweep", "show", db, "--sweep", "other")
    assert code == 2 and "no sweep 'other'" in err
    code, _, err = run(capsys, "sweep", "show", db, "--columns", "n,nope")
    assert code == 2 and "unknown column" in err


def test_plot(done_db, capsys, tmp_path):
    pytest.importorskip("matplotlib")
    from commcomp.sweep.plot import PlotError, plot_sweep
    from commcomp.sweep.store import StoredRow

    def row(arch, n, **result):
        return StoredRow("s", "x", {"arch": arch, "n": n}, 0, "ok", result, None, None, 0.0, "v", None, "t")

    rows = [row("lstm", n, correct=n < 8, faithful=True, min_width=n // 2, lower_bound_width=n // 4)
            for n in (2, 4, 8, 16)] + [row("gru", n, correct=True, faithful=0.5) for n in (2, 4)]
    titles = plot_sweep(rows, str(tmp_path / "p.png"))
    assert len(titles) == 2 and (tmp_path / "p.png").stat().st_size > 1000
    _, db, _ = done_db
    code, _, err = run(capsys, "sweep", "show", db, "--plot", tmp_path / "q.png")  # selftest: nothing to plot
    assert code == 2 and "nothing to plot" in err
    with pytest.raises(PlotError):
        plot_sweep([], str(tmp_path / "r.png"))


def test_real_process_exit_code_and_one_line(tmp_path):
    result = run_cli("sweep", "run", "--op", "nope", "--axis", "n=1", "--db", tmp_path / "d.sqlite")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and "unknown operation 'nope'" in result.stderr
