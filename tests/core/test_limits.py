"""Size limits through the Python API (commcomp.limits): specific exceptions, the limit in the message."""

import math
import warnings

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError, PrecisionError, TooLargeError
from commcomp.limits import MAX_SEED, check_memory, largest_within, memory_limit
from commcomp.precision import FORMATS_HELP, FixedPoint, fraction_bits_range, parse_bound_bits, parse_precision


@pytest.fixture(autouse=True)
def small_memory(monkeypatch):
    monkeypatch.setenv("COMMCOMP_MEMORY_LIMIT", "1G")


def test_memory_limit_reads_the_environment(monkeypatch):
    assert memory_limit() == 1 << 30
    monkeypatch.setenv("COMMCOMP_MEMORY_LIMIT", "lots")
    with pytest.raises(InvalidParameterError, match="COMMCOMP_MEMORY_LIMIT"):
        memory_limit()


def test_largest_within_against_a_plain_scan():
    for cost in (lambda v: 3 * v, lambda v: v * v, lambda v: 2 ** v):
        for limit in (0, 1, 7, 100, 1000):
            expected = max([v for v in range(1, 200) if cost(v) <= limit], default=0)
            assert largest_within(cost, 1, 199, limit) == expected


def test_check_memory_names_the_largest_value_that_fits():
    with pytest.raises(TooLargeError) as err:
        check_memory("demo", "n", 10 ** 9, lambda v: 1024 * v)
    assert "n <= 1048576" in str(err.value) and "1.0 GiB" in str(err.value)
    assert check_memory("demo", "n", 1 << 20, lambda v: 1024 * v) == 1 << 20


def test_check_reduction_limits():
    from reductions.check import check_reduction
    from reductions.registry import get_reduction

    red = get_reduction("string-equality")
    with pytest.raises(InvalidParameterError, match="n_max must be an integer >= 0"):
        check_reduction(red, n_max=-1)
    with pytest.raises(TooLargeError, match="n_max <= 13"):  # 4^13 = 2^26 pairs
        check_reduction(red, n_max=30)
    with pytest.raises(TooLargeError, match="limit n <="):
        check_reduction(red, n_max=2, n_random=[10 ** 9])
    with pytest.raises(InvalidParameterError, match="seed"):
        check_reduction(red, n_max=2, seed=-1)
    check_reduction(red, n_max=3, n_random=[16], samples=8)  # within the limits: runs


@pytest.mark.parametrize("call,error,words", [
    (lambda: __import__("reductions.separations", fromlist=["x"]).separations(n=10 ** 9), TooLargeError, "n <= "),
    (lambda: __import__("reductions.separations", fromlist=["x"]).separations(seed=-1), InvalidParameterError, "seed"),
    (lambda: __import__("reductions.separations", fromlist=["x"]).separations(width=10 ** 9), TooLargeError,
     "width <= 4096"),
    (lambda: __import__("reductions.simulate", fromlist=["x"]).verify("index-lookup", "elman", 4, "float32",
                                                                      instances=10 ** 12), TooLargeError,
     "instances <= "),
    (lambda: __import__("reductions.simulate", fromlist=["x"]).simulate("index-lookup", "elman", 4, "float32",
                                                                        seed=MAX_SEED + 1), InvalidParameterError,
     "seed"),
    (lambda: __import__("reductions.search.witness", fromlist=["x"]).find_witness("index-lookup", "elman", 4, "fixed:4:2",
                                                                           width=1, budget=10 ** 12),
     TooLargeError, "budget <= "),
    (lambda: __import__("models.constructions", fromlist=["x"]).get_construction("index-lookup").make(10 ** 9),
     TooLargeError, "limit n <="),
    (lambda: __import__("reductions.search.computed", fromlist=["x"]).computed_state_bits("index-lookup", 10 ** 9),
     TooLargeError, "limit n <="),
])
def test_library_limits(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_sweep_grid_and_seed_limits():
    from commcomp.sweep.grid import expand_grid
    from commcomp.sweep.spec import SweepSpec

    with pytest.raises(TooLargeError, match="sweep points <= 1048576"):
        expand_grid(SweepSpec("selftest", name="big", axes={"n": (1, 2)}, repeats=10 ** 9))
    with pytest.raises(InvalidParameterError, match="0..9223372036854775807"):
        SweepSpec("selftest", name="s", axes={"n": (1,)}).with_overrides(seed=2 ** 64)
    assert len(expand_grid(SweepSpec("selftest", name="ok", axes={"n": (1, 2)}, repeats=3))) == 6


# -- number formats: one range, one message ----------------------------------------------------
@pytest.mark.parametrize("spec", ["fixed:1:0", "fixed:54:3", "fixed:99:3", "fixed:8:1023", "fixed:8:-1017",
                                  "fixed:53:-972", "1", "0", "-3", "99", "100"])
def test_out_of_range_formats_share_one_message(spec):
    with pytest.raises(PrecisionError) as err:
        parse_precision(spec)
    assert str(err.value).endswith(FORMATS_HELP) and "out of range" in str(err.value)


@pytest.mark.parametrize("spec", ["float8", "fixed:8", "fixed:a:b", ""])
def test_unknown_formats_share_the_help(spec):
    with pytest.raises(PrecisionError, match="unknown precision") as err:
        parse_precision(spec)
    assert str(err.value).endswith(FORMATS_HELP)


def test_fraction_bits_range_ends_are_exact_float64_grids():
    for total in (2, 8, 24, 53):
        low, high = fraction_bits_range(total)
        for frac in (low, high):
            p = FixedPoint.make(total, frac)
            assert math.isfinite(p.max_value) and math.isfinite(p.min_value) and p.resolution > 0
            # every end of the grid is hit exactly: the extreme integers and one step
            ks = np.array([p.min_int, -1, 0, 1, p.max_int], dtype=np.float64)
            values = ks / p.scale
            assert np.array_equal(p.round(values), values)
            assert np.array_equal(p.decode(p.encode(values)), values)
        with pytest.raises(PrecisionError):
            FixedPoint.make(total, low - 1)
        with pytest.raises(PrecisionError):
            FixedPoint.make(total, high + 1)
    assert parse_precision("fixed:4:9").max_value == 7 / 512  # a valid format, on purpose
    assert parse_precision("fixed:8:-1").round(np.array([3.0, 1000.0])).tolist() == [4.0, 254.0]


def test_bound_bits_range():
    assert parse_bound_bits(1) == 1 and parse_bound_bits("1024") == 1024 and parse_bound_bits("fixed:12:6") == 12
    for bad in (0, 1025, "-2"):
        with pytest.raises(PrecisionError, match="1..1024"):
            parse_bound_bits(bad)


# -- the RuntimeWarnings the suite printed, now gone at their cause ----------------------------
def test_no_runtime_warnings_at_the_edges():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for name in ("float16", "bfloat16"):
            p = parse_precision(name)
            values = p.from_codes(np.arange(2 ** 16, dtype=np.uint64))  # signalling NaN codes included
            assert np.isnan(values).sum() == 2 * (2 ** p.mantissa_bits - 1)
        f32 = parse_precision("float32")
        codes = np.array([0x7F800001, 0xFFBFFFFF, 0x7FC00000, 0x3F800000], dtype=np.uint64)
        assert np.isnan(f32.from_codes(codes)).tolist() == [True, True, True, False]
        big = np.array([3.4028235677973366e+38, 2.0 ** 128 - 2.0 ** 103, -1e300, np.nextafter(2.0 ** 128 - 2.0 ** 103, 0)])
        out = f32.round(big)
        with np.errstate(over="ignore"):
            assert np.array_equal(out, big.astype(np.float32).astype(np.float64))  # numpy's own cast
        assert f32.saturations.count == 3
        fixed = parse_precision("fixed:8:4")
        assert fixed.round(np.array([1e308, -1e308, np.inf])).tolist() == [fixed.max_value, fixed.min_value,
                                                                          fixed.max_value]
        assert fixed.saturations.count == 3
