"""``commcomp matrix --matrix FILE``: a user's own matrix in .npy, .csv or text; bad files exit 2
with one line."""

import json

import numpy as np
import pytest

import cli
from commcomp.errors import InvalidParameterError
from commcomp.matrix.generators import gap_matrix
from commcomp.matrix.matrix_file import load_matrix

M = gap_matrix(8, kind="xor", seed=0)  # χ₁ = 8, χ₀ = 7, C¹ = 6, C⁰ = 7 (solver and fallback agree)


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("suffix", [".npy", ".csv", ".txt"])
def test_every_format_gives_the_same_report(tmp_path, capsys, suffix):
    path = tmp_path / f"m{suffix}"
    if suffix == ".npy":
        np.save(path, M.astype(np.uint8))
    else:
        np.savetxt(path, M.astype(int), fmt="%d", delimiter="," if suffix == ".csv" else " ")
    assert np.array_equal(load_matrix(path), M)
    code, out, err = run(capsys, "matrix", "--matrix", path, "--measure", "partition", "cover",
                         "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["problem"] is None and data["certificates_checked"] is True
    assert (data["partition_number_1"], data["partition_number_0"]) == (8, 7)
    assert (data["cover_number_1"], data["cover_number_0"]) == (6, 7)
    assert data["partition_number"] == 15 and data["nondeterministic_cc"] == 3
    assert data["labels"]["cover_number_1_solver"]


def test_search_fallback_is_selectable_and_says_so(tmp_path, capsys):
    path = tmp_path / "m.txt"
    np.savetxt(path, M.astype(int), fmt="%d")
    code, out, _ = run(capsys, "matrix", "--matrix", path, "--measure", "cover", "--solver", "search",
                       "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["cover_number_1"] == 6
    assert data["labels"]["cover_number_1_solver"].startswith("branch and bound")


@pytest.mark.parametrize("content, name", [
    ("1 0\n1\n", "ragged.txt"), ("1 2\n0 1\n", "two.txt"), ("", "empty.txt"),
    ("1,0\n0,x\n", "x.csv"), (b"\x93NUMPY garbage", "bad.npy"), (None, "missing.txt"),
])
def test_bad_files_exit_2_with_one_line(tmp_path, capsys, content, name):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(InvalidParameterError):
        load_matrix(path)
    code, out, err = run(capsys, "matrix", "--matrix", path)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_object_and_3d_npy_are_rejected(tmp_path, capsys):
    for arr, name in ((np.array(["a", "b"]), "s.npy"), (np.zeros((2, 2, 2)), "cube.npy")):
        np.save(tmp_path / name, arr)
        code, out, err = run(capsys, "matrix", "--matrix", tmp_path / name)
        assert code == 2 and len(err.strip().splitlines()) == 1


def test_problem_and_file_are_exclusive(tmp_path, capsys):
    path = tmp_path / "m.txt"
    path.write_text("1 0\n0 1\n")
    for argv in (["matrix", "equality", "--n", "2", "--matrix", path], ["matrix"],
                 ["matrix", "equality"]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and len(err.strip().splitlines()) == 1
