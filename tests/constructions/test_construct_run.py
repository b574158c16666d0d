"""reductions.search.construct: build, check and save one construction (what `commcomp construct` runs)."""

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from models.constructions import get_construction
from models.files import load_model
from reductions.search.construct import construct, parse_builder_options
from reductions.search.construct_view import construct_rows


def test_small_sizes_check_every_input():
    spec = get_construction("index-lookup")
    run = construct("il", 4, "float32", check=5)              # an alias, as the task registry reads it
    assert run.spec.name == spec.name
    assert run.check["exhaustive"] is True
    assert run.check["instances"] == len(np.asarray(spec.inputs(4)))   # every input, not the 5 asked for
    assert run.to_json()["check"] == run.check and "layout" not in run.to_json()


def test_no_check_and_a_saved_model(tmp_path):
    path = str(tmp_path / "m.npz")
    run = construct("index-lookup", 4, "float32", check=0, out=path)
    assert run.check is None and run.saved_to == path
    assert load_model(path).d_model == run.construction.model.d_model == run.construction.width
    rows = dict((r[0], r[1]) for r in construct_rows(run))
    assert rows["saved to"] == path and "check" not in rows


def test_builder_options_parse_as_numbers_booleans_or_text():
    assert parse_builder_options(["k=12", "gamma=0.25", "exact=False", "x=none", "codes=jl", "min-margin=1"]) == \
        {"k": 12, "gamma": 0.25, "exact": False, "x": None, "codes": "jl", "min_margin": 1}
    with pytest.raises(InvalidParameterError, match="NAME=VALUE"):
        parse_builder_options(["k"])
