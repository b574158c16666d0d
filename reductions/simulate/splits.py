"""The split interface: what every model run as a two-party protocol provides (DESIGN §1).

A *split* runs one model for one reduction at one size as a protocol between Alice and Bob:
it says what each party holds (:meth:`Split.party_inputs`), what is sent
(:attr:`Split.messages`: sender, receiver, label and bits of every message, in order), builds the
protocol (:meth:`Split.protocol`) and the unsplit reference pass (:meth:`Split.reference`), reads a
message back as numbers (:meth:`Split.describe_message`), and names the lower bound the protocol
is held against (:meth:`Split.lower_bound`: a catalogue theorem and the bits any protocol of that
shape must send). Each family says, before any model is built, why it cannot split an
architecture or a reduction (:meth:`Split.refuse`).

One family per architecture family, registered in :mod:`reductions.simulate.registry`:

=================  =================================================  ===========================  ======
kind               class                                              splits                       rounds
=================  =================================================  ===========================  ======
``recurrent``      :class:`~reductions.simulate.recurrent.RecurrentSplit`      every recurrent model        1
``transformer``    :class:`~reductions.simulate.transformer.TransformerSplit`  a 1-layer Transformer        1 or 2
``transformer-     :class:`~reductions.simulate.deep_transformer.              an L-layer Transformer,      1 to
layers``           DeepTransformerSplit`                                      L >= 2 (rows per layer)      2L - 1
``hybrid``         :class:`~reductions.simulate.hybrid.HybridSplit`            a hybrid                     3
``attention-row``  :class:`~reductions.simulate.qsa.RowAttentionSplit`         qSA's row-reading unit       1
=================  =================================================  ===========================  ======

``kind`` is the family's registry name and the JSON's ``split_kind``; code outside the families
asks a split for a *capability*, never for its kind: :attr:`Split.runners`,
:attr:`Split.groups_by_x`, :attr:`Split.state_message`, :attr:`Split.partial_sums_message`,
:attr:`Split.exact`.

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> split = prepare("index-lookup", "lstm", 6, "fixed:8:4", width=3).split
>>> [(m.sender, m.receiver, m.label, m.bits) for m in split.messages], split.bits_per_instance
([('alice', 'bob', 'state', 48)], 48)
>>> split.lower_bound()
SplitBound(theorem='BHBK-IL-RNN', bits=6, rounds=1)
>>> split.runners, split.groups_by_x, split.state_message, split.partial_sums_message
(('plain', 'prefix-tree'), True, True, False)
>>> find_theorem(split.reduction, "transformer", layers=1, split_words="two-round")
'BHBK-Bool-LB-1TF-2R'
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from commcomp.bits import BitRows
from commcomp.bounds import list_bounds
from commcomp.bounds.per_task import protocol_lower_bound_bits
from commcomp.errors import UnknownNameError, UnsupportedSplitError
from commcomp.protocol import Protocol

__all__ = ["Split", "MessageSpec", "SplitBound", "find_theorem", "require_prefix_suffix"]


@dataclass(frozen=True)
class MessageSpec:
    """One message of a split's protocol: who sends it to whom, its label, and its bits per instance."""

    sender: str
    receiver: str
    label: str
    bits: int


@dataclass(frozen=True)
class SplitBound:
    """The lower bound a split is held against: the catalogue ``theorem`` (None: the catalogue has no
    entry for it) and the ``bits`` any protocol of ``rounds`` messages must send
    (:func:`commcomp.bounds.protocol_lower_bound_bits`)."""

    theorem: str | None
    bits: int
    rounds: int


class Split(ABC):
    """A model run as a protocol for one reduction at one size (see the module docstring).

    Every family sets, in its constructor: ``model, reduction, n, task``; ``owners`` (the ``(N,)``
    owner mask), ``length`` (N), ``read`` (the read positions); ``rounds``; ``messages``; ``classes``
    (the readout outputs read); and, where they apply, ``split_at`` (one past Alice's last
    position, None for a partition), ``exact`` and ``bob_step``.

    Class attributes (the capabilities)
    -----------------------------------
    kind : str
        The family's registry name (the JSON's ``split_kind``).
    arch_class : str
        The architecture class it splits (:data:`commcomp.architectures.ARCH_CLASSES`).
    simulation : str
        How it splits, in a few words (``commcomp list archs``).
    runners : tuple of str
        Alice's runners :meth:`protocol` and :meth:`reference` accept: ``"plain"``, and
        ``"prefix-tree"`` where rows that share a prefix share its steps.
    groups_by_x : bool
        Alice's message depends on x alone: an exhaustive run sends one message per x and Bob
        answers all of its y's (``group > 1`` in :meth:`party_inputs` and :meth:`reference`).
    state_message : bool
        Alice's only message is the model's carried state after her prefix (what the
        reachable-states engine explores).
    partial_sums_message : bool
        Alice's only message is a 1-layer Transformer's partial attention sums over her positions,
        after Bob's query where she does not know it (what the partial-sums explorer explores
        when :attr:`exact`).
    """

    kind: ClassVar[str]
    arch_class: ClassVar[str]
    simulation: ClassVar[str]
    runners: ClassVar[tuple[str, ...]] = ("plain",)
    groups_by_x: ClassVar[bool] = False
    state_message: ClassVar[bool] = False
    partial_sums_message: ClassVar[bool] = False
    exact: bool = True
    split_at: int | None = None
    bob_step: str | None = None
    rounds: int
    messages: tuple[MessageSpec, ...]

    # -- the family ------------------------------------------------------------------------------
    @classmethod
    def handles(cls, spec, model=None, layers=None) -> bool:
        """Whether this family splits architecture ``spec`` (and ``model``, when one is built; at
        ``layers``, when known before a model is built)."""
        return spec.arch_class == cls.arch_class

    @classmethod
    def refuse(cls, spec, layers: int, reduction=None) -> None:
        """Raise :class:`~commcomp.errors.UnsupportedSplitError` saying why this family cannot split
        architecture ``spec`` at depth ``layers`` (or ``reduction``'s sequences); return otherwise."""

    @classmethod
    def model_options(cls, reduction, n: int) -> dict:
        """Extra keywords :func:`models.registry.build_model` needs for a model this family splits."""
        return {}

    @classmethod
    def random_model(cls, reduction, n: int, width: int, heads: int, precision, seed: int):
        """This family's own random-weight model for ``reduction`` (None: the registry's model)."""
        return None

    @classmethod
    def bob_step_text(cls, out: dict) -> str:
        """What Bob computes after the messages, in words, from a ``simulate`` JSON of this family."""
        return out.get("bob_step") or ""

    @classmethod
    def verify_note(cls, out: dict) -> str | None:
        """A note on this family's protocol for a row of ``verify`` results (None: the numbers say it)."""
        return None

    # -- one split -------------------------------------------------------------------------------
    @property
    def bits_per_instance(self) -> int:
        """Bits each instance pays: every message of the protocol, all rounds."""
        return int(sum(m.bits for m in self.messages))

    @abstractmethod
    def theorem(self) -> str | None:
        """The catalogue id of the lower bound this split makes concrete (:func:`find_theorem`)."""

    def lower_bound(self) -> SplitBound:
        """The theorem and the bits any protocol of this many rounds must send for the problem."""
        rounds = int(self.rounds)
        return SplitBound(self.theorem(), protocol_lower_bound_bits(self.reduction.problem, self.n, rounds),
                          rounds)

    @abstractmethod
    def party_inputs(self, encoded, y, group: int = 1) -> tuple:
        """``(alice_input, bob_input, public)`` for :func:`~commcomp.protocol.run_protocol`."""

    @abstractmethod
    def protocol(self, alice_runner: str = "plain", sink: dict | None = None, observe=None) -> Protocol:
        """The protocol (its steps are :attr:`messages`); Bob's full output goes to ``sink["bob"]``."""

    @abstractmethod
    def reference(self, encoded, runner: str = "plain", group: int = 1):
        """The unsplit model's :class:`~reductions.simulate.outputs.ModelRun` on the same batch."""

    @abstractmethod
    def describe_message(self, rows: BitRows, b: int = 0, label: str | None = None) -> list:
        """The numbers in instance ``b``'s message ``label``: ``[(name, values), ...]``."""

    @abstractmethod
    def describe(self) -> str:
        """The protocol in one line (the ``simulate`` JSON's ``split``)."""

    def _one_group(self, group: int) -> None:
        if group != 1:
            raise ValueError(f"the {self.kind} protocol runs one instance per row (group = 1)")


def _entries(**query) -> list:
    try:
        return list_bounds(**query)
    except UnknownNameError:  # a task outside the catalogue (registered by a user): no entry
        return []


def find_theorem(reduction, arch: str, *, layers: int | None = None, split_words: str = "",
                 rounds: int | None = None, own_source: bool = False) -> str | None:
    """The catalogue id of the lower bound a split of ``arch`` is held against, found by query.

    With ``own_source``, the reduction's own theorem: the catalogue entry whose id is
    ``reduction.source`` (a reduction of the registry always names one; a user's reduction may
    name its own label, which is returned as it is). Otherwise queries of
    :func:`commcomp.bounds.list_bounds`, in order, the first entry found winning:

    1. the task's deterministic lower bound for the reduction's problem on ``arch`` (at
       ``layers``) whose split mentions ``split_words``;
    2. the general one for ``arch`` (no task, no problem: BHBK's "any Boolean function" rows);
    3. the problem's standard deterministic communication fact (``arch_class`` protocol) for a
       one-way protocol when ``rounds`` is 1, else a two-way one.

    None when nothing matches.
    """
    if own_source:
        return next((b.id for b in _entries(ref=reduction.source) if b.id == reduction.source), reduction.source)

    def lower(task, problem):
        return [b.id for b in _entries(task=task, arch=arch, layers=layers, kind="lower")
                if b.task == task and b.problem == problem and not b.randomized and split_words in (b.split or "")]

    found = lower(reduction.task_name, reduction.problem) or lower(None, None)
    if found:
        return found[0]
    shape = "one-way" if rounds == 1 else "two-way"
    facts = [b.id for b in _entries() if b.arch_class == "protocol" and b.problem == reduction.problem
             and not b.randomized and (b.split or "").startswith(shape)]
    return facts[0] if facts else None


def require_prefix_suffix(reduction, why: str) -> None:
    """Raise :class:`UnsupportedSplitError` unless ``reduction`` (None: no reduction yet) gives Alice a
    prefix and Bob the suffix; ``why`` finishes the message (what the family needs and why)."""
    if reduction is not None and reduction.split != "prefix-suffix":
        article = "an" if reduction.split[0] in "aeiou" else "a"
        raise UnsupportedSplitError(f"{reduction.name} splits the sequence as {article} {reduction.split}{why}")
