import itertools

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError, TooLargeError, UnknownNameError
from commcomp.problems import PROBLEMS, all_bit_strings, get_problem

# independent definitions, one pair at a time in plain Python
PLAIN = {
    "index": lambda x, i: bool(x[i]),
    "equality": lambda x, y: list(x) == list(y),
    "disjointness": lambda x, y: not any(a and b for a, b in zip(x, y)),
    "inner-product": lambda x, y: sum(a * b for a, b in zip(x, y)) % 2 == 1,
    "greater-than": lambda x, y: int("".join(map(str, x)), 2) > int("".join(map(str, y)), 2),
}


def test_all_bit_strings():
    assert all_bit_strings(3).tolist() == [list(t) for t in itertools.product([0, 1], repeat=3)]
    with pytest.raises(TooLargeError):
        all_bit_strings(40)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_evaluate_matches_plain_definition_exhaustively(name, n):
    p = get_problem(name)
    x, y = p.enumerate(n)
    got = p.evaluate(x, y)
    expected = [PLAIN[name](list(map(int, a)), (int(b) if np.ndim(b) == 0 else list(map(int, b))))
                for a, b in zip(x, y)]
    assert got.dtype == bool and got.tolist() == expected
    assert len(x) == len(p.alice_inputs(n)) * len(p.bob_inputs(n))


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_sample_covers_both_answers_and_is_seeded(name):
    p = get_problem(name)
    for n in (1, 8, 64):
        x, y = p.sample(n, 2000, np.random.default_rng(0))
        frac = p.evaluate(x, y).mean()
        lo = 0.2 if n > 1 or name != "greater-than" else 0.1
        assert lo < frac < 0.8, (name, n, frac)
    a = p.sample(8, 10, np.random.default_rng(5))
    b = p.sample(8, 10, np.random.default_rng(5))
    assert all(np.array_equal(u, v) for u, v in zip(a, b))


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_complexity_facts_are_data(name):
    p = get_problem(name)
    facts = p.complexity()
    assert {"deterministic_one_way", "deterministic"} <= {f.measure for f in facts}
    for f in facts:
        assert f.source and f.tag.startswith("[")
    assert p.deterministic_one_way_bits(10) == 10


def test_known_values():
    assert get_problem("index").deterministic_bits(16) == 5
    assert get_problem("eq").deterministic_bits(7) == 8
    assert get_problem("disj").deterministic_bits(7) == 8


def test_registry_and_errors():
    assert get_problem("IP").name == "inner-product"
    assert get_problem("greater_than").name == "greater-than"
    with pytest.raises(UnknownNameError, match="known: disjointness"):
        get_problem("parity")
    with pytest.raises(InvalidParameterError):
        get_problem("index").alice_inputs(0)
    with pytest.raises(InvalidParameterError):
        get_problem("index").evaluate(np.zeros((1, 3), np.uint8), np.array([3]))
