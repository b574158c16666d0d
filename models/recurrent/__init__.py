"""The recurrent family: one file per architecture, all on :mod:`models.recurrent.base`.

Elman, LSTM and GRU are imported here; the other layers load lazily through the registry.
"""

from .base import RecurrentLayer, RecurrentModel, build_recurrent_model
from .elman import ElmanLayer
from .gru import GRULayer
from .lstm import LSTMLayer
from .projected import ProjectedLayer

__all__ = ["RecurrentLayer", "ProjectedLayer", "RecurrentModel", "build_recurrent_model",
           "ElmanLayer", "LSTMLayer", "GRULayer"]
