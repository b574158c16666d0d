"""The catalogue (commcomp.bounds.catalogue) against values computed independently (brute force, real
models, the registered tasks and constructions), not by re-reading the catalogue."""

import math

import numpy as np
import pytest

from commcomp.architectures import ARCHITECTURES, width_means
from commcomp.bounds import (
    BOUNDS, SPECIAL_ROWS, best_construction, best_lower_bound, bound_parameters, catalogue_N, compute_bounds,
    evaluate_bound, get_bound, protocol_lower_bound_bits, qsa_construction_widths, qsa_explicit_width,
)
from commcomp.errors import InvalidParameterError
from commcomp.matrix import problem_matrix
from commcomp.matrix.protocol_tree import deterministic_cc
from reductions.registry import get_reduction, get_task


def _one_way_bits(problem: str, n: int) -> int:
    """D^{A->B}(f) by brute force: ceil(log2(#distinct rows of the communication matrix))."""
    rows = np.unique(problem_matrix(problem, n), axis=0).shape[0]
    return math.ceil(math.log2(rows))


# -- 1. one convention for N ------------------------------------------------------------------------
def test_mil_bound_at_n8_equals_the_protocol_lower_bound():
    reduction = get_reduction("multi-index-lookup")
    length = reduction.length(8)                               # 32 tokens: 8 indices, 16 symbols, 8 indices
    row = best_lower_bound("multi-index-lookup", "elman", length, 32)
    assert row.theorem == "BHBK-MIL-RNN" and row.value == _one_way_bits("disjointness", 8) == 8
    from reductions.simulate import verify

    assert verify("multi-index-lookup", "elman", 8, "fixed:8:4", instances=4)["lower_bound_bits"] == row.value


@pytest.mark.parametrize("k", [1, 2, 5, 8, 33])
def test_catalogue_N_is_the_registered_tasks_symbol_count(k):
    mil, il = get_task("multi-index-lookup"), get_task("index-lookup")
    assert catalogue_N("multi-index-lookup", mil.length(k)) == mil.data_length(k)
    assert bound_parameters("multi-index-lookup", mil.length(k)) == {"k": k}
    assert catalogue_N("index-lookup", il.length(k + 1)) == k + 1      # N symbols, then the query
    for task in ("string-equality", "dyck", "qsa", "match3", "istree"):
        L = get_task(task).length(max(k, 2))
        assert catalogue_N(task, L) == L
    assert get_bound("BHBK-MIL-RNN").n_means.startswith("N = data symbols")
    assert get_bound("BHBK-EQ-RNN").n_means == "N = sequence length in tokens"
    with pytest.raises(InvalidParameterError):
        catalogue_N("multi-index-lookup", 4, k=2)


def test_bounds_help_states_the_convention(capsys):
    import cli

    with pytest.raises(SystemExit):
        cli.main(["bounds", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "N counts the data symbols" in out and "sequence length in tokens" in out


# -- 2. qSA at the task's q and d' ------------------------------------------------------------------
def test_qsa_widths_at_the_tasks_q_and_d():
    from models.constructions.qsa import make_qsa_moment_curve, make_qsa_random_keys

    q, d = 8, get_task("qsa").dim                               # the task's own value dimension (2)
    length = get_task("qsa").length(q)                          # 17 rows
    assert bound_parameters("qsa", length) == {"q": q, "dprime": d}
    explicit = make_qsa_moment_curve(q).width                   # commcomp's own weights
    assert qsa_explicit_width(q, d) == explicit == d + 2 * q + 1 == 19
    widths = {w.theorem: w for w in qsa_construction_widths(q, d, length)}
    assert widths["COMMCOMP-qSA-explicit"].width == explicit
    assert widths["SHT-qSA-UB-p"].width == make_qsa_random_keys(q).width
    assert widths["SHT-qSA-UB-inf"].precision_model == "infinite precision"
    best = best_construction("qsa", "transformer", length, "float32", layers=1)
    assert best.min_width == 19 and best.precision_model != "infinite precision"


# -- 3. the hybrid bound: from real models' message sizes ---------------------------------------------
def test_hybrid_min_width_is_the_smallest_model_whose_protocol_carries_n_bits():
    from reductions.simulate.setup import prepare

    n, precision = 700, "fixed:8:4"
    N = get_reduction("string-equality").length(n)
    bits = {m: prepare("string-equality", "hybrid", n, precision, width=m).bits_per_message for m in range(1, 6)}
    smallest = min(m for m, b in bits.items() if b >= n)          # D(EQ_n) - 1 = n bits must get through
    row = next(r for r in compute_bounds(N, 8, task="string-equality", arch="hybrid")
               if r.theorem == "COMMCOMP-HYBRID-EQ")
    assert row.min_width == smallest == 3
    assert "one round per generated token" in row.cot
    # the crossover: the first N at which width 2 no longer carries n = (N - 1) // 2 bits
    cross = next(r for r in compute_bounds(N, 8, task="string-equality", arch="hybrid", width=2)
                 if r.theorem == "COMMCOMP-HYBRID-EQ").crossover_n
    carried = lambda L: 2 * 38 * 8 + 2 * 8 + 3 * (8 + math.ceil(math.log2(L)))  # noqa: E731
    assert cross == next(L for L in range(3, 5000) if (L - 1) // 2 > carried(L))


# -- 4. Dyck on sum-state layers ---------------------------------------------------------------------
@pytest.mark.parametrize("arch,heads", [("linear-attention", 1), ("linear-attention", 2), ("retnet", 2), ("dss", 1)])
def test_dyck_sum_state_bound_from_real_models(arch, heads):
    from models.registry import build_model

    N, p = 4097, 16
    assert get_reduction("dyck").length((N - 1) // 4) == N        # DISJ_n -> Dyck-(2,2): N = 4n + 1
    n = (N - 1) // 4

    def numbers(m):
        kw = {"heads": heads} if arch != "dss" else {}
        return build_model(arch, vocab_size=5, width=m, n_outputs=2, **kw).state_numbers()

    smallest = next(m for m in range(heads, 400, heads) if numbers(m) * (p + math.ceil(math.log2(N))) >= n)
    rows = compute_bounds(N, p, heads=heads, task="dyck", arch=arch)
    row = next(r for r in rows if r.theorem == "COMMCOMP-DYCK22-SUM-1L")
    assert row.min_width == smallest and row.precision_model == "exact partial sums"
    assert not any(r.theorem == "BHBK-Dyck-RNN" for r in rows)     # no "m = 1" for sum-state layers
    assert not any(r.theorem == "COMMCOMP-DYCK22-SUM-1L" for r in compute_bounds(N, p, task="dyck", arch=arch,
                                                                                 layers=2))


def test_dyck_elman_width_is_the_constructions():
    from models.constructions import get_construction

    built = get_construction("dyck-elman").make(3, "fixed:2:0")
    rows = {r.theorem: r for r in compute_bounds(400, 8, task="dyck", arch="elman")}
    assert rows["COMMCOMP-Dyck-Elman"].min_width == built.model.layers[0].d_out == 40
    assert rows["BHBK-Dyck-RNN"].min_width == 1


# -- 5. labels -------------------------------------------------------------------------------------
@pytest.mark.parametrize("bound_id", ["BHBK-Dyck-1TF", "BHBK-NN-RNN", "SHT-qSA-RNN", "SHT-qSA-FFN", "BHBK-IL-RNN",
                                      "SHT-Match3-LB"])
def test_secondary_and_derived_formulas_are_not_called_proved(bound_id):
    assert get_bound(bound_id).label != "proved lower bound"


def test_only_formulas_tagged_P_alone_could_be_proved():
    for b in BOUNDS:
        if b.label == "proved lower bound":
            assert b.tags == ("[P]",), b.id
        if b.kind == "lower" and b.formula is not None and not b.asymptotic:
            assert f"[{b.evidence}]" in b.tags, b.id
    assert get_bound("SHT-qSA-RNN").evidence == "S" and get_bound("BHBK-Dyck-1TF").evidence == "S"


# -- 6. smaller -------------------------------------------------------------------------------------
def test_width_convention_matches_real_models():
    from models.registry import build_model

    assert all(width_means(a) for a in ARCHITECTURES)
    retnet = build_model("retnet", vocab_size=4, width=8, n_outputs=2, heads=2)
    assert retnet.state_numbers() == 2 * (8 // 2) ** 2                 # H heads of (m/H) x (m/H)
    assert "split across H heads" in width_means("retnet") and "per-head" in width_means("transformer")


def test_match3_tag_qsa_single_head_and_nearest_neighbour_exact():
    assert get_bound("SHT-Match3-LB").tags == ("[S]",)
    assert not any(r.theorem == "SHT-qSA-LB" for r in compute_bounds(17, 8, heads=4, task="qsa", arch="transformer"))
    assert any(r.theorem == "SHT-qSA-LB" for r in compute_bounds(17, 8, heads=1, task="qsa", arch="transformer"))
    N = get_reduction("nearest-neighbour").length(8)
    assert evaluate_bound("COMMCOMP-NN-RNN", N=N) == _one_way_bits("index", 8) == 8
    assert evaluate_bound("BHBK-NN-RNN", N=N) == N / 2   # the paper's N/(2p) (issue 20)


def test_dyck_1tf_row_cites_the_problem_its_reduction_runs():
    problem = get_reduction("dyck").problem
    row = best_lower_bound("dyck", "transformer", get_reduction("dyck").length(6), 16, layers=1, problem=problem)
    assert row.problem == problem == "disjointness" and row.theorem.startswith("COMMCOMP-DYCK22")


@pytest.mark.parametrize("problem,n", [("equality", 2), ("equality", 3), ("disjointness", 2), ("disjointness", 3),
                                       ("index", 4)])
def test_multi_round_bound_is_exact_D_minus_one(problem, n):
    exact = deterministic_cc(problem_matrix(problem, n)).deterministic_cc
    assert protocol_lower_bound_bits(problem, n, 2) == exact - 1
    assert protocol_lower_bound_bits(problem, n, 1) == _one_way_bits(problem, n)


# -- 7. new rows ------------------------------------------------------------------------------------
@pytest.mark.parametrize("task,problem,n", [("match2", "index", 6), ("match3", "disjointness", 6)])
def test_match_rnn_bounds_through_their_reductions(task, problem, n):
    reduction = get_reduction(task)
    assert reduction.problem == problem and reduction.split == "prefix-suffix"
    row = best_lower_bound(task, "gru", reduction.length(n), 8)
    assert row.value == _one_way_bits(problem, n)
    if task == "match2":  # the exact Myhill-Nerode count over all inputs is at least the bound
        from reductions.search.computed import computed_state_bits

        assert computed_state_bits(task, 3).max_state_bits >= evaluate_bound(row.theorem, N=reduction.length(3))


def test_qsa_row_bound_from_the_row_protocols_message():
    from reductions.simulate.setup import prepare

    q, p, d = 40, 4, get_task("qsa").dim
    bits = {m: prepare("qsa", "transformer", q, "fixed:4:2", width=m).bits_per_message for m in range(1, 8)}
    smallest = min(m for m, b in bits.items() if b >= q)              # D^{A->B}(DISJ_q) = q bits
    row = best_lower_bound("qsa", "transformer", get_task("qsa").length(q), p, layers=1)
    assert row.theorem == "COMMCOMP-qSA-ROW-1TF" and row.min_width == smallest
    assert bits[1] == (2 * 1 + d) * p                                  # H (2 d_k + d_v) p at H = 1


def test_special_rows_name_real_entries_and_constructions():
    from models.constructions import get_construction

    for row in SPECIAL_ROWS:
        for theorem in row.theorems:
            get_bound(theorem)
        if row.construction:
            get_construction(row.construction)
    for N in (6, 9):
        dnf = get_construction("k-dnf-2tf").make(N, "float32", seed=0, k=3)
        assert dnf.width == evaluate_bound("COMMCOMP-kDNF-2TF", N=N, dnf_k=3)


@pytest.mark.parametrize("task", ["index-lookup", "string-equality", "string-disjointness", "match2"])
def test_catalogue_never_exceeds_the_exact_state_bits(task):
    import dataclasses

    from reductions.search.computed import catalogue_check, computed_state_bits

    exact = computed_state_bits(task, 3)
    check = catalogue_check(exact, 8)
    assert check["consistent"] is True and check["catalogue_state_bits"] <= exact.max_state_bits
    assert check["catalogue_N"] == catalogue_N(task, exact.length)
    starved = dataclasses.replace(exact, max_state_bits=check["catalogue_state_bits"] - 1)
    assert catalogue_check(starved, 8)["consistent"] is False          # the check can fail
