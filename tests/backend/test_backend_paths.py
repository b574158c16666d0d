"""The whole simulate / verify / witness path on device namespaces, equal to NumPy bit for bit.

Each device namespace is run with conversion to NumPy made to fail, as a device array would:
array-api-strict's and torch's ``__array__`` raise for the whole run (CuPy refuses by itself),
so any ``numpy.asarray`` of a model array, message, logit or count anywhere in the path fails
the test. The only transfers left are the explicit ones of :func:`commcomp.backend.to_numpy`,
which count what they move: a verify run may move Bob's answers (what the reductions' NumPy
decoders read) and nothing of the size of a state, a message batch or the logits.

Every result is compared with the NumPy run of the same model: the ``simulate`` JSON (each
message's bits in hex, every logit as a float), the ``verify`` counts (faithful, correct,
distinct messages, largest difference) and the ``witness`` found: bit for bit for everything the
number format rounds, and for the logits too on array-api-strict (``_same`` says why torch's and
CuPy's unrounded float64 logits are compared to 1e-12).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from commcomp import backend as bk
from commcomp.errors import BackendUnavailableError, UnknownNameError
from reductions.simulate import simulate, verify
from reductions.search.witness import find_witness

RECURRENT = ["elman", "lstm", "gru", "linear-attention", "retnet", "dss", "mamba"]
DEVICE_BACKENDS = ["array_api_strict", "torch", "cupy"]
TIMING = {"seconds", "seconds_protocol", "seconds_reference", "seconds_explore", "backend"}


def _refuse(self, *args, **kwargs):
    raise RuntimeError("hidden conversion of a device array to NumPy")


@pytest.fixture(params=DEVICE_BACKENDS)
def device(request, monkeypatch):
    """A device backend name, with implicit conversion to NumPy refused for the test."""
    name = request.param
    try:
        bk.namespace(name)
    except BackendUnavailableError:
        pytest.skip(f"{name} is not installed")
    if name == "array_api_strict":
        monkeypatch.setattr(importlib.import_module("array_api_strict._array_object").Array, "__array__", _refuse)
    elif name == "torch":
        import torch

        monkeypatch.setattr(torch.Tensor, "__array__", _refuse)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # tiny tensors: threads only contend (a shared CI machine)
        request.addfinalizer(lambda: torch.set_num_threads(threads))
    bk.host_transfers.reset()
    return name


def _same(a: dict, b: dict, exact: bool = True) -> None:
    """Equal JSON; ``exact=False`` (float64 reference mode: no rounding, so another library's
    float sums may differ in the last bits, DESIGN §3) compares the floats to 1e-12.

    Everything the format rounds (every message bit, every state, every count, answer and
    generated token) must be equal bit for bit. The logits are the readout's float64 output,
    which no format rounds: another BLAS (torch's, cuBLAS) sums a matmul in another order than
    NumPy's, so on torch and CuPy they are compared to 1e-12 (array-api-strict runs NumPy's own
    kernels, and its logits must be equal bit for bit too)."""
    skip = TIMING if exact else TIMING | {"rounds", "model_output", "protocol_output", "max_abs_difference",
                                          "message", "distinct_messages", "faithful_count"}
    other_blas = b.get("backend") in ("torch", "cupy")
    if other_blas:
        skip = skip | {"model_output", "protocol_output"}
    assert {k: v for k, v in a.items() if k not in skip} == {k: v for k, v in b.items() if k not in skip}
    if not exact or other_blas:
        for key in ("model_output", "protocol_output"):
            if key in a:
                assert np.allclose(a[key]["logits"], b[key]["logits"], rtol=0, atol=1e-12)
                rest = {k: v for k, v in a[key].items() if k != "logits"}
                assert rest == {k: v for k, v in b[key].items() if k != "logits"} or not exact


@pytest.mark.parametrize("arch", RECURRENT)
@pytest.mark.parametrize("precision", ["fixed:8:4", "float32"])
def test_recurrent_simulate_verify_witness(device, arch, precision):
    kw = dict(width=2, seed=3)
    want = simulate("index-lookup", arch, 6, precision, x="101101", y="4", **kw)
    got = simulate("index-lookup", arch, 6, precision, x="101101", y="4", backend=device, **kw)
    assert got["backend"] == device and want["backend"] == "numpy"
    _same(want, got)  # message hex, every logit, faithful, answers
    for method in ("prefix-tree", "plain"):
        bk.host_transfers.reset()
        v = verify("index-lookup", arch, 4, precision, exhaustive=True, method=method, backend=device, **kw)
        calls, elements = bk.host_transfers.reset()
        assert elements <= 2 * v["instances"]  # Bob's answers at most: no state, message or logits came back
        _same(verify("index-lookup", arch, 4, precision, exhaustive=True, method=method, **kw), v)
        assert v["faithful_count"] == v["instances"] and v["distinct_messages"] >= 1
    _same(find_witness("index-lookup", arch, 9, precision, **kw),
          find_witness("index-lookup", arch, 9, precision, backend=device, **kw))


@pytest.mark.parametrize("task,n", [("index-lookup", 4), ("string-equality", 3)])  # two rounds, one round
@pytest.mark.parametrize("precision", ["fixed:10:5", "float32", None])
def test_transformer_split(device, task, n, precision):
    kw = dict(width=4, heads=2, seed=1)
    exact = precision is not None  # None: a model without a precision, float64 sums (not exact)
    if not exact:
        from models.registry import build_model
        from reductions.registry import get_reduction
        from reductions.simulate.setup import answer_classes

        red = get_reduction(task)
        kw = dict(model=build_model("transformer", vocab_size=red.task.vocab_size(red.task_size(8)), width=4,
                                    n_outputs=answer_classes(red, n), heads=2, seed=1, max_len=64))
    prec = precision or "float64"
    _same(simulate(task, "transformer", n, prec, **kw), simulate(task, "transformer", n, prec, backend=device, **kw),
          exact)
    bk.host_transfers.reset()
    v = verify(task, "transformer", n, prec, exhaustive=True, backend=device, **kw)
    _, elements = bk.host_transfers.reset()
    assert elements <= 2 * v["instances"]
    _same(verify(task, "transformer", n, prec, exhaustive=True, **kw), v, exact)
    if exact:
        _same(find_witness(task, "transformer", 8, prec, **kw), find_witness(task, "transformer", 8, prec,
                                                                             backend=device, **kw))


def _key_bytes_bound(levels_sizes, bits: int) -> int:
    """Elements the engine may move per exploration: each level's candidate keys (at most two
    letters per class), packed, and the representatives' keys once more."""
    return (2 * sum(levels_sizes[:-1]) + levels_sizes[-1]) * -(-bits // 8)


@pytest.mark.parametrize("arch", RECURRENT)
def test_reachable_states_recurrent(device, arch):
    """The reachable-states engine on the device: distinct messages per level, the complete witness
    and the exact correctness counts equal to NumPy's, at an n no enumeration reaches, with only
    the packed keys of each level (and Bob's answers) moved to the host."""
    from reductions.search.reachable import reachable_analysis

    kw = dict(width=2, seed=3)
    want = reachable_analysis("index-lookup", arch, 40, "fixed:8:4", **kw)
    bk.host_transfers.reset()
    got = reachable_analysis("index-lookup", arch, 40, "fixed:8:4", backend=device, **kw)
    _, elements = bk.host_transfers.reset()
    assert got["backend"] == device and want["complete"] and want["correct_count"] is not None
    _same(want.pop("witness"), got.pop("witness"))  # the complete search: x, x', y, both answers
    _same(want, got)  # distinct messages per level, faithful/correct/model-correct counts (exact ints)
    sizes, Y = got["distinct_messages_per_level"], got["bob_inputs_tried"]
    assert elements <= _key_bytes_bound(sizes, got["bits_per_message"]) + 3 * sizes[-1] * Y + 64
    v = verify("index-lookup", arch, 40, "fixed:8:4", exhaustive=True, backend=device, **kw)
    assert v["method"] == "reachable-states" and v["correct_count"] == want["correct_count"]
    _same(verify("index-lookup", arch, 40, "fixed:8:4", exhaustive=True, **kw), v)
    w = find_witness("index-lookup", arch, 40, "fixed:8:4", backend=device, **kw)
    assert w["method"] == "reachable-states"
    _same(find_witness("index-lookup", arch, 40, "fixed:8:4", **kw), w)


def test_reachable_states_float_format_and_trajectory(device):
    """An IEEE format (more states, collisions at every level) and ``simulate --trajectory``."""
    from reductions.search.reachable import reachable_analysis

    kw = dict(width=2, seed=1)
    want = reachable_analysis("index-lookup", "gru", 10, "float16", **kw)
    got = reachable_analysis("index-lookup", "gru", 10, "float16", backend=device, **kw)
    assert want["merged_candidates"] > 0
    _same(want.pop("witness"), got.pop("witness"))
    _same(want, got)
    sim = dict(x="1011001", y="3", trajectory=True, **kw)
    got = simulate("index-lookup", "lstm", 7, "float32", backend=device, **sim)
    assert got["trajectory_matches_message"]
    _same(simulate("index-lookup", "lstm", 7, "float32", **sim), got)


@pytest.mark.parametrize("task,n", [("string-equality", 6), ("index-lookup", 4)])  # one round, two rounds
def test_reachable_partial_sums(device, task, n):
    """The 1-layer Transformer's exact partial sums explored on the device, equal to NumPy's."""
    from reductions.search.reachable import reachable_partial_sums

    kw = dict(width=2, seed=0)
    want = reachable_partial_sums(task, "transformer", n, "fixed:6:3", **kw)
    got = reachable_partial_sums(task, "transformer", n, "fixed:6:3", backend=device, **kw)
    assert got["complete"] and got["sums_match_model"] and got["faithful"]
    _same(want, got)
    traj = dict(x="101101"[:n], y="101101"[:n] if task == "string-equality" else "2", trajectory=True, **kw)
    _same(simulate(task, "transformer", n, "fixed:6:3", **traj),
          simulate(task, "transformer", n, "fixed:6:3", backend=device, **traj))


def test_sampled_verify_and_cot_free_tasks(device):
    """Random instances (plain runner) and another reduction (string equality, one message per x)."""
    for task, arch in (("string-equality", "gru"), ("index-lookup", "mamba")):
        kw = dict(width=3, seed=5, instances=300)
        _same(verify(task, arch, 5, "fixed:6:3", **kw), verify(task, arch, 5, "fixed:6:3", backend=device, **kw))


def test_chain_of_thought(device):
    """IsTree with Bob generating the chain of thought on the device (greedy steps fed back there)."""
    kw = dict(width=3, seed=2, cot=True)
    _same(simulate("istree", "gru", 4, "fixed:8:4", **kw), simulate("istree", "gru", 4, "fixed:8:4", backend=device, **kw))
    _same(verify("istree", "lstm", 4, "float32", instances=60, **kw),
          verify("istree", "lstm", 4, "float32", instances=60, backend=device, **kw))


def test_hidden_conversion_is_caught(device):
    """The guard works: a NumPy conversion of a device array raises during the test."""
    xp = bk.namespace(device)
    with pytest.raises((RuntimeError, TypeError, ValueError)):
        np.asarray(xp.ones(3))
    assert bk.to_numpy(xp.ones(3)).tolist() == [1.0, 1.0, 1.0]  # the named, explicit transfer works
    assert bk.host_transfers.reset() == (1, 3)


def test_backend_choice(monkeypatch):
    pytest.importorskip("array_api_strict")
    assert bk.resolve_backend(None) == "numpy"
    monkeypatch.setenv(bk.ENV_VAR, "strict")
    assert bk.resolve_backend(None) == "array_api_strict"
    assert verify("index-lookup", "gru", 3, "fixed:6:3", width=2, exhaustive=True)["backend"] == "array_api_strict"
    assert bk.resolve_backend("numpy") == "numpy"  # an explicit choice wins over the variable
    monkeypatch.setenv(bk.ENV_VAR, "jax-on-a-toaster")
    with pytest.raises(UnknownNameError, match="COMMCOMP_BACKEND"):
        bk.namespace(None)


def test_missing_library(monkeypatch):
    real = importlib.import_module

    def no_cupy(name, *a, **k):
        if name.split(".")[-1] == "cupy":
            raise ImportError("No module named 'cupy'")
        return real(name, *a, **k)

    monkeypatch.setattr(bk.importlib, "import_module", no_cupy)
    with pytest.raises(BackendUnavailableError, match="'cupy' is not available"):
        verify("index-lookup", "gru", 3, "fixed:6:3", width=2, backend="cupy")
    assert "cupy" not in bk.available_namespaces()


def test_backend_given_as_the_module():
    """``backend=`` takes the namespace module itself, as Array API users pass it: the same run as its name."""
    strict = pytest.importorskip("array_api_strict")
    import array_api_compat.numpy as compat_numpy

    assert bk.resolve_backend(np) == bk.resolve_backend(compat_numpy) == "numpy"
    assert bk.resolve_backend(strict) == "array_api_strict"
    by_name = simulate("index-lookup", "gru", 6, "fixed:8:4", x="101101", y="4", width=2, seed=3,
                       backend="array_api_strict")
    by_module = simulate("index-lookup", "gru", 6, "fixed:8:4", x="101101", y="4", width=2, seed=3, backend=strict)
    assert by_module["backend"] == "array_api_strict"
    _same(by_name, by_module)
    with pytest.raises(UnknownNameError, match="'json' is not an array backend"):
        bk.namespace(importlib.import_module("json"))
