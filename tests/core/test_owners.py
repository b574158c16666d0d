"""commcomp.protocol.owners: the owner codes and party names, defined once and used everywhere."""

import json

import numpy as np

import commcomp.protocol.core as core
import commcomp.protocol.reference as reference
import reductions.base as base
from commcomp.protocol.owners import ALICE, BOB, OWNER_NAMES, PARTIES, Owner
from reductions.registry import get_reduction
from reductions.simulate import simulate


def test_one_definition_behind_every_name():
    assert (base.PUBLIC, base.ALICE, base.BOB) == (Owner.PUBLIC, Owner.ALICE, Owner.BOB) == (0, 1, 2)
    assert base.ALICE is reference.ALICE_OWNS is Owner.ALICE and base.BOB is reference.BOB_OWNS is Owner.BOB
    assert base.PUBLIC is reference.PUBLIC is Owner.PUBLIC
    assert (core.ALICE, core.BOB, core.PARTIES) == (ALICE, BOB, PARTIES) == ("alice", "bob", ("alice", "bob"))
    assert base.OWNER_NAMES is OWNER_NAMES == {0: "public", 1: "alice", 2: "bob"}
    assert [Owner.of_party(p) for p in ("public", "alice", "bob")] == list(Owner)


def test_masks_and_json_keep_their_values():
    """Owner masks hold the integer codes, transcripts the party names; JSON writes both as before."""
    red = get_reduction("index-lookup")
    mask = red.owners(4)
    assert mask.dtype == np.int8 and mask.tolist() == [1, 1, 1, 1, 2]
    assert json.dumps([Owner.PUBLIC, Owner.ALICE, Owner.BOB]) == "[0, 1, 2]"
    out = simulate("index-lookup", "gru", 4, "fixed:6:3", width=2, x="1011", y="2")
    assert json.loads(json.dumps(out))["owners"] == {"alice": [0, 1, 2, 3], "bob": [4], "public": []}
    assert [(r["sender"], r["receiver"]) for r in out["rounds"]] == [("alice", "bob")]
    assert "".join(Owner(int(o)).letter for o in mask) == base.describe_owners(mask) == "AAAAB"
