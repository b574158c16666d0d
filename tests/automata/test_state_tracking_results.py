"""The state-tracking results as data, and the hand-set diagonal recurrences that show both sides."""

from __future__ import annotations

import re

import numpy as np

from commcomp.automata.results import EVIDENCE, STATE_TRACKING_RESULTS, results_for
from models.constructions.diagonal import SETTINGS, diagonal_model
from reductions.search.automaton.api import automaton_of_model
from reductions.search.automaton.view import automaton_rows


def test_every_statement_says_how_far_it_was_checked():
    ids = [r.id for r in STATE_TRACKING_RESULTS]
    assert len(ids) == len(set(ids))
    for r in STATE_TRACKING_RESULTS:
        assert r.evidence in EVIDENCE and r.side in ("star-free", "group")
        assert re.fullmatch(r"\d{4}\.\d{5}", r.arxiv)
        if r.evidence == "[P]":
            assert "abstract" in r.checked  # only the abstracts were read: a [P] names one
        if r.evidence == "[R]":
            assert r.checked.startswith("not checked")
    assert {r.arxiv for r in STATE_TRACKING_RESULTS} == {"2405.17394", "2411.12537"}
    assert results_for(None) == []
    assert all(r.side == "star-free" for r in results_for(True))
    assert all(r.side == "group" for r in results_for(False))


def test_gates_in_zero_one_give_an_aperiodic_monoid_a_minus_one_eigenvalue_counts_parity():
    a_gated, a_parity = SETTINGS["gated"][0], SETTINGS["parity"][0]
    assert np.all((a_gated > 0) & (a_gated < 1))  # every gate in (0, 1)
    assert a_parity.min() == -1.0  # the eigenvalue -1 (the transition of letter 1)
    for fmt in ("fixed:6:4", "fixed:8:6", "float16"):
        gated, _ = automaton_of_model(diagonal_model("gated", fmt), [0, 1], (), ["0", "1"], against="parity")
        assert gated["closed"] and gated["aperiodic"] is True and gated["equivalent"] is False, fmt
        assert [r["id"] for r in gated["state_tracking"]] == ["SVH24-star-free"]
    par, _ = automaton_of_model(diagonal_model("parity", "fixed:4:2"), [0, 1], (), ["0", "1"], against="parity")
    assert par["equivalent"] is True and par["aperiodic"] is False and par["period_witness"]["period"] == 2
    cited = {r["id"]: r["evidence"] for r in par["state_tracking"]}
    assert cited["GSZ25-parity"] == "[P]" and cited["SVH24-only-star-free"] == "[R]"
    row = dict((k, v) for k, v in automaton_rows(par))["state tracking"]
    assert "GSZ25-parity [P]" in row and "SVH24-only-star-free [R]" in row
