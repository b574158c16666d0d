"""Confirming a witness: the whole pipeline run on a colliding pair, the fields of DESIGN §4.

Every witness search (:mod:`reductions.search.witness`'s hashing, the reachable states of
:mod:`reductions.search.reachable`) ends here: given x != x' that send the same message and a y
that separates them, :func:`confirm_witness` runs the protocol and the unsplit model on (x, y) and
(x', y) and says on which the model is wrong. It depends on the simulation only, so the searches
depend on it and never on each other.

Examples
--------
>>> import numpy as np
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("index-lookup", "lstm", 24, "fixed:4:2", width=2, seed=0)
>>> from reductions.search.witness import find_witness
>>> w = find_witness("index-lookup", "lstm", 24, "fixed:4:2", width=2, seed=0)
>>> x, x2 = (np.array([int(c) for c in w[k]], dtype=np.uint8) for k in ("x", "x_prime"))
>>> again = confirm_witness(sim, x, x2, np.array(int(w["y"])))
>>> again["wrong_on"] == w["wrong_on"], again["message"] == w["message"], again["outputs_identical"]
(True, True, True)
"""

from __future__ import annotations

import numpy as np

from commcomp.backend import is_numpy, namespace_of, to_numpy
from commcomp.protocol import ALICE, run_protocol

from ..simulate.batch import encode_batch, run_batch
from ..simulate.distinct import pack_words
from ..simulate.setup import format_input

__all__ = ["confirm_witness", "alice_messages"]


def confirm_witness(sim, x, x_prime, y) -> dict:
    """Run the whole pipeline on ``(x, y)`` and ``(x', y)``: the witness fields of DESIGN §4 (``x,
    x_prime, y, model_answer_x, ..., wrong_on, message, outputs_identical, note``)."""
    prob, n = sim.problem, sim.n
    res = run_batch(sim, np.stack([x, x_prime]), np.stack([y, y]))
    answers = res.model_answer
    logits = np.ascontiguousarray(to_numpy(res.reference.logits), dtype=np.float64)  # (2, K, C), printed
    same = bool(np.array_equal(logits[0].view(np.uint64), logits[1].view(np.uint64)))
    wrong = "x" if bool(answers[0]) != bool(res.truth[0]) else "x_prime"
    return {
        "x": format_input(prob, n, x, "alice"), "x_prime": format_input(prob, n, x_prime, "alice"),
        "y": format_input(prob, n, y, "bob"),
        "model_answer_x": bool(answers[0]), "model_answer_x_prime": bool(answers[1]),
        "truth_x": bool(res.truth[0]), "truth_x_prime": bool(res.truth[1]),
        "wrong_on": wrong, "message": res.transcript.messages[-1].rows[0].hex(), "outputs_identical": same,
        "note": (f"x and x' send the same {sim.bits_per_message}-bit message, so the model answers "
                 f"them the same on y, but f differs: it is wrong on {wrong}"),
    }


def alice_messages(sim, x, y, runner: str) -> np.ndarray:
    """Alice's whole side of the transcript on ``(x, y)``, packed: ``(B, bytes)`` uint8."""
    encoded = encode_batch(sim, x, y)  # device tokens for a recurrent device model
    alice_in, bob_in, public = sim.split.party_inputs(encoded, y)
    transcript = run_protocol(sim.split.protocol(alice_runner=runner), alice_in, bob_in, public)
    rows = [m.rows.array for m in transcript.messages if m.sender == ALICE]
    if not is_numpy(rows[0]):  # a device: packed into words there; only the words come to the host
        words = to_numpy(pack_words(namespace_of(*rows).concat(rows, axis=1)))  # (B, W) int64
        return np.ascontiguousarray(words).view(np.uint8)  # byte keys, sorted and hashed on the host
    return np.packbits(np.concatenate(rows, axis=1), axis=1)
