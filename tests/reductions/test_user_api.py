"""Users' own reductions: make_task / make_reduction / check_reduction, and what breaks them."""

import re
from pathlib import Path

import numpy as np
import pytest

from commcomp import backend as bk
from commcomp.errors import InvalidParameterError
from commcomp.problems import get_problem
from reductions import (OwnerViolation, ReductionCheckError, ReductionCounterexample, check_reduction,
                        get_reduction, get_task, make_reduction, make_task)
from reductions.base import host_encode_fallbacks

DOC = Path(__file__).resolve().parents[2] / "docs" / "user_reductions.md"


def palindrome():
    return make_task("palindrome", vocabulary=("0", "1", "[CLS]"), length=lambda n: 2 * n + 1,
                     ground_truth=lambda tokens: np.all(tokens[:, :-1] == tokens[:, -2::-1], axis=1))


def _palindrome_encode(x, y, n, reverse=True):
    return np.concatenate([x, y[:, ::-1] if reverse else y, np.full((len(x), 1), 2)], axis=1)


def eq_to_palindrome(reverse=True, owners=None, split="prefix-suffix"):
    def encode(x, y, n):
        return _palindrome_encode(x, y, n, reverse)
    return make_reduction(palindrome(), "equality", encode=encode, split=split,
                          owners=owners or (lambda n: [1] * n + [2] * n + [0]))


def _equality_inputs(n):
    return get_problem("equality").enumerate(n)  # every (x, y) at size n


def _array_api_palindrome(xp, x, y, n):
    cls = xp.full((x.shape[0], 1), 2, dtype=xp.int64)
    return xp.concat([x, xp.flip(y, axis=1), cls], axis=1)


def test_a_users_array_api_encoder_runs_on_numpy_and_on_a_device():
    """One encoder (``array_api=True``): checked on NumPy, and on array-api-strict it writes the
    tokens there from the uploaded problem bits only, equal to the plain NumPy encoding."""
    xps = pytest.importorskip("array_api_strict")
    red = make_reduction(palindrome(), "equality", encode=_array_api_palindrome, array_api=True,
                         owners=lambda n: [1] * n + [2] * n + [0])
    assert red.array_api and not eq_to_palindrome().array_api
    report = check_reduction(red, n_max=5, n_random=[300], samples=16)
    assert report.exhaustive_instances == sum(4 ** n for n in range(1, 6))
    fallbacks = sum(host_encode_fallbacks.values())
    for n in (1, 2, 4):
        x, y = _equality_inputs(n)
        bk.host_uploads.reset()
        tokens = red.encode(x, y, n, xp=xps).tokens
        assert bk.host_uploads.reset() == (2, x.size + y.size)  # x and y, once each
        assert not bk.is_numpy(tokens) and tokens.dtype == xps.int64
        assert np.array_equal(bk.to_numpy(tokens), _palindrome_encode(x, y, n))  # every token
        assert np.array_equal(red.encode(x, y, n).tokens, _palindrome_encode(x, y, n))
    assert sum(host_encode_fallbacks.values()) == fallbacks  # no host fallback


def test_a_users_numpy_encoder_takes_the_counted_host_fallback_on_a_device():
    xps = pytest.importorskip("array_api_strict")
    red = eq_to_palindrome()
    x, y = _equality_inputs(3)
    before = host_encode_fallbacks[red.name]
    bk.host_uploads.reset()
    tokens = red.encode(x, y, 3, xp=xps).tokens
    assert host_encode_fallbacks[red.name] == before + 1
    assert bk.host_uploads.reset() == (1, x.shape[0] * 7)  # the (B, 2n+1) tokens went up, not x and y
    assert not bk.is_numpy(tokens) and np.array_equal(bk.to_numpy(tokens), _palindrome_encode(x, y, 3))


def test_an_array_api_encoder_that_returns_numpy_arrays_is_refused_on_a_device():
    xps = pytest.importorskip("array_api_strict")
    numpy_in_disguise = make_reduction(palindrome(), "equality", array_api=True,
                                       encode=lambda xp, x, y, n: np.zeros((x.shape[0], 2 * n + 1), np.int64),
                                       owners=lambda n: [1] * n + [2] * n + [0])
    x, y = _equality_inputs(2)
    assert numpy_in_disguise.encode(x, y, 2).tokens.shape == (16, 5)  # fine on NumPy
    with pytest.raises(InvalidParameterError, match="the encoder gave NumPy tokens"):
        numpy_in_disguise.encode(x, y, 2, xp=xps)


def test_worked_example_passes():
    report = check_reduction(eq_to_palindrome(), n_max=8, n_random=[1024], samples=32)
    assert report.exhaustive_instances == sum(4 ** n for n in range(1, 9))
    assert report.problem == "equality" and report.random_sizes == (1024,)
    red = eq_to_palindrome()
    assert red.query_fixed and red.split == "prefix-suffix" and red.name == "equality->palindrome"


def test_broken_reduction_shows_its_first_counterexample():
    with pytest.raises(ReductionCounterexample) as info:
        check_reduction(eq_to_palindrome(reverse=False), n_max=6, n_random=None)
    err = info.value
    assert isinstance(err, AssertionError)
    assert err.n == 2 and err.decoded != err.truth
    assert err.truth == bool(np.array_equal(err.x, err.y))
    text = str(err)
    for part in ("x = ", "y = ", "tokens = ", "owners = AABB.", "decoded = ", "f(x, y) = "):
        assert part in text


def test_counterexample_found_only_at_large_n_by_sampling():
    def encode(x, y, n):  # wrong only when n > 100: ignores the last bit of y
        y = y.copy()
        if n > 100:
            y[:, -1] = x[:, -1] ^ 1
        return np.concatenate([x, y[:, ::-1], np.full((len(x), 1), 2)], axis=1)
    red = make_reduction(palindrome(), "equality", encode=encode, owners=lambda n: [1] * n + [2] * n + [0])
    check_reduction(red, n_max=5, n_random=None)  # fine where it is exhaustive
    with pytest.raises(ReductionCounterexample, match="n = 128"):
        check_reduction(red, n_max=5, n_random=[128], samples=64)


def test_dishonest_owner_mask_is_caught():
    with pytest.raises(OwnerViolation, match="position 0 is marked bob"):
        check_reduction(eq_to_palindrome(owners=lambda n: [2] * n + [1] * n + [0], split="partition"),
                        n_max=3)
    with pytest.raises(OwnerViolation, match="marked public"):
        check_reduction(eq_to_palindrome(owners=lambda n: [1] * n + [0] * n + [0]), n_max=3)


def test_contract_violations():
    def out_of_vocab(x, y, n):
        return np.concatenate([x, y + 5, np.full((len(x), 1), 2)], axis=1)
    red = make_reduction(palindrome(), "equality", encode=out_of_vocab,
                         owners=lambda n: [1] * n + [2] * n + [0])
    with pytest.raises(ReductionCheckError, match="outside the vocabulary"):
        check_reduction(red, n_max=2)
    liar = make_reduction(palindrome(), "equality", encode=_palindrome_encode,
                          owners=lambda n: [2] * n + [1] * n + [0])
    with pytest.raises(ReductionCheckError, match="claims prefix-suffix"):
        check_reduction(liar, n_max=2)


def test_dict_form_and_registry_tasks():
    # a user reduction into a registry task: INDEX -> Index Lookup with the query first (BHBK-IL-order)
    task = make_task("query-first-lookup", vocabulary=lambda n: ("0", "1") + tuple(f"p{i}" for i in range(n)),
                     length=lambda n: n + 1, output_positions=lambda n: [n],
                     ground_truth=lambda tokens: tokens[np.arange(len(tokens)), 1 + tokens[:, 0] - 2])
    spec = dict(task=task, problem="idx", encode=lambda x, y, n: np.concatenate([2 + y[:, None], x], 1),
                owners=lambda n: [2] + [1] * n, split="partition")
    report = check_reduction(spec, n_max=6, n_random=[512])
    assert report.problem == "index"
    assert make_reduction(**spec).query_fixed is False
    il = get_task("index-lookup")  # registry tasks work with make_reduction too
    same = make_reduction(il, "index", encode=get_reduction("index-lookup").encoder, array_api=True,
                          owners=lambda n: [1] * n + [2])
    check_reduction(same, n_max=5, n_random=None)


def test_the_documented_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks, "docs/user_reductions.md has no python block"
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102  (our own documentation)
