"""The worked examples in the docstrings of reductions.simulate and reductions.search.witness run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["reductions.simulate", "reductions.simulate.setup", "reductions.simulate.running",
           "reductions.simulate.recurrent", "reductions.simulate.transformer", "reductions.simulate.api",
           "reductions.simulate.batch", "reductions.simulate.outputs", "reductions.search.witness"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
