"""reductions.separations.command takes SeparationsOptions, and cli.py maps every option onto it."""

import dataclasses

import pytest

import cli
from commcomp.errors import InvalidParameterError
from reductions.separations.command import SeparationsOptions, run


def _separations_parser():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices["separations"]


def test_every_option_of_the_parser_is_a_field_with_the_same_default():
    actions = {a.dest: a.default for a in _separations_parser()._actions if a.dest not in ("help", "out")}
    fields = {f.name: f.default for f in dataclasses.fields(SeparationsOptions)}
    assert set(actions) == set(fields)
    assert actions == fields  # the mode checks compare against these defaults


def test_the_cli_passes_each_option_through(monkeypatch):
    seen = {}
    monkeypatch.setattr("reductions.separations.command.run", lambda options: seen.setdefault("o", options) and "")
    assert cli.main(["separations", "--n", "5", "--width", "3", "--instances", "7", "--heads", "2",
                     "--task", "dyck", "--arch", "elman", "--seed", "9", "--format", "json"]) == 0
    o = seen["o"]
    assert (o.n, o.width, o.instances, o.heads, list(o.task), list(o.arch), o.seed, o.format) == \
        (5, 3, 7, 2, ["dyck"], ["elman"], 9, "json")


def test_options_of_the_other_mode_are_refused():
    with pytest.raises(InvalidParameterError, match="--samples is not used with --n"):
        run(SeparationsOptions(n=8, samples=3))
    with pytest.raises(InvalidParameterError, match="--width is not used without --n"):
        run(SeparationsOptions(width=2))


def test_options_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SeparationsOptions().seed = 1
