"""Search engines over reductions and models: what the simulations of :mod:`reductions.simulate` feed.

- :mod:`reductions.search.reachable`: the reachable-states engine (a model at p bits as a finite
  automaton over Alice's positions): exact counts, witnesses and analyses over every input.
- :mod:`reductions.search.witness`: failing inputs of an undersized model, by message collision.
- :mod:`reductions.search.construction`: checking explicit constructions and searching their
  minimal width and precision.
- :mod:`reductions.search.computed`: exact minimum state bits computed from a task's own matrices.
"""
