"""Commcomp model files: written, read back, and what they hold, checked against a run.

A model file (:func:`save_model`; :func:`load_model` rebuilds the model) is an ``.npz`` with a JSON header: the architecture,
the :func:`models.registry.build_model` arguments (vocabulary, width, layers, heads, outputs, ...)
and, when the writer knew them, what the model was made for (``about``: ``task``, ``n``, ``source``
such as ``"torch nn.LSTM"``).  :func:`read_model_info` reads that header alone;
:func:`check_model_file` compares it with what a run asks for and raises :class:`ModelFileError`
naming what the file holds, so that ``--arch elman --weights lstm.npz`` or a model made for another
task size is refused before anything runs rather than run under the wrong label.

Examples
--------
>>> import os, tempfile
>>> from models.registry import build_model
>>> path = os.path.join(tempfile.mkdtemp(), "lstm.npz")
>>> _ = save_model(build_model("lstm", vocab_size=10, width=16, n_outputs=2), path,
...                about={"task": "index-lookup", "n": 8})
>>> info = read_model_info(path)
>>> info.describe()
'an lstm model (vocabulary 10, width 16, 1 layer, 2 outputs), made for index-lookup at n = 8'
>>> try:
...     check_model_file(info, arch="elman", vocab_size=10, n_outputs=2)
... except ModelFileError as exc:
...     print(str(exc).split("made for index-lookup at n = 8, ")[1])
not elman: run it with --arch lstm
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from commcomp.architectures import get_architecture
from commcomp.errors import InvalidParameterError, UnknownNameError

from .registry import build_model

__all__ = ["ModelFileInfo", "read_model_info", "check_model_file", "ModelFileError", "save_model", "load_model",
           "FORMAT_VERSION", "META_KEY"]

FORMAT_VERSION = 1
META_KEY = "__commcomp_meta__"
_PARAM_PREFIX = "param:"


class ModelFileError(InvalidParameterError):
    """A model file cannot be read, or does not fit the run (architecture, vocabulary, sizes)."""


@dataclass(frozen=True)
class ModelFileInfo:
    """The header of a model file: architecture, build arguments and what it was made for."""

    path: str
    arch: str
    config: dict = field(repr=False)
    about: dict = field(default_factory=dict)

    def _size(self, name: str, default=None):
        value = self.config.get(name, default)
        return None if value is None else int(value)

    @property
    def vocab_size(self) -> int | None:
        return self._size("vocab_size")

    @property
    def width(self) -> int | None:
        return self._size("width")

    @property
    def layers(self) -> int:
        return self._size("layers", 1)

    @property
    def heads(self) -> int:
        return self._size("heads", 1)

    @property
    def n_outputs(self) -> int | None:
        return self._size("n_outputs")

    @property
    def max_len(self) -> int | None:
        """Longest input of a Transformer with a positional table (None: no limit)."""
        if self.arch not in ("transformer", "hybrid") or self.config.get("positional") not in ("learned", "fixed"):
            return None
        return self._size("max_len")

    def describe(self) -> str:
        """One phrase: ``an lstm model (vocabulary 10, width 16, 1 layer, 2 outputs), made for ...``."""
        article = "an" if self.arch in ("elman", "lstm") else "a"  # as spoken: an LSTM, a GRU
        layers = f"{self.layers} layer{'s' if self.layers != 1 else ''}"
        sizes = [f"vocabulary {self.vocab_size}", f"width {self.width}", layers]
        if self.heads != 1 or self.arch in ("transformer", "hybrid"):
            sizes.append(f"{self.heads} head{'s' if self.heads != 1 else ''}")
        sizes.append(f"{self.n_outputs} output{'s' if self.n_outputs != 1 else ''}")
        if self.max_len is not None:
            sizes.append(f"inputs up to {self.max_len} tokens")
        text = f"{article} {self.arch} model ({', '.join(sizes)})"
        if self.about.get("task"):
            text += f", made for {self.about['task']}"
            if self.about.get("n") is not None:
                text += f" at n = {self.about['n']}"
            elif self.about.get("task_n") is not None:
                text += f" at task size {self.about['task_n']}"
        if self.about.get("source"):
            text += f" (from {self.about['source']})"
        return text


def read_model_info(path) -> ModelFileInfo:
    """Read the header of a model file (no arrays, no model built).

    Raises
    ------
    ModelFileError
        The path is missing, not an ``.npz`` archive (a pickle, a torch ``.pt``, a text file), an
        ``.npz`` without commcomp's header (say a raw state dict), or of another format version.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such model file")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "pickle" in why:  # numpy's text suggests loading it unsafely: never repeated here
            why = "a pickle or text file"
        raise ModelFileError(f"{path}: not a commcomp model file (not an .npz archive: {why}); a torch "
                             "checkpoint is converted with `commcomp import torch`") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ModelFileError(f"{path}: not a commcomp model file (a single .npy array)")
    with data:
        if META_KEY not in data.files and any(k.endswith("data.pkl") for k in data.files):
            raise ModelFileError(f"{path}: a torch checkpoint, not a commcomp model file; convert it with "
                                 f"`commcomp import torch {path} --arch ARCH --out MODEL.npz`")
        if META_KEY not in data.files:
            keys = ", ".join(sorted(data.files)[:6]) + (", ..." if len(data.files) > 6 else "")
            raise ModelFileError(f"{path}: not a commcomp model file (an .npz of {keys or 'nothing'}); "
                                 "a torch state dict is converted with `commcomp import torch`")
        try:
            meta = json.loads(str(data[META_KEY]))
        except (ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise ModelFileError(f"{path}: corrupt model header ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION or "config" not in meta:
        version = meta.get("format") if isinstance(meta, dict) else None
        raise ModelFileError(f"{path}: unsupported model file format {version!r} (this commcomp reads "
                             f"format {FORMAT_VERSION})")
    config = dict(meta["config"])
    arch = str(config.get("arch", meta.get("arch")))
    try:
        arch = get_architecture(arch).name
    except UnknownNameError:
        raise ModelFileError(f"{path}: holds an unknown architecture {arch!r}") from None
    return ModelFileInfo(str(path), arch, config, dict(meta.get("about") or {}))


def check_model_file(info: ModelFileInfo, *, arch: str, vocab_size: int, n_outputs: int, task: str | None = None,
                     n: int | None = None, task_n: int | None = None, length: int | None = None,
                     width: int | None = None,
                     layers: int | None = None, heads: int | None = None) -> None:
    """Raise :class:`ModelFileError` unless the file fits the run; the message says what it holds.

    Parameters
    ----------
    arch : str
        The architecture asked for (aliases allowed).
    vocab_size, n_outputs : int
        The task's vocabulary and answer classes at this size (exact matches: token ids and readout
        classes mean something else at another size).
    task, n, task_n : optional
        The run's task, problem size and task size, compared with those the file records (when it
        records them: ``n`` from ``import --task --n``, ``task_n`` from ``construct --out``).
    length : int, optional
        The input length, compared with a Transformer's positional table.
    width, layers, heads : int, optional
        Values the user gave; the file sets its own, so a different value is an error.
    """
    holds = f"{info.path} holds {info.describe()}"
    wanted = get_architecture(arch).name
    if info.arch != wanted:
        raise ModelFileError(f"{holds}, not {wanted}: run it with --arch {info.arch}")
    made_for = info.about.get("task")
    if task is not None and made_for and made_for != task:
        raise ModelFileError(f"{holds}, not for {task}")
    if n is not None and info.about.get("n") is not None and int(info.about["n"]) != int(n):
        raise ModelFileError(f"{holds}, not n = {n}: a model made for one size reads other token ids "
                             f"and lengths at another; run it at --n {info.about['n']}")
    if task_n is not None and info.about.get("task_n") is not None and int(info.about["task_n"]) != int(task_n):
        raise ModelFileError(f"{holds}, not task size {task_n} (n = {n}): a model made for one size reads other "
                             "token ids and lengths at another")
    where = f"{task} at n = {n}" if task and n is not None else "this task"
    if info.vocab_size != int(vocab_size):
        raise ModelFileError(f"{holds}; {where} has vocabulary {vocab_size}")
    if info.n_outputs != int(n_outputs):
        raise ModelFileError(f"{holds}; {where} needs {n_outputs} outputs")
    if length is not None and info.max_len is not None and info.max_len < int(length):
        raise ModelFileError(f"{holds}; {where} has inputs of {length} tokens")
    for name, given, held in (("width", width, info.width), ("layers", layers, info.layers),
                              ("heads", heads, info.heads)):
        if given is not None and held is not None and int(given) != held:
            raise ModelFileError(f"{holds}; --{name} {given} conflicts with the file's {name} {held} "
                                 f"(the file sets it: leave --{name} out)")


def save_model(model, path, about: dict | None = None) -> Path:
    """Write ``model`` (arch, ``build_model`` arguments, parameters) to an ``.npz`` file.

    ``about`` (optional, JSON-able) records what the model was made for: ``task``, ``n``, ``source``
    (:func:`read_model_info` reads it back; runs check it). Any model that has ``arch``, ``config``
    (the :func:`models.registry.build_model` arguments) and ``params`` (a dict of named arrays) and
    rebuilds from new parameters with ``with_params(dict)`` is stored.

    Examples
    --------
    >>> import tempfile, os
    >>> m = build_model("gru", vocab_size=4, width=3, n_outputs=2, layers=2, seed=1)
    >>> path = save_model(m, os.path.join(tempfile.mkdtemp(), "gru.npz"))
    >>> m2 = load_model(path)
    >>> all(np.array_equal(m.params[k], m2.params[k]) for k in m.params)
    True
    """
    config = dict(model.config)
    if "arch" not in config:
        config["arch"] = model.arch
    prec = config.get("precision")
    if prec is not None and not isinstance(prec, str):
        config["precision"] = prec.name
    meta = {"format": FORMAT_VERSION, "arch": model.arch, "config": config}
    if about:
        meta["about"] = dict(about)
    arrays = {f"{_PARAM_PREFIX}{k}": np.asarray(v) for k, v in model.params.items()}
    path = Path(path)
    with open(path, "wb") as fh:  # a file handle keeps numpy from appending ".npz"
        np.savez(fh, **{META_KEY: np.array(json.dumps(meta, sort_keys=True))}, **arrays)
    return path


def load_model(path, **overrides):
    """Read a model written by :func:`save_model`; ``overrides`` replace build arguments (``precision``).

    Raises
    ------
    ModelFileError
        If the file is not a commcomp model file (:func:`read_model_info`).
    InvalidParameterError
        If its parameters do not fit its architecture.
    """
    info = read_model_info(path)
    try:
        with np.load(Path(path), allow_pickle=False) as data:
            params = {k[len(_PARAM_PREFIX):]: data[k] for k in data.files if k.startswith(_PARAM_PREFIX)}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:  # corrupt bytes past the header
        raise ModelFileError(f"{path}: a corrupt model file ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else 'unreadable'})") from None
    bad = sorted(k for k, v in params.items() if v.dtype.kind in "fc" and not np.all(np.isfinite(v)))
    if bad:
        raise ModelFileError(f"{path}: non-finite weights (NaN or inf) in {', '.join(bad[:4])}"
                             f"{', ...' if len(bad) > 4 else ''}: refused")
    config = dict(info.config)
    config.update(overrides)
    config.pop("arch", None)
    model = build_model(info.arch, **config)
    return model.with_params(params)
