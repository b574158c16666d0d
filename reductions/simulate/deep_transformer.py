"""An L-layer Transformer (L >= 2) as a protocol under any partition: each layer's input rows.

Why not partial sums. A 1-layer model at a precision defines its attention by exact fixed-point
sums with a shift agreed from the weights (:mod:`.transformer`), so partial sums add up bit for bit.
Below its top layer an L-layer model (:meth:`~models.transformer.Transformer.forward`) computes
attention as a float softmax with the row maximum as shift; the row maximum needs every score of
the row, and float sums in another order differ in the last bits (DESIGN §3). A split faithful to
that model bit for bit therefore sends what the model's attention reads: the **residual-stream rows
(the layer's input) of the sender's positions that the receiver's positions attend to**, each a
``d``-vector of P-bit numbers, exactly the values the unsplit model holds. The receiver puts them in
place (:meth:`~models.transformer.Transformer.layer_inputs` with ``patches``) and runs the layer as
the unsplit model runs it, over arrays of the same shapes, so its own rows come out bit for bit.

Who computes which row: Alice her positions, Bob his and the public ones, except a causal model's
public prefix (every position up to it public), which both compute. At layer ``l < L - 1`` each
party computes all of its rows; at the top layer Bob computes the read positions only. The receiver
needs the sender's rows at every position its rows attend to: all of them, or with a causal mask
those up to its last computed row. Per layer, Alice's rows go first, then Bob's; consecutive
messages of one sender merge (a causal model split as prefix/suffix sends one message, all of
Alice's layers at once: one round). Cost per instance::

    bits = d · P · sum over layers l and directions of |rows the receiver needs at layer l|

(``P``: the precision's bits; 64 in float64 reference mode). With Alice's prefix of ``s``
positions, Bob's suffix and a causal model this is ``L · s · d · P`` in one message.

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("string-equality", "transformer", 3, "fixed:8:4", width=2, layers=2)
>>> split = sim.split
>>> [(m.sender, m.receiver, m.label, m.bits) for m in split.messages], split.rounds
([('alice', 'bob', 'rows of layers 0, 1', 96)], 1)
>>> split.message_bits_formula() == split.bits_per_instance == 2 * 3 * 2 * 8   # L · s · d · P
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.backend import namespace_of, to_numpy
from commcomp.bits import BitRows
from commcomp.errors import UnsupportedSplitError
from commcomp.precision import FLOAT64
from commcomp.protocol import ALICE, BOB, Protocol, Step
from commcomp.protocol.owners import Owner

from .outputs import ModelRun, run_from_logits
from .running import scatter_columns, take_columns
from .splits import MessageSpec, Split, find_theorem
from .transformer import no_cot

__all__ = ["DeepTransformerSplit", "RowsPart", "plan_messages"]

A_OWNS, B_OWNS, PUBLIC = Owner.ALICE, Owner.BOB, Owner.PUBLIC
_PARTY = {int(A_OWNS): ALICE, int(B_OWNS): BOB}


@dataclass(frozen=True)
class RowsPart:
    """One layer's rows inside a message: the input of ``layer`` at ``positions`` (sorted)."""

    layer: int
    positions: tuple[int, ...]


def compute_owners(owners: np.ndarray, causal: bool) -> np.ndarray:
    """Who computes each row: Alice (1), Bob (2, also the public rows), or both (0: a causal
    model's public prefix, or every row when all are public)."""
    comp = np.where(owners == PUBLIC, B_OWNS, owners).astype(np.int64)
    private = np.nonzero(owners != PUBLIC)[0]
    first = int(private[0]) if private.size else owners.size
    if causal or not private.size:
        comp[:first] = PUBLIC
    return comp


def plan_messages(owners, read, layers: int, causal: bool) -> tuple[tuple[int, int, tuple[RowsPart, ...]], ...]:
    """The messages ``(sender, receiver, parts)`` (owner codes) of the split, in order (module docstring).

    >>> owners = np.array([1, 1, 2, 2])                       # Alice 0, 1; Bob 2, 3; read at 3
    >>> [(s, r, [(p.layer, p.positions) for p in parts]) for s, r, parts in plan_messages(owners, [3], 2, True)]
    [(1, 2, [(0, (0, 1)), (1, (0, 1))])]
    >>> [(s, r, [(p.layer, p.positions) for p in parts]) for s, r, parts in plan_messages(owners, [3], 2, False)]
    [(1, 2, [(0, (0, 1))]), (2, 1, [(0, (2, 3))]), (1, 2, [(1, (0, 1))])]
    """
    owners = np.asarray(owners)
    comp, N = compute_owners(owners, causal), owners.size
    raw = []
    for layer in range(int(layers)):
        for sender, receiver in ((A_OWNS, B_OWNS), (B_OWNS, A_OWNS)):
            if layer == layers - 1:  # the top layer: Bob alone, at the read positions
                active = np.asarray(read, dtype=np.int64) if receiver == B_OWNS else np.zeros(0, np.int64)
            else:
                active = np.nonzero(comp == receiver)[0]
            if not active.size:
                continue
            wanted = comp == sender
            if causal:
                wanted &= np.arange(N) <= int(active.max())
            positions = tuple(int(j) for j in np.nonzero(wanted)[0])
            if positions:
                raw.append((int(sender), int(receiver), RowsPart(layer, positions)))
    merged: list[tuple[int, int, tuple[RowsPart, ...]]] = []
    for sender, receiver, part in raw:
        if merged and merged[-1][0] == sender:
            merged[-1] = (sender, receiver, merged[-1][2] + (part,))
        else:
            merged.append((sender, receiver, (part,)))
    return tuple(merged)


class DeepTransformerSplit(Split):
    """An L-layer Transformer (L >= 2) run as a protocol of residual-stream rows (a :class:`~.splits.Split`).

    Attributes
    ----------
    plan : tuple
        ``(sender, receiver, parts)`` per message, parts :class:`RowsPart` (:func:`plan_messages`).
    code : Precision
        The code of every number sent: the model's precision (float64 in reference mode).
    """

    kind = "transformer-layers"
    arch_class = "transformer"
    simulation = "partition, rows per layer"

    @classmethod
    def handles(cls, spec, model=None, layers=None) -> bool:
        """A Transformer of two layers or more (not qSA's row unit)."""
        depth = getattr(model, "n_layers", None) if model is not None else layers
        return spec.arch_class == cls.arch_class and depth is not None and int(depth) >= 2 and \
            (model is None or hasattr(model, "layer_inputs"))

    @classmethod
    def model_options(cls, reduction, n: int) -> dict:
        return {"max_len": max(4096, reduction.length(n))}

    @classmethod
    def bob_step_text(cls, out: dict) -> str:
        return out.get("bob_step") or ("Bob puts the rows he received in place, runs every layer at his "
                                       "positions and the top layer at the read positions")

    def theorem(self) -> str | None:
        """The task's lower bound for an L-layer Transformer, else the problem's communication fact."""
        return find_theorem(self.reduction, "transformer", layers=self.layers, rounds=self.rounds)

    def __init__(self, model, reduction, n: int, cot: bool = False):
        no_cot(cot)
        if not hasattr(model, "layer_inputs") or getattr(model, "n_layers", 0) < 2:
            raise UnsupportedSplitError(f"the row protocol splits a Transformer of 2 layers or more; this model "
                                        f"has {getattr(model, 'n_layers', '?')} (1 layer: partial sums)")
        self.model, self.reduction, self.n = model, reduction, int(n)
        self.task = reduction.task
        self.layers = int(model.n_layers)
        self.owners = reduction.owners(n)
        self.length = int(self.owners.size)
        self.read = np.asarray(reduction.output_positions(n), dtype=np.int64)
        self.comp = compute_owners(self.owners, model.causal)
        self.plan = plan_messages(self.owners, self.read, self.layers, model.causal)
        self.code = model.precision if model.precision is not None else FLOAT64
        self.messages = tuple(MessageSpec(_PARTY[s], _PARTY[r], _label(parts), self._bits(parts))
                              for s, r, parts in self.plan)
        self.rounds = len(self.messages)
        self.classes = reduction.answer_classes(n)

    def _bits(self, parts) -> int:
        return int(sum(len(p.positions) for p in parts) * self.model.d_model * self.code.bits)

    def message_bits_formula(self) -> int:
        """``d · P · (rows sent over all layers and directions)``: the formula of the module docstring,
        counted from the plan (a test checks it against the bits actually sent)."""
        rows = sum(len(p.positions) for _, _, parts in self.plan for p in parts)
        return int(rows * self.model.d_model * self.code.bits)

    # -- inputs of the parties ---------------------------------------------------------------
    def party_inputs(self, encoded, y, group: int = 1):
        """``(alice_input, bob_input, public)``: each party's own positions and the public ones (Bob
        also his y); ``group`` must be 1."""
        self._one_group(group)
        tokens = encoded.tokens
        mine = {who: np.nonzero((self.owners == who) | (self.owners == PUBLIC))[0] for who in (A_OWNS, B_OWNS)}
        alice = {"positions": mine[A_OWNS], "tokens": take_columns(tokens, mine[A_OWNS])}
        bob = {"positions": mine[B_OWNS], "tokens": take_columns(tokens, mine[B_OWNS]), "y": np.asarray(y)}
        return alice, bob, {"n": self.n, "length": self.length, "owners": self.owners.copy()}

    # -- one party's computation -------------------------------------------------------------
    def _patches(self, party: str, received) -> dict:
        """Layer -> ``(rows (B, N, d), mask (N,))`` from the messages ``party`` received, in order."""
        model, d, N = self.model, self.model.d_model, self.length
        incoming = [parts for s, r, parts in self.plan if _PARTY[r] == party]
        patches = {}
        for parts, rows in zip(incoming, received):
            values = self.code.decode_rows(rows.array)  # (B, k·d) float64, the bits' namespace
            xp = namespace_of(values)
            offset = 0
            for part in parts:
                k = len(part.positions)
                block = xp.reshape(values[:, offset * d:(offset + k) * d], (values.shape[0], k, d))  # (B, k, d)
                offset += k
                source = np.zeros(N, dtype=np.int64)
                source[list(part.positions)] = np.arange(k)
                mask = np.zeros(N, dtype=bool)
                mask[list(part.positions)] = True
                full = xp.take(xp.astype(block, model.dtype), xp.asarray(source), axis=1)  # (B, N, d)
                patches[part.layer] = (full, mask)
        return patches

    def _stream(self, own, party: str, received, layer: int):
        """``party``'s residual stream ``(B, N, d)`` at the input of ``layer``: its rows (and those it
        received) exact, the others garbage that no row it computes reads."""
        tokens = scatter_columns(own["tokens"], own["positions"], self.length)  # (B, N), 0 elsewhere
        return self.model.layer_inputs(tokens, layer, self._patches(party, received))

    # -- the protocol ------------------------------------------------------------------------
    def protocol(self, alice_runner: str = "plain", sink: dict | None = None, observe=None) -> Protocol:
        """The row protocol; Bob's full output (a :class:`ModelRun`) goes to ``sink["bob"]``."""
        sink = {} if sink is None else sink

        def sender(parts, party):
            def send(view):
                if observe is not None:
                    observe(party, view)
                chunks = []
                for part in parts:
                    x = self._stream(view.own_input, party, view.received, part.layer)  # (B, N, d)
                    xp = namespace_of(x)
                    rows = xp.take(x, xp.asarray(np.asarray(part.positions, dtype=np.int64)), axis=1)
                    chunks.append(xp.reshape(xp.astype(rows, xp.float64), (x.shape[0], -1)))  # (B, k·d)
                return BitRows(self.code.encode_rows(namespace_of(*chunks).concat(chunks, axis=1)))
            return send

        def bob(view):
            if observe is not None:
                observe(BOB, view)
            x = self._stream(view.own_input, BOB, view.received, self.layers - 1)  # (B, N, d)
            run = self._run([self.model.top_logits(x, int(o)) for o in self.read])
            sink["bob"] = run
            return self.reduction.decode(run.answers, view.own_input["y"])

        steps = tuple(Step(m.sender, m.receiver, sender(parts, m.sender), m.label)
                      for m, (_, _, parts) in zip(self.messages, self.plan))
        return Protocol(f"{self.reduction.name}/transformer-{self.layers}/{self.rounds}-message", steps, BOB, bob,
                        "residual-stream rows per layer (reductions/simulate/deep_transformer.py)")

    def _run(self, logits) -> ModelRun:
        return run_from_logits(logits, self.task.answer_kind, self.classes)

    def reference(self, encoded, runner: str = "plain", group: int = 1) -> ModelRun:
        """The unsplit model's forward pass at every read position."""
        self._one_group(group)
        return self._run([self.model.forward(encoded.tokens, output_position=int(o)) for o in self.read])

    # -- reading a message -------------------------------------------------------------------
    def describe_message(self, rows: BitRows, b: int = 0, label: str | None = None):
        """The rows in instance ``b``'s message ``label``: ``x{layer}@{position}`` and its d numbers."""
        index = next((i for i, m in enumerate(self.messages) if m.label == label), 0)
        values = self.code.decode_rows(to_numpy(rows.array[b:b + 1, ...]))[0]
        d, out, offset = self.model.d_model, [], 0
        for part in self.plan[index][2]:
            for j in part.positions:
                out.append((f"x{part.layer}@{j}", values[offset * d:(offset + 1) * d].tolist()))
                offset += 1
        return out

    def describe(self) -> str:
        who = {ALICE: "Alice", BOB: "Bob"}
        steps = "; ".join(f"{who[m.sender]} sends {m.label} ({m.bits} bits)" for m in self.messages)
        return (f"{self.rounds}-message row protocol of a {self.layers}-layer Transformer: {steps}; "
                f"{self.model.d_model} numbers of {self.code.bits} bits per row")


def _label(parts) -> str:
    layers = ", ".join(str(p.layer) for p in parts)
    return f"rows of layer{'s' if len(parts) > 1 else ''} {layers}"
