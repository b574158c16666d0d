"""The reductions' encoders on a device: the same tokens as on NumPy, from uploaded bits only.

Every registered reduction has one encoder, written with Array API operations (``array_api``).
Every instance (x, y) at small n is encoded on array-api-strict and on torch with implicit
conversion to NumPy refused (the ``device`` fixture of ``test_backend_paths``: a NumPy call on a
device array fails there), brought back explicitly, and compared with the same encoder's tokens
on NumPy, and features where the task has them, element for element. The upload count must be
exactly the problem bits (x and y), the tokens and features must be arrays of the device
namespace, and a NumPy-only encoder (``array_api=False``) must take the named, counted host
fallback.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from commcomp import backend as bk
from commcomp.problems import get_problem
from reductions.base import host_encode_fallbacks
from reductions.registry import list_reductions
from reductions.simulate.batch import exhaustive_batches

from test_backend_paths import _same, device  # noqa: F401  (the fixture: strict / torch / cupy, conversion refused)

DEVICE_ENCODED = sorted(r.name for r in list_reductions())  # every registered reduction


def test_every_registered_encoder_is_array_api():
    assert [r.name for r in list_reductions() if not r.array_api] == []
    assert len(DEVICE_ENCODED) >= 13  # the registry was read


def _device_encoding(device, name, n):  # noqa: F811
    """``(reduction, x, y, NumPy encoding, device encoding)`` of every instance at size ``n``; the
    device encoding's uploads are checked to be x and y, once each."""
    red = next(r for r in list_reductions() if r.name == name)
    if n < red.min_n:
        pytest.skip(f"{name} starts at n = {red.min_n}")
    x, y = next(exhaustive_batches(get_problem(red.problem), n, rows=1 << 20))  # every instance at once
    want = red.encode(x, y, n)  # NumPy
    bk.host_uploads.reset()
    fallbacks = sum(host_encode_fallbacks.values())
    got = red.encode(x, y, n, xp=bk.namespace(device))
    assert bk.host_uploads.reset() == (2, x.size + y.size)  # x and y, once each: the problem bits only
    assert sum(host_encode_fallbacks.values()) == fallbacks
    return red, x, y, want, got


@pytest.mark.parametrize("name", DEVICE_ENCODED)
@pytest.mark.parametrize("n", [1, 3, 5])
def test_device_tokens_and_features_equal_numpy_for_every_instance(device, name, n):  # noqa: F811
    red, x, y, want, got = _device_encoding(device, name, n)
    host = bk.to_numpy(got.tokens)
    assert host.dtype == np.int64 and host.shape == want.tokens.shape
    assert np.array_equal(host, want.tokens)  # every token of every instance
    assert np.array_equal(got.owners, want.owners)
    assert (got.task_batch.features is None) == (want.task_batch.features is None)
    if want.task_batch.features is not None:
        feats = bk.to_numpy(got.task_batch.features)
        assert feats.dtype == np.float64 and feats.shape == want.task_batch.features.shape
        assert np.array_equal(feats, want.task_batch.features)  # every number of every position
    assert dict(got.task_batch.meta) == dict(want.task_batch.meta)


@pytest.mark.parametrize("name", DEVICE_ENCODED)
def test_device_encodings_stay_on_the_device(device, name):  # noqa: F811
    """Tokens and features are arrays of the device namespace, not NumPy arrays that only compare
    equal; the task's ground truth of the device batch (brought back by ``on_host``, counted) and
    the NumPy batch agree."""
    red, x, y, want, got = _device_encoding(device, name, 3)
    device_ns = bk.namespace_of(bk.namespace(device).zeros(1))
    batch = got.task_batch
    assert not bk.is_numpy(batch.tokens) and bk.namespace_of(batch.tokens) is device_ns
    assert (batch.features is None) == (red.task.name not in ("nearest-neighbour", "qsa"))  # tasks with features
    if batch.features is not None:
        assert not bk.is_numpy(batch.features) and bk.namespace_of(batch.features) is device_ns
        assert batch.features.dtype == device_ns.float64
    bk.host_transfers.reset()
    answers = red.task_answers(got)
    moved = bk.host_transfers.reset()[1]
    assert moved == batch.tokens.shape[0] * batch.tokens.shape[1] + (
        0 if batch.features is None else int(np.prod(batch.features.shape)))
    assert np.array_equal(answers, red.task_answers(want))


@pytest.mark.parametrize("name", ["index->nearest-neighbour", "equality->dyck"])
def test_a_numpy_only_encoder_takes_the_counted_host_fallback(device, name):  # noqa: F811
    red = dataclasses.replace(next(r for r in list_reductions() if r.name == name), array_api=False)
    x, y = next(exhaustive_batches(get_problem(red.problem), 3, rows=1 << 10))
    want = red.encode(x, y, 3)
    before = host_encode_fallbacks[red.name]
    bk.host_uploads.reset()
    got = red.encode(x, y, 3, xp=bk.namespace(device))
    assert host_encode_fallbacks[red.name] == before + 1
    feats = want.task_batch.features
    uploaded = want.tokens.size + (0 if feats is None else feats.size)
    assert bk.host_uploads.reset() == (1 + (feats is not None), uploaded)  # the tokens (and features) went up
    assert np.array_equal(bk.to_numpy(got.tokens), want.tokens)
    if feats is not None:
        assert np.array_equal(bk.to_numpy(got.task_batch.features), feats)
        assert not bk.is_numpy(got.task_batch.features)


def test_numpy_encoding_uploads_nothing():
    red = next(r for r in list_reductions() if r.name == "index->index-lookup")
    bk.host_uploads.reset()
    out = red.encode(np.array([[1, 0, 1]]), np.array([2]), 3, xp=bk.namespace("numpy"))
    assert bk.host_uploads.reset() == (0, 0) and out.tokens.tolist() == [[1, 0, 1, 4]]


def _spy_uploads(monkeypatch, xp, rows: int) -> list:
    """Record the size of every host array of at least ``rows`` elements given to ``xp.asarray``
    (a per-instance upload); small ones (weights, position constants) are not recorded."""
    seen, asarray = [], xp.asarray

    def spy(obj, *args, **kwargs):
        if isinstance(obj, (np.ndarray, list, tuple)) and np.asarray(obj).size >= rows:
            seen.append(int(np.asarray(obj).size))
        return asarray(obj, *args, **kwargs)

    monkeypatch.setattr(xp, "asarray", spy)
    return seen


@pytest.mark.parametrize("task,n", [("index-lookup", 5), ("string-equality", 3), ("string-disjointness", 3),
                                    ("mqar", 4), ("multi-index-lookup", 3)])
def test_verify_simulate_witness_upload_only_the_problem_bits(device, monkeypatch, task, n):  # noqa: F811
    """The whole recurrent path on device tokens: equal to NumPy, and the only per-instance uploads
    are x and y (``to_device``), whatever the runner."""
    from reductions.registry import get_reduction
    from reductions.simulate import simulate, verify
    from reductions.search.witness import find_witness

    kw = dict(width=2, seed=3)
    xp = bk.namespace(device)
    red = get_reduction(task)
    assert red.array_api
    per_instance = n + int(np.prod(get_problem(red.problem).bob_inputs(n).shape[1:]))  # x's n bits, y's entries
    fallbacks = sum(host_encode_fallbacks.values())
    for method in ("prefix-tree", "plain"):
        want = verify(task, "lstm", n, "fixed:8:4", exhaustive=True, method=method, **kw)
        seen = _spy_uploads(monkeypatch, xp, want["instances"])
        bk.host_uploads.reset()
        got = verify(task, "lstm", n, "fixed:8:4", exhaustive=True, method=method, backend=device, **kw)
        calls, elements = bk.host_uploads.reset()
        assert elements == got["instances"] * per_instance  # the problem bits, once, and nothing else
        assert len(seen) == calls == 2  # one batch: x and y; no other per-instance array went up
        _same(want, got)
    bk.host_uploads.reset()
    one = simulate(task, "lstm", n, "fixed:8:4", backend=device, **kw)
    assert bk.host_uploads.reset()[1] == per_instance
    _same(simulate(task, "lstm", n, "fixed:8:4", **kw), one)
    _same(find_witness(task, "lstm", n + 3, "fixed:8:4", **kw),
          find_witness(task, "lstm", n + 3, "fixed:8:4", backend=device, **kw))
    assert sum(host_encode_fallbacks.values()) == fallbacks  # no host fallback on these reductions


@pytest.mark.parametrize("task,problem", [("nearest-neighbour", "index"), ("match2", "index"),
                                          ("match3", "disjointness"), ("istree", "disjointness")])
def test_verify_with_features_and_graphs_on_a_device_uploads_only_the_problem_bits(device, task, problem):  # noqa: F811
    """A recurrent verify on the reductions that once took the host fallback: equal to NumPy, the
    only uploads are x and y (the tables NN's features gather from are constants), no fallback."""
    from reductions.simulate import verify

    kw = dict(problem=problem, width=2, seed=3, exhaustive=True, method="plain")
    want = verify(task, "lstm", 3, "fixed:8:4", **kw)
    fallbacks = sum(host_encode_fallbacks.values())
    bk.host_uploads.reset()
    got = verify(task, "lstm", 3, "fixed:8:4", backend=device, **kw)
    per_instance = 3 + int(np.prod(get_problem(problem).bob_inputs(3).shape[1:]))  # x's bits, y's entries
    assert bk.host_uploads.reset() == (2, got["instances"] * per_instance)
    assert sum(host_encode_fallbacks.values()) == fallbacks
    _same(want, got)


@pytest.mark.parametrize("values", [np.array([[0, 1, 1]], np.uint8), np.array([3, 300, 70000]),
                                    np.array([2**40, 5]), np.array([-1, 4]), np.zeros((0, 3), np.int64)])
def test_problem_inputs_cross_in_a_narrow_type_and_arrive_as_int64(device, values):  # noqa: F811
    """x and y go up in the narrowest unsigned type that holds them and are widened on the device:
    the same int64 values, whatever the narrowing (negative or huge values go up as int64)."""
    from reductions.base import _upload_int64

    xp = bk.namespace(device)
    bk.host_uploads.reset()
    got = _upload_int64(xp, values)
    assert bk.host_uploads.reset() == (1, values.size)
    assert got.dtype == xp.int64 and not bk.is_numpy(got)
    host = bk.to_numpy(got)
    assert host.dtype == np.int64 and np.array_equal(host, values.astype(np.int64))
