"""The IP2 route to the tasks (reductions.lookup, commcomp.bounds.average): reductions checked on every (x, y),
the derived rows held against the exact optimum of every one-way protocol for the task itself, and the CLI rows.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from commcomp.bounds import compute_bounds, get_bound
from commcomp.bounds.average import ip_error_floor
from commcomp.bounds.records import eps
from commcomp.bounds.records import k as k_sym
from commcomp.bounds.records import n as n_sym
from reductions import ReductionCounterexample, check_reduction, get_reduction, make_reduction
from reductions.lookup import inner_product_to_mqar, inner_product_to_multi_index_lookup

IP_ROUTE = {"mqar": inner_product_to_mqar, "multi-index-lookup": inner_product_to_multi_index_lookup}


def _words(n: int) -> np.ndarray:
    return ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.int64)  # (2^n, n), bit j of the index


def _all_pairs(n: int):
    words = _words(n)
    x = np.repeat(words, 1 << n, axis=0)  # (4^n, n)
    y = np.tile(words, (1 << n, 1))  # (4^n, n)
    return x, y


# -- the reductions, on every (x, y) ----------------------------------------------------------------------
def test_registered_under_the_problem_option():
    assert get_reduction("mqar", problem="ip") is inner_product_to_mqar
    assert get_reduction("mil", problem="inner-product") is inner_product_to_multi_index_lookup
    assert get_reduction("mqar").problem == "index"  # the task's default is unchanged


@pytest.mark.parametrize("task", sorted(IP_ROUTE))
@pytest.mark.parametrize("n", range(1, 8))
def test_bob_parity_of_ground_truth_outputs_is_the_inner_product(task, n):
    red = IP_ROUTE[task]
    x, y = _all_pairs(n)
    enc = red.encode(x, y, n)
    outputs = red.task.ground_truth(enc.task_batch)  # (4^n, K): the task's own answers, from tokens alone
    # each output, independently: MQAR's output j is x_j y_j (its last, public dummy query 0); MIL's is x_j
    expected = x * y if task == "mqar" else x
    assert np.array_equal(outputs[:, :n], expected)
    if task == "mqar":
        assert outputs.shape == (4 ** n, n + 1) and np.all(outputs[:, n] == 0)
    truth = np.array([sum(a * b for a, b in zip(xr, yr)) % 2 == 1 for xr, yr in zip(x.tolist(), y.tolist())])
    assert np.array_equal(red.decode(outputs, y), truth)


@pytest.mark.parametrize("task", sorted(IP_ROUTE))
def test_bob_reads_only_the_selected_outputs(task):
    red, n = IP_ROUTE[task], 5
    x, y = _all_pairs(n)
    outputs = red.task.ground_truth(red.encode(x, y, n).task_batch)
    answer = red.decode(outputs, y)
    for j in range(n):
        flipped = outputs.copy()
        flipped[:, j] = 1 - flipped[:, j]  # output j wrong on every instance
        changed = red.decode(flipped, y) != answer
        assert np.array_equal(changed, y[:, j] == 1)  # flips Bob's bit exactly where y_j = 1


def test_check_reduction_passes_and_catches_a_wrong_query_selection():
    for red in IP_ROUTE.values():
        report = check_reduction(red, n_max=6, n_random=[64], samples=16, seed=3)
        assert report.exhaustive_instances == sum(4 ** n for n in range(1, 7))
    # queries that select the j with y_j = 0: the outputs are then x_j (1 - y_j), and the parity is wrong
    task = inner_product_to_mqar.task

    def complement(x, y, n):
        m = n + 1
        K = task.key_space(m)
        tokens = np.empty((len(x), 3 * m), dtype=np.int64)
        tokens[:, 0:2 * m:2] = np.arange(m)
        tokens[:, 1:2 * m:2] = K + np.concatenate([np.zeros((len(x), 1), np.int64), x], axis=1)
        tokens[:, 2 * m:3 * m - 1] = np.where(y == 0, np.arange(1, m), 0)
        tokens[:, -1] = 0
        return tokens

    wrong = make_reduction(task, "inner-product", encode=complement, owners=inner_product_to_mqar.owners,
                           decode=lambda outputs, y: np.sum(outputs[:, :-1] == 1, axis=1) % 2 == 1,
                           task_size=lambda n: n + 1, query_fixed=False)
    with pytest.raises(ReductionCounterexample) as err:
        check_reduction(wrong, n_max=4, n_random=None)
    assert err.value.n == 1 and err.value.decoded != err.value.truth


# -- the derived rows against the exact optimum of every one-way protocol for the task -----------------------
def optimal_task_error(n: int, b: int, task: str) -> Fraction:
    """Least whole-output error of a one-way protocol with 2^b messages on the image of uniform (x, y) under
    IP2_n -> task, by brute force over every map of Alice's x to a message.  Bob knows y and the public
    tokens, so the outputs he must produce are MQAR: x & y (x on the support of y, the dummy answers 0);
    MIL: x itself.  Per (message, y) his best guess is the most frequent such word in the message's class."""
    words = _words(n)
    codes = np.arange(1 << n)
    reveal = (codes[:, None] & codes[None, :]) if task == "mqar" else np.repeat(codes[:, None], 1 << n, 1)
    hits = (reveal[:, :, None] == codes[None, None, :]).astype(np.int64)  # (x, y, w): x shows word w to y
    classes = 1 << b
    maps = np.array(list(itertools.product(range(classes), repeat=1 << n)))  # (K, 2^n)
    onehot = (maps[:, :, None] == np.arange(classes)).astype(np.int64)  # (K, 2^n, 2^b)
    counts = np.einsum("kxm,xyw->kmyw", onehot, hits)  # (K, 2^b, 2^n, 2^n)
    right = int(counts.max(axis=3).sum(axis=(1, 2)).max())
    assert words.shape == (1 << n, n)
    return Fraction((1 << 2 * n) - right, 1 << 2 * n)


CASES = [(1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2)]


@pytest.mark.parametrize("task", sorted(IP_ROUTE))
@pytest.mark.parametrize("n,b", CASES)
def test_ip_route_floor_never_exceeds_the_task_optimum(task, n, b):
    optimum = optimal_task_error(n, b, task)
    assert ip_error_floor(b, n, rounds=1) <= optimum
    assert ip_error_floor(b, n, rounds=1) > 0 and optimum > 0
    # and the row's own formula: at the optimum's error the bound on state bits is at most b (the row
    # applies for eps < 1/2; a whole-output error can be larger, and then it says nothing)
    bound = get_bound("COMMCOMP-AVG-IP-MQAR-RNN" if task == "mqar" else "COMMCOMP-AVG-IP-MIL-RNN")
    if optimum >= Fraction(1, 2):
        return
    value = float(bound.formula.subs({n_sym: n, k_sym: n, eps: sp.Rational(optimum.numerator, optimum.denominator)}))
    assert value <= b


def test_task_optimum_by_hand_and_a_wrong_floor_caught():
    # MIL's input ignores y: 2^b messages single out 2^b of the 2^n x's, error 1 - 2^(b - n)
    assert all(optimal_task_error(n, b, "multi-index-lookup") == 1 - Fraction(1 << b, 1 << n) for n, b in CASES)
    # MQAR, n = 2, b = 0: Bob guesses x on supp(y) blind: right for y = 00, 1/2 for |y| = 1, 1/4 for y = 11
    assert optimal_task_error(2, 0, "mqar") == 1 - Fraction(4 + 2 + 2 + 1, 16)
    # that counting floor 1 - 2^(b - n) is true for MIL but not for MQAR: the brute force catches it
    assert any(1 - Fraction(1 << b, 1 << n) > optimal_task_error(n, b, "mqar") for n, b in CASES)
    # the task is at least as hard as IP2 itself (its optimum, tests/bounds/test_average.py, at n = 2, b = 0: 3/8)
    assert optimal_task_error(2, 0, "mqar") >= Fraction(3, 8)


# -- the catalogue rows and the CLI --------------------------------------------------------------------------
def test_rows_values_and_tags():
    rows = compute_bounds(1000, 16, task=["mqar", "multi-index-lookup"], arch="lstm", error=0.01)
    avg = {r.theorem: r for r in rows if r.error is not None}
    adv = 2 * math.log2(1 / (1 - 0.02))
    ip_mqar, ip_mil = avg["COMMCOMP-AVG-IP-MQAR-RNN"], avg["COMMCOMP-AVG-IP-MIL-RNN"]
    assert ip_mqar.value == pytest.approx(1000 // 3 - 1 - adv, rel=1e-12)  # n = 332 bits of IP2
    assert ip_mil.value == pytest.approx(500 - adv, rel=1e-12)  # k = 500
    assert ip_mqar.min_width == math.ceil((332 - adv) / 32) == 11  # LSTM: 2m numbers of 16 bits
    assert ip_mil.min_width == 16
    assert ip_mqar.tag == ip_mil.tag == "[D]" and avg["BHBK-AVG-MQAR-RNN"].tag == "[A]"
    assert avg["BHBK-AVG-MQAR-RNN"].value is None  # the rebuttal's constant stays unknown
    assert "COMMCOMP-AVG-MQAR-RNN" in avg  # the INDEX floor row beside it
    # no IP row is offered for a 1-layer Transformer or for single-query IL / NN (module docstring)
    more = compute_bounds(1000, 16, task=["index-lookup", "nearest-neighbour", "mqar"], error=0.01)
    ip_rows = [r for r in more if r.theorem.startswith("COMMCOMP-AVG-IP")]
    assert {r.theorem for r in ip_rows} == {"COMMCOMP-AVG-IP-MQAR-RNN"}
    assert all(r.arch not in ("transformer", "tf", "hybrid") for r in ip_rows)


def test_row_matches_the_protocol_floor():
    # the row at the floor's error, and the floor at the row's bits, agree (n = 332, b = 300 bits)
    b, n = 300, 332
    floor = ip_error_floor(b, n, rounds=1)
    row = compute_bounds(3 * (n + 1), 16, task="mqar", arch="lstm", error=float(floor))
    value = next(r.value for r in row if r.theorem == "COMMCOMP-AVG-IP-MQAR-RNN")
    assert value == pytest.approx(b, abs=1e-9)


def test_cli_rows(capsys):
    import cli

    assert cli.main(["bounds", "--task", "mqar", "--arch", "lstm", "--n", "1000", "--precision", "16",
                     "--error", "0.01", "--format", "json"]) in (0, None)
    rows = {r["theorem"]: r for r in json.loads(capsys.readouterr().out)}
    ip = rows["COMMCOMP-AVG-IP-MQAR-RNN"]
    assert ip["error"] == 0.01 and ip["problem"] == "inner-product" and ip["evidence"] == "D"
    assert "n = floor(N/3) - 1" in ip["formula"] and "whole-output error" in ip["assumptions"]
    assert rows["COMMCOMP-AVG-MQAR-RNN"]["problem"] == "index"
    assert rows["BHBK-AVG-MQAR-RNN"]["value"] is None
    assert cli.main(["bounds", "--task", "mqar", "--arch", "lstm", "--n", "1000", "--precision", "16",
                     "--error", "0.01"]) in (0, None)
    table = capsys.readouterr().out
    line = next(l for l in table.splitlines() if "COMMCOMP-AVG-IP-MQAR-RNN" in l)
    assert line.split()[3:6] == ["LB", "[D]", "11"] and line.split()[-1] == "0.01"


# -- single-query Index Lookup: why the IP2 route gives only log N there ------------------------------------
@pytest.mark.parametrize("n", range(1, 5))
def test_one_symbol_serves_one_parity(n):
    # the lemma behind N >= 2^n - 1: for nonzero a != b, chi_b is neither chi_a nor its negation (their sum
    # chi_{a+b} is not constant), so Bob's one binary symbol (or its negation) can stand for one y only
    words = _words(n)
    chi = (words @ words.T) % 2  # (2^n, 2^n): chi[a, x] = <a, x> mod 2
    for a, b in itertools.permutations(range(1, 1 << n), 2):
        assert not np.array_equal(chi[a], chi[b]) and not np.array_equal(chi[a], 1 - chi[b])


def test_two_symbols_cannot_carry_ip2_on_two_bits():
    # brute force at n = 2: every pair of symbols s_1, s_2 (Boolean functions of x) misses a nonzero parity
    words = _words(2)
    chi = [tuple(int(v) for v in (words @ words[a]) % 2) for a in (1, 2, 3)]
    functions = list(itertools.product((0, 1), repeat=4))  # the 16 Boolean functions of x, as value tuples
    for s1, s2 in itertools.product(functions, repeat=2):
        covered = {s1, s2, tuple(1 - v for v in s1), tuple(1 - v for v in s2)}
        assert not all(c in covered for c in chi)


def test_hadamard_reduction_to_index_lookup_is_sound_and_long():
    # IP2_n -> Index Lookup with N = 2^n - 1 symbols s_z = <x, z> (z = 1 .. 2^n - 1, Alice), query z = y (Bob);
    # Bob answers the symbol, or 0 for y = 0: exact, but n = log2(N + 1), so the bound is only logarithmic
    from reductions import get_task

    task = get_task("index-lookup")

    def encode(x, y, n):
        z = _words(n)[1:]  # (2^n - 1, n)
        symbols = (x @ z.T) % 2  # (B, 2^n - 1)
        code = (y << np.arange(n)).sum(axis=1)  # (B,) y as an integer
        query = task.alphabet + np.maximum(code - 1, 0)  # y = 0 asks s_1 and Bob ignores it
        return np.concatenate([symbols, query[:, None]], axis=1)

    hadamard = make_reduction(task, "inner-product", encode=encode,
                              owners=lambda n: [1] * ((1 << n) - 1) + [2], task_size=lambda n: (1 << n) - 1,
                              decode=lambda outputs, y: (outputs[:, 0] == 1) & np.any(np.asarray(y) == 1, axis=1))
    report = check_reduction(hadamard, n_max=6, n_random=None)
    assert report.exhaustive_instances == sum(4 ** n for n in range(1, 7))
    assert hadamard.length(6) == 64  # 63 symbols and the query: n = 6 bits of IP2 in 64 tokens
