"""The main job: the separations of the catalogue, laddered across their crossover and confirmed.

* :mod:`.ladder` — which separations the catalogue holds and where their widths cross;
* :mod:`.checks` — the three checks of a row (construction, witness, protocol), each able to fail;
* :mod:`.rows` — :func:`separation_ladders`, the rows of the default ``commcomp separations``;
* :mod:`.grid` — :func:`separations`, every task x architecture class at one problem size;
* :mod:`.render` — 80-column / wide tables, Markdown, LaTeX and the plot.
"""

from .catalogue import catalogue_n
from .grid import ARCH_CLASSES, SeparationRow, arch_class_spec, catalogue_length, separations
from .ladder import Separation, WidthCurves, crossover, find_separations
from .rows import LadderRow, SeparationLadder, separation_ladders

__all__ = ["ARCH_CLASSES", "SeparationRow", "arch_class_spec", "catalogue_length", "separations",
           "catalogue_n", "Separation", "WidthCurves", "crossover", "find_separations", "LadderRow",
           "SeparationLadder", "separation_ladders"]
