"""The first layer from per-token and per-position tables (models.transformer.factored).

Checked against the direct path (embed every position, project every row): the split of the
rounded embedding is exact bit for bit when it is claimed and refused when a column is off the
grid; keys and values from the tables agree with the direct ones to within one grid step (the
projection is summed in another order); the partial sums of any partition still reproduce
``forward()`` bit for bit on the table path; and the shared first-layer attention pattern gives
the same numbers as the per-instance kernel and the same bits whatever else is in the batch.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.transformer import Transformer, softmax_attention, sum_partials
from models.transformer.attention import shared_softmax_attention
from models.transformer.factored import (embedding_factors, first_layer_heads, shared_pattern,
                                         token_independent)

V, D, N = 5, 8, 12


def on_grid_model(precision="fixed:12:6", seed=0, layers=1, tok_cols=(0, 1, 2, 3, 4), **kw):
    """Token table on the grid in ``tok_cols``, positions on the grid in the other columns and in
    column 4 (shared: sums stay on the grid), random projections."""
    rng = np.random.default_rng(seed)
    tok = np.zeros((V, D))
    tok[:, list(tok_cols)] = rng.integers(-8, 9, size=(V, len(tok_cols))) / 8
    pos = rng.integers(-8, 9, size=(N, D)) / 8
    pos[:, [c for c in tok_cols if c != 4]] = 0
    return Transformer.random(V, D, layers, 2, 3, 4, 8, 3, positional=pos, seed=seed,
                              precision=precision, params={"tok_emb": tok}, **kw)


def all_pairs(model, n):
    tokens = np.repeat(np.arange(V)[:, None], n, axis=1)  # every token at every position
    return tokens, model.embed(tokens)


@pytest.mark.parametrize("precision", ["fixed:12:6", "fixed:8:4", "float16", "float32", None])
def test_factors_reproduce_the_rounded_embedding_bit_for_bit(precision):
    model = on_grid_model(precision)
    f = embedding_factors(model, N)
    assert f is not None
    tokens, direct = all_pairs(model, N)
    assert np.array_equal(f.token[tokens] + f.position[None], direct)


def test_off_grid_columns_are_refused_and_the_direct_path_runs():
    model = Transformer.random(V, D, 1, 2, 3, 4, 8, 3, max_len=N, seed=0, precision="fixed:8:4")
    assert embedding_factors(model, N) is None                      # N(0, 1) tables, both nonzero
    assert first_layer_heads(model, np.zeros((2, N), dtype=np.int64), "K") is None
    pre = on_grid_model(layer_norm="pre")
    assert embedding_factors(pre, N) is None                         # a pre-norm mixes the columns


def test_saturating_sums_are_refused():
    model = on_grid_model("fixed:6:2")                               # range [-8, 7.75]
    tok = model.params["tok_emb"].copy()
    tok[:, 4] = 7.0
    pos = model.params["pos_emb"].copy()
    pos[:, 4] = 1.0                                                  # 7 + 1 saturates
    assert embedding_factors(model.with_params({"tok_emb": tok, "pos_emb": pos}), N) is None


@pytest.mark.parametrize("precision", ["fixed:12:6", "float32"])
def test_table_keys_and_values_match_the_direct_projection(precision):
    model = on_grid_model(precision)
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, V, size=(7, N))
    h = model.blocks[0].attn_input(model.embed(tokens))
    for name in ("Q", "K", "V"):
        direct = model.blocks[0].heads(h, name)                      # (B, H, N, d_h)
        table = first_layer_heads(model, tokens, name)
        assert table.shape == direct.shape
        step = 2.0 ** -6 if precision.startswith("fixed") else 1e-6 * np.abs(direct).max()
        assert np.max(np.abs(table - direct)) <= step
        assert np.mean(table == direct) > 0.9


@pytest.mark.parametrize("precision", ["fixed:8:4", "fixed:12:6", "float16", "float32"])
def test_partition_sums_stay_exact_on_the_table_path(precision):
    model = on_grid_model(precision, seed=3)
    assert embedding_factors(model, N) is not None
    rng = np.random.default_rng(2)
    tokens = rng.integers(0, V, size=(64, N))
    labels = rng.integers(0, 3, size=(64, N))
    o = N - 1
    q = model.query(tokens[:, o], o)
    parts = [model.partial(tokens, labels == k, query=q) for k in range(3)]
    assert np.array_equal(model.finish(sum_partials(parts), tokens[:, o]), model.forward(tokens))


def position_only_qk_model(precision="fixed:12:6", layers=2):
    """Q and K read only the positional columns 5..7: the first layer's pattern is shared."""
    model = on_grid_model(precision, layers=layers, tok_cols=(0, 1, 2, 3, 4))
    params = {}
    for name in ("W_Q", "W_K"):
        w = model.params[f"l0.{name}"].copy()
        w[:, :5, :] = 0.0
        params[f"l0.{name}"] = w
    return model.with_params(params)


def test_shared_pattern_is_detected_from_the_weights():
    shared = position_only_qk_model()
    assert shared_pattern(shared, N) and token_independent(shared, N, "K")
    assert not token_independent(shared, N, "V")
    assert not shared_pattern(on_grid_model(layers=2), N)


@pytest.mark.parametrize("precision", ["fixed:12:6", "float32", None])
def test_shared_pattern_forward_matches_the_per_instance_kernel(precision):
    model = position_only_qk_model(precision)
    rng = np.random.default_rng(4)
    tokens = rng.integers(0, V, size=(9, N))
    x = model.embed(tokens)
    blk = model.blocks[0]
    h = blk.attn_input(x)
    Q, K, Vv = blk.heads(h, "Q"), blk.heads(h, "K"), blk.heads(h, "V")
    per_instance = softmax_attention(Q, K, Vv, scale=blk.scale, causal=True)
    shared = shared_softmax_attention(*model._shared_qk(tokens), Vv, scale=blk.scale, causal=True,
                                      max_block_elements=40)
    tol = 2.0 ** -5 if precision and precision.startswith("fixed") else 1e-6
    assert np.max(np.abs(shared - per_instance)) <= tol
    # the whole model: every position (forward_all) and the last one (forward) agree
    assert np.allclose(model.forward_all(tokens)[:, -1], model.forward(tokens), rtol=0, atol=tol)


def test_shared_pattern_gives_the_same_bits_whatever_the_batch():
    model = position_only_qk_model("fixed:12:6")
    rng = np.random.default_rng(5)
    tokens = rng.integers(0, V, size=(16, N))
    together = model.forward(tokens)
    alone = np.concatenate([model.forward(tokens[i:i + 1]) for i in range(16)])
    assert np.array_equal(together, alone)


@pytest.mark.parametrize("causal", [True, False])
def test_shared_softmax_attention_against_repeated_queries(causal):
    rng = np.random.default_rng(6)
    Q, K = rng.normal(size=(1, 3, 11, 4)), rng.normal(size=(1, 3, 11, 4))
    Vv = rng.normal(size=(5, 3, 11, 2))
    ref = softmax_attention(np.repeat(Q, 5, 0), np.repeat(K, 5, 0), Vv, scale=0.7, causal=causal)
    for block in (1, 7, 33, 10 ** 6):
        got = shared_softmax_attention(Q, K, Vv, scale=0.7, causal=causal, max_block_elements=block)
        assert np.allclose(got, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("factored", [True, False])
@pytest.mark.parametrize("precision", ["fixed:10:5", "float32", None])
def test_forward_at_equals_forward_at_each_position_bit_for_bit(layers, factored, precision):
    if factored:
        model = position_only_qk_model(precision, layers=layers)
    else:
        model = Transformer.random(V, D, layers, 2, 3, 4, 8, 3, max_len=N, seed=7, precision=precision)
    assert (embedding_factors(model, N) is not None) == (factored or precision is None)
    tokens = np.random.default_rng(8).integers(0, V, size=(6, N))
    positions = [0, 3, N - 2, N - 1]
    got = model.forward_at(tokens, positions)
    want = np.stack([model.forward(tokens, output_position=o) for o in positions], axis=1)
    assert got.shape == (6, 4, 3) and np.array_equal(got, want)
