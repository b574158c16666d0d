"""verify's wrong_count and wrong_example: exact, re-run, and equal across methods."""

from __future__ import annotations

import numpy as np
import pytest

from reductions.search.reachable.render import correct_text
from reductions.simulate import verify


@pytest.mark.parametrize("arch,precision,width,seed", [("lstm", "fixed:4:2", 2, 0), ("gru", "fixed:6:3", 3, 1),
                                                       ("elman", "fixed:3:1", 2, 2), ("mamba", "fixed:4:2", 2, 3)])
def test_wrong_count_and_example_agree_with_enumeration(arch, precision, width, seed):
    kw = dict(width=width, seed=seed, exhaustive=True)
    r = verify("index-lookup", arch, 7, precision, method="reachable-states", **kw)
    e = verify("index-lookup", arch, 7, precision, method="enumerate", **kw)
    assert r["wrong_count"] == e["wrong_count"] == e["instances"] - e["correct_count"]
    assert isinstance(r["wrong_count"], int)
    for out in (r, e):
        w = out["wrong_example"]
        assert (w is None) == (out["wrong_count"] == 0)
        if w is not None:  # re-run: the protocol's answer differs from f(x, y) = x_y
            assert w["protocol_answer"] != w["truth"] and w["truth"] == (w["x"][w["y"]] == "1")


def test_a_model_right_everywhere_lists_nothing(tmp_path):
    from pathlib import Path
    import cli

    fixture = Path(__file__).parents[1] / "fixtures" / "tiny_lstm_index_lookup.state_dict.npz"
    weights = str(tmp_path / "tiny.npz")
    assert cli.main(["import", "torch", str(fixture), "--arch", "lstm", "--task", "index-lookup", "--n", "8",
                     "--out", weights]) == 0
    v = verify("index-lookup", "lstm", 8, "float32", weights=weights, exhaustive=True)
    assert v["wrong_count"] == 0 and v["wrong_example"] is None


def test_wrong_at_big_n_is_an_exact_int_and_the_fraction_is_never_shown_as_one():
    v = verify("index-lookup", "lstm", 300, "fixed:4:2", width=2, seed=0, exhaustive=True)
    assert v["method"] == "reachable-states" and v["wrong_count"] == v["instances"] - v["correct_count"]
    assert v["wrong_count"] > 2 ** 64 and len(v["wrong_example"]["x"]) == 300
    x, y = v["wrong_example"]["x"], v["wrong_example"]["y"]
    assert v["wrong_example"]["protocol_answer"] != (x[y] == "1")
    nearly = {"correct": 1 - 1e-9, "correct_count": 10 ** 9 - 1, "instances": 10 ** 9, "wrong_count": 1}
    assert correct_text(nearly).startswith("0.999999999") and not correct_text(nearly).startswith("1.0")
    assert correct_text({**nearly, "correct_count": 10 ** 9, "correct": 1.0, "wrong_count": 0}).startswith("1.0000")
