"""Implied widths and crossover lengths against brute force."""

from fractions import Fraction
from math import ceil, log2

import pytest

from commcomp.bounds import compute_bounds, min_width_for_bits, min_width_for_quantity

# State numbers per width, written out by hand (independent of commcomp.architectures).
COUNTS = {
    ("elman", ()): lambda w: w,
    ("elman", (("layers", 3),)): lambda w: 3 * w,
    ("lstm", ()): lambda w: 2 * w,
    ("lstm", (("layers", 2),)): lambda w: 4 * w,
    ("gru", ()): lambda w: w,
    ("linear-attention", ()): lambda w: w * w + w,
    ("linear-attention", (("heads", 4),)): lambda w: 4 * ((w // 4) ** 2 + w // 4),
    ("retnet", ()): lambda w: w * w,
    ("retnet", (("heads", 2), ("value_factor", 2))): lambda w: 2 * (w // 2) * (2 * w // 2),
    ("dss", ()): lambda w: 64 * w,
    ("dss", (("d_state", 3), ("complex_state", 1))): lambda w: 6 * w,
    ("mamba", ()): lambda w: 2 * w * 16 + 2 * w * 3,
    ("mamba", (("expand", 1), ("d_state", 4), ("d_conv", 2), ("layers", 2))): lambda w: 2 * (w * 4 + w * 1),
}
MULTIPLE = {("linear-attention", (("heads", 4),)): 4, ("retnet", (("heads", 2), ("value_factor", 2))): 2}


def brute_force_width(count, bits, p, step=1):
    w = step
    while count(w) * p < bits:
        w += step
    return w


@pytest.mark.parametrize("key", sorted(COUNTS), ids=lambda k: f"{k[0]}{dict(k[1])}")
def test_min_width_for_bits_matches_brute_force(key):
    arch, hyper = key
    step = MULTIPLE.get(key, 1)
    for bits in (1, 2, 31, 32, 33, 400, 1000, 8192, 65536, 100001, Fraction(4001, 3)):
        for p in (1, 3, 16, 32, 64):
            got = min_width_for_bits(arch, bits, p, **dict(hyper))
            assert got == brute_force_width(COUNTS[key], bits, p, step), (arch, hyper, bits, p)


def test_calculator_widths_match_brute_force():
    for N in (2, 3, 17, 400, 1000, 8192):
        for p in (8, 32):
            rows = compute_bounds(N, p, task="index-lookup", include_randomized=False, d_state=3, heads=2)
            for row in rows:
                if row.theorem != "BHBK-IL-RNN":
                    continue
                if row.arch == "dss":
                    expected = brute_force_width(lambda w: 3 * w, N, p)
                elif row.arch == "retnet":
                    expected = brute_force_width(lambda w: 2 * (w // 2) ** 2, N, p, 2)
                elif row.arch == "linear-attention":
                    expected = brute_force_width(lambda w: 2 * ((w // 2) ** 2 + w // 2), N, p, 2)
                elif row.arch == "mamba":
                    expected = brute_force_width(lambda w: 2 * w * (3 + 3), N, p)
                else:
                    expected = brute_force_width(COUNTS[(row.arch, ())], N, p)
                assert row.min_width == expected, (row.arch, N, p)


def test_transformer_widths():
    assert min_width_for_quantity("heads_times_width", 60.67, heads=1) == 61
    assert min_width_for_quantity("heads_times_width", 60.67, heads=4) == 16
    assert min_width_for_quantity("heads_times_width_plus_1", 8.2, heads=2) == 4     # 2 * (4 + 1) >= 8.2
    assert min_width_for_quantity("heads_times_width_plus_1", 8, heads=2) == 3       # 2 * (3 + 1) >= 8
    assert min_width_for_quantity("heads_times_width_plus_1", 0.5, heads=1) == 1
    assert min_width_for_quantity("width", 206.2) == 207
    assert min_width_for_quantity("jl_dim", 5) is None
    for value in (0.3, 1, 7.5, 16, 100.01):
        for H in (1, 2, 3, 8):
            assert min_width_for_quantity("heads_times_width", value, H) == max(
                1, next(w for w in range(1, 1000) if w * H >= value))
            assert min_width_for_quantity("heads_times_width_plus_1", value, H) == max(
                1, next(w for w in range(0, 1000) if (w + 1) * H >= value))


def _first(pred, start=2):
    N = start
    while not pred(N):
        N += 1
    return N


def test_crossover_recurrent_against_scan():
    # Elman width 13 at p = 32 holds 416 bits: Index Lookup (mp >= N) breaks at N = 417.
    rows = compute_bounds([400], 32, task="index-lookup", arch=["elman", "lstm", "mamba"], width=13,
                          include_randomized=False)
    cross = {r.arch: r.crossover_n for r in rows}
    assert cross == {"elman": 417, "lstm": 2 * 13 * 32 + 1, "mamba": 38 * 13 * 32 + 1}
    # Nearest Neighbour, commcomp's form: floor((N - 1)/2) > 13 * 8
    row = next(r for r in compute_bounds(10, 8, task="nn", arch="gru", width=13) if r.theorem == "COMMCOMP-NN-RNN")
    assert row.crossover_n == _first(lambda N: (N - 1) // 2 > 13 * 8)


@pytest.mark.parametrize("width, heads, p", [(1, 1, 4), (3, 1, 8), (2, 2, 8), (5, 3, 6)])
def test_crossover_transformer_against_scan(width, heads, p):
    rows = compute_bounds(10, p, heads=heads, task=["dyck", "match3"], arch="transformer", layers=1,
                          width=width, include_randomized=False)
    got = {r.theorem: r.crossover_n for r in rows if r.kind == "lower"}
    one_way = lambda N, n: n / (p + ceil(log2(N))) > heads * (width + 1)     # noqa: E731
    two_round = lambda N, n: n / (3 * (p + log2(N))) > heads * width          # noqa: E731
    assert got["BHBK-Dyck-1TF"] == _first(lambda N: (N - 1) / (3 * (p + log2(N))) > heads * width)
    assert got["COMMCOMP-MATCH3-1TF"] == _first(lambda N: one_way(N, (N - 1) // 2))
    assert got["COMMCOMP-DYCK22-1TF-1W"] == _first(lambda N: one_way(N, (N - 1) // 4))
    assert got["COMMCOMP-DYCK22-1TF-2R"] == _first(lambda N: two_round(N, (N - 1) // 4))


def test_crossover_of_a_construction():
    # C2 width 2 + 2k + 1 with k = ceil((4 ln N + 2 ln 2) / 0.25): first N whose construction exceeds 207
    from math import log
    rows = compute_bounds(10, 32, task="index-lookup", arch="transformer", width=207)
    row = next(r for r in rows if r.theorem == "BHBK-IL-1TF")
    assert row.crossover_n == _first(lambda N: 3 + 2 * ceil((4 * log(N) + 2 * log(2)) / 0.25) > 207)
    const = next(r for r in compute_bounds(10, 32, task="match2", width=3) if r.theorem == "SHT-Match2-UB")
    assert const.crossover_n is None  # a constant width never runs out
