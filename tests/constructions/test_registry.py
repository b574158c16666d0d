"""The construction registry, the builder interface, save/load, layering and doctests."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError, UnknownNameError
from models.files import load_model, save_model
from models.constructions import (CONSTRUCTIONS, Construction, build_construction, get_construction,
                                  import_errors, list_constructions)

MINE = {"index-lookup-1tf": "index-lookup", "multi-index-lookup-1tf": "multi-index-lookup",
        "string-equality-2tf": "string-equality", "string-disjointness-2tf": "string-disjointness",
        "nearest-neighbour-2tf": "nearest-neighbour", "mqar-2tf": "mqar", "k-dnf-2tf": "k-dnf",
        "k-cnf-2tf": "k-cnf"}
MY_MODULES = ("base", "jl", "layout", "index_lookup", "string_equality", "nearest_neighbour", "dnf")


def test_registry_holds_every_construction_and_no_module_is_broken():
    assert import_errors() == {}
    names = [s.name for s in list_constructions()]
    for name, task in MINE.items():
        assert name in names and CONSTRUCTIONS[name].task == task
        assert get_construction(task).name == name          # by task name
        assert get_construction(name.upper()).name == name  # case-insensitive
    assert len(set(names)) == len(names)


def test_lookup_by_arch_and_layers_and_errors():
    assert get_construction("index-lookup", arch="transformer", layers=1).layers == 1
    with pytest.raises(UnknownNameError):
        get_construction("index-lookup", layers=2)
    with pytest.raises(UnknownNameError, match="known"):
        get_construction("no-such-task")
    with pytest.raises(InvalidParameterError):
        get_construction("index-lookup").make(0)
    with pytest.raises(InvalidParameterError, match="unknown options"):
        get_construction("string-equality").make(4, bogus=1)


@pytest.mark.parametrize("name", sorted(MINE))
def test_every_spec_builds_a_real_model_with_its_declared_shape(name):
    spec = CONSTRUCTIONS[name]
    c = spec.make(3, "fixed:16:8")
    assert isinstance(c, Construction)
    assert c.model.arch == spec.arch == "transformer"
    assert c.model.n_layers == c.layers == spec.layers and c.model.n_heads == c.heads == spec.heads
    assert c.width == c.model.d_model
    assert c.precision.name == "fixed:16:8" and c.model.precision.name == "fixed:16:8"
    assert list(c.output_positions) == sorted(c.output_positions)
    assert set(spec.row()) >= {"name", "task", "arch", "layers", "source", "tag", "width"}
    assert c.summary()["width"] == c.width


@pytest.mark.parametrize("name", sorted(n for n, spec in CONSTRUCTIONS.items() if spec.width_of is not None))
def test_width_without_building_is_the_built_width(name):
    """``width_of`` (the crossover searches' shortcut) against the width of the weights built, at
    several task sizes of each construction that declares one."""
    spec = CONSTRUCTIONS[name]
    for n in (1, 2, 3, 7, 20):
        try:
            built = spec.make(n)
        except InvalidParameterError:
            continue
        assert spec.width_of(n) == built.width, n


def test_build_construction_is_what_simulate_calls():
    model = build_construction("index-lookup", "transformer", n=8, precision="fixed:8:4", width=4,
                               layers=1, heads=1, n_outputs=2, vocab_size=10)
    assert model.d_model == 2 + 2 * 3 and model.vocab_size == 10
    with pytest.raises(InvalidParameterError):
        build_construction("index-lookup", "transformer", n=8, n_outputs=3)


def test_save_load_round_trip_is_bit_identical(tmp_path):
    c = get_construction("string-equality").make(5, "fixed:12:6")
    path = save_model(c.model, tmp_path / "eq.npz")
    loaded = load_model(path)
    tokens = get_construction("string-equality").inputs(5)[::37]
    assert np.array_equal(loaded.forward(tokens), c.model.forward(tokens))


def test_layering_constructions_do_not_import_reductions():
    code = ("import sys, models.constructions as mc\n"
            "for s in mc.list_constructions():\n"
            "    s.make(3) if s.arch == 'transformer' else None\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('reductions', 'cli')]\n"
            "print(bad); sys.exit(1 if bad else 0)")
    mine = [n for n in MINE]
    code = code.replace("s.make(3) if s.arch == 'transformer' else None",
                        f"s.make(3) if s.name in {mine!r} else None")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("module", MY_MODULES)
def test_doctests(module):
    mod = importlib.import_module(f"models.constructions.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
