"""Users' own reductions: make_task / make_reduction / check_reduction, and what breaks them."""

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from reductions import (OwnerViolation, ReductionCheckError, ReductionCounterexample, check_reduction,
                        get_reduction, get_task, make_reduction, make_task)
from reductions.check import DeviceEncoderMismatch

DOC = Path(__file__).resolve().parents[2] / "docs" / "user_reductions.md"


def palindrome():
    return make_task("palindrome", vocabulary=("0", "1", "[CLS]"), length=lambda n: 2 * n + 1,
                     ground_truth=lambda tokens: np.all(tokens[:, :-1] == tokens[:, -2::-1], axis=1))


def eq_to_palindrome(reverse=True, owners=None, split="prefix-suffix"):
    def encode(x, y, n):
        return np.concatenate([x, y[:, ::-1] if reverse else y, np.full((len(x), 1), 2)], axis=1)
    return make_reduction(palindrome(), "equality", encode=encode, split=split,
                          owners=owners or (lambda n: [1] * n + [2] * n + [0]))


def _device_palindrome(reverse=True):
    def device_encode(xp, x, y, n):
        cls = xp.full((x.shape[0], 1), 2, dtype=xp.int64)
        return xp.concat([x, xp.flip(y, axis=1) if reverse else y, cls], axis=1)
    return dataclasses.replace(eq_to_palindrome(), device_encoder=device_encode)


def test_a_users_device_encoder_is_compared_with_the_numpy_encoder():
    with_device = make_reduction(palindrome(), "equality", encode=eq_to_palindrome().encoder,
                                 device_encode=_device_palindrome().device_encoder,
                                 owners=lambda n: [1] * n + [2] * n + [0])
    assert check_reduction(with_device, n_max=5, n_random=None, owners_n_max=4).device_sizes == (1, 2, 3, 4)
    assert check_reduction(eq_to_palindrome(), n_max=3, n_random=None).device_sizes == ()  # none to compare
    with pytest.raises(DeviceEncoderMismatch, match=r"tokens differ .* n = 2: first at instance 1, position 2"):
        check_reduction(_device_palindrome(reverse=False), n_max=3, n_random=None)
    numpy_in_disguise = dataclasses.replace(eq_to_palindrome(), device_encoder=lambda xp, x, y, n: np.zeros(1))
    with pytest.raises(InvalidParameterError, match="device_encoder gave NumPy tokens"):
        check_reduction(numpy_in_disguise, n_max=2, n_random=None)


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
    liar = make_reduction(palindrome(), "equality", encode=eq_to_palindrome().encoder,
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
    same = make_reduction(il, "index", encode=get_reduction("index-lookup").encoder,
                          owners=lambda n: [1] * n + [2])
    check_reduction(same, n_max=5, n_random=None)


def test_the_documented_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks, "docs/user_reductions.md has no python block"
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102  (our own documentation)
