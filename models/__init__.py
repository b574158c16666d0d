"""Sequence models as Array API kernels: the recurrent family and transformers.

Build one by registry name with :func:`build_model`; see :mod:`models.registry`.
"""

from .registry import ARCHITECTURES, available_architectures, build_model, list_architectures

__all__ = ["ARCHITECTURES", "build_model", "list_architectures", "available_architectures"]
