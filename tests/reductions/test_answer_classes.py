"""Reduction.answer_classes: the readout outputs a model needs, checked against the task's own answers."""

import numpy as np
import pytest

from commcomp.problems import get_problem
from reductions.registry import list_reductions
from reductions.simulate.setup import answer_classes


@pytest.mark.parametrize("red", list_reductions(), ids=lambda r: r.name)
def test_every_answer_fits_the_readout(red):
    n = max(3, red.min_n)
    classes = red.answer_classes(n)
    x, y = get_problem(red.problem).sample(n, 64, np.random.default_rng(5))
    answers = red.task_answers(red.encode(x, y, n))  # the task's own ground truth at the read positions
    if red.task.answer_kind == "vector":
        assert classes == answers.shape[-1]
    else:
        assert answers.min() >= 0 and answers.max() < classes
        if red.task.answer_kind == "bool":
            assert classes == 2
    assert answer_classes(red, n) == classes  # the function kept for scripts is the method
    if hasattr(red.task, "check_cot"):
        assert red.answer_classes(n, cot=True) == red.task.vocab_size(red.task_size(n))
