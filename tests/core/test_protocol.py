import math

import numpy as np
import pytest

from commcomp.bits import BitRows
from commcomp.errors import ProtocolError
from commcomp.problems import PROBLEMS, get_problem
from commcomp.protocol import (ALICE, BOB, Protocol, Step, equality_coins, equality_fingerprint,
                               index_bob_first, run_protocol, split_by_owner, trivial_one_way)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_trivial_one_way_is_correct_on_all_inputs(name, n):
    p = get_problem(name)
    x, y = p.enumerate(n)
    t = run_protocol(trivial_one_way(p, n), x, y)
    assert np.array_equal(t.outputs, p.evaluate(x, y))
    assert t.bits_sent == n == p.deterministic_one_way_bits(n)
    assert t.distinct_messages() == 2 ** n


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9])
def test_index_bob_first_all_inputs(n):
    p = get_problem("index")
    x, i = p.enumerate(n)
    t = run_protocol(index_bob_first(n), x, i)
    assert np.array_equal(t.outputs, p.evaluate(x, i))
    assert t.bits_sent == (math.ceil(math.log2(n)) if n > 1 else 0) + 1
    first = t.transcript(5 % len(x))
    assert first.rounds[0].sender == BOB and first.rounds[1].sender == ALICE


@pytest.mark.parametrize("k", [1, 2, 4])
def test_equality_fingerprint_error_rate(k):
    n, runs = 6, 40_000
    rng = np.random.default_rng(k)
    p = get_problem("equality")
    x = rng.integers(0, 2, size=(runs, n), dtype=np.uint8)
    y = x.copy()
    y[:, 0] ^= 1  # always unequal
    t = run_protocol(equality_fingerprint(n, k), x, y, public=equality_coins(runs, n, k, rng))
    assert t.bits_sent == k
    error = t.outputs.mean()  # saying "equal" on unequal inputs
    bound = 2.0 ** -k
    sd = math.sqrt(bound * (1 - bound) / runs)
    assert abs(error - bound) < 5 * sd  # the error is exactly 2^-k for any fixed x != y
    # equal inputs: never wrong, over all inputs
    xs, ys = p.enumerate(3)
    t2 = run_protocol(equality_fingerprint(3, k), xs, ys, public=equality_coins(len(xs), 3, k, rng))
    eq = p.evaluate(xs, ys)
    assert t2.outputs[eq].all()


def test_bob_never_sees_alice_input():
    """Bob's view holds only his input, the public data and bit strings addressed to him."""
    secret = np.array([[1, 0, 1, 1]])
    seen = {}

    def alice(view):
        return BitRows(np.zeros((1, 1), dtype=np.uint8))

    def bob(view):
        seen["view"] = view
        return np.array([True])

    run_protocol(Protocol("p", (Step(ALICE, BOB, alice),), BOB, bob), secret, np.array([[0, 0, 0, 0]]))
    view = seen["view"]
    assert view.party == BOB and not np.array_equal(view.own_input, secret)
    assert all(isinstance(m, BitRows) for m in view.received)
    assert set(vars(view)) == {"party", "own_input", "received", "public"}
    with pytest.raises(ValueError):
        view.own_input[0, 0] = 1  # read-only copy


def test_a_message_must_be_bits():
    leak = Protocol("leak", (Step(ALICE, BOB, lambda v: v.own_input),), BOB, lambda v: np.array([0]))
    with pytest.raises(ProtocolError, match="must be BitRows"):
        run_protocol(leak, np.array([[1]]), np.array([[0]]))
    with pytest.raises(ProtocolError):
        Step(ALICE, ALICE, lambda v: None)


def test_multi_round_transcript_json():
    t = run_protocol(index_bob_first(4), np.array([[0, 0, 1, 0]]), np.array([2]))
    js = t.transcript(0).to_json()
    assert js["bits_sent"] == 3 and js["output"] is True
    assert [r["bits"] for r in js["rounds"]] == [2, 1]
    assert js["rounds"][0]["hex"] == "8"  # i = 2 = '10'


def test_split_by_owner():
    seq = np.arange(12).reshape(2, 6)
    owners = np.array([1, 1, 0, 2, 1, 2])
    a, b = split_by_owner(seq, owners)
    assert a.positions.tolist() == [0, 1, 2, 4] and b.positions.tolist() == [2, 3, 5]
    assert a.values.tolist() == [[0, 1, 2, 4], [6, 7, 8, 10]]
    assert b.values.shape == (2, 3)
