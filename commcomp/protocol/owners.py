"""Who holds what, defined once: the owner codes of a sequence's positions and the parties' names.

An owner mask is an ``(N,)`` array of codes, one per position: 0 public, 1 Alice's, 2 Bob's
(:class:`Owner`, an ``IntEnum``: its members are those integers, in masks and in JSON). A
protocol's steps and transcripts name the parties ``"alice"`` and ``"bob"`` (:data:`ALICE`,
:data:`BOB`): the lower-case names of the same members, so the two can never disagree.
``reductions`` imports the codes from here (``reductions.base.ALICE is Owner.ALICE``).

Examples
--------
>>> int(Owner.ALICE), Owner.ALICE.party, Owner(2).party, Owner.PUBLIC.letter
(1, 'alice', 'bob', '.')
>>> ALICE == Owner.ALICE.party, OWNER_NAMES[2], Owner.of_party("bob") == 2
(True, 'bob', True)
>>> import json, numpy as np
>>> json.dumps({"owner": Owner.BOB}), (np.array([1, 0, 2]) == Owner.ALICE).tolist()
('{"owner": 2}', [True, False, False])
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["Owner", "ALICE", "BOB", "PARTIES", "OWNER_NAMES"]


class Owner(IntEnum):
    """The code of a position's owner in an owner mask: ``PUBLIC = 0``, ``ALICE = 1``, ``BOB = 2``."""

    PUBLIC = 0
    ALICE = 1
    BOB = 2

    @property
    def party(self) -> str:
        """``"public"``, ``"alice"`` or ``"bob"``: the name transcripts and JSON use."""
        return self.name.lower()

    @property
    def letter(self) -> str:
        """One character per position in printed masks: ``.`` public, ``A`` Alice, ``B`` Bob."""
        return ".AB"[int(self)]

    @classmethod
    def of_party(cls, party: str) -> "Owner":
        """The member whose :attr:`party` is ``party`` (``"alice"`` -> ``Owner.ALICE``)."""
        return cls[str(party).upper()]


#: The two parties' names (protocol steps, transcripts, the JSON's ``sender``/``receiver``).
ALICE, BOB = Owner.ALICE.party, Owner.BOB.party
PARTIES = (ALICE, BOB)
#: Owner code -> name: ``{0: "public", 1: "alice", 2: "bob"}``.
OWNER_NAMES = {int(o): o.party for o in Owner}
