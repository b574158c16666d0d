"""Kill a running sweep with SIGKILL, resume it, and check nothing was half-written or lost."""

import os
import signal
import subprocess
import sys
import time

import pytest

from commcomp.sweep.runner import run_sweep
from commcomp.sweep.spec import load_spec
from commcomp.sweep.store import ResultStore, StoreError

from sweep_helpers import REPO, signature

POINTS = 24
SWEEP = f"""
[sweep]
name = "killme"
operation = "selftest"
seed = 5

[params]
seconds = 0.15

[axes]
n = {list(range(POINTS))}
"""


def _rows(db):
    try:
        with ResultStore(db, readonly=True) as store:
            return store.rows()
    except StoreError:  # not created yet
        return []


def _start(path):
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "cli", "sweep", "run", str(path), "--workers", "2",
                             "--db", str(path.with_suffix(".sqlite"))],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def _kill_when(process, db, at_least):
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline and process.poll() is None:
        seen = _rows(db)
        if len(seen) >= at_least:
            break
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)  # the submitting process, mid-sweep, at no chosen moment
    process.wait(timeout=30)
    try:
        os.killpg(process.pid, signal.SIGKILL)  # then its orphaned workers (our own session)
    except ProcessLookupError:
        pass
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()
    return {(r.point, r.seed) for r in seen}


def _check_whole(rows):
    for r in rows:
        assert r.status == "ok" and r.error is None and r.traceback is None
        assert set(r.result) == {"seconds", "mode", "draw"} and r.result["seconds"] == 0.15
        assert r.wall_seconds is not None and r.version and r.finished_at


def test_sigkill_mid_sweep_then_resume_equals_an_uninterrupted_run(tmp_path):
    path = tmp_path / "killme.toml"
    path.write_text(SWEEP)
    db = str(tmp_path / "killme.sqlite")
    previous = set()
    for at_least in (5, 12):  # kill the first run, then kill the resumed run
        seen = _kill_when(_start(path), db, at_least)
        with ResultStore(db, readonly=True) as store:
            assert store.integrity_ok()
            rows = store.rows()
        _check_whole(rows)
        now = {(r.point, r.seed) for r in rows}
        assert seen <= now and previous <= now  # no finished row lost
        assert at_least <= len(now) < POINTS, "the sweep was not killed mid-way"
        assert len(now) == len(rows)  # one row per point
        previous = now

    resumed = run_sweep(load_spec(str(path)), db, workers=2)  # resume: the same sweep, same database
    assert (resumed.skipped, resumed.ran, resumed.failed) == (len(previous), POINTS - len(previous), 0)

    reference = str(tmp_path / "reference.sqlite")
    run_sweep(load_spec(str(path)), reference, workers=2)
    assert signature(db) == signature(reference)
    assert len(signature(db)) == POINTS
