"""Transformer kernels against a plain per-instance loop implementation written separately.

The reference below (``ref_*``) computes one instance at a time, one position and one head at a
time, with Python loops and vector dot products, straight from the equations in
``models/transformer/transformer.py``'s docstring; it shares no code with the package.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from commcomp.backend import to_numpy
from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.precision import parse_precision
from models.transformer import MultiheadAttention, Positional, Transformer, sinusoidal_rows
from models.transformer.attention import (last_position_attention, naive_attention,
                                          softmax_attention)

TOL = 1e-10


# ---------------------------------------------------------------- the loop reference
def ref_norm(x, g, b, kind, eps=1e-5):
    if kind == "layer":
        x = x - sum(x) / len(x)
    rms = math.sqrt(sum(v * v for v in x) / len(x) + eps)
    return np.array([x[i] / rms * g[i] + b[i] for i in range(len(x))])


def ref_act(z, kind):
    if kind == "relu":
        return np.array([max(v, 0.0) for v in z])
    return np.array([0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
                     for v in z])


def ref_pos(kind, table, p, d):
    if kind == "sinusoidal":
        return np.array([math.sin(p / 10000 ** (2 * (i // 2) / d)) if i % 2 == 0 else
                         math.cos(p / 10000 ** (2 * (i // 2) / d)) for i in range(d)])
    if kind == "none":
        return np.zeros(d)
    return table[p]


def ref_attend(q, keys, values, scale):
    scores = [scale * float(np.dot(q, k)) for k in keys]
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = sum(weights)
    return sum(w * v for w, v in zip(weights, values)) / total


def ref_block(p, X, *, H, causal, ln, norm, act, residual, scale, positions=None):
    """One layer over one instance ``X`` ``(N, d)``; returns the rows of ``positions`` (default all)."""
    N = len(X)
    h_in = [ref_norm(X[i], p["ln1.g"], p["ln1.b"], norm) if ln == "pre" else X[i] for i in range(N)]
    out = []
    for i in (range(N) if positions is None else positions):
        seen = range(i + 1) if causal else range(N)
        o = p["b_O"].copy()
        for h in range(H):
            q = h_in[i] @ p["W_Q"][h] + p["b_Q"][h]
            keys = [h_in[j] @ p["W_K"][h] + p["b_K"][h] for j in seen]
            vals = [h_in[j] @ p["W_V"][h] + p["b_V"][h] for j in seen]
            o = o + ref_attend(q, keys, vals, scale) @ p["W_O"][h]
        x = X[i] + o if residual else o
        if ln == "post":
            x = ref_norm(x, p["ln1.g"], p["ln1.b"], norm)
        if "mlp.W1" in p:
            hh = ref_norm(x, p["ln2.g"], p["ln2.b"], norm) if ln == "pre" else x
            m = ref_act(hh @ p["mlp.W1"] + p["mlp.b1"], act) @ p["mlp.W2"] + p["mlp.b2"]
            x = x + m if residual else m
            if ln == "post":
                x = ref_norm(x, p["ln2.g"], p["ln2.b"], norm)
        out.append(x)
    return np.array(out)


def ref_transformer(model, tokens, output_position=None):
    """Logits of every instance: ``(B, N, C)``, or ``(B, C)`` at ``output_position``."""
    P, cfg = model.params, model._kwargs()
    ln = cfg["layer_norm"] or None
    out = []
    for row in np.asarray(tokens):
        N = len(row)
        X = np.array([P["tok_emb"][t] + ref_pos(cfg["positional"], P.get("pos_emb"), i, model.d_model)
                      for i, t in enumerate(row)])
        for layer in range(model.n_layers):
            p = {k.split(".", 1)[1]: v for k, v in P.items() if k.startswith(f"l{layer}.")}
            last = layer == model.n_layers - 1 and output_position is not None
            X = ref_block(p, X, H=model.n_heads, causal=cfg["causal"], ln=ln, norm=cfg["norm"],
                          act=cfg["activation"], residual=cfg["residual"], scale=cfg["attn_scale"],
                          positions=[output_position % N] if last else None)
        if ln == "pre":
            X = np.array([ref_norm(x, P["ln_f.g"], P["ln_f.b"], cfg["norm"]) for x in X])
        logits = np.array([x @ P["readout.W"] + P["readout.b"] for x in X])
        out.append(logits[0] if output_position is not None else logits)
    return np.array(out)


def with_random_biases(model, seed=0):
    """Norm gains, norm biases and attention biases are 1 / 0 at init: perturb them all."""
    rng = np.random.default_rng(seed)
    new = {k: v + rng.normal(scale=0.3, size=v.shape) for k, v in model.params.items()
           if k.split(".")[-1] in ("b_Q", "b_K", "b_V", "b_O", "g", "b")}
    return model.with_params(new)


CONFIGS = [
    dict(positional="learned", causal=True, layer_norm=False),
    dict(positional="learned", causal=False, layer_norm="pre", activation="gelu"),
    dict(positional="sinusoidal", causal=True, layer_norm="post"),
    dict(positional="sinusoidal", causal=False, layer_norm="pre", norm="rms"),
    dict(positional="none", causal=True, layer_norm="pre", residual=False),
    dict(positional="learned", causal=False, layer_norm=False, attn_scale=1.0),
]


def small_model(n_layers, d_mlp=6, n_heads=2, seed=3, **cfg):
    model = Transformer.random(7, 8, n_layers, n_heads, 3, 5, d_mlp, 4, max_len=12, seed=seed, **cfg)
    return with_random_biases(model, seed)


# ---------------------------------------------------------------- forward vs the reference
@pytest.mark.parametrize("cfg", CONFIGS)
@pytest.mark.parametrize("n_layers", [1, 2])
def test_forward_all_and_forward_match_the_loop_reference(cfg, n_layers):
    model = small_model(n_layers, d_mlp=0 if cfg.get("residual") is False else 6, **cfg)
    tokens = np.random.default_rng(1).integers(0, 7, size=(3, 9))
    ref = ref_transformer(model, tokens)
    np.testing.assert_allclose(model.forward_all(tokens), ref, rtol=0, atol=TOL)
    np.testing.assert_allclose(model.forward_all(tokens, max_block_elements=7), ref, rtol=0, atol=TOL)
    for o in (8, 4, 0, -2):
        np.testing.assert_allclose(model.forward(tokens, output_position=o),
                                   ref_transformer(model, tokens, o), rtol=0, atol=TOL)


def test_three_layers_three_heads():
    model = small_model(3, n_heads=3, positional="learned", layer_norm="pre")
    tokens = np.random.default_rng(2).integers(0, 7, size=(2, 12))
    np.testing.assert_allclose(model.forward(tokens), ref_transformer(model, tokens, -1), atol=TOL)


# ---------------------------------------------------------------- kernels
def loop_attention(Q, K, V, scale, causal):
    B, H, Nq, _ = Q.shape
    out = np.zeros((B, H, Nq, V.shape[-1]))
    for b, h, i in itertools.product(range(B), range(H), range(Nq)):
        seen = range(i + 1) if causal else range(K.shape[2])
        out[b, h, i] = ref_attend(Q[b, h, i], [K[b, h, j] for j in seen], [V[b, h, j] for j in seen],
                                  scale)
    return out


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("block", [1, 13, 10 ** 9])
def test_blocked_attention_matches_the_loop(causal, block):
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(2, 3, 11, 4)), rng.normal(size=(2, 3, 11, 4)), rng.normal(size=(2, 3, 11, 5))
    ref = loop_attention(Q, K, V, 0.7, causal)
    got = softmax_attention(Q, K, V, scale=0.7, causal=causal, max_block_elements=block)
    np.testing.assert_allclose(got, ref, rtol=0, atol=TOL)
    np.testing.assert_allclose(naive_attention(Q, K, V, scale=0.7, causal=causal), ref, atol=TOL)


def test_last_position_attention_matches_the_loop_with_masks():
    rng = np.random.default_rng(1)
    q, K, V = rng.normal(size=(3, 2, 4)), rng.normal(size=(3, 2, 9, 4)), rng.normal(size=(3, 2, 9, 2))
    mask = rng.random((3, 9)) < 0.6
    mask[:, 0] = True
    got = last_position_attention(q, K, V, scale=0.5, mask=mask)
    for b, h in itertools.product(range(3), range(2)):
        js = np.flatnonzero(mask[b])
        ref = ref_attend(q[b, h], K[b, h, js], V[b, h, js], 0.5)
        np.testing.assert_allclose(got[b, h], ref, rtol=0, atol=TOL)


def test_multihead_attention_matches_the_loop_for_cross_attention():
    rng = np.random.default_rng(2)
    mha = MultiheadAttention.random(6, 3, d_k=4, d_v=2, d_kv_in=5, seed=0)
    mha = MultiheadAttention({k: v + rng.normal(scale=0.2, size=v.shape) for k, v in mha.params.items()})
    xq, xkv = rng.normal(size=(2, 4, 6)), rng.normal(size=(2, 7, 5))
    p = mha.params
    for b, i in itertools.product(range(2), range(4)):
        ref = p["b_O"].copy()
        for h in range(3):
            keys = [xkv[b, j] @ p["W_K"][h] + p["b_K"][h] for j in range(7)]
            vals = [xkv[b, j] @ p["W_V"][h] + p["b_V"][h] for j in range(7)]
            ref = ref + ref_attend(xq[b, i] @ p["W_Q"][h] + p["b_Q"][h], keys, vals, 0.5) @ p["W_O"][h]
        np.testing.assert_allclose(mha(xq, xkv)[b, i], ref, rtol=0, atol=TOL)


def test_sinusoidal_rows_follow_the_formula_and_rows_are_position_local():
    rows = sinusoidal_rows(np.arange(50), 6)
    ref = np.array([ref_pos("sinusoidal", None, p, 6) for p in range(50)])
    np.testing.assert_allclose(rows, ref, rtol=0, atol=1e-12)
    assert np.array_equal(sinusoidal_rows(np.array([37]), 6)[0], rows[37])  # bit for bit
    with pytest.raises(InvalidParameterError):
        Positional("fixed", 3)


# ---------------------------------------------------------------- settable weights
def test_a_hand_built_index_lookup_model_from_zeros_is_exact_on_every_input():
    """theorems.md C2 in miniature: one-hot positions, fixed table, every weight set by hand."""
    N, beta = 5, 30.0                 # N data bits at positions 0..N-1, the query at position N
    d = 2 + N + N + 1                 # [onehot(bit) ; POS ; QRY ; flag]
    table = np.zeros((N + 1, d))
    table[np.arange(N), 2 + np.arange(N)] = 1.0      # POS block of the data positions
    tok = np.zeros((2 + N, d))                       # tokens 0/1: bits; 2 + p: "query p"
    tok[0, 0] = tok[1, 1] = 1.0
    tok[2 + np.arange(N), 2 + N + np.arange(N)] = 1.0
    tok[2:, -1] = 1.0
    W_Q, W_K, W_V = np.zeros((1, d, N)), np.zeros((1, d, N)), np.zeros((1, d, 2))
    W_Q[0, 2 + N + np.arange(N), np.arange(N)] = beta
    W_K[0, 2 + np.arange(N), np.arange(N)] = 1.0
    W_V[0, [0, 1], [0, 1]] = 1.0
    W_O = np.zeros((1, 2, d))
    W_O[0, [0, 1], [0, 1]] = 1.0
    readout = np.zeros((d, 2))
    readout[[0, 1], [0, 1]] = 1.0
    model = Transformer(2 + N, d, 1, 1, N, 2, 0, 2, positional=table, causal=False, attn_scale=1.0,
                        params={"tok_emb": tok, "l0.W_Q": W_Q, "l0.W_K": W_K, "l0.W_V": W_V,
                                "l0.W_O": W_O, "readout.W": readout})
    bits = np.array(list(itertools.product([0, 1], repeat=N)))
    x = np.repeat(bits, N, axis=0)
    i = np.tile(np.arange(N), len(bits))
    tokens = np.concatenate([x, (2 + i)[:, None]], axis=1)                     # (B, N + 1)
    answer = model.forward(tokens).argmax(axis=1)
    assert np.array_equal(answer, x[np.arange(len(x)), i])
    assert model.params["pos_emb"] is not table and model.positional_kind == "fixed"
    assert model.query_depends_on_input(N)            # the query is Bob's index


# ---------------------------------------------------------------- weights, files, errors
@pytest.mark.parametrize("cfg", CONFIGS[:4])
def test_save_load_round_trip_is_bit_exact(tmp_path, cfg):
    from models.files import load_model, save_model

    model = small_model(2, **cfg).with_precision("fixed:16:8")
    tokens = np.random.default_rng(3).integers(0, 7, size=(4, 10))
    for loaded in (Transformer.load(model.save(tmp_path / "t.npz")),
                   load_model(save_model(model, tmp_path / "u.npz"))):
        assert loaded.precision.name == "fixed:16:8" and loaded.config == model.config
        assert set(loaded.params) == set(model.params)
        assert all(np.array_equal(loaded.params[k], model.params[k]) for k in model.params)
        assert np.array_equal(loaded.forward(tokens), model.forward(tokens))
        assert np.array_equal(loaded.forward_all(tokens), model.forward_all(tokens))
    assert Transformer.load(tmp_path / "t.npz", precision=None).precision is None


def test_random_initialisation_is_seeded_and_registry_builds_it():
    from models.registry import build_model

    a = Transformer.random(5, 4, 2, 2, 2, 2, 8, 3, seed=7)
    b = Transformer.random(5, 4, 2, 2, 2, 2, 8, 3, seed=7)
    c = Transformer.random(5, 4, 2, 2, 2, 2, 8, 3, seed=8)
    assert all(np.array_equal(a.params[k], b.params[k]) for k in a.params)
    assert not np.array_equal(a.params["l1.W_Q"], c.params["l1.W_Q"])
    m = build_model("transformer", vocab_size=5, width=4, n_outputs=3, layers=2, heads=2, seed=1,
                    positional="sinusoidal")
    assert (m.n_layers, m.n_heads, m.d_k, m.d_mlp) == (2, 2, 4, 16)
    assert m.forward(np.zeros((1, 3), dtype=int)).shape == (1, 3)


def test_errors_are_specific():
    model = small_model(1)
    with pytest.raises(InvalidParameterError):
        Transformer(3, 2, 1, 1, 1, 1, 0, 1, params={"l0.W_X": np.zeros(1)})
    with pytest.raises(InvalidParameterError):
        Transformer(3, 2, 1, 1, 1, 1, 0, 1, params={"tok_emb": np.zeros((3, 3))})
    with pytest.raises(InvalidParameterError):
        Transformer(3, 2, 1, 1, 1, 1, 0, 1, layer_norm="middle")
    with pytest.raises(InvalidParameterError):
        model.forward(np.array([[0, 7]]))                       # token out of range
    with pytest.raises(InvalidParameterError):
        model.forward(np.zeros((1, 13), dtype=int))             # longer than the table
    with pytest.raises(InvalidParameterError):
        model.forward(np.zeros((1, 3), dtype=int), output_position=3)
    with pytest.raises(InvalidParameterError):
        model.forward(np.zeros((2, 3)))                         # floats are not tokens
    with pytest.raises(UnsupportedSplitError):
        small_model(2).partial(np.zeros((1, 3), dtype=int), [0])


def test_precision_rounds_every_output_onto_the_grid():
    p = parse_precision("fixed:8:4")
    model = small_model(2, layer_norm="pre").with_precision(p)
    tokens = np.random.default_rng(4).integers(0, 7, size=(5, 9))
    for out in (model.forward(tokens), model.forward_all(tokens)):
        assert np.array_equal(out, p.round(out))
    ref = small_model(2, layer_norm="pre").forward(tokens)
    assert np.abs(model.forward(tokens) - ref).max() < 2.0    # coarse, but the same model


# ---------------------------------------------------------------- array-api-strict
def test_every_kernel_runs_under_array_api_strict():
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(2, 2, 6, 3)), rng.normal(size=(2, 2, 6, 3)), rng.normal(size=(2, 2, 6, 4))
    S = [xps.asarray(a) for a in (Q, K, V)]
    for causal in (True, False):
        got = to_numpy(softmax_attention(*S, scale=0.6, causal=causal, max_block_elements=9))
        np.testing.assert_allclose(got, softmax_attention(Q, K, V, scale=0.6, causal=causal), atol=1e-14)
    got = to_numpy(last_position_attention(S[0][:, :, -1, :], S[1], S[2], scale=0.6))
    np.testing.assert_allclose(got, last_position_attention(Q[:, :, -1], K, V, scale=0.6), atol=1e-14)
    mha = MultiheadAttention.random(4, 2, seed=1)
    x = rng.normal(size=(2, 5, 4))
    np.testing.assert_allclose(to_numpy(mha.to_namespace(xps)(xps.asarray(x), causal=True)),
                               mha(x, causal=True), atol=1e-14)
    tokens = rng.integers(0, 7, size=(3, 8))
    for cfg in CONFIGS[:4]:
        for precision in (None, "fixed:12:6", "bfloat16"):
            model = small_model(2, **cfg).with_precision(precision)
            strict = model.to_namespace(xps)
            st = xps.asarray(tokens)
            np.testing.assert_allclose(to_numpy(strict.forward_all(st)), model.forward_all(tokens),
                                       atol=1e-12)
            np.testing.assert_allclose(to_numpy(strict.forward(st)), model.forward(tokens), atol=1e-12)
