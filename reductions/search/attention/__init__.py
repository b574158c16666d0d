"""Witnesses for 1-layer Transformers: exact collisions of Alice's attention partial sums (issue 21).

:mod:`.terms` writes the split's message as ``base + x D``; :mod:`.zerosum` states the problem
(ternary ``δ != 0``, ``δ D = 0``); :mod:`.sorting` and :mod:`.lattice` solve it; :mod:`.api` turns a
solution into a witness re-checked on the real protocol and the unsplit model.
"""

from .api import METHODS, AttentionCollision, applies, collision_of, find_attention_collision

__all__ = ["AttentionCollision", "find_attention_collision", "collision_of", "applies", "METHODS"]
