"""The lattice search under a deadline (issue 25: --time-limit)."""

from __future__ import annotations

import numpy as np
import pytest

from reductions.search.attention.lattice import lattice_search


def test_deadline_past_lets_one_attempt_run_and_says_so():
    """No attempt starts after the deadline (the first always runs); the note names the time limit."""
    pytest.importorskip("fpylll")
    rng = np.random.default_rng(3)
    D = rng.integers(-(1 << 40), 1 << 40, size=(12, 4), dtype=np.int64)  # far too few rows: nothing to find
    free = lattice_search(D, seed=0)
    cut = lattice_search(D, seed=0, deadline=0.0)
    assert not free.found and not cut.found
    assert len(cut.tried["attempts"]) == 1 < len(free.tried["attempts"])
    assert "then the time limit" in cut.note and "then the time limit" not in free.note
