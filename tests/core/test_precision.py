import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from commcomp.bits import Bits
from commcomp.errors import PrecisionError
from commcomp.precision import FixedPoint, IEEEFloat, parse_precision

SMALL_FORMATS = ["float16", "bfloat16", "fixed:4:2", "fixed:8:3", "fixed:8:0", "fixed:12:6",
                 "fixed:16:8", "fixed:16:-2", "fixed:2:1", "fixed:5:9"]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


@pytest.mark.parametrize("name", SMALL_FORMATS)
def test_exhaustive_codes(name):
    """Every code of every format of at most 16 bits decodes to a value that encodes back."""
    p = parse_precision(name)
    codes = np.arange(2 ** p.bits, dtype=np.uint64)
    values = p.from_codes(codes)
    nan = np.isnan(values)
    assert same(p.round(values[~nan]), values[~nan])           # decoded values are on the grid
    assert np.array_equal(p.to_codes(values[~nan]), codes[~nan])  # and encode back to their code
    # distinct non-NaN codes give distinct values (+0 and -0 told apart by their sign bit)
    keys = values[~nan].view(np.uint64)
    assert np.unique(keys).size == keys.size
    if nan.any():
        assert same(p.round(np.array([math.nan])), np.array([math.nan]))
        assert p.to_codes(np.array([math.nan]))[0] in set(codes[nan].tolist())
    # encode/decode through Bits
    bits = p.encode(values)
    assert len(bits) == p.bits * values.size
    assert same(p.decode(bits), np.where(nan, math.nan, values))


def test_float16_matches_numpy_cast():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(200_000) * 10.0 ** rng.integers(-9, 6, 200_000)
    x = np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, 65519.99, 65520.0, 2.0 ** -25, 2.0 ** -24 * 1.5]])
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16).astype(np.float64)
    assert same(parse_precision("float16").round(x), expected)


def test_bfloat16_against_bit_manipulation():
    """Independent bfloat16: round-to-nearest-even on the float32 bit pattern."""
    rng = np.random.default_rng(1)
    x32 = (rng.standard_normal(100_000) * 10.0 ** rng.integers(-30, 30, 100_000)).astype(np.float32)
    u = x32.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    expected = rounded.astype(np.uint32).view(np.float32).astype(np.float64)
    assert same(parse_precision("bfloat16").round(x32.astype(np.float64)), expected)


def test_float32_and_64():
    x = np.array([1 / 3, -2.5e-45, 1e39, -0.0])
    with np.errstate(over="ignore"):
        assert same(parse_precision("float32").round(x), x.astype(np.float32).astype(np.float64))
    assert same(parse_precision("float64").round(x), x)
    p = parse_precision("float64")
    assert same(p.decode(p.encode(x)), x)


finite_or_special = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                              st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308,
                                               6e-8, 65504.0, 3.4e38, 1e-40]))


@settings(max_examples=300)
@given(st.lists(finite_or_special, min_size=1, max_size=20),
       st.sampled_from(SMALL_FORMATS + ["float32", "float64", "fixed:24:12", "fixed:53:20", "fixed:40:-3"]))
def test_decode_encode_round_is_round(values, name):
    p = parse_precision(name)
    x = np.array(values, dtype=np.float64)
    r = p.round(x)
    assert same(p.decode(p.encode(x)), r)
    assert same(p.round(r), r)  # idempotent
    assert len(p.encode(x)) == p.bits * x.size


@settings(max_examples=200)
@given(st.integers(2, 53), st.integers(-20, 60), st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=10))
def test_fixed_point_against_integer_reference(total, frac, values):
    """Independent reference: Python's round() (half to even) on exact rationals, then clip."""
    from fractions import Fraction
    p = FixedPoint.make(total, frac)
    lo, hi = -(2 ** (total - 1)), 2 ** (total - 1) - 1
    expected = []
    for v in values:
        k = round(Fraction(v) * Fraction(2) ** frac)
        k = min(max(k, lo), hi)
        expected.append(float(Fraction(k) / Fraction(2) ** frac))
    assert p.round(np.array(values)).tolist() == expected


def test_fixed_saturation_count_and_specials():
    p = parse_precision("fixed:4:2")
    out = p.round(np.array([10.0, -10.0, np.inf, np.nan, 0.5]))
    assert out.tolist() == [1.75, -2.0, 1.75, 0.0, 0.5]
    assert p.saturations.count == 4
    assert p.saturations.reset() == 4 and p.saturations.count == 0
    assert (p.max_value, p.min_value, p.resolution) == (1.75, -2.0, 0.25)


def test_ieee_overflow_is_counted():
    p = parse_precision("float16")
    p.round(np.array([1e6, 1.0, np.inf]))
    assert p.saturations.count == 1


def test_covering():
    p = FixedPoint.covering(12, 5.0)
    assert p.max_value >= 5.0 and FixedPoint.make(12, p.fraction_bits + 1).max_value < 5.0


def test_parser_names_and_errors():
    assert parse_precision("24") == FixedPoint.make(24, 12)
    assert isinstance(parse_precision(16), IEEEFloat) and parse_precision(16).name == "float16"
    assert parse_precision("FP32").name == "float32"
    assert parse_precision("fixed:12:6").bits == 12
    for bad in ["float8", "fixed:1:0", "fixed:60:3", "1", "0", "-3", "", "fixed:8", 3.5, None, "100",
                " FP32 ", " float32", "fixed:\uff18:4", "\u0663\u0662"]:  # issue 25: no stripping, ASCII only
        with pytest.raises(PrecisionError):
            parse_precision(bad)


def test_array_api_strict_round():
    xp = pytest.importorskip("array_api_strict")
    x = np.array([0.1, -3.3, 70000.0, 1e-9, 0.0])
    for name in ["float16", "bfloat16", "float32", "fixed:8:3"]:
        p = parse_precision(name)
        got = p.round(xp.asarray(x))
        assert same(np.asarray(got._array), p.round(x))


def test_encode_rows_matches_encode():
    p = parse_precision("fixed:6:2")
    x = np.random.default_rng(3).normal(size=(5, 3)) * 4
    rows = p.encode_rows(x)
    assert rows.shape == (5, 18)
    for b in range(5):
        assert Bits(rows[b]) == p.encode(x[b])
    assert np.array_equal(p.decode_rows(rows), p.round(x))


def test_bfloat16_bit_path_equals_generic_on_every_exponent():
    """The in-place bit-pattern rounding (numpy arrays) against the exponent/quantum formula
    (``_round_generic``, the path of other namespaces) on random doubles of every exponent and sign,
    NaN payloads, infinities, ties, the largest finite value and the target's subnormals; and its
    overflow count against the finite inputs that became infinite."""
    p = parse_precision("bfloat16")
    rng = np.random.default_rng(20)
    u = rng.integers(0, 2 ** 63, size=200_000, dtype=np.uint64)
    u |= rng.integers(0, 2, size=u.size, dtype=np.uint64) << np.uint64(63)
    edges = [0.0, -0.0, math.inf, -math.inf, math.nan, p.max_value, -p.max_value,
             np.nextafter(p.max_value, math.inf), 3.3961e38, 2.0 ** -126, 2.0 ** -127, 2.0 ** -133,
             2.0 ** -134, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, -(1 + 2.0 ** -8)]
    x = np.concatenate([u.view(np.float64), edges])
    with np.errstate(all="ignore"):
        expected = p._round_generic(np, x)
    expected = np.where(np.isnan(expected), math.nan, expected)
    before = p.saturations.count
    got = p.round(x)
    assert same(got, expected)
    assert p.saturations.count - before == int((np.isfinite(x) & np.isinf(expected)).sum()) > 0
    assert same(p.round(x.reshape(2, -1)), expected.reshape(2, -1))   # any shape


def test_bfloat16_bit_path_at_chunk_boundaries():
    """The bit-pattern rounding runs in passes of ``ROUND_CHUNK`` numbers: specials, subnormals,
    zeros and overflows placed on both sides of every boundary, in a strided (non-contiguous) 3-D
    view, give the values and the overflow count of the exponent/quantum formula."""
    from commcomp.precision import ROUND_CHUNK

    p = parse_precision("bfloat16")
    rng = np.random.default_rng(21)
    size = 3 * ROUND_CHUNK + 7
    x = rng.standard_normal(2 * size) * 10.0 ** rng.integers(-40, 40, 2 * size)
    edges = [math.nan, math.inf, -0.0, 2.0 ** -130, -4e38, 0.0, 3.3961e38, -math.inf, 2.0 ** -127]
    for k in range(1, 4):  # x[::2] at k * CHUNK - 4 ... k * CHUNK + 4, and at its start
        x[2 * (k * ROUND_CHUNK - 4):2 * (k * ROUND_CHUNK + 5):2] = edges
    x[:2 * len(edges):2] = edges
    view = x[::2][: size - 7].reshape(3, ROUND_CHUNK // 2, 2)   # strided, then reshaped: a copy
    with np.errstate(all="ignore"):
        expected = p._round_generic(np, view)
    expected = np.where(np.isnan(expected), math.nan, expected)
    p.saturations.reset()
    got = p.round(view)
    assert got.shape == view.shape and same(got, expected)
    assert p.saturations.reset() == int((np.isfinite(view) & np.isinf(expected)).sum()) >= 4
    assert same(p.round(view[:, :1, :1]), expected[:, :1, :1])   # smaller than one pass


@pytest.mark.parametrize("name", ["fixed:8:3", "fixed:16:8", "fixed:12:-2", "fixed:32:16"])
def test_fixed_to_int_numpy_path_equals_namespace_path(name):
    """The in-place NumPy path of ``to_int`` against the Array API path (run on array-api-strict, the
    path of every other namespace), values and saturation counts, specials included."""
    xp = pytest.importorskip("array_api_strict")
    p = parse_precision(name)
    rng = np.random.default_rng(25)
    x = rng.standard_normal(50_000) * 10.0 ** rng.integers(-6, 20, 50_000)
    x = np.concatenate([x, [0.0, -0.0, math.nan, math.inf, -math.inf, p.max_value, p.min_value,
                            p.max_value + p.resolution / 2, -1e300, 2.5 / p.scale, 3.5 / p.scale]])
    p.saturations.reset()
    got = p.to_int(x)
    fast = p.saturations.reset()
    expected = np.asarray(p.to_int(xp.asarray(x))._array)
    slow = p.saturations.reset()
    assert same(got, expected) and fast == slow > 0
