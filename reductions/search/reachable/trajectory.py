"""Alice's trajectory: the carried state after each of her steps, for ``simulate --trajectory``.

Recurrent split: each entry is one position before the split: who holds it, its token, the state
after the step as the message it would be (hex, at the model's precision) and the decoded numbers
of each state array. The steps run one position at a time in the engine's fixed row blocks
(:mod:`.stepping`), so the states are the ones the reachable-states search merges. 1-layer
Transformer split (exact sums): each entry is one of Alice's positions and her partial sums over
her positions up to it (the integers on the grid, per read position and head: numerators, then the
denominator). In both cases the last entry is checked against the message the protocol sent.

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

from commcomp.bits import BitRows

from ...base import ALICE, OWNER_NAMES
from .stepping import canonical, step_rows
from .transformer import query_rows

__all__ = ["alice_trajectory"]


def alice_trajectory(sim, tokens) -> list[dict]:
    """The state after each of Alice's positions ``0..split_at-1`` for one token row ``(N,)``."""
    split = sim.split
    if split.partial_sums_message and split.exact:
        return _partial_sums_trajectory(sim, tokens)
    if not split.state_message:
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


def _partial_sums_trajectory(sim, tokens) -> list[dict]:
    """Alice's exact partial sums after each of her positions (one row per prefix of her positions)."""
    split, model, vocab = sim.split, sim.model, sim.task.vocabulary(sim.task_n)
    tokens = np.asarray(tokens, dtype=np.int64).reshape(1, -1)
    positions = np.nonzero(split.owners == ALICE)[0]
    k, N = len(positions), tokens.shape[1]
    if k == 0:
        return []
    rows = np.repeat(tokens, k, axis=0)  # (k, N): row t sums over positions[:t + 1]
    mask = np.zeros((k, N), dtype=bool)
    for t, p in enumerate(positions):
        mask[t:, p] = True
    bits, numbers = [], []
    for o in (int(o) for o in split.read):
        q = query_rows(model.query(tokens[:, o], o), k)
        part = model.partial(rows, mask, query=q, output_position=o)
        bits.append(to_numpy(part.to_bit_rows()))  # printed (hex): encoded on the device, then moved
        numbers.append((o, to_numpy(part.numerator), to_numpy(part.denominator)))
    bits = np.concatenate(bits, axis=1)  # (k, message bits)
    out = []
    for t, p in enumerate(positions):
        tok = int(tokens[0, p])
        out.append({"position": int(p), "owner": OWNER_NAMES[ALICE],
                    "token": vocab[tok] if 0 <= tok < len(vocab) else str(tok),
                    "hex": BitRows(bits[t:t + 1])[0].hex(),
                    "numbers": [{"name": f"{what}@{o}.h{h}", "values": [int(v) for v in np.ravel(arr[t, h])]}
                                for o, num, den in numbers for h in range(num.shape[1])
                                for what, arr in (("S", num), ("Z", den))]})
    return out
