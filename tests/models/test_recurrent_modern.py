"""Linear attention, RetNet, DSS and Mamba against plain per-instance, per-step loop references.

The references below are written separately from the kernels: NumPy on one instance and one step
at a time, one head at a time, reading only the layer's ``params`` (DSS with genuine complex
numbers).  They check the vectorised step loop and the chunked paths (float64, tight tolerance);
the rest checks state counts, rounding, split runs, namespaces, dtypes, seeds and ``.npz`` files.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from commcomp.architectures import state_numbers as formula_state_numbers
from commcomp.backend import to_numpy
from commcomp.errors import InvalidParameterError
from commcomp.precision import parse_precision
from models.files import load_model, save_model
from models.recurrent.dss import DSSLayer, zoh_diagonal
from models.recurrent.linear_attention import LinearAttentionLayer
from models.recurrent.mamba import MambaLayer
from models.recurrent.retnet import RetNetLayer
from models.registry import build_model

TOL = dict(rtol=1e-11, atol=1e-12)
MODERN = ["linear-attention", "retnet", "dss", "mamba"]
SMALL = {"linear-attention": {"heads": 2}, "retnet": {"heads": 2, "value_factor": 2},
         "dss": {"d_state": 3, "complex_state": 1}, "mamba": {"d_state": 3, "d_conv": 3, "expand": 2}}


# -- plain loop references ---------------------------------------------------------------------
def _residual(x_t, ys):
    """The residual ``x_t`` when the layer keeps its width, else nothing."""
    return x_t if x_t.shape[-1] == ys.shape[-1] else 0.0


def _sigmoid(u):
    return 1.0 / (1.0 + np.exp(-u))


def ref_linear_attention(p, heads, feature_map, x):
    B, T, _ = x.shape
    m = p["W_o"].shape[0]
    dk = m // heads
    phi = (lambda u: np.where(u > 0, u, np.expm1(np.minimum(u, 0.0))) + 1.0) if feature_map == "elu+1" \
        else (lambda u: np.maximum(u, 0.0))
    ys, S_out, z_out = np.zeros((B, T, p["W_o"].shape[1])), np.zeros((B, heads, dk, dk)), \
        np.zeros((B, heads, dk))
    for b in range(B):
        S = [np.zeros((dk, dk)) for _ in range(heads)]
        z = [np.zeros(dk) for _ in range(heads)]
        for t in range(T):
            xt = x[b, t]
            q, k = phi(xt @ p["W_q"] + p["b_q"]), phi(xt @ p["W_k"] + p["b_k"])
            v = xt @ p["W_v"] + p["b_v"]
            outs = []
            for h in range(heads):
                hs = slice(h * dk, (h + 1) * dk)
                S[h] = S[h] + np.outer(k[hs], v[hs])
                z[h] = z[h] + k[hs]
                outs.append((q[hs] @ S[h]) / (q[hs] @ z[h] + 1e-6))
            ys[b, t] = np.concatenate(outs) @ p["W_o"] + p["b_o"] + _residual(xt, ys)
        S_out[b], z_out[b] = np.array(S), np.array(z)
    return {"S": S_out, "z": z_out}, ys


def ref_retnet(p, heads, value_factor, x):
    B, T, _ = x.shape
    m = p["W_o"].shape[1]
    dk, dv = m // heads, value_factor * m // heads
    ys, S_out = np.zeros((B, T, m)), np.zeros((B, heads, dk, dv))
    for b in range(B):
        S = [np.zeros((dk, dv)) for _ in range(heads)]
        for t in range(T):
            xt = x[b, t]
            q, k, v = xt @ p["W_q"], xt @ p["W_k"] / math.sqrt(dk), xt @ p["W_v"]
            gu = xt @ p["W_g"]
            outs = []
            for h in range(heads):
                gamma = 1.0 - 2.0 ** (-5 - h)
                S[h] = gamma * S[h] + np.outer(k[h * dk:(h + 1) * dk], v[h * dv:(h + 1) * dv])
                o = q[h * dk:(h + 1) * dk] @ S[h]
                outs.append(o / math.sqrt(np.mean(o ** 2) + 1e-6))
            ys[b, t] = (gu * _sigmoid(gu) * np.concatenate(outs)) @ p["W_o"] + _residual(xt, ys)
        S_out[b] = np.array(S)
    return {"S": S_out}, ys


def ref_dss(p, complex_state, x):
    B, T, d = x.shape
    A = -np.exp(p["log_a_real"]) + (1j * p["a_imag"] if complex_state else 0.0)
    Bv = p["B_re"] + (1j * p["B_im"] if complex_state else 0.0)
    C = p["C_re"] + (1j * p["C_im"] if complex_state else 0.0)
    dt = np.exp(p["log_dt"])[:, None]
    Abar = np.exp(dt * A)
    Bbar = (Abar - 1.0) / A * Bv
    gelu = lambda u: 0.5 * u * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (u + 0.044715 * u ** 3)))  # noqa: E731
    ys, H = np.zeros((B, T, p["W_mix"].shape[1])), np.zeros((B,) + A.shape, dtype=complex)
    for b in range(B):
        h = np.zeros(A.shape, dtype=complex)
        for t in range(T):
            u = x[b, t]
            h = Abar * h + Bbar * u[:, None]
            y = np.real(np.sum(C * h, axis=1)) + p["D"] * u
            ys[b, t] = gelu(y) @ p["W_mix"] + p["b_mix"] + _residual(u, ys)
        H[b] = h
    state = {"h_re": H.real, "h_im": H.imag} if complex_state else {"h": H.real}
    return state, ys


def ref_mamba(p, d_state, d_conv, dt_rank, x):
    B, T, _ = x.shape
    E = p["D"].shape[0]
    A = -np.exp(p["A_log"])
    silu = lambda u: u * _sigmoid(u)  # noqa: E731
    ys = np.zeros((B, T, p["W_out"].shape[1]))
    conv_out, h_out = np.zeros((B, E, d_conv - 1)), np.zeros((B, E, d_state))
    for b in range(B):
        past = [np.zeros(E) for _ in range(d_conv - 1)]  # oldest first
        h = np.zeros((E, d_state))
        for t in range(T):
            xt = x[b, t]
            xz = xt @ p["W_in"]
            xi, z = xz[:E], xz[E:]
            window = past + [xi]
            conv = p["conv_b"] + sum(p["conv_w"][:, j] * window[j] for j in range(d_conv))
            u = silu(conv)
            dbc = u @ p["W_x"]
            dt = np.logaddexp(0.0, dbc[:dt_rank] @ p["W_dt"] + p["b_dt"])
            Bt, Ct = dbc[dt_rank:dt_rank + d_state], dbc[dt_rank + d_state:]
            for e in range(E):
                h[e] = np.exp(dt[e] * A[e]) * h[e] + dt[e] * u[e] * Bt
            y = (h @ Ct + p["D"] * u) * silu(z)
            ys[b, t] = y @ p["W_out"] + _residual(xt, ys)
            past = window[1:]
        conv_out[b] = np.array(past).T.reshape(E, d_conv - 1)
        h_out[b] = h
    return {"conv": conv_out, "h": h_out}, ys


def reference(layer, x):
    """The loop reference of ``layer`` over ``x`` (B, T, d_in)."""
    p = layer.params
    if isinstance(layer, LinearAttentionLayer):
        return ref_linear_attention(p, layer.heads, layer.feature_map, x)
    if isinstance(layer, RetNetLayer):
        return ref_retnet(p, layer.heads, layer.value_factor, x)
    if isinstance(layer, DSSLayer):
        return ref_dss(p, layer.complex_state, x)
    return ref_mamba(p, layer.d_state, layer.d_conv, layer.dt_rank, x)


LAYER_CASES = [
    ("la-1head", lambda: LinearAttentionLayer.init(5, 4, seed=1, heads=1)),
    ("la-2heads", lambda: LinearAttentionLayer.init(4, 4, seed=2, heads=2)),
    ("la-relu", lambda: LinearAttentionLayer.init(6, 6, seed=3, heads=3, feature_map="relu")),
    ("retnet-1head", lambda: RetNetLayer.init(4, 4, seed=4, heads=1)),
    ("retnet-2heads-vf2", lambda: RetNetLayer.init(4, 4, seed=5, heads=2, value_factor=2)),
    ("retnet-d_in", lambda: RetNetLayer.init(3, 6, seed=6, heads=3)),
    ("dss-real", lambda: DSSLayer.init(4, 4, seed=7, d_state=5)),
    ("dss-complex", lambda: DSSLayer.init(4, 4, seed=8, d_state=5, complex_state=1)),
    ("dss-d_out", lambda: DSSLayer.init(3, 5, seed=9, d_state=2, complex_state=1)),
    ("mamba", lambda: MambaLayer.init(4, 4, seed=10, d_state=3, d_conv=4, expand=2)),
    ("mamba-conv1", lambda: MambaLayer.init(4, 4, seed=11, d_state=2, d_conv=1, expand=1)),
    ("mamba-rank2", lambda: MambaLayer.init(3, 5, seed=12, d_state=4, d_conv=2, dt_rank=2)),
]


def _inputs(layer, B=3, T=9, seed=0):
    return np.random.default_rng(seed).normal(size=(B, T, layer.d_in))


def _close(a, b, **tol):
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), **(tol or TOL))


# -- kernels against the loop references -----------------------------------------------------
@pytest.mark.parametrize("make", [c[1] for c in LAYER_CASES], ids=[c[0] for c in LAYER_CASES])
def test_step_loop_matches_the_plain_loop_reference(make):
    layer = make()
    x = _inputs(layer)
    want_state, want_y = reference(layer, x)
    state, ys = layer.init_state(3), []
    for t in range(x.shape[1]):
        state, y = layer.step(state, x[:, t, :])  # (B, d_out)
        ys.append(y)
    assert list(state) == list(layer.state_shapes())
    for key in want_state:
        _close(state[key], want_state[key])
    _close(np.stack(ys, axis=1), want_y)
    state, y = layer.run_sequence(layer.init_state(3), x)  # chunked where the layer has it
    _close(y, want_y)
    for key in want_state:
        _close(state[key], want_state[key])


@pytest.mark.parametrize("cls", [LinearAttentionLayer, RetNetLayer])
@pytest.mark.parametrize("T,chunk", [(1, 4), (7, 1), (7, 3), (8, 4), (5, 64), (13, 5)])
def test_chunked_path_agrees_with_the_step_loop(cls, T, chunk):
    layer = cls.init(4, 4, seed=T + chunk, heads=2)
    x = _inputs(layer, B=2, T=T, seed=chunk)
    start = {k: np.random.default_rng(1).uniform(0.0, 1.0, size=v.shape)
             for k, v in layer.init_state(2).items()}  # a non-zero carried state
    state_loop, y_loop = start, []
    for t in range(T):
        state_loop, y = layer.step(state_loop, x[:, t, :])
        y_loop.append(y)
    state_chunk, y_chunk = layer.run_chunked(start, x, chunk)
    _close(y_chunk, np.stack(y_loop, axis=1))
    for key in state_loop:
        _close(state_chunk[key], state_loop[key])


def test_zoh_matches_the_integral_it_solves():
    # Bbar = int_0^dt exp(sA) ds * B, checked by Simpson's rule; Abar = exp(dt A) by cmath
    a = np.array([[-0.5 + 3.0j, -2.0 + 0.0j, -1e-3 + 10.0j]])
    dt, b = 0.07, np.array([[1.0 + 0.5j, -2.0j, 0.3 + 0.0j]])
    s = np.linspace(0.0, dt, 2001)
    w = np.ones_like(s)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    integral = (np.exp(s[:, None, None] * a) * w[:, None, None]).sum(axis=0) * (dt / 6000.0) * b
    xp = np
    ar, ai, br, bi = zoh_diagonal(xp, dt, a.real, a.imag, b.real, b.imag)
    np.testing.assert_allclose(ar + 1j * ai, np.exp(dt * a), rtol=1e-13)
    np.testing.assert_allclose(br + 1j * bi, integral, rtol=1e-10)
    ar, _, br, _ = zoh_diagonal(xp, dt, a.real, None, b.real, None)
    np.testing.assert_allclose(br, np.expm1(dt * a.real) / a.real * b.real, rtol=1e-14)


@pytest.mark.parametrize("arch", MODERN)
def test_whole_model_matches_embedding_layer_references_and_readout(arch):
    model = build_model(arch, vocab_size=5, width=4, n_outputs=3, layers=2, seed=3, **SMALL[arch])
    tokens = np.random.default_rng(4).integers(0, 5, size=(3, 6))
    x = model.embedding[tokens]  # (B, T, m)
    want = {}
    for i, layer in enumerate(model.layers):
        st, x = reference(layer, x)
        want.update({f"l{i}.{k}": v for k, v in st.items()})
    state, logits = model.run_with_output(tokens)
    _close(logits, x[:, -1, :] @ model.readout_weight + model.readout_bias)
    assert list(state) == list(want)
    for key in want:
        _close(state[key], want[key])


# -- state counts ---------------------------------------------------------------------------
def _closed_form(arch, m, layers, heads, hyper):
    if arch == "linear-attention":
        return layers * heads * ((m // heads) ** 2 + m // heads)
    if arch == "retnet":
        return layers * heads * (m // heads) * (hyper.get("value_factor", 1) * m // heads)
    if arch == "dss":
        return layers * m * hyper.get("d_state", 64) * (2 if hyper.get("complex_state", 0) else 1)
    e = hyper.get("expand", 2) * m
    return layers * e * (hyper.get("d_state", 16) + hyper.get("d_conv", 4) - 1)


HYPERS = {"linear-attention": [{}], "retnet": [{}, {"value_factor": 2}],
          "dss": [{}, {"d_state": 3}, {"d_state": 5, "complex_state": 1}],
          "mamba": [{}, {"d_state": 2, "d_conv": 1, "expand": 1}, {"d_state": 5, "d_conv": 3, "expand": 3}]}


@pytest.mark.parametrize("arch", MODERN)
def test_measured_state_numbers_equal_the_formula(arch):
    heads_options = (1, 2, 3) if arch in ("linear-attention", "retnet") else (1,)
    for width in (3, 6, 12):
        for layers in (1, 2, 3):
            for heads in heads_options:
                if width % heads:
                    continue
                for hyper in HYPERS[arch]:
                    kw = dict(hyper, **({"heads": heads} if len(heads_options) > 1 else {}))
                    model = build_model(arch, vocab_size=3, width=width, n_outputs=2, layers=layers, **kw)
                    measured = model.state_numbers()
                    arrays = model.init_state(2)
                    assert sum(math.prod(v.shape[1:]) for v in arrays.values()) == measured
                    assert measured == formula_state_numbers(arch, width, layers=layers, **kw), \
                        (arch, width, layers, kw)
                    assert measured == _closed_form(arch, width, layers, heads, hyper)


def test_mamba_carries_exactly_the_conv_buffer_and_the_ssm_state():
    layer = MambaLayer.init(2, 2, seed=0, d_state=3, d_conv=4, expand=2)
    x = _inputs(layer, B=2, T=5)
    state, _ = layer.run_sequence(layer.init_state(2), x)
    xi = (x @ layer.params["W_in"])[:, :, :4]  # (B, T, E): the inner inputs
    _close(state["conv"], np.transpose(xi[:, -3:, :], (0, 2, 1)))  # the last 3, oldest first
    assert state["h"].shape == (2, 4, 3)


# -- precision, splits, namespaces, dtypes, files ------------------------------------------------
@pytest.mark.parametrize("arch", MODERN)
@pytest.mark.parametrize("precision", ["fixed:20:10", "bfloat16"])
def test_rounded_run_is_the_rounded_step_loop_and_splits_bit_for_bit(arch, precision):
    model = build_model(arch, vocab_size=5, width=4, n_outputs=2, layers=2, precision=precision,
                        **SMALL[arch])
    grid = parse_precision(precision)
    tokens = np.random.default_rng(5).integers(0, 5, size=(4, 9))
    full, logits = model.run_with_output(tokens)
    state = model.init_state(4)
    for column in tokens.T:
        state = model.step(state, column)
        assert all(np.array_equal(grid.round(v), v) for v in state.values())
    assert all(np.array_equal(state[k], full[k]) for k in full)
    for t in (1, 4, 8):
        bits = model.state_to_bits(model.run(tokens[:, :t]))
        assert bits.array.shape == (4, model.state_numbers() * grid.bits)
        bob, bob_logits = model.run_with_output(tokens[:, t:], model.bits_to_state(bits))
        assert np.array_equal(bob_logits, logits)
        assert all(np.array_equal(bob[k], full[k]) for k in full)
    reference = model.with_precision(None).run_with_output(tokens)[1]
    assert not np.array_equal(reference, logits)
    np.testing.assert_allclose(reference, logits, atol=0.1)


@pytest.mark.parametrize("arch", MODERN)
def test_kernels_run_under_array_api_strict(arch):
    xps = pytest.importorskip("array_api_strict")
    tokens = np.random.default_rng(6).integers(0, 5, size=(3, 7))
    for precision in (None, "fixed:16:8"):
        model = build_model(arch, vocab_size=5, width=4, n_outputs=2, layers=2, precision=precision,
                            chunk_size=3, **SMALL[arch]) if arch in ("linear-attention", "retnet") \
            else build_model(arch, vocab_size=5, width=4, n_outputs=2, layers=2, precision=precision,
                             **SMALL[arch])
        state, logits = model.run_with_output(tokens)
        strict = model.to_namespace(xps)
        s_state, s_logits = strict.run_with_output(xps.asarray(tokens))
        assert type(s_logits).__module__.startswith("array_api_strict")
        _close(s_logits, logits, rtol=0, atol=1e-13)
        for key in state:
            _close(s_state[key], state[key], rtol=0, atol=1e-13)
    layer = model.layers[0].to_namespace(xps)  # the chunked kernels directly
    if hasattr(layer, "run_chunked"):
        x = xps.asarray(_inputs(layer, B=2, T=5))
        _, y = layer.run_chunked(layer.init_state(2), x, 2)
        layer.chunk_size = 0  # the step loop
        _, y_loop = layer.run_sequence(layer.init_state(2), x)
        _close(y, y_loop)


@pytest.mark.parametrize("arch", MODERN)
def test_float32_compute_stays_float32(arch):
    model = build_model(arch, vocab_size=5, width=4, n_outputs=2, layers=2, **SMALL[arch])
    tokens = np.random.default_rng(7).integers(0, 5, size=(2, 70))  # > 2 chunks of 32
    state64, logits64 = model.run_with_output(tokens)
    for precision in (None, "fixed:16:8"):
        m32 = model.with_dtype("float32").with_precision(precision)
        state, logits = m32.run_with_output(tokens)
        assert logits.dtype == np.float32
        assert all(v.dtype == np.float32 for v in state.values())
        np.testing.assert_allclose(logits, logits64, atol=2e-2)
    layer = m32.layers[0]
    y = layer.step(layer.init_state(2), np.ones((2, 4), dtype=np.float32))[1]
    assert y.dtype == np.float32


@pytest.mark.parametrize("arch", MODERN)
def test_seeded_init_and_npz_round_trip(arch, tmp_path):
    kw = dict(vocab_size=5, width=4, n_outputs=2, layers=2, **SMALL[arch])
    a, b, c = (build_model(arch, seed=seed, **kw) for seed in (1, 1, 2))
    assert all(np.array_equal(a.params[k], b.params[k]) for k in a.params)
    assert any(not np.array_equal(a.params[k], c.params[k]) for k in a.params)
    loaded = load_model(save_model(a, tmp_path / f"{arch}.npz"), precision="fixed:16:8")
    assert [layer.hyper for layer in loaded.layers] == [layer.hyper for layer in a.layers]
    tokens = np.random.default_rng(8).integers(0, 5, size=(2, 5))
    assert np.array_equal(loaded.run_with_output(tokens)[1],
                          a.with_precision("fixed:16:8").run_with_output(tokens)[1])


def test_bad_hyper_parameters_raise():
    with pytest.raises(InvalidParameterError):
        LinearAttentionLayer.init(4, 6, heads=4)
    with pytest.raises(InvalidParameterError):
        LinearAttentionLayer.init(4, 4, feature_map="softmax")
    with pytest.raises(InvalidParameterError):
        RetNetLayer.init(4, 4, heads=3)
    with pytest.raises(InvalidParameterError):
        DSSLayer.init(4, 4, complex_state=2)
    with pytest.raises(InvalidParameterError):
        MambaLayer.init(4, 4, d_conv=0)
