"""Exact analysis over all inputs at any length: a model at precision p is a finite automaton."""

from .engine import ReachableStates, explore
from .letters import AliceLetters, NotPositionwiseError, alice_letters

__all__ = ["explore", "ReachableStates", "alice_letters", "AliceLetters", "NotPositionwiseError"]
