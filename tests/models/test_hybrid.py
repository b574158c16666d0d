"""Hybrid (recurrent stack + one attention layer, WDL) against a per-instance loop reference."""

from __future__ import annotations

import numpy as np
import pytest

from commcomp.backend import to_numpy
from commcomp.errors import UnsupportedSplitError
from commcomp.precision import parse_precision
from models.recurrent.base import RecurrentLayer
from models.transformer import Hybrid, build_hybrid
from test_transformer import ref_block, ref_norm

TOL = 1e-10


class DiagonalLayer(RecurrentLayer):
    """A tiny test-only layer: ``h' = a ⊙ h + x W``, ``y = tanh(h')``."""

    arch = "test-diagonal"

    def state_shapes(self):
        return {"h": (self.d_out,)}

    def step(self, state, x_t):
        h = state["h"] * self.w["a"] + self.xp.matmul(x_t, self.w["W"])
        return {"h": h}, self.xp.tanh(h)


def diagonal(d_in, d_out, seed):
    rng = np.random.default_rng(seed)
    return DiagonalLayer(d_in, d_out, {"a": rng.uniform(0.5, 1.0, d_out),
                                       "W": rng.normal(size=(d_in, d_out)) / np.sqrt(d_in)})


def perturbed(model, seed=0):
    rng = np.random.default_rng(seed)
    return model.with_params({k: v + rng.normal(scale=0.3, size=v.shape)
                              for k, v in model.own_params.items()
                              if k.split(".")[-1] in ("b_Q", "b_K", "b_V", "b_O", "g", "b")})


def ref_hybrid(model, tokens, output_position=None):
    """One instance at a time; the test layer's recurrence written out, other layers stepped."""
    P, out = model.params, []
    for row in np.asarray(tokens):
        xs = [P["tok_emb"][t] for t in row]
        for i, layer in enumerate(model.layers):
            if isinstance(layer, DiagonalLayer):
                h, ys = np.zeros(layer.d_out), []
                for x in xs:
                    h = P[f"r{i}.a"] * h + x @ P[f"r{i}.W"]
                    ys.append(np.tanh(h))
            else:
                state, ys = layer.init_state(1), []
                for x in xs:
                    state, y = layer.step(state, x[None, :])
                    ys.append(np.asarray(y)[0])
            xs = ys
        X = np.array([ref_norm(x, P["norm_f.g"], P["norm_f.b"], model.norm) for x in xs]) \
            if model.layer_norm else np.array(xs)
        p = {k[5:]: v for k, v in P.items() if k.startswith("attn.")}
        n = len(row)
        X = ref_block(p, X, H=model.n_heads, causal=model.causal, ln="pre" if model.layer_norm else None,
                      norm=model.norm, act=model.activation, residual=True, scale=model.attn_scale,
                      positions=None if output_position is None else [output_position % n])
        logits = X @ P["readout.W"] + P["readout.b"]
        out.append(logits if output_position is None else logits[0])
    return np.array(out)


def stacks():
    yield "diagonal", [diagonal(6, 5, 0), diagonal(5, 7, 1)], {}
    yield "elman", None, {"recurrent": "elman"}
    yield "mamba", None, {"recurrent": "mamba"}


@pytest.mark.parametrize("name,layers,build", list(stacks()), ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("options", [dict(), dict(layer_norm=False, causal=False, activation="relu"),
                                     dict(norm="layer", n_heads=3)])
def test_hybrid_matches_the_loop_reference(name, layers, build, options):
    options = dict(options)
    heads = options.pop("n_heads", 2)
    if layers is not None:
        model = Hybrid.random(9, layers, heads, 3, 4, 10, 3, seed=2, **options)
    else:
        model = build_hybrid(vocab_size=9, width=6, n_outputs=3, layers=2, heads=heads, seed=2,
                             d_k=3, d_v=4, d_mlp=10, **build, **options)
    model = perturbed(model)
    tokens = np.random.default_rng(3).integers(0, 9, size=(3, 8))
    np.testing.assert_allclose(model.forward_all(tokens), ref_hybrid(model, tokens), rtol=0, atol=TOL)
    for o in (7, 3):
        np.testing.assert_allclose(model.forward(tokens, output_position=o),
                                   ref_hybrid(model, tokens, o), rtol=0, atol=TOL)


def test_precision_rounds_the_state_and_the_outputs():
    p = parse_precision("fixed:12:6")
    model = perturbed(build_hybrid(vocab_size=5, width=4, n_outputs=2, layers=2, heads=1, seed=0,
                                   recurrent="lstm"))
    low = model.with_precision(p)
    tokens = np.random.default_rng(4).integers(0, 5, size=(4, 6))
    out = low.forward(tokens)
    assert np.array_equal(out, p.round(out))
    state = low.stack.run(tokens)
    assert all(np.array_equal(v, p.round(v)) for v in state.values())
    assert np.abs(out - model.forward(tokens)).max() < 0.5
    np.testing.assert_allclose(low.forward_all(tokens)[:, -1], out, atol=4 * p.resolution)


def test_save_load_round_trip(tmp_path):
    from models.files import load_model, save_model

    for model in (perturbed(build_hybrid(vocab_size=5, width=4, n_outputs=2, layers=2, heads=2,
                                         seed=5, precision="fixed:16:8")),
                  Hybrid.random(5, [diagonal(3, 4, 7)], 1, 2, 2, 0, 2, seed=1)):
        tokens = np.random.default_rng(5).integers(0, 5, size=(3, 7))
        for loaded in (Hybrid.load(model.save(tmp_path / "h.npz")),
                       load_model(save_model(model, tmp_path / "g.npz"))):
            assert set(loaded.params) == set(model.params)
            assert all(np.array_equal(loaded.params[k], model.params[k]) for k in model.params)
            assert np.array_equal(loaded.forward(tokens), model.forward(tokens))
            assert (loaded.precision is None) == (model.precision is None)


def test_registry_builds_a_mamba_hybrid_whose_partials_add_up_to_forward():
    from models.registry import build_model

    model = build_model("hybrid", vocab_size=4, width=4, n_outputs=2, layers=1, heads=2, seed=0,
                        precision="fixed:12:6")
    assert model.layers[0].arch == "mamba" and model.d_k == 4
    tokens = np.random.default_rng(0).integers(0, 4, size=(16, 7))  # (B, N)
    x = model.hidden(tokens)  # (B, N, d)
    q = model.query(x[:, -1, :])
    parts = [model.partial(x, [0, 1, 2], q, 6), model.partial(x, [3, 4, 5, 6], q, 6)]
    assert np.array_equal(model.finish(parts, x[:, -1, :]), model.forward(tokens))
    # the float softmax of forward_all agrees to within the grid
    np.testing.assert_allclose(model.forward(tokens), model.forward_all(tokens)[:, -1], atol=0.1)
    bare = build_model("hybrid", vocab_size=4, width=4, n_outputs=2, layers=1, heads=2, seed=0,
                       layer_norm=False, precision="fixed:12:6")
    assert bare.forward(tokens).shape == (16, 2)
    with pytest.raises(UnsupportedSplitError, match="pre-norm"):
        bare.partial(bare.hidden(tokens), [0, 1], q, 6)


def test_hybrid_runs_under_array_api_strict():
    xps = pytest.importorskip("array_api_strict")
    for model in (perturbed(build_hybrid(vocab_size=6, width=4, n_outputs=3, layers=2, heads=2,
                                         seed=6)),
                  Hybrid.random(6, [diagonal(3, 4, 8)], 2, 2, 2, 5, 3, seed=1, precision="float32")):
        tokens = np.random.default_rng(6).integers(0, 6, size=(2, 7))
        strict = model.to_namespace(xps)
        np.testing.assert_allclose(to_numpy(strict.forward_all(xps.asarray(tokens))),
                                   model.forward_all(tokens), atol=1e-12)
        np.testing.assert_allclose(to_numpy(strict.forward(xps.asarray(tokens))), model.forward(tokens),
                                   atol=1e-12)
