"""The reductions' device encoders: the same tokens as the NumPy encoders, from uploaded bits only.

For every reduction with a ``device_encoder``, every instance (x, y) at small n is encoded on
array-api-strict and on torch with implicit conversion to NumPy refused (the ``device`` fixture
of ``test_backend_paths``), brought back explicitly, and compared with the NumPy encoder's
tokens element for element. The upload count must be exactly the problem bits (x and y), and
a reduction without a device encoder must take the named, counted host fallback.
"""

from __future__ import annotations

import numpy as np
import pytest

from commcomp import backend as bk
from commcomp.problems import get_problem
from reductions.base import host_encode_fallbacks
from reductions.registry import list_reductions
from reductions.simulate.batch import exhaustive_batches

from test_backend_paths import _same, device  # noqa: F401  (the fixture: strict / torch / cupy, conversion refused)

DEVICE_ENCODED = ["index->index-lookup", "equality->string-equality", "disjointness->string-disjointness",
                  "disjointness->multi-index-lookup", "index->mqar", "disjointness->mqar"]


def test_the_device_encoders_are_the_expected_ones():
    have = sorted(r.name for r in list_reductions() if r.device_encoder is not None)
    assert have == sorted(DEVICE_ENCODED)


@pytest.mark.parametrize("name", DEVICE_ENCODED)
@pytest.mark.parametrize("n", [1, 3, 5])
def test_device_tokens_equal_numpy_tokens_for_every_instance(device, name, n):  # noqa: F811
    red = next(r for r in list_reductions() if r.name == name)
    if n < red.min_n:
        pytest.skip(f"{name} starts at n = {red.min_n}")
    xp = bk.namespace(device)
    x, y = next(exhaustive_batches(get_problem(red.problem), n, rows=1 << 20))  # every instance at once
    want = red.encode(x, y, n)  # NumPy
    bk.host_uploads.reset()
    got = red.encode(x, y, n, xp=xp)
    assert bk.host_uploads.reset() == (2, x.size + y.size)  # x and y, once each: the problem bits only
    assert not bk.is_numpy(got.tokens) and bk.namespace_of(got.tokens) is bk.namespace_of(xp.zeros(1))
    host = bk.to_numpy(got.tokens)
    assert host.dtype == np.int64 and host.shape == want.tokens.shape
    assert np.array_equal(host, want.tokens)  # every token of every instance
    assert np.array_equal(got.owners, want.owners)


def test_reductions_without_a_device_encoder_take_the_counted_host_fallback(device):  # noqa: F811
    red = next(r for r in list_reductions() if r.name == "index->nearest-neighbour")
    assert red.device_encoder is None
    x, y = next(exhaustive_batches(get_problem(red.problem), 3, rows=1 << 10))
    before = host_encode_fallbacks[red.name]
    bk.host_uploads.reset()
    got = red.encode(x, y, 3, xp=bk.namespace(device))
    assert host_encode_fallbacks[red.name] == before + 1
    assert bk.host_uploads.reset() == (1, got.tokens.shape[0] * got.tokens.shape[1])  # the tokens went up
    assert np.array_equal(bk.to_numpy(got.tokens), red.encode(x, y, 3).tokens)


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
    from reductions.witness import find_witness

    kw = dict(width=2, seed=3)
    xp = bk.namespace(device)
    red = get_reduction(task)
    assert red.device_encoder is not None
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
