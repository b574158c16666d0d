"""Parties, messages, transcripts and the one runner that holds both inputs.

A protocol is a list of :class:`Step` s. Each step names a sender and a receiver and a
function of the sender's :class:`PartyView` that returns the message as :class:`BitRows`
(one row per instance: protocols run over a batch). The last word is an output function of
the output party's view. :func:`run_protocol` is the only code that ever holds both Alice's
and Bob's inputs: it builds each party's view from that party's own input, the public
randomness and the messages addressed to it, and nothing else. A party cannot read the
other's input because it is never given it; its messages must be bit strings, so nothing
else can be smuggled through a message either.

Examples
--------
>>> import numpy as np
>>> from commcomp.bits import BitRows
>>> proto = Protocol(
...     name="alice-sends-x",
...     steps=(Step("alice", "bob", lambda v: BitRows(v.own_input)),),
...     output_party="bob",
...     output=lambda v: (v.received[0].array == v.own_input).all(axis=1))
>>> t = run_protocol(proto, np.array([[1, 0, 1]]), np.array([[1, 0, 1]]))
>>> t.bits_sent, t.outputs.tolist(), t.transcript(0).rounds[0].hex
(3, [True], 'a')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..bits import Bits, BitRows
from ..errors import ProtocolError
from .owners import ALICE, BOB, PARTIES

__all__ = ["ALICE", "BOB", "PARTIES", "PartyView", "Step", "Protocol", "Message", "Transcript",
           "BatchMessage", "BatchTranscript", "run_protocol", "readonly"]

def readonly(value):
    """A read-only copy of an array (or a tuple/dict of arrays), so a party cannot write to it."""
    if isinstance(value, np.ndarray):
        out = value.copy()
        out.setflags(write=False)
        return out
    if isinstance(value, tuple):
        return tuple(readonly(v) for v in value)
    if isinstance(value, dict):
        return {k: readonly(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class PartyView:
    """Everything one party may see: its own input, public data, and the messages it received."""

    party: str
    own_input: Any
    received: tuple[BitRows, ...] = ()
    public: Any = None


@dataclass(frozen=True)
class Step:
    """One message: ``send(view_of_sender) -> BitRows`` goes from ``sender`` to ``receiver``."""

    sender: str
    receiver: str
    send: Callable[[PartyView], BitRows]
    label: str = ""

    def __post_init__(self):
        if self.sender not in PARTIES or self.receiver not in PARTIES or self.sender == self.receiver:
            raise ProtocolError(f"a step goes between alice and bob, got {self.sender}->{self.receiver}")


@dataclass(frozen=True)
class Protocol:
    """Steps in order, then ``output(view_of_output_party) -> (B,) answers``."""

    name: str
    steps: tuple[Step, ...]
    output_party: str
    output: Callable[[PartyView], Any]
    description: str = ""

    def __post_init__(self):
        if self.output_party not in PARTIES:
            raise ProtocolError(f"output party must be alice or bob, got {self.output_party!r}")

    @property
    def rounds(self) -> int:
        return len(self.steps)


@dataclass(frozen=True)
class Message:
    """One message of one instance: who sent it to whom, and the bits."""

    sender: str
    receiver: str
    bits: Bits
    label: str = ""

    @property
    def hex(self) -> str:
        return self.bits.hex()

    def to_json(self) -> dict:
        return {"sender": self.sender, "receiver": self.receiver, "bits": len(self.bits),
                "hex": self.hex, "label": self.label}


@dataclass(frozen=True)
class Transcript:
    """The record of one instance: every message in order, and the output."""

    protocol: str
    rounds: tuple[Message, ...]
    output: Any

    @property
    def bits_sent(self) -> int:
        """What the protocol paid: the total length of the bit strings it sent."""
        return sum(len(m.bits) for m in self.rounds)

    def to_json(self) -> dict:
        out = self.output.item() if isinstance(self.output, np.generic) else self.output
        return {"protocol": self.protocol, "rounds": [m.to_json() for m in self.rounds],
                "bits_sent": self.bits_sent, "output": out}


@dataclass(frozen=True)
class BatchMessage:
    """One step's messages over a batch."""

    sender: str
    receiver: str
    rows: BitRows
    label: str = ""


@dataclass(frozen=True)
class BatchTranscript:
    """Messages and outputs of a protocol run over a batch of instances."""

    protocol: str
    messages: tuple[BatchMessage, ...]
    outputs: np.ndarray
    batch: int = field(default=0)

    @property
    def bits_sent(self) -> int:
        """Bits each instance paid (every instance pays the same: messages have fixed lengths)."""
        return sum(len(m.rows) for m in self.messages)

    def distinct_messages(self, step: int = 0) -> int:
        """How many different messages step ``step`` sent over the batch."""
        return self.messages[step].rows.distinct() if self.messages else 0

    def transcript(self, b: int) -> Transcript:
        """Instance ``b``'s own transcript."""
        return Transcript(self.protocol,
                          tuple(Message(m.sender, m.receiver, m.rows[b], m.label) for m in self.messages),
                          self.outputs[b])


def run_protocol(protocol: Protocol, alice_input, bob_input, public=None) -> BatchTranscript:
    """Run ``protocol`` on a batch: the only place where both inputs are held.

    Parameters
    ----------
    protocol : Protocol
    alice_input, bob_input
        Each party's private input for the whole batch (arrays whose first axis is the batch,
        or tuples/dicts of such arrays). Each party gets a read-only copy of its own.
    public
        Public data both parties see (public randomness, the agreed size n, ...).

    Returns
    -------
    BatchTranscript

    Raises
    ------
    ProtocolError
        If a step returns anything but :class:`BitRows`, or rows for the wrong batch size.
    """
    inputs = {ALICE: readonly(alice_input), BOB: readonly(bob_input)}
    inboxes: dict[str, list[BitRows]] = {ALICE: [], BOB: []}
    public = readonly(public)
    batch = None
    messages = []
    for step in protocol.steps:
        view = PartyView(step.sender, inputs[step.sender], tuple(inboxes[step.sender]), public)
        rows = step.send(view)
        if not isinstance(rows, BitRows):
            raise ProtocolError(f"{protocol.name}: step {step.label or len(messages)} sent "
                                f"{type(rows).__name__}, but a message must be BitRows")
        if batch is None:
            batch = rows.batch
        elif rows.batch != batch:
            raise ProtocolError(f"{protocol.name}: message batch {rows.batch} != {batch}")
        inboxes[step.receiver].append(rows)
        messages.append(BatchMessage(step.sender, step.receiver, rows, step.label))
    final = PartyView(protocol.output_party, inputs[protocol.output_party],
                      tuple(inboxes[protocol.output_party]), public)
    outputs = np.asarray(protocol.output(final))
    if batch is not None and outputs.shape[0] != batch:
        raise ProtocolError(f"{protocol.name}: {outputs.shape[0]} outputs for a batch of {batch}")
    return BatchTranscript(protocol.name, tuple(messages), outputs, int(outputs.shape[0]))
