"""The examples in the docstrings of the task and reduction modules run and print what they say."""

import doctest
import importlib
import pkgutil

import pytest

import reductions.tasks

MODULES = ["reductions", "reductions.base", "reductions.check", "reductions.registry",
           "reductions.lookup", "reductions.strings", "reductions.arithmetic", "reductions.graphs", "reductions.search.construction",
           "reductions.separations.catalogue", "reductions.separations.ladder",
           "reductions.separations.checks"] + \
    sorted(m.name for m in pkgutil.iter_modules(reductions.tasks.__path__, "reductions.tasks."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
