"""Any recurrent model as a one-way protocol (theorems.md §8.1, and §8.2 with chain of thought).

The sequence splits at ``s``, one past Alice's last position: every position before ``s`` is
Alice's or public, every one from ``s`` on is Bob's or public. Alice runs the model over
``tokens[:s]`` and sends the carried state, encoded at the model's precision: exactly
``state_numbers() x P`` bits (:meth:`RecurrentModel.state_to_bits`). Bob decodes it, runs his
suffix, reads the outputs at the read positions and, with a chain of thought, generates it from
there: the generated tokens depend only on the state and on earlier generated tokens.

Bob's code gets a :class:`~commcomp.protocol.PartyView` with his own positions, the public ones,
his problem input y (the decoder may read it) and the bits he was sent; nothing else.

Examples
--------
>>> import numpy as np
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("index-lookup", "gru", 4, "fixed:6:3", width=2)
>>> sim.split.split_at, sim.split.bits_per_instance      # Alice holds 0..3; 2 numbers x 6 bits
(4, 12)
"""

from __future__ import annotations

import numpy as np

from commcomp.backend import is_numpy, namespace_of, to_numpy
from commcomp.bits import BitRows
from commcomp.errors import UnsupportedSplitError
from commcomp.precision import FixedPoint
from commcomp.protocol import ALICE, BOB, Protocol, Step
from commcomp.protocol.owners import OWNER_NAMES, Owner

from .outputs import ModelRun, answers_from_logits, cot_spec
from .running import (flat_rows, generate, group_rows, prefix_tree_run, readout, run_blocks, take_columns,
                      take_rows)
from .splits import MessageSpec, Split, find_theorem, require_prefix_suffix

A_OWNS, B_OWNS, PUBLIC = Owner.ALICE, Owner.BOB, Owner.PUBLIC

__all__ = ["RecurrentSplit", "split_point"]


def split_point(owners) -> int:
    """One past Alice's last position; raises :class:`UnsupportedSplitError` when a Bob position
    comes earlier (the owners are not a prefix/suffix split).

    Examples
    --------
    >>> split_point([1, 0, 1, 2, 0, 2])
    3
    >>> split_point([1, 2, 1, 2])
    Traceback (most recent call last):
    ...
    commcomp.errors.UnsupportedSplitError: a recurrent model is simulated one way (Alice's prefix, then Bob's suffix), but Bob's position 1 comes before Alice's position 2 (owners ABAB): an interleaved split needs another protocol
    """
    owners = np.asarray(owners).reshape(-1)
    alice = np.nonzero(owners == A_OWNS)[0]
    bob = np.nonzero(owners == B_OWNS)[0]
    s = int(alice[-1]) + 1 if alice.size else 0
    if bob.size and bob[0] < s:
        text = "".join(Owner(int(o)).letter for o in owners)
        raise UnsupportedSplitError(
            f"a recurrent model is simulated one way (Alice's prefix, then Bob's suffix), but Bob's "
            f"position {int(bob[0])} comes before Alice's position {int(alice[-1])} (owners "
            f"{text[:40]}{'...' if len(text) > 40 else ''}): an interleaved split needs another protocol")
    return s


class RecurrentSplit(Split):
    """A recurrent model run as a one-way protocol for one reduction at one size (a :class:`~.splits.Split`).

    Parameters
    ----------
    model : RecurrentModel
    reduction : Reduction
    n : int
        Problem size.
    cot : bool
        Bob generates the task's chain of thought after the input and reads the answer from it.

    Raises
    ------
    UnsupportedSplitError
        If Alice's positions do not all come before Bob's, or an output is read inside Alice's
        prefix at a position that depends on her tokens.
    """

    kind = "recurrent"
    arch_class = "recurrent"
    simulation = "one-way, state"
    runners = ("plain", "prefix-tree")
    groups_by_x = True
    state_message = True
    rounds = 1

    @classmethod
    def refuse(cls, spec, layers: int, reduction=None) -> None:
        """A recurrent model is split one way only: the reduction must give Alice a prefix."""
        dyck = reduction is not None and reduction.split == "interleaved-partition"
        require_prefix_suffix(reduction, ", but a recurrent model is simulated one way only: Alice must hold a "
                              "prefix and Bob the suffix" + (" (a bounded Dyck language is regular, so an "
                                                             "interleaved split would prove nothing for RNNs)"
                                                             if dyck else ""))

    @classmethod
    def bob_step_text(cls, out: dict) -> str:
        cont = out["continuation"]
        span = f"{cont['positions'][0]}..{cont['positions'][-1]}" if cont["positions"] else "(none)"
        return f"Bob decodes the state and continues over positions {span}: " + " ".join(cont["tokens"])

    def theorem(self) -> str | None:
        """The reduction's own theorem (its ``source``, a catalogue entry)."""
        return find_theorem(self.reduction, self.model.arch, own_source=True)

    def __init__(self, model, reduction, n: int, cot: bool = False):
        self.model, self.reduction, self.n = model, reduction, int(n)
        self.task = reduction.task
        self.owners = reduction.owners(n)
        self.length = int(self.owners.size)
        self.split_at = split_point(self.owners)
        self.read = np.asarray(reduction.output_positions(n), dtype=np.int64)
        for t in self.read[self.read < self.split_at]:
            if np.any(self.owners[:t + 1] != PUBLIC):
                raise UnsupportedSplitError(
                    f"{reduction.name}: the output at position {int(t)} lies inside Alice's prefix "
                    f"(which ends at {self.split_at - 1}) and depends on her tokens; Bob cannot read it")
        self.cot = cot_spec(self.task, reduction.task_size(n)) if cot else None
        if self.cot is not None and self.read.tolist() != [self.length - 1]:
            raise UnsupportedSplitError("a chain of thought starts after the last position, which must be "
                                        "the only read position")
        self.classes = reduction.answer_classes(n, cot)  # the first logits read (a larger readout is fine)
        self.messages = (MessageSpec(ALICE, BOB, "state", int(model.state_bits())),)

    # -- inputs of the parties ---------------------------------------------------------------
    def party_inputs(self, encoded, y, group: int = 1):
        """``(alice_input, bob_input, public)`` for :func:`~commcomp.protocol.run_protocol`.

        Each party gets its own positions and the public ones (positions and tokens); Bob also
        gets his problem input y, which the reduction's decoder may read. With ``group = G > 1``
        the batch is x-major with G instances per x (every y of an exhaustive run): the
        protocol's instance is then one x and G y's, Alice sends one message per x (her tokens
        do not depend on y) and Bob answers all G; his inputs are ``(B / G, G, ...)``.
        """
        tokens = encoded.tokens
        B = tokens.shape[0]
        if group < 1 or B % group:
            raise ValueError(f"a batch of {B} does not split into groups of {group}")
        mine = {who: np.nonzero((self.owners == who) | (self.owners == PUBLIC))[0] for who in (A_OWNS, B_OWNS)}
        alice = {"positions": mine[A_OWNS], "tokens": take_columns(tokens[::group, ...], mine[A_OWNS])}
        y = np.asarray(y)  # Bob's problem input, read by the reduction's NumPy decoder
        bob_tokens = take_columns(tokens, mine[B_OWNS])  # (B, k), on the tokens' namespace
        bob = {"positions": mine[B_OWNS],
               "tokens": namespace_of(bob_tokens).reshape(bob_tokens, (B // group, group, -1)),
               "y": y.reshape((B // group, group) + y.shape[1:])}
        public = {"n": self.n, "length": self.length, "owners": self.owners.copy(), "group": int(group)}
        return alice, bob, public

    # -- the protocol ------------------------------------------------------------------------
    def protocol(self, alice_runner: str = "plain", sink: dict | None = None, observe=None) -> Protocol:
        """The one-way protocol; Bob's full output (a :class:`ModelRun`) goes to ``sink["bob"]``.

        ``alice_runner`` is ``"plain"`` (one pass over her prefix) or ``"prefix-tree"`` (rows that
        share a prefix share its steps: what exhaustive runs use). ``observe(party, view)`` is
        called with every view a party's code receives (tests use it).
        """
        model, s = self.model, self.split_at
        sink = {} if sink is None else sink

        def alice(view):
            if observe is not None:
                observe(ALICE, view)
            pos, tok = view.own_input["positions"], view.own_input["tokens"]
            k = int(np.searchsorted(pos, s))  # her positions before s: exactly 0..s-1
            if k != s:  # pragma: no cover - split_point guarantees it
                raise UnsupportedSplitError(f"Alice does not hold every position before {s}")
            prefix = tok[:, :k]  # (B, s), a view
            if alice_runner == "prefix-tree" and s > 0:
                state, _ = prefix_tree_run(model, prefix)
            else:
                state, _ = run_blocks(model, prefix)
            return model.state_to_bits(state)

        def bob(view):
            if observe is not None:
                observe(BOB, view)
            state = model.bits_to_state(view.received[0])  # one per x
            pos, tok, y = view.own_input["positions"], view.own_input["tokens"], view.own_input["y"]
            Bx, G = tok.shape[:2]
            rows = group_rows(tok, Bx, G) if G > 1 else None  # instance -> its x's state
            tok = namespace_of(tok).reshape(tok, (Bx * G, -1))
            k = int(np.searchsorted(pos, s))  # positions are sorted: pos[:k] < s <= pos[k:]
            run = self._continue(state, tok[:, k:], tok[:, :k], pos[:k], rows)
            sink["bob"] = run
            answers = self.reduction.decode(run.answers, y.reshape((Bx * G,) + y.shape[2:]))
            return answers.reshape(Bx, G)

        (state,) = self.messages
        return Protocol(f"{self.reduction.name}/{model.arch}/one-way",
                        (Step(state.sender, state.receiver, alice, state.label),), BOB, bob,
                        "Alice runs her prefix and sends the state; Bob continues (theorems.md §8.1)")

    def _continue(self, state, suffix, public_prefix, public_positions, state_rows=None) -> ModelRun:
        """Bob's end: from ``state`` over ``suffix`` (positions s..N-1), reading the outputs.
        ``state_rows``: instance r continues row ``state_rows[r]`` of ``state``."""
        model, s = self.model, self.split_at
        early = [int(t) for t in self.read if t < s]
        outs = {}
        if early:  # public-only positions: Bob runs them himself from the initial state
            if public_positions[:max(early) + 1].tolist() != list(range(max(early) + 1)):
                raise UnsupportedSplitError("an early read position is not public")  # pragma: no cover
            _, ys = run_blocks(model, public_prefix[:, :max(early) + 1], read_at=early, logits=True)
            outs.update(ys)
        return self._suffix(state, suffix, state_rows, outs)

    def _suffix(self, state, suffix, state_rows, outs) -> ModelRun:
        """From ``state`` (rows ``state_rows``) over ``suffix``, positions s..N-1: the outputs at
        the read positions there join ``outs`` ({position: logits}); then :meth:`_finish`."""
        s = self.split_at
        late = [int(t) - s for t in self.read if t >= s]
        state, ys = run_blocks(self.model, suffix, state, read_at=late, state_rows=state_rows, logits=True,
                               flat_state=self.cot is None)  # CoT continues from the state arrays
        outs.update({int(t) + s: z for t, z in ys.items()})
        return self._finish(state, outs)

    def _finish(self, state, logits) -> ModelRun:
        """``state``: the final state (a dict, or flat ``(B, k)``); ``logits``: {position: (B, C)}."""
        model = self.model
        xp = namespace_of(*logits.values()) if logits else model.xp
        logits = xp.astype(xp.stack([logits[int(t)] for t in self.read], axis=1), xp.float64)  # (B, K, C)
        generated = cot_logits = None
        if self.cot is not None:
            last = xp.astype(logits[:, -1, :], model.dtype)
            state, generated, cot_logits = generate(model, state, last, self.cot.steps)
            answers = self.cot.answers(to_numpy(generated))  # (B, 1) read on the host, like every answer
        else:
            answers = answers_from_logits(logits, self.task.answer_kind, self.classes)
        return ModelRun(logits, answers, generated, cot_logits, self._state_values(state))

    def _state_values(self, state) -> np.ndarray:
        """The final state as ``(B, k)`` uint64 float64 bit patterns of the numbers the format holds:
        a fixed-point format has no -0, so a -0.0 the arithmetic leaves in the state counts as 0.
        ``state``: a dict of arrays, or the flat ``(B, k)`` float64 array of :func:`run_blocks`
        (``flat_state``), which is then changed in place."""
        if not is_numpy(state if not isinstance(state, dict) else next(iter(state.values()))):
            flat = flat_rows(state) if isinstance(state, dict) else state  # (B, k) float64 on the device
            # compared there as values with their sign bits (outputs.compare_runs), never viewed
            return flat + 0.0 if isinstance(self.model.precision, FixedPoint) else flat
        if isinstance(state, dict):
            parts = [to_numpy(v).reshape(v.shape[0], -1) for v in state.values()]
            flat = np.ascontiguousarray(np.concatenate(parts, axis=1), dtype=np.float64)
        else:
            flat = state
        if isinstance(self.model.precision, FixedPoint):
            flat += 0.0  # -0.0 + 0.0 = +0.0
        return flat.view(np.uint64)

    # -- the unsplit model ---------------------------------------------------------------------
    def reference(self, encoded, runner: str = "plain", group: int = 1) -> ModelRun:
        """The unsplit model over the whole sequences (``runner`` ``"plain"`` or ``"prefix-tree"``).

        The prefix tree with ``group = G > 1`` (an x-major batch, G instances per x): when the
        rows of each group agree on positions 0..s-1 (checked), the tree is that of the G-row
        groups: the model runs over the distinct prefixes ``tokens[::G, :s]`` level by level, then
        every row continues its group's state over its own positions s..N-1. These are the model's
        own steps over each whole sequence, the same as the generic tree finds; nothing here
        reads a message (the protocol's states never reach this pass).
        """
        tokens, model, s = encoded.tokens, self.model, self.split_at  # host or device tokens
        xp = namespace_of(tokens)
        B = tokens.shape[0]
        if runner == "prefix-tree" and group > 1 and 0 < s < self.length and B % group == 0:
            heads = tokens[::group, :s]  # (B / G, s)
            if bool(xp.all(xp.reshape(tokens[:, :s], (B // group, group, s)) == heads[:, None, :])):
                early = [int(t) for t in self.read if t < s]
                state, ys = prefix_tree_run(model, heads, read_at=early)
                rows = group_rows(tokens, B // group, group)  # row -> its group's prefix state
                outs = {t: take_rows({"z": readout(model, y)}, rows)["z"] for t, y in ys.items()}
                return self._suffix(state, tokens[:, s:], rows, outs)
        flat = self.cot is None
        if runner == "prefix-tree":
            state, ys = prefix_tree_run(model, tokens, read_at=self.read)
            outs = {t: readout(model, y) for t, y in ys.items()}
        else:
            state, outs = run_blocks(model, tokens, read_at=self.read, logits=True, flat_state=flat)
        return self._finish(state, outs)

    # -- reading a message -------------------------------------------------------------------
    def describe_message(self, rows: BitRows, b: int = 0, label: str | None = None) -> list[tuple[str, list[float]]]:
        """The numbers in instance ``b``'s message (its one message, the state): ``[(state array name, values), ...]``."""
        state = self.model.bits_to_state(BitRows(rows.array[b:b + 1, ...]))
        return [(k, to_numpy(v).reshape(-1).astype(float).tolist()) for k, v in state.items()]

    def describe(self) -> str:
        owners = " ".join(f"{OWNER_NAMES[k]}={int(np.sum(self.owners == k))}" for k in (A_OWNS, B_OWNS, PUBLIC))
        return (f"one-way: Alice runs positions 0..{self.split_at - 1} and sends the state "
                f"({self.model.state_numbers()} numbers x {self.bits_per_instance // max(1, self.model.state_numbers())}"
                f" bits); Bob runs {self.split_at}..{self.length - 1} ({owners})")
