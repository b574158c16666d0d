"""Helpers shared by the sweep tests."""

import os
import subprocess
import sys

from commcomp.sweep.store import ResultStore

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def signature(db_path, sweep=None):
    """What must agree between two runs of a sweep: every row's identity, status, result and error."""
    with ResultStore(db_path, readonly=True) as store:
        return sorted((r.sweep, r.operation, r.point, r.seed, r.status,
                       repr(sorted(r.result.items())), r.error) for r in store.rows(sweep=sweep))


def run_cli(*args, timeout=60, **kwargs):
    """Run ``python -m cli ARGS`` in a fresh process (as a user would) and return the CompletedProcess."""
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env=env, **kwargs)
