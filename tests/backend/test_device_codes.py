"""The device codec (commcomp.codes) and the device distinct-row count against their NumPy counterparts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commcomp import backend as bk
from commcomp.precision import parse_precision
from reductions.simulate import distinct
from reductions.simulate.batch import DistinctMessages

FORMATS = ["float64", "float32", "float16", "bfloat16", "fixed:8:4", "fixed:53:20", "fixed:12:-3", "fixed:2:1"]
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-40, -1e-45,
            6e-8, 1.0, 2.0, 0.5, 3.4e38, 65504.0, 1e300, -7.75, 15.875, -16.0, 100.0]


def _namespaces():
    out = []
    for name in ("array_api_strict", "torch", "cupy"):
        try:
            out.append(pytest.param(bk.namespace(name), id=name))
        except bk.BackendUnavailableError:
            out.append(pytest.param(None, id=name, marks=pytest.mark.skip(f"{name} is not installed")))
    return out


@pytest.mark.parametrize("xp", _namespaces())
@pytest.mark.parametrize("name", FORMATS)
@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=30))
def test_encode_decode_rows_equal_numpy(xp, name, values):
    p = parse_precision(name)
    rows = np.array(values + SPECIALS, dtype=np.float64).reshape(1, -1)  # (1, k)
    with np.errstate(all="ignore"):
        want = p.encode_rows(rows)
        got = p.encode_rows(xp.asarray(rows))
    assert np.array_equal(bk.to_numpy(got), want)  # every bit
    back_host = p.decode_rows(want)
    back = bk.to_numpy(p.decode_rows(got))
    assert np.array_equal(np.isnan(back), np.isnan(back_host))
    assert np.array_equal(back[~np.isnan(back)].view(np.uint64), back_host[~np.isnan(back_host)].view(np.uint64))


@pytest.mark.parametrize("xp", _namespaces())
def test_distinct_rows_equal_numpy(xp, monkeypatch):
    monkeypatch.setattr(distinct, "MIN_MERGE_ROWS", 8)  # merge often: the merging path is tested too
    rng = np.random.default_rng(4)
    for bits in (0, 3, 64, 65, 200):
        host, device = DistinctMessages(), DistinctMessages()
        seen = []
        for _ in range(7):
            rows = rng.integers(0, 2, size=(int(rng.integers(0, 40)), bits), dtype=np.uint8)
            if bits and rows.shape[0] > 3:
                rows[1] = rows[0]  # duplicates inside a batch
                rows[2] = seen[-1][0] if seen and seen[-1].shape[0] else rows[2]  # and across batches
            seen.append(rows)
            host.add(rows)
            device.add(xp.asarray(rows))
        everything = np.concatenate(seen)
        truth = len({r.tobytes() for r in everything}) if everything.shape[0] else 0
        assert device.count == host.count == truth
