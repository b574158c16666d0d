"""Task encodings for people (issue 25): ``list tasks --wide``, its JSON, and ``--help`` with a task named.

Each encoding's numbers are recomputed from the task's own methods, and its worked instance is
read back through the vocabulary and judged by the task's ground truth (independently of the
renderer that wrote it).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import cli
from reductions.registry import EXTRA_TASKS, TASKS, get_task
from reductions.tasks.encoding import task_encoding

NAMES = sorted(TASKS) + sorted(EXTRA_TASKS)


@pytest.mark.parametrize("name", NAMES)
def test_encoding_is_the_tasks_own(name):
    task = get_task(name)
    enc = task_encoding(task)
    n = enc.n
    assert enc.length == task.length(n) and enc.vocabulary == tuple(task.vocabulary(n))
    assert enc.output_positions == tuple(int(p) for p in task.output_positions(n))
    assert enc.text and ">>>" not in enc.text and "Examples\n--------" not in enc.text
    names = enc.example.split(" ")
    if len(names) == enc.length and all(v and " " not in v for v in enc.vocabulary) and task.feature_width(n) == 0:
        ids = np.array([[enc.vocabulary.index(v) for v in names]], dtype=np.int64)  # the instance read back
        truth = np.asarray(task.ground_truth(task.make_batch(n, ids)))[0].tolist()
        assert str(truth) == enc.example_answer


def test_see_class_is_followed():
    """String Equality's docstring points to TwoStringTask for the format: its vocabulary line is there."""
    text = task_encoding(get_task("string-equality")).text
    assert "as TwoStringTask" in text and "[CLS]" in text


def test_list_tasks_json_and_wide(capsys):
    assert cli.main(["list", "tasks", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in rows} == set(NAMES)
    assert all(r["encoding"]["vocabulary"] and r["encoding"]["text"] for r in rows)
    assert cli.main(["list", "tasks", "--wide"]) == 0
    out = capsys.readouterr().out
    assert all(f"\n{name}:\n" in out for name in NAMES)
    assert cli.main(["list", "tasks"]) == 0
    assert "Encodings" not in capsys.readouterr().out  # the short table stays short


def test_help_with_a_task_shows_its_encoding(capsys):
    with pytest.raises(SystemExit):
        cli.main(["simulate", "index-lookup", "--help"])
    out = capsys.readouterr().out
    assert "task encoding" in out and "ids 0=0, 1=1, 2=p0" in out
    with pytest.raises(SystemExit):
        cli.main(["verify", "--arch", "lstm", "dyck", "-h"])
    assert "4=[CLS]" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["simulate", "--help"])
    assert "task encoding" not in capsys.readouterr().out
