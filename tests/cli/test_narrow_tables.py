"""Every table the CLI prints reads at 80 columns: never wider, and no word split across lines.

Each subcommand runs in process through ``cli.main`` with ``COLUMNS=80``; the same command at
``COLUMNS=1000`` (where nothing needs to wrap) gives the words the narrow table must keep whole. A
word broken across lines shows in the narrow table as a fragment: a token that the wide rendering
does not hold but that starts or ends one of its tokens. Listings (``list``, ``sweep ops``,
``bounds``) must also keep one line per row, counted against ``--format json``.
"""

import json
import os
import re

import pytest

import cli

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tiny_lstm_index_lookup.state_dict.npz")
BOX = "─━│┃┏┓┗┛┣┫┳┻╋┡┩╇└┘├┤┬┴┼┌┐"
NUMBER = re.compile(r"^[-+(]?[0-9.]+[%,;)s.]*$")  # timings differ from run to run

CASES = {
    "list theorems": ["list", "theorems"],
    "list tasks": ["list", "tasks"],
    "list archs": ["list", "archs"],
    "list constructions": ["list", "constructions"],
    "list problems": ["list", "problems"],
    "sweep ops": ["sweep", "ops"],
    "bounds": ["bounds", "--n", "64", "1024", "--task", "index-lookup", "dyck", "qsa"],
    "bounds --width": ["bounds", "--n", "64", "--width", "8", "--task", "string-equality"],
    "bounds --computed": ["bounds", "--n", "3", "--computed", "--task", "index-lookup", "string-equality"],
    "simulate rnn": ["simulate", "index-lookup", "--arch", "lstm", "--n", "8", "--precision", "float32",
                     "--width", "16", "--trajectory"],
    "simulate transformer": ["simulate", "qsa", "--arch", "transformer", "--n", "4", "--precision", "float32",
                             "--heads", "2"],
    "simulate hybrid": ["simulate", "string-equality", "--arch", "hybrid", "--n", "4", "--precision", "float32",
                        "--heads", "2"],
    "verify": ["verify", "index-lookup", "--arch", "gru", "--n", "6", "--precision", "fixed:4:2", "--width", "1",
               "--exhaustive"],
    "witness": ["witness", "index-lookup", "--arch", "elman", "--n", "64", "--precision", "float32", "--width",
                "1"],
    "construct": ["construct", "k-dnf", "--n", "4"],
    "import": ["import", "torch", FIXTURE, "--arch", "lstm", "--out", "m.npz"],
    "sweep run": ["sweep", "run", "--op", "verify", "--param", "task=index-lookup", "--param", "arch=elman",
                  "--param", "precision=float32", "--param", "instances=4", "--axis", "n=4,5", "--workers", "0",
                  "--db", "{fresh}"],
    "sweep run --dry-run": ["sweep", "run", "--op", "selftest", "--axis", "n=1,2", "--dry-run"],
    "sweep show": ["sweep", "show", "shown.sqlite"],
    "separations": ["separations", "--n", "3", "--instances", "4", "--task", "dyck", "--arch", "elman",
                    "transformer-1"],
    # its catalogue table once measured 85 columns ('ceiling(log(1/epsilon)/log(2))' is now 'ceil(log2(...))')
    "matrix": ["matrix", "equality", "--n", "3"],
    "matrix file": ["matrix", "--matrix", "m.txt", "--measure", "partition", "cover"],
}
ONE_LINE_PER_ROW = {"list theorems", "list tasks", "list archs", "list constructions", "list problems",
                    "sweep ops", "bounds"}


def _run(capsys, monkeypatch, argv, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _tokens(text):
    return set(re.sub(f"[{BOX}]", " ", text).split())


@pytest.fixture
def place(tmp_path, monkeypatch, capsys):
    """A short working folder (paths in captions stay short) holding a small sweep database."""
    monkeypatch.chdir(tmp_path)
    _run(capsys, monkeypatch, ["sweep", "run", "--op", "selftest", "--axis", "n=1,2", "--workers", "0",
                               "--db", "shown.sqlite"], 80)
    (tmp_path / "m.txt").write_text("1 1 0 0\n1 0 1 0\n0 1 1 1\n0 0 1 1\n")  # a user's matrix file
    return tmp_path


@pytest.mark.parametrize("argv", list(CASES.values()), ids=list(CASES))
def test_table_fits_80_columns_with_no_word_broken(argv, place, capsys, monkeypatch):
    fresh = iter(["narrow.sqlite", "wide.sqlite"])
    narrow = _run(capsys, monkeypatch, [a.format(fresh=next(fresh)) if a == "{fresh}" else a for a in argv], 80)
    wide = _run(capsys, monkeypatch, [a.format(fresh=next(fresh)) if a == "{fresh}" else a for a in argv], 1000)
    lines = narrow.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, max(lines, key=len)
    whole = _tokens(wide)
    fragments = [t for t in _tokens(narrow) - whole if not NUMBER.match(t)
                 and any(w != t and (w.startswith(t) or w.endswith(t)) for w in whole)]
    assert not fragments, fragments  # a word split across lines leaves its pieces


def _body_lines(text):
    """The lines of a listing between its header rule and the blank line after the rows."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if set(line.strip()) == {"─"}) + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return lines[start:end]


@pytest.mark.parametrize("name", sorted(ONE_LINE_PER_ROW))
def test_listings_have_one_line_per_row(name, capsys, monkeypatch):
    argv = CASES[name]
    rows = json.loads(_run(capsys, monkeypatch, argv + ["--format", "json"], 80))
    body = _body_lines(_run(capsys, monkeypatch, argv, 80))
    assert len(body) == len(rows)
    first = rows[0]
    key = first.get("id") or first.get("name") or first.get("theorem")
    assert key in body[0].split()  # the row's id is on its line


@pytest.mark.parametrize("argv", [["list", "theorems", "--wide"], ["list", "constructions", "--wide"],
                                  ["sweep", "ops", "--wide"]], ids=lambda a: " ".join(a))
def test_wide_tables_hold_the_long_text(argv, capsys, monkeypatch):
    """``--wide`` shows what the short table leaves out (formulas, width formulas, descriptions),
    every word whole."""
    rows = json.loads(_run(capsys, monkeypatch, argv[:-1] + ["--format", "json"], 80))
    short = _tokens(_run(capsys, monkeypatch, argv[:-1], 80))
    wide = _tokens(_run(capsys, monkeypatch, argv, 80))
    field = {"theorems": "formula", "constructions": "width", "ops": "description"}[argv[1]]
    words = {w for r in rows for w in str(r[field]).split()}
    assert words <= wide  # every word of the long text, unbroken
    assert not words <= short  # and the default table leaves it to --wide
