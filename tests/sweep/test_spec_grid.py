import json
import os
import subprocess
import sys

import pytest

from commcomp.errors import CommcompError, UnknownNameError
from commcomp.sweep.grid import canonical_json, expand_grid, grid_size, point_seed
from commcomp.sweep.spec import (SweepSpec, SweepSpecError, load_spec, parse_axis_text, parse_param_text,
                                   spec_from_mapping)

from sweep_helpers import REPO

EXAMPLE = """
[sweep]
name = "demo"
operation = "selftest"
seed = 11
repeats = 2

[params]
seconds = 0
mode = "sleep"

[axes]
arch = ["elman", "lstm"]
n = [4, 8, 16]
"""


def test_expand_grid_is_the_cartesian_product_in_axis_order(toml_file):
    spec = load_spec(str(toml_file(EXAMPLE)))
    points = expand_grid(spec)
    assert grid_size(spec) == len(points) == 2 * 3 * 2
    combos = [(p.params["arch"], p.params["n"], p.params["repeat"]) for p in points]
    assert combos == [(a, n, r) for a in ("elman", "lstm") for n in (4, 8, 16) for r in (0, 1)]
    assert [p.index for p in points] == list(range(12))
    for p in points:
        assert p.params == {"seconds": 0, "mode": "sleep", "arch": p.params["arch"], "n": p.params["n"],
                            "repeat": p.params["repeat"]}
        assert p.key == json.dumps(p.params, sort_keys=True, separators=(",", ":"))
    assert len({p.key for p in points}) == 12


def test_point_seed_is_blake2b_of_sweep_seed_and_canonical_json():
    import hashlib

    key = canonical_json({"n": 4, "arch": "lstm"})
    assert key == '{"arch":"lstm","n":4}'
    expected = int.from_bytes(hashlib.blake2b(f"11:{key}".encode(), digest_size=8).digest(), "big") % 2**32
    assert point_seed(11, key) == expected
    assert 0 <= expected < 2**32


def test_seeds_are_stable_across_processes_and_hash_randomisation(toml_file):
    path = toml_file(EXAMPLE)
    here = [(p.key, p.seed) for p in expand_grid(load_spec(str(path)))]
    code = ("import json,sys; from commcomp.sweep.spec import load_spec; from commcomp.sweep.grid import "
            "expand_grid; print(json.dumps([(p.key, p.seed) for p in expand_grid(load_spec(sys.argv[1]))]))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PYTHONHASHSEED": "1"}, check=True).stdout  # another hash() salt
    assert [tuple(x) for x in json.loads(out)] == here


def test_seed_depends_on_the_point_and_sweep_seed_only():
    small = SweepSpec("selftest", axes={"n": (4, 8)}, seed=3)
    large = SweepSpec("selftest", axes={"n": (4, 8, 16, 32)}, seed=3)
    seeds = {p.key: p.seed for p in expand_grid(large)}
    assert all(seeds[p.key] == p.seed for p in expand_grid(small))  # growing an axis keeps old seeds
    other = {p.key: p.seed for p in expand_grid(SweepSpec("selftest", axes={"n": (4, 8)}, seed=4))}
    assert all(other[p.key] != p.seed for p in expand_grid(small))
    assert len(set(seeds.values())) == 4
    # ints and floats are different points
    assert canonical_json({"n": 4}) != canonical_json({"n": 4.0})


def test_parse_axis_and_param_text():
    assert parse_axis_text("n=4,8,16") == ("n", (4, 8, 16))
    assert parse_axis_text("precision=fixed:8:4,16,bfloat16") == ("precision", ("fixed:8:4", 16, "bfloat16"))
    assert parse_axis_text("Max-Width=0.5,true,x") == ("max_width", (0.5, True, "x"))
    assert parse_param_text('x=[1,0,1]') == ("x", [1, 0, 1])
    for bad in ("n", "n=", "n=4,,8", "n=4,4", "=3", "seed=1,2", "9n=1"):
        with pytest.raises(SweepSpecError):
            parse_axis_text(bad)
    with pytest.raises(SweepSpecError):
        parse_param_text("seed=3")


@pytest.mark.parametrize("text, message", [
    ('[sweep]\noperation = "nope"\n', "unknown operation"),
    ('[sweep]\noperation = "bounds"\n[axes]\nn = [4]\n', "needs parameter(s) precision"),
    ('[sweep]\noperation = "bounds"\n[params]\nprecision = 8\n[axes]\nn = [64]\nwidht = [3]\n', "widht"),
    ('[sweep]\noperation = "selftest"\nworkerz = 2\n', "unknown [sweep] key"),
    ('[sweeps]\noperation = "selftest"\n', "unknown table"),
    ('[sweep]\noperation = "selftest"\n[axes]\nn = []\n', "no values"),
    ('[sweep]\noperation = "selftest"\n[axes]\nn = [1, 1]\n', "repeats the value"),
    ('[sweep]\noperation = "selftest"\nseed = -1\n', "seed"),
    ('[sweep]\noperation = "selftest"\n[params]\nn = 1\n[axes]\nn = [2]\n', "given twice"),
    ('[sweep]\noperation = "selftest"\n[axes]\nwhen = [1979-05-27]\n', "unsupported value"),
    ('[sweep]\noperation = "selftest"\n[axes\n', "syntax error"),
])
def test_bad_sweep_files_raise_one_commcomp_error(toml_file, text, message):
    with pytest.raises(CommcompError) as info:
        load_spec(str(toml_file(text)))
    assert message in str(info.value)


def test_unknown_operation_is_an_unknown_name_error():
    with pytest.raises(UnknownNameError):
        spec_from_mapping({"sweep": {"operation": "verifyy"}})


def test_missing_file():
    with pytest.raises(SweepSpecError, match="not found"):
        load_spec("/nonexistent/grid.toml")


def test_yaml_and_json_files_give_the_same_spec(tmp_path, toml_file):
    toml_spec = load_spec(str(toml_file(EXAMPLE, "demo.toml")))
    data = {"sweep": {"name": "demo", "operation": "selftest", "seed": 11, "repeats": 2},
            "params": {"seconds": 0, "mode": "sleep"}, "axes": {"arch": ["elman", "lstm"], "n": [4, 8, 16]}}
    (tmp_path / "demo.json").write_text(json.dumps(data))
    assert [p.seed for p in expand_grid(load_spec(str(tmp_path / "demo.json")))] == \
        [p.seed for p in expand_grid(toml_spec)]
    yaml = pytest.importorskip("yaml")
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(data))
    assert [p.key for p in expand_grid(load_spec(str(tmp_path / "demo.yaml")))] == \
        [p.key for p in expand_grid(toml_spec)]


def test_overrides_and_default_db(toml_file):
    path = toml_file(EXAMPLE)
    spec = load_spec(str(path)).with_overrides(axes=[("n", (32,))], params=[("arch", "gru")], seed=5, repeats=1)
    assert spec.axes == {"n": (32,)} and spec.params["arch"] == "gru" and spec.seed == 5
    assert grid_size(spec) == 1
    assert spec.default_db_path() == os.path.join(os.getcwd(), path.with_suffix(".sqlite").name)
    assert SweepSpec("selftest").with_overrides().name == "selftest"


@pytest.mark.parametrize("name, size", [("rnn_string_equality.toml", 3 * 4 * 3 * 2 * 2),
                                        ("bounds_index_lookup.toml", 4 * 5)])
def test_the_documented_examples_parse(name, size):
    spec = load_spec(os.path.join(REPO, "commcomp", "sweep", "examples", name))
    assert grid_size(spec) == len(expand_grid(spec)) == size
    assert spec.default_db_path() == os.path.join(os.getcwd(), name.replace(".toml", ".sqlite"))
    assert not spec.default_db_path().startswith(os.path.dirname(spec.source))  # not into the package
