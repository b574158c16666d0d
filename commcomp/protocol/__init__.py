"""Protocols: parties, messages (bit strings), transcripts, and reference protocols.

See :mod:`commcomp.protocol.core` for the runner and :mod:`commcomp.protocol.reference` for the
reference protocols and the partition split.
"""

from .core import (ALICE, BOB, PARTIES, BatchMessage, BatchTranscript, Message, PartyView, Protocol,
                   Step, Transcript, readonly, run_protocol)
from .owners import OWNER_NAMES, Owner
from .reference import (ALICE_OWNS, BOB_OWNS, PUBLIC, PartyPositions, equality_coins,
                        equality_fingerprint, index_bob_first, split_by_owner, trivial_one_way)

__all__ = ["ALICE", "BOB", "PARTIES", "BatchMessage", "BatchTranscript", "Message", "PartyView",
           "Protocol", "Step", "Transcript", "readonly", "run_protocol", "ALICE_OWNS", "BOB_OWNS",
           "PUBLIC", "PartyPositions", "equality_coins", "equality_fingerprint", "index_bob_first",
           "split_by_owner", "trivial_one_way", "Owner", "OWNER_NAMES"]
