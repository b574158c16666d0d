"""The main job: rows computed from the catalogue and confirmed by simulation."""

import json

import pytest

import cli
from commcomp.architectures import state_numbers
from reductions.separations import ARCH_CLASSES, separations


def test_rows_cover_every_task_and_arch_and_confirm():
    from reductions.registry import TASKS

    rows = separations(n=4, precision="fixed:16:8", instances=8)
    assert len(rows) == len(TASKS) * len(ARCH_CLASSES)
    assert all(r.reduction_ok for r in rows)
    assert all(r.confirmed for r in rows), [r.task + "/" + r.arch for r in rows if not r.confirmed]


def test_recurrent_protocol_bits_are_state_numbers_times_p():
    rows = separations(n=5, precision="fixed:12:6", instances=8, tasks=["string-equality"],
                       archs=["lstm", "gru", "mamba"], width=3)
    for r in rows:
        # bits per message = the architecture's state count (independent formula) x 12 bits
        assert r.protocol_bits == state_numbers(r.arch, 3) * 12
        assert r.protocol_faithful == 1.0
        assert r.protocol_lower_bound_bits == 5  # D^{A->B}(EQ_5) = 5


def test_deep_transformers_split_and_hybrids_too():
    rows = separations(n=3, instances=4, tasks=["index-lookup"], archs=["transformer-2", "hybrid"])
    deep, hybrid = rows
    # a 2-layer Transformer splits into keys and values per layer (reductions/simulate/deep_transformer.py)
    assert deep.protocol_faithful == 1.0 and deep.protocol_bits is not None
    # a hybrid splits at the prefix/suffix cut in three messages (reductions/simulate/hybrid.py)
    assert hybrid.protocol_faithful == 1.0 and hybrid.protocol_bits is not None


def test_lower_bound_grows_with_n():
    small = separations(n=4, precision=8, instances=4, tasks=["index-lookup"], archs=["elman"])[0]
    large = separations(n=200, precision=8, instances=4, tasks=["index-lookup"], archs=["elman"])[0]
    # BHBK-IL-RNN: m * p >= N with N = n symbols (independent arithmetic)
    assert small.lower_bound_width == -(-4 // 8) and large.lower_bound_width == -(-200 // 8)


def test_cli_json_and_bad_input(capsys):
    code = cli.main(["separations", "--n", "3", "--instances", "4", "--task", "dyck", "--arch", "elman",
                     "transformer-1", "--format", "json"])
    out, _ = capsys.readouterr()
    data = json.loads(out)
    assert code == 0 and [d["arch"] for d in data] == ["elman", "transformer-1"]
    assert data[0]["construction"] == "dyck-elman" and data[0]["construction_correct"] == 4
    for argv in (["separations", "--n", "0"], ["separations", "--task", "nope"],
                 ["separations", "--arch", "nope"], ["separations", "--precision", "float7"]):
        assert cli.main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1
