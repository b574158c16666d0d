"""Transformers: softmax attention, positional information, the Transformer and the hybrid.

* :class:`Transformer` (``transformer.py``): embeddings, L layers of multi-head attention + MLP,
  residual, optional norm, readout; ``forward``, ``forward_all``, and for a 1-layer model the
  split at the output position (``query``, ``partial``, ``finish``; ``split.py``).
* :class:`Hybrid` (``hybrid.py``): recurrent layers with one attention layer on top (WDL).
* :class:`MultiheadAttention` and the kernels (``attention.py``); positional encodings
  (``positional.py``); loading ``torch.nn.MultiheadAttention`` weights (``torch_io.py``).
"""

from .attention import (AttentionGrid, AttentionPartial, MultiheadAttention,
                        exact_attention_sums, last_position_attention, softmax_attention,
                        sum_partials)
from .hybrid import Hybrid, build_hybrid
from .positional import Positional, sinusoidal_rows
from .torch_io import load_torch_mha, torch_mha_params, transformer_with_torch_mha
from .transformer import AttentionBlock, Transformer, build_transformer

__all__ = ["Transformer", "Hybrid", "MultiheadAttention", "AttentionBlock", "AttentionGrid",
           "AttentionPartial", "Positional", "sinusoidal_rows", "softmax_attention",
           "last_position_attention", "exact_attention_sums", "sum_partials", "load_torch_mha",
           "torch_mha_params", "transformer_with_torch_mha", "build_transformer", "build_hybrid"]
