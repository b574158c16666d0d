"""Alice's trajectory: the carried state after each of her steps, for ``simulate --trajectory``.

Each entry is one position before the split: who holds it, its token, the state after the step
as the message it would be (hex, at the model's precision) and the decoded numbers of each state
array. The steps run one position at a time in the engine's fixed row blocks
(:mod:`.stepping`), so the states are the ones the reachable-states search merges; the last one
is checked against the message the protocol actually sent.

Examples
--------
>>> from reductions.simulate import simulate
>>> out = simulate("index-lookup", "elman", 4, "fixed:4:2", width=1, x="1011", y="2", trajectory=True)
>>> [step["hex"] for step in out["trajectory"]], out["trajectory_matches_message"]
(['0', '3', 'e', '1'], True)
"""

from __future__ import annotations

import numpy as np

from commcomp.backend import to_numpy

from ..base import OWNER_NAMES
from .stepping import canonical, step_rows

__all__ = ["alice_trajectory"]


def alice_trajectory(sim, tokens) -> list[dict]:
    """The state after each of Alice's positions ``0..split_at-1`` for one token row ``(N,)``."""
    split = sim.split
    if getattr(split, "kind", None) != "recurrent":
        return []
    model, vocab = sim.model, sim.task.vocabulary(sim.task_n)
    tokens = np.asarray(tokens).reshape(-1)
    state = model.init_state(1)
    out = []
    for t in range(split.split_at):
        state = step_rows(model, state, tokens[t:t + 1])
        keys, decoded = canonical(model, state)
        bits = model.state_to_bits(state)
        tok = int(tokens[t])
        out.append({"position": t, "owner": OWNER_NAMES[int(split.owners[t])],
                    "token": vocab[tok] if 0 <= tok < len(vocab) else str(tok), "hex": bits[0].hex(),
                    "numbers": [{"name": k, "values": to_numpy(v).reshape(-1).astype(float).tolist()}
                                for k, v in decoded.items()]})
    return out
