"""verify's exact error against the average-case floor: hand-set models with closed-form errors."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from commcomp.bounds.average import index_error_floor
from commcomp.bounds.error_check import error_check
from reductions.simulate import verify
from reductions.simulate.setup import prepare

PRECISION = "fixed:8:4"


def last_symbol_lstm(n: int):
    """An LSTM (width 2) that answers the last data symbol s_{n-1} whatever the query.

    Embedding: symbol s -> (2s - 1, 1), query tokens -> (0, 0); W_h = 0.  On a symbol the input gate's
    pre-activation is 40 - 20 = +20 and the forget gate's -40 + 20 = -20, so c' = sigmoid(-20) c +
    sigmoid(20) tanh(20 (2s - 1)), which rounds to 2s - 1 on the 1/16 grid; on a query token the gates swap
    (i: -20, f: +20) and g = tanh(0) = 0, so c' = sigmoid(20) c rounds back to c.  The output gate is open
    (+20), h = tanh(c) has the sign of 2s - 1, and the readout (-h_0, h_0) picks class s.  So the answer is
    right exactly when x_i = x_{n-1}: always for i = n - 1, for half of the x otherwise, and the exact
    error over all n 2^n inputs is (n - 1) 2^(n-1) / (n 2^n) = (n - 1) / (2n).
    """
    model = prepare("index-lookup", "lstm", n, PRECISION, width=2).model
    params = {k: np.zeros_like(v) for k, v in model.params.items()}
    params["embedding"][0], params["embedding"][1] = [-1, 1], [1, 1]
    w_x, b = params["l0.W_x"], params["l0.b"]  # gate blocks of width 2, torch order i, f, g, o
    w_x[1, 0:2], b[0:2] = 40, -20  # i
    w_x[1, 2:4], b[2:4] = -40, 20  # f
    w_x[0, 4:6] = 20  # g
    b[6:8] = 20  # o
    params["readout.weight"][0] = [-1, 1]
    return model.with_params(params)


def constant_lstm(n: int, answer: int):
    """Every weight 0 and readout bias favouring ``answer``: error exactly 1/2 (x_i is a fair coin)."""
    model = prepare("index-lookup", "lstm", n, PRECISION, width=2).model
    params = {k: np.zeros_like(v) for k, v in model.params.items()}
    params["readout.bias"][answer] = 1.0
    return model.with_params(params)


@pytest.mark.parametrize("n,method", [(6, "prefix-tree"), (6, "reachable-states"), (9, "enumerate"),
                                      (1000, "reachable-states")])
def test_last_symbol_model_exact_error_in_closed_form(n, method):
    out = verify("index-lookup", "lstm", n, PRECISION, exhaustive=True, model=last_symbol_lstm(n), method=method)
    assert Fraction(out["exact_error"]) == Fraction(n - 1, 2 * n)
    assert out["wrong_count"] == (n - 1) * 2 ** (n - 1)
    assert out["error_floor_bits"] == 32 and out["error_floor"] == float(index_error_floor(32, n))
    assert out["error_floor_theorem"] == "CC-INDEX-avg" and out["consistent"] is True
    # two distinct final states: one bit of information, so the second floor is H2^-1(1 - 1/n)
    assert out["distinct_messages"] == 2
    assert out["error_floor_distinct"] == float(index_error_floor(1, n))


def test_constant_model_errs_half_the_time():
    out = verify("index-lookup", "lstm", 8, PRECISION, exhaustive=True, model=constant_lstm(8, 1))
    assert out["exact_error"] == "1/2" and out["wrong_count"] == 8 * 2 ** 7 and out["consistent"] is True


def test_a_wrong_floor_is_caught():
    n = 1000
    out = verify("index-lookup", "lstm", n, PRECISION, exhaustive=True, model=last_symbol_lstm(n))
    counts = dict(instances=out["instances"], wrong=out["wrong_count"], rounds=1)
    # a floor of 1/2 (as if the message carried nothing) is above the measured (n - 1)/(2n): caught
    assert error_check("index", n, bits=32, floor=Fraction(1, 2), **counts)["consistent"] is False
    assert error_check("index", n, bits=0, **counts)["consistent"] is False
    # and the true floor at the declared bits is not
    assert error_check("index", n, bits=32, **counts)["consistent"] is True


def test_no_floor_where_it_does_not_apply():
    sampled = verify("index-lookup", "lstm", 8, PRECISION, instances=50, model=last_symbol_lstm(8))
    assert sampled["exact_error"] is None and sampled["consistent"] is None
    two_round = error_check("index", 8, instances=2048, wrong=0, bits=3, rounds=2)
    assert two_round["error_floor"] is None and two_round["consistent"] is None
    assert two_round["exact_error"] == "0"
    other = error_check("equality", 4, instances=256, wrong=16, bits=3, rounds=1)
    assert other["error_floor"] is None and "equality" in other["error_floor_missing"]


def constant_mqar_lstm(n: int):
    """IP2_n -> MQAR (many queries) with an LSTM whose weights are 0 and whose readout bias favours value 0:
    every output is 0, so Bob's parity is always 0 (even) and wrong exactly on the (x, y) with <x, y> odd,
    (4^n - 2^n)/2 of the 4^n; every x gives the same state, one message class."""
    model = prepare("mqar", "lstm", n, PRECISION, width=2, problem="ip").model
    params = {k: np.zeros_like(v) for k, v in model.params.items()}
    params["readout.bias"][0] = 1.0
    return model.with_params(params)


@pytest.mark.parametrize("n", [3, 6])
def test_inner_product_floor_against_a_closed_form_error(n):
    from commcomp.bounds.average import ip_error_floor

    out = verify("mqar", "lstm", n, PRECISION, exhaustive=True, model=constant_mqar_lstm(n), problem="ip")
    assert out["problem"] == "inner-product" and out["instances"] == 4 ** n
    assert Fraction(out["exact_error"]) == Fraction(4 ** n - 2 ** n, 2 * 4 ** n)  # (1 - 2^-n)/2
    assert out["error_floor_theorem"] == "CC-IP2-avg-1W" and out["error_floor"] == 0.0  # 32 bits >= n
    # one message class: the floor (1 - 2^(-n/2))/2, below the measured (1 - 2^-n)/2 but not by much
    assert out["distinct_messages"] == 1
    assert out["error_floor_distinct"] == float(ip_error_floor(0, n)) == (1 - 2 ** (-n / 2)) / 2
    assert out["consistent"] is True
    counts = dict(instances=out["instances"], wrong=out["wrong_count"], rounds=1)
    # a floor of 1/2 (as if Bob had nothing) is above the measured error: caught
    assert error_check("inner-product", n, bits=0, floor=Fraction(1, 2), **counts)["consistent"] is False
    assert error_check("inner-product", n, bits=0, **counts)["consistent"] is True
