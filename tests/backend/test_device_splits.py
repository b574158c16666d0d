"""The 1-layer Transformer, hybrid and qSA row splits on device inputs: nothing but x and y goes up.

``verify``, ``simulate`` and ``witness`` with a Transformer or hybrid moved to a device namespace
encode on the device (the reduction's one Array API encoder), take each party's columns there and
scatter them back into a ``(B, N)`` input there (a gather: the Array API has no integer-array
assignment). Each test runs with conversion to NumPy refused (the ``device`` fixture), spies on
every host array of instance size handed to the namespace's ``asarray``, and requires the run to
equal the NumPy run of the same model.
"""

from __future__ import annotations

import numpy as np
import pytest

from commcomp import backend as bk
from commcomp.problems import get_problem
from reductions.base import host_encode_fallbacks
from reductions.registry import get_reduction, list_reductions
from reductions.simulate import simulate, verify
from reductions.simulate.running import scatter_columns, take_columns
from reductions.search.witness import find_witness

from test_backend_paths import _same, device  # noqa: F401  (the fixture: strict / torch / cupy, conversion refused)

# every registered reduction, at a size with a few dozen instances: two rounds (Bob's query: index
# lookup, MQAR, Match2...), one round (a public or fixed read token: the string tasks, Dyck, IsTree),
# many read positions (multi-index lookup), features beside the tokens (nearest neighbour)
# (qSA's "transformer" is the attention-row unit reading float rows: its own tests below)
TRANSFORMER_CASES = [(r.task_name, r.problem, 3) for r in list_reductions() if r.task_name != "qsa"]

def _bob_entries(red, n: int) -> int:
    return int(np.prod(get_problem(red.problem).bob_inputs(n).shape[1:]))


def _spy_batch_uploads(monkeypatch, xp, rows: int) -> list:
    """Record the shape of every host array with ``rows`` rows (one per instance: tokens, a
    scattered input, a query...) given to ``xp.asarray``; weights and position constants do not
    have the batch's rows here."""
    seen, asarray = [], xp.asarray

    def spy(obj, *args, **kwargs):
        if isinstance(obj, (np.ndarray, list, tuple)) and np.ndim(obj) >= 1 and len(obj) == rows:
            seen.append(np.shape(obj))
        return asarray(obj, *args, **kwargs)

    monkeypatch.setattr(xp, "asarray", spy)
    return seen


def _check_uploads(monkeypatch, device, run, instances: int, per_instance: int):  # noqa: F811
    """Run ``run()`` on ``device`` and require the per-instance uploads to be x and y once each."""
    xp = bk.namespace(device)
    seen = _spy_batch_uploads(monkeypatch, xp, instances) if instances > 1 else None
    fallbacks = sum(host_encode_fallbacks.values())
    bk.host_uploads.reset()
    out = run()
    calls, elements = bk.host_uploads.reset()
    assert (calls, elements) == (2, instances * per_instance)  # x and y, once: the problem bits only
    if seen is not None:  # no other array of the batch's rows went up (tokens, scattered inputs, queries)
        assert len(seen) == 2, seen
    assert sum(host_encode_fallbacks.values()) == fallbacks  # the tokens were written on the device
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("task,problem,n", TRANSFORMER_CASES)
def test_transformer_split_uploads_only_the_problem_bits(device, monkeypatch, task, problem, n):  # noqa: F811
    kw = dict(width=4, heads=2, seed=1, problem=problem)
    red = get_reduction(task, problem=problem)
    want = verify(task, "transformer", n, "fixed:10:5", exhaustive=True, **kw)
    got = _check_uploads(monkeypatch, device,
                         lambda: verify(task, "transformer", n, "fixed:10:5", exhaustive=True, backend=device, **kw),
                         want["instances"], n + _bob_entries(red, n))
    _same(want, got)
    assert got["faithful_count"] == got["instances"]


def test_transformer_simulate_and_witness_on_device_tokens(device, monkeypatch):  # noqa: F811
    kw = dict(width=4, heads=2, seed=1)
    one = _check_uploads(monkeypatch, device,
                         lambda: simulate("index-lookup", "transformer", 6, "fixed:10:5", x="101101", y="4",
                                          backend=device, **kw), 1, 6 + 1)
    _same(simulate("index-lookup", "transformer", 6, "fixed:10:5", x="101101", y="4", **kw), one)
    _same(find_witness("string-equality", "transformer", 8, "fixed:6:3", **kw),
          find_witness("string-equality", "transformer", 8, "fixed:6:3", backend=device, **kw))


@pytest.mark.parametrize("task,n", [("string-equality", 3), ("index-lookup", 4)])
def test_hybrid_split_on_device_tokens(device, monkeypatch, task, n):  # noqa: F811
    """The three-message hybrid protocol (state, query, partial sums) on the device, equal to NumPy,
    with only x and y uploaded and only Bob's answers brought back."""
    kw = dict(width=2, heads=1, seed=2)
    red = get_reduction(task)
    want = verify(task, "hybrid", n, "fixed:8:4", exhaustive=True, **kw)
    bk.host_transfers.reset()
    got = _check_uploads(monkeypatch, device,
                         lambda: verify(task, "hybrid", n, "fixed:8:4", exhaustive=True, backend=device, **kw),
                         want["instances"], n + _bob_entries(red, n))
    _, moved = bk.host_transfers.reset()
    assert moved <= 2 * got["instances"]  # Bob's answers at most: no state, query, partial or logit came back
    _same(want, got)
    assert got["faithful_count"] == got["instances"]
    x, y = ("101", "110") if task == "string-equality" else ("1011", "2")
    _same(simulate(task, "hybrid", n, "fixed:8:4", x=x, y=y, **kw),
          simulate(task, "hybrid", n, "fixed:8:4", x=x, y=y, backend=device, **kw))


@pytest.mark.parametrize("weights", ["random", "construction"])
@pytest.mark.parametrize("n", [2, 3])
def test_qsa_attention_row_split_on_device_features(device, monkeypatch, n, weights):  # noqa: F811
    """qSA's attention-row unit (models.constructions.qsa_unit: ``--weights random``'s random unit and
    the C7a construction) on the device: features written there by the encoder, Alice's q, k, v
    encoded there, Bob's attention there; equal to the NumPy run at a fixed-point format and at
    float32, with only x and y uploaded and only Bob's (B, K, d') answers brought back."""
    kw = dict(width=4, heads=2, seed=1, weights="random") if weights == "random" else dict(weights=weights)
    red = get_reduction("qsa")
    per_answer = red.output_positions(n).size * 2  # K read rows x d' = 2 numbers
    for precision in ("fixed:8:4", "float32"):
        want = verify("qsa", "transformer", n, precision, exhaustive=True, **kw)
        bk.host_transfers.reset()
        got = _check_uploads(monkeypatch, device,
                             lambda: verify("qsa", "transformer", n, precision, exhaustive=True, backend=device, **kw),
                             want["instances"], n + _bob_entries(red, n))
        calls, moved = bk.host_transfers.reset()
        assert 0 < moved <= 2 * got["instances"] * per_answer  # Bob's answers (protocol and reference) at most
        assert got["backend"] == device and got["split_kind"] == "attention-row"
        _same(want, got)
        assert got["faithful_count"] == got["instances"] == 4 ** n
    x, y = "10" + "1" * (n - 2), "01" + "0" * (n - 2)
    one = _check_uploads(monkeypatch, device,
                         lambda: simulate("qsa", "transformer", n, "fixed:8:4", x=x, y=y, backend=device, **kw), 1, 2 * n)
    _same(simulate("qsa", "transformer", n, "fixed:8:4", x=x, y=y, **kw), one)
    assert one["rounds"][0]["numbers"] and one["faithful"]
    _same(find_witness("qsa", "transformer", n, "float32", **kw),
          find_witness("qsa", "transformer", n, "float32", backend=device, **kw))


def test_qsa_units_on_device_equal_numpy(device):  # noqa: F811
    """The units' own methods on the device against NumPy: both constructions (C7a with the
    least-squares certificate, C7b on the moment curve) and the random unit, every row and a subset.
    Bit for bit on array-api-strict (NumPy's kernels); on torch, whose solve, exp and matmul may
    round the last float64 bit otherwise, within one step of the format's grid."""
    from models.constructions.qsa import QSARandomUnit, make_qsa_moment_curve, make_qsa_random_keys

    xp = bk.namespace(device)
    units = [make_qsa_random_keys(2, "fixed:10:5", key_width=3, length=7, seed=2).model,
             make_qsa_moment_curve(2, "fixed:12:8").model, QSARandomUnit(2, 2, width=3, heads=2, precision="fixed:8:4")]
    for unit in units:
        feats = _qsa_rows(unit, np.random.default_rng(3))
        moved = unit.to_namespace(xp)
        assert moved.xp is xp and "xp=" in repr(moved) and moved.precision is unit.precision
        on_device = bk.to_device(xp, feats)
        step = 2.0 ** -unit.precision.fraction_bits
        pairs = list(zip(unit.row_qkv(feats), moved.row_qkv(on_device)))
        pairs += [(unit.output_rows(feats, [unit.length - 1, 0]), moved.output_rows(on_device, [unit.length - 1, 0])),
                  (unit.forward_all(feats), moved.forward_all(on_device)),
                  (unit.forward_all(feats, [1]), moved.forward_all(on_device, [1]))]
        for want, got in pairs:
            assert not bk.is_numpy(got)
            got = bk.to_numpy(got)
            if device == "array_api_strict":
                assert np.array_equal(want, got)
            else:
                assert want.shape == got.shape and np.max(np.abs(want - got)) <= step


def test_a_model_that_cannot_move_refuses_a_device_backend_in_one_line(device):  # noqa: F811
    """A ready model object without ``to_namespace`` (here a qSA unit behind a wrapper that hides it)
    is refused with the specific error before any work; the same object runs on NumPy."""
    from commcomp.errors import InvalidParameterError
    from models.constructions.qsa import QSARandomUnit
    from reductions.simulate.setup import prepare

    class NumpyOnly:
        def __init__(self, unit):
            self._unit = unit

        def __getattr__(self, name):
            if name == "to_namespace":
                raise AttributeError(name)
            return getattr(self._unit, name)

    model = NumpyOnly(QSARandomUnit(2, 2, width=3, precision="fixed:8:4"))
    assert prepare("qsa", n=2, model=model).split.kind == "attention-row"
    with pytest.raises(InvalidParameterError, match="runs on numpy only"):
        prepare("qsa", n=2, model=model, backend=device)


def _qsa_rows(unit, rng):
    """Random valid qSA rows ``(4, N, d' + q + 1)`` for ``unit`` (any N)."""
    N, q = unit.length, unit.q
    z = rng.uniform(-0.5, 0.5, size=(4, N, unit.dim))
    ptr = np.sort(np.array([[rng.choice(N, q, replace=False) for _ in range(N)] for _ in range(4)]), axis=-1)
    return np.concatenate([z, ptr.astype(float), np.broadcast_to(np.arange(N)[None, :, None], (4, N, 1))], axis=2)


@pytest.mark.parametrize("seed", range(4))
def test_scatter_columns_inverts_take_columns_on_every_namespace(device, seed):  # noqa: F811
    """``scatter_columns`` against a plain loop, on NumPy and on the device (a gather there)."""
    rng = np.random.default_rng(seed)
    B, N = 5, 9
    columns = np.sort(rng.choice(N, size=int(rng.integers(0, N + 1)), replace=False))
    tokens = rng.integers(1, 50, size=(B, columns.size))
    want = np.zeros((B, N), dtype=np.int64)
    for b in range(B):  # the plain loop
        for i, c in enumerate(columns):
            want[b, c] = tokens[b, i]
    assert np.array_equal(scatter_columns(tokens, columns, N), want)
    xp = bk.namespace(device)
    on_device = xp.asarray(tokens)
    full = scatter_columns(on_device, columns, N)
    assert not bk.is_numpy(full) and np.array_equal(bk.to_numpy(full), want)
    assert np.array_equal(bk.to_numpy(take_columns(full, columns)), tokens)
