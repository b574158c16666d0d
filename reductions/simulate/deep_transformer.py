"""An L-layer Transformer (L >= 2) as a protocol under any partition: each layer's keys and values.

Why not partial sums. A 1-layer model at a precision defines its attention by exact fixed-point
sums with a shift agreed from the weights (:mod:`.transformer`), so partial sums add up bit for bit.
An L-layer model (:meth:`~models.transformer.Transformer.forward`) computes each layer's attention
as a float softmax with the row maximum as shift; the row maximum needs every score of the row, and
float sums in another order differ in the last bits (DESIGN §3). A split faithful to that model bit
for bit therefore sends what its attention reads from the other side: **per layer, the keys and
values of the sender's positions that the receiver's positions attend to**, ``H·(d_k + d_v)``
numbers of P bits per position (layer 0's keys are not sent when no token changes them:
:meth:`~models.transformer.Transformer.shares_first_keys`), exactly the rounded values the unsplit
model holds. The receiver puts them in place before laying out the heads
(:meth:`~models.transformer.block.AttentionBlock.heads` with a ``patch``) and runs the layer over
arrays of the same shapes and layout as the unsplit pass, so its own rows come out bit for bit. The
receiver never sees the sender's residual stream, so it cannot compute the sender's next layer
itself: every layer's keys and values cross, and every one is read.

Who computes which row (:func:`compute_owners`): Alice her positions, Bob his and the public ones,
except under a causal mask, where a public row before every private one is computed by both and
one before Bob's first row by Alice. At layer ``l < L - 1`` each party computes all of its rows; at
the top layer Bob computes the read positions only. The receiver needs the sender's keys and values
at every position its rows attend to: all of them, or with a causal mask those up to its last
computed row. Per layer, Alice's message goes first, then Bob's; consecutive messages of one sender
merge (a causal model split as prefix/suffix: Alice sends every layer at once, one message). Cost
per instance::

    bits = P · sum over layers l and directions of |positions sent at l| · H · (d_k·[K sent at l] + d_v)

(``P``: the precision's bits; 64 in float64 reference mode). With Alice's prefix of ``s``
positions, Bob's suffix and a causal mask this is ``L · s · H · (d_k + d_v) · P`` (less
``s · H · d_k · P`` when layer 0's keys are shared), in one message.

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("string-equality", "transformer", 3, "fixed:8:4", width=2, layers=2)
>>> split = sim.split
>>> [(m.sender, m.receiver, m.label) for m in split.messages], split.rounds
([('alice', 'bob', 'keys and values of layers 0, 1')], 1)
>>> split.message_bits_formula() == split.bits_per_instance == 2 * 3 * 1 * (2 + 2) * 8   # L s H (d_k + d_v) P
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
    """One layer's keys and values inside a message: layer ``layer``'s arrays ``names`` (``("K", "V")``,
    or ``("V",)`` when the keys are shared) at ``positions`` (sorted)."""

    layer: int
    positions: tuple[int, ...]
    names: tuple[str, ...] = ("K", "V")


def compute_owners(owners: np.ndarray, causal: bool, read=()) -> np.ndarray:
    """Who computes each row: Alice (1), Bob (2), or both (0).

    Private rows: their owner. Public rows: Bob, except under a causal mask, where a public row
    before every private one is computed by both, and one before Bob's first row (his own or a read
    position: Bob computes those) by Alice (its row reads only rows she computes).

    >>> compute_owners(np.array([0, 1, 0, 1, 0, 2, 0]), True).tolist()
    [0, 1, 1, 1, 1, 2, 2]
    >>> compute_owners(np.array([0, 1, 0, 1, 0, 2, 0]), False).tolist()
    [2, 1, 2, 1, 2, 2, 2]
    >>> compute_owners(np.array([1, 1, 0, 0]), True, read=[2, 3]).tolist()   # Bob holds only public rows
    [1, 1, 2, 2]
    """
    owners = np.asarray(owners)
    comp = np.where(owners == PUBLIC, B_OWNS, owners).astype(np.int64)
    index, public = np.arange(owners.size), owners == PUBLIC
    bob = (owners == B_OWNS) | np.isin(index, np.asarray(read, dtype=np.int64))

    def first(mask) -> int:
        hits = np.nonzero(mask)[0]
        return int(hits[0]) if hits.size else owners.size

    if causal:
        comp[public & (index < first(bob))] = A_OWNS
        comp[index < first(~public)] = PUBLIC
    elif not np.any(~public):
        comp[:] = PUBLIC
    return comp


def plan_messages(owners, read, layers: int, causal: bool, shared_first_keys: bool = False
                  ) -> tuple[tuple[int, int, tuple[RowsPart, ...]], ...]:
    """The messages ``(sender, receiver, parts)`` (owner codes) of the split, in order (module docstring).

    >>> owners = np.array([1, 1, 2, 2])                       # Alice 0, 1; Bob 2, 3; read at 3
    >>> [(s, r, [(p.layer, p.positions) for p in parts]) for s, r, parts in plan_messages(owners, [3], 2, True)]
    [(1, 2, [(0, (0, 1)), (1, (0, 1))])]
    >>> [(s, r, [(p.layer, p.positions) for p in parts]) for s, r, parts in plan_messages(owners, [3], 2, False)]
    [(1, 2, [(0, (0, 1))]), (2, 1, [(0, (2, 3))]), (1, 2, [(1, (0, 1))])]
    """
    owners = np.asarray(owners)
    comp, N = compute_owners(owners, causal, read), owners.size
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
                names = ("V",) if layer == 0 and shared_first_keys else ("K", "V")
                raw.append((int(sender), int(receiver), RowsPart(layer, positions, names)))
    merged: list[tuple[int, int, tuple[RowsPart, ...]]] = []
    for sender, receiver, part in raw:
        if merged and merged[-1][0] == sender:
            merged[-1] = (sender, receiver, merged[-1][2] + (part,))
        else:
            merged.append((sender, receiver, (part,)))
    return tuple(merged)


class DeepTransformerSplit(Split):
    """An L-layer Transformer (L >= 2) run as a protocol of keys and values per layer (a :class:`~.splits.Split`).

    Attributes
    ----------
    plan : tuple
        ``(sender, receiver, parts)`` per message, parts :class:`RowsPart` (:func:`plan_messages`).
    code : Precision
        The code of every number sent: the model's precision (float64 in reference mode).
    """

    kind = "transformer-layers"
    arch_class = "transformer"
    simulation = "2+ layers: keys and values"

    @classmethod
    def handles(cls, spec, model=None, layers=None) -> bool:
        """A Transformer of two layers or more (not qSA's row unit)."""
        depth = getattr(model, "n_layers", None) if model is not None else layers
        return spec.arch_class == cls.arch_class and depth is not None and int(depth) >= 2 and \
            (model is None or hasattr(model, "layer_inputs"))

    @classmethod
    def refuse(cls, spec, layers: int, reduction=None) -> None:
        """A row-reading task (qsa) is run by the 1-layer attention-row unit only."""
        from .qsa import reads_rows

        if reduction is not None and reads_rows(reduction):
            raise UnsupportedSplitError(
                f"{reduction.name}: a {layers}-layer model is not simulated for {reduction.task_name}; its rows "
                "carry real vectors, read by the 1-layer attention-row unit (reductions/simulate/qsa.py)")

    @classmethod
    def model_options(cls, reduction, n: int) -> dict:
        return {"max_len": max(4096, reduction.length(n))}

    @classmethod
    def bob_step_text(cls, out: dict) -> str:
        return out.get("bob_step") or ("Bob puts the keys and values he received in place, runs every layer "
                                       "at his positions and the top layer at the read positions")

    def theorem(self) -> str | None:
        """The task's lower bound for an L-layer Transformer, else the problem's communication fact."""
        return find_theorem(self.reduction, "transformer", layers=self.layers, rounds=self.rounds)

    def __init__(self, model, reduction, n: int, cot: bool = False):
        no_cot(cot)
        if not hasattr(model, "layer_inputs") or getattr(model, "n_layers", 0) < 2:
            raise UnsupportedSplitError(f"the key-value protocol splits a Transformer of 2 layers or more; this model "
                                        f"has {getattr(model, 'n_layers', '?')} (1 layer: partial sums)")
        self.model, self.reduction, self.n = model, reduction, int(n)
        self.task = reduction.task
        self.layers = int(model.n_layers)
        self.owners = reduction.owners(n)
        self.length = int(self.owners.size)
        self.read = np.asarray(reduction.output_positions(n), dtype=np.int64)
        alice_reads = [int(o) for o in self.read if self.owners[o] == A_OWNS]
        if alice_reads:
            raise UnsupportedSplitError(
                f"{reduction.name}: the output is read at position {alice_reads[0]}, which is Alice's; Bob "
                "computes the top layer at the read positions and does not know her token there")
        self.comp = compute_owners(self.owners, model.causal, self.read)
        self.plan = plan_messages(self.owners, self.read, self.layers, model.causal,
                                  model.shares_first_keys(self.length))
        self.code = model.precision if model.precision is not None else FLOAT64
        self.messages = tuple(MessageSpec(_PARTY[s], _PARTY[r], _label(parts), self._bits(parts))
                              for s, r, parts in self.plan)
        self.rounds = len(self.messages)
        self.classes = reduction.answer_classes(n)

    def _numbers_per_position(self, names) -> int:
        width = {"K": self.model.d_k, "V": self.model.d_v}
        return int(self.model.n_heads * sum(width[name] for name in names))

    def _bits(self, parts) -> int:
        return int(sum(len(p.positions) * self._numbers_per_position(p.names) for p in parts) * self.code.bits)

    def message_bits_formula(self) -> int:
        """``P · sum |positions| · H · (d_k [keys sent] + d_v)`` over the parts of every message (the
        module docstring), from the plan and the model's sizes; a test checks it against the bits
        actually sent and against a count of attending pairs."""
        model, total = self.model, 0
        for _, _, parts in self.plan:
            for part in parts:
                keys = model.d_k if "K" in part.names else 0
                total += len(part.positions) * model.n_heads * (keys + model.d_v)
        return int(total * self.code.bits)

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
        """Layer -> ``{"K"|"V": (rows (B, N, H, d_h), mask (N,))}`` from the messages ``party`` received."""
        model, N, H = self.model, self.length, self.model.n_heads
        incoming = [parts for s, r, parts in self.plan if _PARTY[r] == party]
        patches: dict = {}
        for parts, rows in zip(incoming, received):
            values = self.code.decode_rows(rows.array)  # (B, numbers) float64, the bits' namespace
            xp = namespace_of(values)
            offset = 0
            for part in parts:
                k = len(part.positions)
                source = np.zeros(N, dtype=np.int64)
                source[list(part.positions)] = np.arange(k)
                mask = np.zeros(N, dtype=bool)
                mask[list(part.positions)] = True
                for name in part.names:
                    width = model.d_k if name == "K" else model.d_v
                    size = k * H * width
                    block = xp.reshape(values[:, offset:offset + size], (values.shape[0], k, H, width))
                    offset += size
                    full = xp.take(xp.astype(block, model.dtype), xp.asarray(source), axis=1)  # (B, N, H, width)
                    patches.setdefault(part.layer, {})[name] = (full, mask)
        return patches

    def _stream(self, own, party: str, received, layer: int):
        """``party``'s ``(tokens (B, N), residual stream at the input of layer (B, N, d), patches)``:
        its rows exact, the others garbage that no row it computes reads."""
        tokens = scatter_columns(own["tokens"], own["positions"], self.length)  # (B, N), 0 elsewhere
        patches = self._patches(party, received)
        return self.model.layer_inputs(tokens, layer, patches), patches

    # -- the protocol ------------------------------------------------------------------------
    def protocol(self, alice_runner: str = "plain", sink: dict | None = None, observe=None) -> Protocol:
        """The key-value protocol; Bob's full output (a :class:`ModelRun`) goes to ``sink["bob"]``."""
        sink = {} if sink is None else sink
        model = self.model

        def sender(parts, party):
            def send(view):
                if observe is not None:
                    observe(party, view)
                chunks = []
                for part in parts:
                    x, _ = self._stream(view.own_input, party, view.received, part.layer)  # (B, N, d)
                    block = model.blocks[part.layer]
                    h = block.attn_input(x)
                    xp = namespace_of(x)
                    where = xp.asarray(np.asarray(part.positions, dtype=np.int64))
                    for name in part.names:
                        rows = xp.take(block.rows(h, name), where, axis=1)  # (B, k, H, d_h)
                        chunks.append(xp.reshape(xp.astype(rows, xp.float64), (x.shape[0], -1)))
                return BitRows(self.code.encode_rows(namespace_of(*chunks).concat(chunks, axis=1)))
            return send

        def bob(view):
            if observe is not None:
                observe(BOB, view)
            x, patches = self._stream(view.own_input, BOB, view.received, self.layers - 1)  # (B, N, d)
            top = patches.get(self.layers - 1)
            run = self._run([model.top_logits(x, int(o), top) for o in self.read])
            sink["bob"] = run
            return self.reduction.decode(run.answers, view.own_input["y"])

        steps = tuple(Step(m.sender, m.receiver, sender(parts, m.sender), m.label)
                      for m, (_, _, parts) in zip(self.messages, self.plan))
        return Protocol(f"{self.reduction.name}/transformer-{self.layers}/{self.rounds}-message", steps, BOB, bob,
                        "keys and values per layer (reductions/simulate/deep_transformer.py)")

    def _run(self, logits) -> ModelRun:
        return run_from_logits(logits, self.task.answer_kind, self.classes)

    def reference(self, encoded, runner: str = "plain", group: int = 1) -> ModelRun:
        """The unsplit model's forward pass at every read position (:meth:`forward_at`: the lower layers
        once, each position bit for bit ``forward(tokens, o)``)."""
        self._one_group(group)
        logits = self.model.forward_at(encoded.tokens, [int(o) for o in self.read])  # (B, K, C)
        return self._run([logits[:, i, :] for i in range(len(self.read))])

    # -- reading a message -------------------------------------------------------------------
    def describe_message(self, rows: BitRows, b: int = 0, label: str | None = None):
        """The numbers in instance ``b``'s message ``label``: ``K{layer}@{position}`` and
        ``V{layer}@{position}``, each its ``H · d_h`` numbers."""
        index = next((i for i, m in enumerate(self.messages) if m.label == label), 0)
        values = self.code.decode_rows(to_numpy(rows.array[b:b + 1, ...]))[0]
        out, offset = [], 0
        for part in self.plan[index][2]:
            for name in part.names:
                width = self.model.n_heads * (self.model.d_k if name == "K" else self.model.d_v)
                for j in part.positions:
                    out.append((f"{name}{part.layer}@{j}", values[offset:offset + width].tolist()))
                    offset += width
        return out

    def describe(self) -> str:
        who = {ALICE: "Alice", BOB: "Bob"}
        steps = "; ".join(f"{who[m.sender]} sends {m.label} ({m.bits} bits)" for m in self.messages)
        return (f"{self.rounds}-message protocol of a {self.layers}-layer Transformer: {steps}; "
                f"numbers of {self.code.bits} bits")


def _label(parts) -> str:
    layers = ", ".join(str(p.layer) for p in parts)
    return f"keys and values of layer{'s' if len(parts) > 1 else ''} {layers}"
