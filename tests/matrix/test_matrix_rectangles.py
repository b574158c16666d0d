"""Partition and cover numbers against brute force: every 4x4 matrix up to row and column
permutations, random 6x6, the gap generators, and the hard 10x10 matrices' recorded values."""

import itertools
import json
import os
from pathlib import Path

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError, TooLargeError, UnknownNameError
from commcomp.matrix import check_certificate, deterministic_cc, measure
from commcomp.matrix.generators import GAP_KINDS, gap_matrix, kronecker, random_union, xor_product
from commcomp.matrix.rectangles import rectangle_number
from commcomp.matrix.solvers import available_solvers, find_rectangles

MEASURES = [(True, "partition"), (False, "partition"), (True, "cover"), (False, "cover")]


def brute_force(a: np.ndarray, exact: bool) -> int:
    """Fewest all-ones rectangles covering (exact: partitioning) the 1-cells of a, by iterative
    deepening over every all-ones rectangle: the first uncovered cell must lie in the next one."""
    r, c = a.shape
    target = sum(1 << (i * c + j) for i in range(r) for j in range(c) if a[i, j])
    rects = []
    for rows in range(1, 1 << r):
        for cols in range(1, 1 << c):
            cells = [(i, j) for i in range(r) if rows >> i & 1 for j in range(c) if cols >> j & 1]
            if all(a[i, j] for i, j in cells):
                rects.append(sum(1 << (i * c + j) for i, j in cells))

    failed: dict[int, int] = {}  # cells left -> most rectangles known not to suffice

    def fits(left: int, k: int) -> bool:
        if not left:
            return True
        if k == 0 or failed.get(left, -1) >= k:
            return False
        cell = left & -left
        covered = target & ~left
        if any(fits(left & ~m, k - 1) for m in rects if m & cell and not (exact and m & covered)):
            return True
        failed[left] = k
        return False

    k = 0
    while not fits(target, k):
        k += 1
    return k


def classes_4x4() -> np.ndarray:
    """One matrix from each class of 4x4 0/1 matrices under row and column permutations."""
    codes = np.arange(1 << 16)
    mats = ((codes[:, None] >> np.arange(16)) & 1).reshape(-1, 4, 4)  # (65536, 4, 4)
    weights = 1 << np.arange(16).reshape(4, 4)
    best = np.full(len(codes), 1 << 17)
    for p in itertools.permutations(range(4)):
        rows = mats[:, list(p), :]
        for q in itertools.permutations(range(4)):
            best = np.minimum(best, (rows[:, :, list(q)] * weights).sum(axis=(1, 2)))
    reps = np.unique(best)
    return ((reps[:, None] >> np.arange(16)) & 1).reshape(-1, 4, 4).astype(bool)


CLASSES = classes_4x4()


def test_4x4_classes_are_the_known_317():
    assert len(CLASSES) == 317  # OEIS A002724(4)


@pytest.mark.parametrize("colour, kind", MEASURES)
def test_every_4x4_class_against_brute_force(colour, kind):
    for m in CLASSES:
        res = rectangle_number(m, colour, kind=kind)
        assert res.value == brute_force(m == colour, kind == "partition"), m.astype(int)
        assert check_certificate(res, m)


def test_random_6x6_against_brute_force_and_fallback():
    rng = np.random.default_rng(6)
    ran = set()
    for _ in range(4):
        m = rng.random((6, 6)) < rng.uniform(0.3, 0.7)
        for colour, kind in MEASURES:
            res = rectangle_number(m, colour, kind=kind)
            fallback = rectangle_number(m, colour, kind=kind, solver="search")
            assert res.value == fallback.value == brute_force(m == colour, kind == "partition")
            ran.add(fallback.solver)
            assert check_certificate(res, m) and check_certificate(fallback, m)
    assert "branch and bound (no solver)" in ran  # not every case had its bounds meet


@pytest.mark.parametrize("kind", GAP_KINDS)
def test_gap_generators_against_the_fallback(kind):
    """8x8 matrices of each kind: the solver agrees with the branch and bound, and χ₁ + χ₀ = χ
    from the old search over both colours at once."""
    from commcomp.matrix import partition_number

    for seed in (0, 1):  # (xor seed 2 takes the old search 50 s)
        m = gap_matrix(8, kind=kind, seed=seed)
        chi = partition_number(m).partition_number
        values = {}
        for colour, k in MEASURES:
            res = rectangle_number(m, colour, kind=k)
            assert res.value == rectangle_number(m, colour, kind=k, solver="search").value
            assert check_certificate(res, m)
            values[colour, k] = res.value
        assert values[True, "partition"] + values[False, "partition"] == chi


def test_generators_are_what_they_say():
    a = np.array([[1, 0], [1, 1]], dtype=bool)
    b = np.array([[0, 1, 1], [1, 0, 1]], dtype=bool)
    k, x = kronecker(a, b), xor_product(a, b)
    for i, ip, j, jp in itertools.product(range(2), range(2), range(2), range(3)):
        assert k[i * 2 + ip, j * 3 + jp] == (a[i, j] and b[ip, jp])
        assert x[i * 2 + ip, j * 3 + jp] == (a[i, j] ^ b[ip, jp])
    u = random_union(7, 5, 3, seed=2)
    assert np.array_equal(u, random_union(7, 5, 3, seed=2)) and u.shape == (7, 5)
    assert rectangle_number(u, True, kind="cover").value <= 3  # a union of 3 rectangles
    with pytest.raises(InvalidParameterError, match="composite"):
        gap_matrix(7, kind="xor")


def test_a_gap_is_found_and_certified():
    """xor of two random 4x4 matrices: C¹ above its fooling set, refuted at C¹ - 1 by CaDiCaL with
    a DRAT proof that the checker re-checks (and rejects when cut); D(f) then starts from
    ceil(log2 χ) and the check re-verifies both partition certificates."""
    m = gap_matrix(16, kind="xor", seed=0)
    if "cadical" in available_solvers():
        cover = rectangle_number(m, True, kind="cover")
        assert cover.lower_bound_by == "solver proof" and cover.value > cover.lower_bound
        check = check_certificate(cover, m)
        assert check and "DRAT proof re-checked" in check.detail
        import dataclasses

        cut = dataclasses.replace(cover, proof=cover.proof[: len(cover.proof) // 2])
        assert not check_certificate(cut, m)
        other = dataclasses.replace(cover, value=cover.value + 1,
                                    rectangles=cover.rectangles + cover.rectangles[:1])
        assert not check_certificate(other, m)  # the proof refutes value - 1, not value
    if "cpsat" in available_solvers():
        cover = rectangle_number(m, True, kind="cover", solver="cpsat")
        assert cover.lower_bound_by == "solver-proved" and not cover.proof
        assert "not re-verified" in check_certificate(cover, m).detail
    if not available_solvers():
        return  # the fallback's limit (64 cells) is below this matrix: covered by the 8x8 tests
    m = gap_matrix(16, kind="xor", seed=1)  # rank bound 4 < D = 5 = ceil(log2(9 + 9))
    rep = measure(m, ["partition"])
    assert rep.certificates_checked and rep.partition_number == 18
    assert rep.results[2].lower_bound_by == "partition number" and rep.deterministic_cc == 5
    assert "partition number 18" in rep.checks[2].detail
    plain = deterministic_cc(m)
    assert plain.deterministic_cc == 5 and plain.lower_bound_by == "search"  # the search agrees


def test_checker_rejects_bad_certificates():
    m = gap_matrix(8, kind="xor", seed=0)
    res = rectangle_number(m, True, kind="partition")
    import dataclasses

    fewer = dataclasses.replace(res, rectangles=res.rectangles[:-1], value=res.value - 1)
    assert not check_certificate(fewer, m)
    overlap = dataclasses.replace(res, rectangles=res.rectangles[:-1] + res.rectangles[:1])
    assert not check_certificate(overlap, m)  # a partition may not overlap
    gap = gap_matrix(8, kind="xor", seed=2)  # C1 above its largest fooling set found: the label lies
    cover = rectangle_number(gap, True, kind="cover")
    assert cover.value > len(cover.fooling_set)
    lied = dataclasses.replace(cover, lower_bound_by="fooling set")
    assert not check_certificate(lied, gap)
    bad_fool = dataclasses.replace(res, fooling_set=((0, 0), (0, 0)))
    assert not check_certificate(bad_fool, m)


@pytest.mark.parametrize("solver", ["cadical", "cpsat", "z3"])
def test_each_backend_agrees(solver):
    if solver not in available_solvers():
        pytest.skip(f"solver {solver} is not installed (pip install 'commcomp[solver]')")
    m = gap_matrix(12, kind="xor", seed=1)
    for colour, kind in MEASURES:
        assert (rectangle_number(m, colour, kind=kind, solver=solver).value
                == rectangle_number(m, colour, kind=kind, solver="cadical"
                                    if "cadical" in available_solvers() else "search").value)
    a = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]], dtype=bool)
    assert find_rectangles(a, 2, exact=True, solver=solver) is None
    assert len(find_rectangles(a, 3, exact=True, solver=solver)) == 3


def test_solver_names_and_budget():
    with pytest.raises(UnknownNameError, match="known: auto, search"):
        rectangle_number(np.eye(3), True, kind="cover", solver="minisat")
    if "cadical" in available_solvers():
        with pytest.raises(TooLargeError, match="conflicts"):
            find_rectangles(gap_matrix(24, kind="xor", seed=0), 15, exact=False, max_conflicts=10)


def _hard10():
    root = Path(__file__).resolve().parents[2]
    for base in (os.environ.get("COMMCOMP_SHARED_DATA"), root.parent / "shared" / "data",
                 root.parent.parent / "shared" / "data"):
        if base and (Path(base) / "hard10.npz").exists() and (Path(base) / "hard10.json").exists():
            return Path(base)
    return None


@pytest.mark.skipif(_hard10() is None, reason="hard10.npz / hard10.json not found at ../shared/data "
                    "relative to the repository (or $COMMCOMP_SHARED_DATA)")
def test_hard10_values_match_the_recorded_ones():
    if not available_solvers():
        pytest.skip("no solver installed (pip install 'commcomp[solver]'): the branch and bound's "
                    "limit of 64 cells is below these matrices")
    base = _hard10()
    data = np.load(base / "hard10.npz")
    meta = json.loads((base / "hard10.json").read_text())["matrices"]
    for name in data.files:
        m = data[name].astype(bool)
        ones = rectangle_number(m, True, kind="partition")
        zeros = rectangle_number(m, False, kind="partition")
        assert ones.value == meta[name]["ebmf_partition_ones"], name
        assert zeros.value == meta[name]["ebmf_partition_zeros"], name
        assert check_certificate(ones, m) and check_certificate(zeros, m)


def test_drat_checker_against_small_refutations():
    from commcomp.matrix.drat import check_drat

    php = [[1, 2], [3, 4], [5, 6], [-1, -3], [-1, -5], [-3, -5], [-2, -4], [-2, -6], [-4, -6]]
    # 3 pigeons, 2 holes (pigeon p in hole h: variable 2p + h - 2): resolution by hand
    proof = ["-1 0", "-3 4 0", "d -3 4 0", "2 0", "-4 0", "-6 0", "0"]
    ok, detail = check_drat(php, proof)
    assert ok, detail
    assert not check_drat(php, ["0"])[0]  # not a refutation by propagation alone
    assert not check_drat(php[:-1], proof)[0]  # drop a clause: a lemma is no longer implied
    assert not check_drat([[1, 2]], ["1 0", "0"])[0]  # satisfiable: nothing ends in a conflict
    assert check_drat([[1, 2], [-1, 2], [1, -2], [-1, -2]], ["2 0", "0"])[0]
    # RAT: x3 fresh, x3 v -1 is RAT on x3 (no clause holds -x3)
    assert check_drat([[1], [-1]], ["3 -1 0", "0"])[0]


def test_cover_fallback_past_64_cells():
    """A sparse 10x10 matrix: cell bitmasks past bit 63 (Python ints), solver and fallback agree."""
    m = np.random.default_rng(3).random((10, 10)) < 0.3
    res = rectangle_number(m, True, kind="cover", solver="search")
    assert check_certificate(res, m) and res.solver.startswith(("branch and bound", "none needed"))
    if available_solvers():
        assert res.value == rectangle_number(m, True, kind="cover").value
