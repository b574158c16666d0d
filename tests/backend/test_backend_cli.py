"""``--backend`` on simulate / verify / witness / sweep run, and ``COMMCOMP_BACKEND``: exit codes, JSON."""

from __future__ import annotations

import importlib
import json

import pytest

import cli
from commcomp import backend as bk

VERIFY = ["verify", "index-lookup", "--arch", "gru", "--n", "4", "--precision", "fixed:6:3", "--width", "2",
          "--exhaustive"]


@pytest.fixture
def no_cupy(monkeypatch):
    real = importlib.import_module

    def refuse(name, *a, **k):
        if name.split(".")[-1] == "cupy":
            raise ImportError("No module named 'cupy'")
        return real(name, *a, **k)

    monkeypatch.setattr(bk.importlib, "import_module", refuse)


def _run(capsys, argv):
    rc = cli.main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("argv", [VERIFY, ["simulate"] + VERIFY[1:-1], ["witness"] + VERIFY[1:-1],
                                  ["sweep", "run", "--op", "verify", "--param", "task=index-lookup",
                                   "--param", "arch=gru", "--workers", "0"]])
def test_missing_library_is_one_line_exit_2(capsys, no_cupy, tmp_path, argv):
    rc, out, err = _run(capsys, argv + ["--backend", "cupy", "--out", str(tmp_path / "o.json")])
    assert rc == 2 and out == ""
    assert err.strip().count("\n") == 0 and "'cupy' is not available" in err
    assert not (tmp_path / "o.json").exists()


def test_unknown_backend_and_environment(capsys, monkeypatch):
    pytest.importorskip("array_api_strict")
    rc, _, err = _run(capsys, VERIFY + ["--backend", "jax-on-a-toaster"])
    assert rc == 2 and "unknown array backend" in err
    monkeypatch.setenv(bk.ENV_VAR, "array_api_strict")
    rc, out, _ = _run(capsys, VERIFY + ["--format", "json"])
    assert rc == 0 and json.loads(out)["backend"] == "array_api_strict"
    rc, out, _ = _run(capsys, VERIFY + ["--format", "json", "--backend", "numpy"])  # the flag wins
    assert rc == 0 and json.loads(out)["backend"] == "numpy"


@pytest.mark.parametrize("name", ["array_api_strict", "torch", "cupy"])
def test_backend_flag_gives_the_numpy_result(capsys, name):
    try:
        bk.namespace(name)
    except bk.BackendUnavailableError:
        pytest.skip(f"{name} is not installed")
    rc, out, _ = _run(capsys, VERIFY + ["--format", "json", "--backend", name])
    strict = json.loads(out)
    rc2, out2, _ = _run(capsys, VERIFY + ["--format", "json"])
    plain = json.loads(out2)
    assert rc == rc2 == 0 and strict["backend"] == name and plain["backend"] == "numpy"
    for key in ("instances", "faithful_count", "correct_count", "distinct_messages", "bits_per_message"):
        assert strict[key] == plain[key]


def test_sweep_backend(capsys, tmp_path, monkeypatch):
    pytest.importorskip("array_api_strict")
    monkeypatch.delenv(bk.ENV_VAR, raising=False)
    rc, out, _ = _run(capsys, ["sweep", "run", "--op", "verify", "--axis", "arch=gru,lstm", "--param", "task=index-lookup",
                               "--param", "n=3", "--param", "precision=fixed:6:3", "--param", "width=2",
                               "--param", "exhaustive=true", "--workers", "0", "--backend", "array_api_strict",
                               "--db", str(tmp_path / "s.sqlite"), "--format", "json"])
    assert rc == 0
    rows = json.loads(out)["rows"]
    assert [r["backend"] for r in rows] == ["array_api_strict"] * 2 and all(r["faithful_count"] == 24 for r in rows)
    import os

    assert bk.ENV_VAR not in os.environ  # restored after the run
