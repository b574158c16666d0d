"""Checking a reduction's device encoder against its NumPy encoder, instance by instance.

:func:`check_device_encoder` encodes every input (x, y) at a size on an Array API namespace
(array-api-strict by default: it refuses every NumPy-only call, so an encoder that passes there
uses Array API operations only) and compares the tokens, and the features where the task has
them, element for element with the NumPy encoder's. :func:`reductions.check.check_reduction`
runs it at the sizes where it checks the owner mask.

Examples
--------
>>> import dataclasses
>>> from commcomp.problems import get_problem
>>> from reductions.lookup import index_to_mqar
>>> check_device_encoder(index_to_mqar, get_problem("index"), 3)
True
>>> wrong = dataclasses.replace(index_to_mqar, device_encoder=lambda xp, x, y, n: xp.flip(
...     index_to_mqar.device_encoder(xp, x, y, n), axis=1))
>>> check_device_encoder(wrong, get_problem("index"), 3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
reductions.device_check.DeviceEncoderMismatch: index->mqar: the device encoder's tokens differ ... n = 3: first at instance 0, position 2, 2 instead of 1
"""

from __future__ import annotations

import numpy as np

from commcomp.backend import BackendUnavailableError, is_numpy, namespace, to_numpy

from .base import Reduction
from .tasks.base import check_size

__all__ = ["check_device_encoder", "DeviceEncoderMismatch"]


class DeviceEncoderMismatch(AssertionError):
    """A device encoder wrote other tokens or features than the NumPy encoder (or NumPy arrays)."""


def check_device_encoder(reduction: Reduction, problem, n: int, xp=None) -> bool:
    """Compare ``reduction.device_encoder`` with ``reduction.encoder`` on every input at size ``n``.

    Parameters
    ----------
    xp : Array API namespace, optional
        Default: array-api-strict.

    Returns
    -------
    bool
        True when the encodings were compared (and agree); False when there is nothing to compare:
        the reduction has no device encoder, or ``xp`` is not given and array-api-strict is not
        installed.

    Raises
    ------
    DeviceEncoderMismatch
        At the first token or feature that differs, or when the device encoding is NumPy arrays.
    """
    if reduction.device_encoder is None:
        return False
    if xp is None:
        try:
            xp = namespace("array_api_strict")
        except BackendUnavailableError:
            return False
    n = check_size(reduction.name, n, reduction.min_n)
    x, y = problem.enumerate(n)
    want, got = reduction.encode(x, y, n).task_batch, reduction.encode(x, y, n, xp=xp).task_batch
    for what, host, device in (("tokens", want.tokens, got.tokens), ("features", want.features, got.features)):
        if host is None and device is None:
            continue
        if host is None or device is None or is_numpy(device):
            raise DeviceEncoderMismatch(f"{reduction.name}: the device encoder gave {what} "
                                        f"{'as NumPy arrays' if device is not None else 'None'} at n = {n}, "
                                        f"the NumPy encoder {'None' if host is None else 'an array'}")
        back = to_numpy(device)
        if back.shape != host.shape:
            raise DeviceEncoderMismatch(f"{reduction.name}: the device encoder's {what} have shape {back.shape} "
                                        f"at n = {n}, the NumPy encoder's {host.shape}")
        if not np.array_equal(back, host):
            b, i = np.argwhere(back != host)[0][:2]
            raise DeviceEncoderMismatch(f"{reduction.name}: the device encoder's {what} differ from the NumPy "
                                        f"encoder's at n = {n}: first at instance {b}, position {i}, "
                                        f"{back[b, i].tolist()} instead of {host[b, i].tolist()}")
    return True
