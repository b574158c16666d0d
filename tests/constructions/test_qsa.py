"""C7a / C7b (SHT qSA): one attention unit, judged by ``reductions.tasks.qsa``'s ground truth.

qSA rows carry real data, so "all inputs" means: every pointer set y (the attention weights
of a row depend on its y alone, never on the data), with the data ``z_j = e_j`` in d' = N
dimensions.  The output row is then the weight vector itself, so besides the task's l2 check
we assert the l1 distance ``sum_j |a_ij - 1[j in y_i]/q| <= epsilon``: it bounds the l2 error
for every data in the unit ball (``|sum_j (a_ij - t_ij) z_j| <= sum_j |a_ij - t_ij|``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from models.constructions.qsa import (QSAConstruction, certificate_margin, make_qsa_moment_curve,
                                      make_qsa_random_keys, moment_margin)
from reductions.tasks.qsa import QSparseAveraging


def all_pointer_sets(q: int, N: int):
    """A batch holding every q-subset of [N] once as some row's pointers, data ``z_j = e_j``."""
    sets = np.array(list(itertools.combinations(range(N), q)), dtype=np.int64)  # (S, q)
    B = -(-len(sets) // N)
    ptr = np.concatenate([sets, np.repeat(sets[:1], B * N - len(sets), axis=0)]).reshape(B, N, q)
    task = QSparseAveraging(dim=N)
    z = np.broadcast_to(2 * np.arange(N), (B, N))  # ids of +e_j
    return task, _batch(task, q, z, ptr)


def random_batch(q: int, N: int, B: int, rng, dim: int = 2):
    """Uniform data from the task's table and uniform pointer sets, at any N (SHT Def. 4)."""
    task = QSparseAveraging(dim=dim)
    z = rng.integers(0, task.vocab_size(q), size=(B, N))
    ptr = np.sort(np.argsort(rng.random((B, N, N)), axis=-1)[..., :q], axis=-1)
    return task, _batch(task, q, z, ptr)


def _batch(task, q, z, ptr):
    B, N = z.shape
    pos = np.broadcast_to(np.arange(N, dtype=np.float64)[None, :, None], (B, N, 1))
    feats = np.concatenate([task.table()[z], ptr.astype(np.float64), pos], axis=2)
    if N == 2 * q + 1:
        return task.assemble(q, z, ptr)  # the task's own format
    return task.make_batch(q, z, feats)


def assert_all_sets(c, q, N):
    task, batch = all_pointer_sets(q, N)
    truth = task.ground_truth(batch)
    result = c.check(batch, truth)
    assert result.ok, (c.name, q, N, result)
    l1 = np.abs(c.predict(batch) - truth).sum(axis=-1).max()
    assert l1 <= c.tolerance, (c.name, q, N, l1)
    return l1


@pytest.mark.parametrize("precision", [None, "fixed:16:12", "float16"])
def test_random_keys_all_pointer_sets_task_format(precision):
    for q in range(1, 7):  # N = 2q + 1: one-hot keys (8 q ln N > N)
        c = make_qsa_random_keys(q, precision, dim=2 * q + 1)
        assert c.params_report["orthonormal_keys"] and c.width == (2 * q + 1) + (2 * q + 1)
        assert_all_sets(c, q, 2 * q + 1)


@pytest.mark.parametrize("q, N, key_width, seed", [(2, 80, None, 0), (2, 96, 56, 0), (2, 96, 48, 1),
                                                   (1, 64, 12, 0)])
def test_random_keys_narrower_than_N_all_pointer_sets(q, N, key_width, seed):
    # random ±1/sqrt(m_k) keys with m_k < N (default: ceil(8 q ln N) = 71 at q = 2, N = 80);
    # beta from the exact worst-case margin over all C(N, q) pointer sets
    c = make_qsa_random_keys(q, None, seed=seed, dim=N, length=N, key_width=key_width)
    m_k = c.params_report["key_width"]
    assert m_k < N and not c.params_report["orthonormal_keys"] and c.params_report["margin_exact"]
    assert c.params_report["separable"] and c.width == N + m_k
    assert_all_sets(c, q, N)


def test_duplicate_keys_are_not_separable():
    # seed 0 at m_k = 48 draws two equal keys: the certificate of one also selects the other
    c = make_qsa_random_keys(2, None, seed=0, dim=96, length=96, key_width=48)
    assert not c.params_report["separable"]
    task, batch = all_pointer_sets(2, 96)
    assert not c.check(batch, task.ground_truth(batch)).ok


@pytest.mark.parametrize("precision", [None, "fixed:40:30"])
def test_moment_curve_all_pointer_sets(precision):
    for q in range(1, 6):
        c = make_qsa_moment_curve(q, precision, dim=2 * q + 1)
        assert c.model.d_k == 2 * q + 1
        assert_all_sets(c, q, 2 * q + 1)
    for q, N in [(2, 12), (3, 10)]:
        assert_all_sets(make_qsa_moment_curve(q, precision, dim=N, length=N), q, N)


def test_moment_curve_float64_limit_in_task_format():
    # "infinite precision": the margin is ~(2/N)^(2q); at float64 the task format holds to q = 9
    rng = np.random.default_rng(0)
    task = QSparseAveraging()
    for q, ok in [(7, True), (9, True), (12, False)]:
        batch = task.sample(q, 8, rng)
        c = make_qsa_moment_curve(q)
        assert c.check(batch, task.ground_truth(batch)).ok is ok, q
    assert moment_margin(19, 9) > 1e-11 > moment_margin(25, 12)


@pytest.mark.parametrize("q, precision", [(4, None), (4, "float16"), (4, "fixed:13:11"), (8, None)])
def test_random_keys_random_inputs_N1024(q, precision):
    task, batch = random_batch(q, 1024, 2, np.random.default_rng(q))
    c = make_qsa_random_keys(q, precision, length=1024)
    assert c.width == 2 + int(np.ceil(8 * q * np.log(1024)))
    assert c.check(batch, task.ground_truth(batch)).ok


def test_random_keys_random_rows_N8192():
    rng = np.random.default_rng(7)
    N, q = 8192, 4
    task = QSparseAveraging()
    z = rng.integers(0, task.vocab_size(q), size=(1, N))
    ptr = np.sort(np.stack([rng.choice(N, q, replace=False) for _ in range(N)]), axis=-1)[None]
    batch = _batch(task, q, z, ptr)
    truth = task.ground_truth(batch)
    rows = np.sort(rng.choice(N, 64, replace=False))
    c = make_qsa_random_keys(q, "float32", length=N)
    err = np.sqrt(((c.predict_features(batch.features, rows) - truth[:, rows]) ** 2).sum(-1))
    assert err.max() <= c.tolerance


def test_task_format_at_N1023():
    # the task's own format, q = 511: one-hot keys of width N, every row checked
    task = QSparseAveraging()
    batch = task.sample(511, 1, np.random.default_rng(1))
    c = make_qsa_random_keys(511)
    assert c.width == 2 + 1023 and c.check(batch, task.ground_truth(batch)).ok


def test_moment_curve_random_inputs_N1024():
    for q in (1, 2):
        task, batch = random_batch(q, 1024, 2, np.random.default_rng(q))
        c = make_qsa_moment_curve(q, length=1024)
        assert c.check(batch, task.ground_truth(batch)).ok


def test_rows_path_and_certificate():
    task, batch = random_batch(2, 80, 2, np.random.default_rng(2))
    c = make_qsa_random_keys(2, "fixed:20:14", length=80)
    rows = np.array([0, 7, 79])
    assert np.array_equal(c.predict_features(batch.features, rows), c.predict(batch)[:, rows])
    assert c.check(batch, task.ground_truth(batch)).ok
    w = c.model.queries(np.array([[3, 20]]))  # the certificate: exactly 1 on its set
    assert np.allclose(w @ c.model.keys[[3, 20]].T, 1.0, atol=1e-12, rtol=0)
    assert certificate_margin(c.model.keys, 2) == pytest.approx(c.params_report["margin"])
    assert certificate_margin(np.eye(30), 3) == pytest.approx(1.0)


def test_features_are_required_and_options_checked():
    c = make_qsa_random_keys(2)
    assert isinstance(c, QSAConstruction)
    with pytest.raises(InvalidParameterError):
        c.predict(np.zeros((1, 5), dtype=np.int64))
    with pytest.raises(InvalidParameterError):
        make_qsa_random_keys(3, key_width=2)
    with pytest.raises(InvalidParameterError):
        make_qsa_moment_curve(3, length=3)
    with pytest.raises(InvalidParameterError):
        make_qsa_moment_curve(3, key_width=9)


def test_registry_entries():
    from models.constructions import get_construction

    assert get_construction("qsa").name == "qsa-random-keys"
    assert get_construction("c7b").make(2).width == 2 + 5
