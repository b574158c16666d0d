"""The report: JSON fields, registry, size handling, agreement with the problems' known facts."""

import doctest
import importlib
import json

import numpy as np
import pytest

from commcomp.errors import TooLargeError, UnknownNameError
from commcomp.matrix import (JSON_FIELDS, MEASURES, check_certificate, measure, measure_problem,
                             problem_matrix)
from commcomp.matrix.solvers import available_solvers
from commcomp.problems import get_problem

PROBLEMS = ["index", "equality", "disjointness", "inner-product", "greater-than"]
DESIGN_FIELDS = {"problem", "n", "rows", "cols", "distinct_rows", "one_way_bits", "rank_rational",
                 "rank_gf2", "log_rank_bound", "fooling_set_size", "fooling_set", "partition_number",
                 "partition_number_1", "partition_number_0", "cover_number_1", "cover_number_0",
                 "deterministic_cc", "certificates_checked"}
EXTRA_FIELDS = {"nondeterministic_cc", "conondeterministic_cc",  # ceil(log2 C1), ceil(log2 C0)
                "discrepancy", "spectral_discrepancy_bound"}  # issue 24 (commcomp.matrix.discrepancy)


def test_registry_names():
    assert list(MEASURES) == ["rows", "rank", "fooling", "partition", "cover", "discrepancy"]
    assert set(JSON_FIELDS) == DESIGN_FIELDS | EXTRA_FIELDS
    got = MEASURES["rank"](problem_matrix("equality", 2))
    assert [r.measure for r in got] == ["rank_rational", "rank_gf2"]


@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_report_agrees_with_known_complexity(name, n):
    rep = measure_problem(name, n)
    out = rep.to_json()
    assert set(out) == DESIGN_FIELDS | EXTRA_FIELDS
    json.dumps(out)  # JSON-ready
    prob = get_problem(name)
    assert out["problem"] == prob.name and out["n"] == n and rep.certificates_checked
    assert out["one_way_bits"] == prob.deterministic_one_way_bits(n)
    assert out["deterministic_cc"] == prob.deterministic_bits(n)
    assert out["log_rank_bound"] <= out["deterministic_cc"]
    assert out["fooling_set_size"] == len(out["fooling_set"])
    assert 2 ** out["deterministic_cc"] >= out["partition_number"] >= out["rank_rational"]
    assert out["partition_number"] == out["partition_number_1"] + out["partition_number_0"]
    if available_solvers():  # without one, the covers' fallback stops at 40 cells
        assert out["cover_number_1"] <= out["partition_number_1"]
        assert out["cover_number_0"] <= out["partition_number_0"]
        assert out["nondeterministic_cc"] <= out["deterministic_cc"]
    assert all(rep.labels[k] for k in ("one_way_bits", "rank_rational", "fooling_set_size",
                                       "partition_number", "deterministic_cc"))


def test_too_large_parts_are_skipped_by_default_and_raise_when_asked_for():
    rep = measure_problem("disjointness", 6)  # the partition numbers meet the rank bound: no search
    assert rep.deterministic_cc == 7 and rep.partition_number == 64 + 63
    assert rep.cover_number_1 == 64 and rep.cover_number_0 is None
    assert set(rep.skipped) == {"cover_number_0"}  # 63 x 63, fooling set below the trivial cover
    assert rep.rank_rational == 64 and rep.fooling_set_size == 64 and rep.certificates_checked
    rep = measure_problem("disjointness", 9)
    assert rep.deterministic_cc is None and set(rep.skipped) == {"deterministic_cc", "cover_number_0"}
    with pytest.raises(TooLargeError, match="limit"):  # neither cover number fits: raised
        measure(np.random.default_rng(0).random((70, 70)) < 0.5, ["cover"])
    rep = measure_problem("disjointness", 7, ["cover"])  # C1 = 128 by the fooling set; C0 too large
    assert rep.cover_number_1 == 128 and rep.cover_number_0 is None and rep.partition_number is None
    assert rep.rank_rational is None and rep.to_json()["fooling_set"] is None


def test_unknown_measure_and_user_matrices():
    with pytest.raises(UnknownNameError, match="known: rows, rank, fooling, partition, cover"):
        measure(np.eye(2, dtype=bool), ["volume"])
    m = np.array([[1, 0, 1], [0, 1, 1]], dtype=bool)
    rep = measure(m, methods={"rank_rational": "bareiss", "largest_fooling_set": "greedy"})
    assert rep.problem is None and rep.rows == 2 and rep.cols == 3
    assert rep.rank_rational == 2 and rep.results[1].method == "bareiss"
    assert rep.results[3].method == "greedy"
    assert all(check_certificate(r, m) for r in rep.results)
    unchecked = measure(np.eye(3, dtype=bool), ["rows"], check=False)
    assert not unchecked.certificates_checked and unchecked.checks == ()


MODULES = ["build", "rows", "rank", "gf2", "fooling", "protocol_tree", "partition", "certificates",
           "measures", "_modp", "__init__", "rectangles", "solvers", "generators", "drat",
           "matrix_file"]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    name = "commcomp.matrix" if module == "__init__" else f"commcomp.matrix.{module}"
    mod = importlib.import_module(name)
    failed, tried = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert failed == 0
    assert tried > 0
