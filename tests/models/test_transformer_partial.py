"""A 1-layer Transformer split at its output position: partial sums over any partition are exact.

DESIGN §3: at a precision every attention term sits on a fixed-point grid and is summed in
integers, so ``finish(sum of the partials of any partition) == forward()`` bit for bit.  Checked
over every set partition of the positions at small N (all of them at once, one partition per
row of the batch), over random partitions at larger N, for fixed formats down to 8 bits and for
IEEE formats (on their covering grids).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from commcomp.backend import to_numpy
from commcomp.errors import InvalidParameterError
from commcomp.precision import FixedPoint
from models.transformer import AttentionPartial, Transformer, exact_attention_sums, sum_partials
from models.transformer.attention import AttentionGrid, ceil_log2

PRECISIONS = ["fixed:8:4", "fixed:12:6", "fixed:16:8", "fixed:24:12", "float16", "bfloat16",
              "float32", "float64"]
CONFIGS = [
    dict(causal=True, layer_norm=False, positional="learned"),
    dict(causal=False, layer_norm="pre", positional="learned"),
    dict(causal=True, layer_norm="post", positional="sinusoidal"),
    dict(causal=False, layer_norm=False, positional="sinusoidal", output_position=2),
]


def model_for(precision, cfg, seed=0, V=6, max_len=64):
    cfg = {k: v for k, v in cfg.items() if k != "output_position"}
    model = Transformer.random(V, 8, 1, 2, 3, 4, 8, 3, max_len=max_len, seed=seed, precision=precision,
                               **cfg)
    rng = np.random.default_rng(seed)
    noisy = {k: v + rng.normal(scale=0.3, size=v.shape) for k, v in model.params.items()
             if k.split(".")[-1] in ("b_Q", "b_K", "b_V", "b_O", "g", "b")}
    return model.with_params(noisy)


def set_partitions(n):
    """Every set partition of range(n) as a block label per element (restricted growth strings)."""
    def grow(prefix, top):
        if len(prefix) == n:
            yield list(prefix)
            return
        for label in range(top + 2):
            yield from grow(prefix + [label], max(top, label))
    yield from grow([0], 0)


def split_and_finish(model, tokens, labels, o):
    """Each block of ``labels`` (B, N) is a party; the one holding ``o`` computes its own query."""
    q = model.query(tokens[:, o], o)                      # Bob's message
    parts = [model.partial(tokens, labels == k, query=q, output_position=o)
             for k in range(int(labels.max()) + 1)]
    return model.finish(sum_partials(parts[::-1]), tokens[:, o]), parts


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("cfg", CONFIGS)
def test_every_partition_at_small_n_reproduces_forward_bit_for_bit(precision, cfg):
    N = 6
    model = model_for(precision, cfg)
    o = cfg.get("output_position", N - 1)
    labels = np.array(list(set_partitions(N)))                          # (203, N)
    assert len(labels) == 203                                           # Bell(6)
    base = np.random.default_rng(1).integers(0, 6, size=(3, N))
    tokens = np.repeat(base, len(labels), axis=0)                       # (B, N)
    labels = np.tile(labels, (len(base), 1))                            # (B, N)
    expected = model.forward(tokens, output_position=o)
    got, parts = split_and_finish(model, tokens, labels, o)
    assert np.array_equal(got, expected)
    width = parts[0].bits_per_number
    for p in parts:
        assert p.numerator.dtype == np.int64
        assert np.abs(p.numerator).max() < 2 ** (width - 1) and p.denominator.max() < 2 ** (width - 1)
    assert model.message_bits(N) == 2 * (4 + 1) * width == parts[0].message_bits()


@pytest.mark.parametrize("precision", ["fixed:8:4", "fixed:16:8", "float16", "float32"])
@pytest.mark.parametrize("N", [300, 2048])
def test_random_partitions_at_larger_n(precision, N):
    rng = np.random.default_rng(N)
    model = model_for(precision, CONFIGS[1], seed=2, max_len=N)
    tokens = rng.integers(0, 6, size=(3, N))
    labels = rng.integers(0, 5, size=(3, N))
    got, _ = split_and_finish(model, tokens, labels, N - 1)
    assert np.array_equal(got, model.forward(tokens))


def test_bits_round_trip_and_the_query_message():
    model = model_for("fixed:10:5", CONFIGS[0], seed=3)
    tokens = np.random.default_rng(3).integers(0, 6, size=(4, 9))
    prec = model.precision
    q_bits = prec.encode_rows(to_numpy(model.query(tokens[:, -1], 8)))            # Bob -> Alice
    assert q_bits.shape == (4, model.query_bits()) == (4, 2 * 3 * 10)
    q = prec.decode_rows(q_bits).reshape(4, 2, 3)
    alice = model.partial(tokens, np.arange(5), query=q)
    rows = alice.to_bit_rows()                                                   # Alice -> Bob
    assert rows.shape == (4, 2 * (4 + 1) * (10 + ceil_log2(9)))
    received = AttentionPartial.from_bit_rows(rows, n_heads=2, d_v=4, n_positions=9,
                                              output_position=8, grid=alice.grid)
    assert np.array_equal(received.numerator, alice.numerator)
    assert np.array_equal(received.denominator, alice.denominator)
    bob = model.partial(tokens, np.arange(5, 9))
    assert np.array_equal(model.finish([received, bob], tokens[:, -1]), model.forward(tokens))
    ref = model.with_precision(None)                                             # float64 codes too
    part = ref.partial(tokens, None)
    back = AttentionPartial.from_bit_rows(part.to_bit_rows(), n_heads=2, d_v=4, n_positions=9,
                                          output_position=8)
    assert np.array_equal(back.numerator, part.numerator) and part.message_bits() == 2 * 5 * 64


def test_a_query_that_ignores_the_token_needs_no_first_round():
    model = model_for("fixed:16:8", CONFIGS[0], seed=4)
    tok = model.params["tok_emb"].copy()
    tok[:, :3] = 0.0                                         # tokens leave coordinates 0..2 empty
    W_Q = np.zeros_like(model.params["l0.W_Q"])
    W_Q[:, :3, :] = np.random.default_rng(4).normal(size=(2, 3, 3))   # the query reads only those
    model = model.with_params({"tok_emb": tok, "l0.W_Q": W_Q})
    assert not model.query_depends_on_input(7)
    assert model_for("fixed:16:8", CONFIGS[0]).query_depends_on_input(7)
    tokens = np.random.default_rng(5).integers(0, 6, size=(5, 8))
    alice = model.partial(tokens, [0, 2, 4, 5])              # no query passed: she computes it
    bob = model.partial(tokens, [1, 3, 6, 7])
    assert np.array_equal(model.finish(alice + bob, tokens[:, 7]), model.forward(tokens))
    with pytest.raises(InvalidParameterError):
        model_for("fixed:16:8", CONFIGS[0]).partial(tokens, [0, 1])


@pytest.mark.parametrize("cfg", CONFIGS[:3])
def test_the_shift_bounds_every_score_and_the_value_bound_every_value(cfg):
    model = model_for(None, cfg, seed=6, V=5, max_len=7)
    N = 7
    every = np.repeat(np.arange(5), 1)[:, None] * np.ones((1, N), dtype=int)      # (V, N): all pairs
    blk = model.blocks[0]
    h = blk.attn_input(model.embed(every))
    K, V = blk.heads(h, "K"), blk.heads(h, "V")                                   # (V, H, N, d)
    assert np.abs(V).max() <= model.value_bound() + 1e-12
    q = model.query(np.arange(5), N - 1)                                          # (5, H, d_k)
    c = model.score_shift(q, N, N - 1)                                            # (5, H)
    scores = np.einsum("bhd,thnd->bhtn", q, K) * blk.scale                        # every (t, p)
    top = scores.reshape(5, 2, -1).max(axis=-1)
    assert np.all(top <= c + 1e-12 * np.abs(c).max())
    if cfg["layer_norm"] is False:                  # without a norm the bound is the exact maximum
        np.testing.assert_allclose(top, c, rtol=0, atol=1e-12)


def test_float64_reference_partials_agree_to_rounding():
    model = model_for(None, CONFIGS[1], seed=7)
    tokens = np.random.default_rng(7).integers(0, 6, size=(4, 10))
    q = model.query(tokens[:, -1], 9)
    parts = [model.partial(tokens, s, query=q) for s in ([0, 5, 9], [1, 2, 3], [4, 6, 7, 8])]
    assert parts[0].grid is None and parts[0].numerator.dtype == np.float64
    np.testing.assert_allclose(model.finish(parts, tokens[:, -1]), model.forward(tokens), atol=1e-13)


def test_exact_sums_match_python_integer_loops():
    rng = np.random.default_rng(8)
    B, H, N, dk, dv = 2, 2, 12, 3, 2
    q, K, V = rng.normal(size=(B, H, dk)), rng.normal(size=(B, H, N, dk)), rng.normal(size=(B, H, N, dv))
    shift = np.einsum("bhd,bhnd->bhn", q, K).max(axis=-1) * 0.5 + 0.25
    mask = rng.random((B, N)) < 0.7
    for w_grid, v_grid in ((FixedPoint.make(8, 4), FixedPoint.make(8, 4)),
                           (FixedPoint.covering(20, 1.0), FixedPoint.covering(20, 4.0))):
        grid = AttentionGrid(w_grid, v_grid, "test", "test")
        num, den = exact_attention_sums(q, K, V, scale=0.5, shift=shift, grid=grid, mask=mask)
        for b, h in itertools.product(range(B), range(H)):
            ref_den, ref_num = 0, [0] * dv
            for j in range(N):
                if not mask[b, j]:
                    continue
                s = 0.5 * sum(q[b, h, i] * K[b, h, j, i] for i in range(dk))
                a = min(max(round(math.exp(s - shift[b, h]) * w_grid.scale), w_grid.min_int),
                        w_grid.max_int)                                       # half to even
                ref_den += a
                for i in range(dv):
                    t = round(a / w_grid.scale * V[b, h, j, i] * v_grid.scale)
                    ref_num[i] += min(max(t, v_grid.min_int), v_grid.max_int)
            # the loop's scores may differ from the matmul's in the last bit: allow one unit per term
            assert abs(int(den[b, h]) - ref_den) <= int(mask[b].sum())
            assert max(abs(int(num[b, h, i]) - ref_num[i]) for i in range(dv)) <= int(mask[b].sum())


def test_saturation_is_counted_and_the_split_stays_exact():
    model = model_for("fixed:6:2", CONFIGS[0], seed=9)
    model = model.with_params({"l0.W_V": model.params["l0.W_V"] * 40.0})
    tokens = np.random.default_rng(9).integers(0, 6, size=(3, 8))
    model.precision.saturations.reset()
    expected = model.forward(tokens)
    assert model.precision.saturations.count > 0
    got, _ = split_and_finish(model, tokens, np.random.default_rng(1).integers(0, 3, (3, 8)), 7)
    assert np.array_equal(got, expected)


def test_partials_of_different_inputs_do_not_add():
    model = model_for("fixed:12:6", CONFIGS[0])
    t = np.zeros((1, 6), dtype=int)
    a = model.partial(t, [0, 1, 5])
    with pytest.raises(InvalidParameterError):
        a + model.partial(np.zeros((1, 7), dtype=int), [6])
    with pytest.raises(InvalidParameterError):
        model.with_precision("fixed:12:5").finish(a, t[:, 5])
    with pytest.raises(InvalidParameterError):
        model.partial(t, [6])


def test_the_grid_is_reported():
    m = model_for("float16", CONFIGS[0])
    grid = m.attention_grid(100)
    assert grid.source == "covering" and grid.weight.name == "fixed:16:14"
    assert grid.value.max_value >= m.value_bound() and "float16" in grid.describe()
    assert m.attention_grid(100).sum_bits(100) == 16 + 7
    g64 = model_for("float64", CONFIGS[0]).attention_grid(5000)
    assert g64.weight.bits == 64 - 13 and g64.sum_bits(5000) == 64
    assert model_for("fixed:9:3", CONFIGS[0]).attention_grid(7).weight.name == "fixed:9:3"


def test_split_runs_under_array_api_strict():
    xps = pytest.importorskip("array_api_strict")
    model = model_for("bfloat16", CONFIGS[1], seed=10)
    strict = model.to_namespace(xps)
    tokens = np.random.default_rng(10).integers(0, 6, size=(3, 9))
    st = xps.asarray(tokens)
    q = strict.query(st[:, 8], 8)
    parts = [strict.partial(st, idx, query=q) for idx in ([0, 3, 4], [1, 2], [5, 6, 7, 8])]
    got = strict.finish(parts, st[:, 8])
    assert np.array_equal(to_numpy(got), to_numpy(strict.forward(st)))
    np.testing.assert_allclose(to_numpy(got), model.forward(tokens), atol=1e-12)
