"""The options of a torch import that a state dict does not record, and where each value came from.

A state dict holds arrays only: an ``nn.RNN``'s nonlinearity, an attention layer's number of heads
and an encoder layer's activation are not in it, and a wrong value gives a model that runs and
differs from the trained one (a 2-head encoder read with one head, a GELU layer read as ReLU).  The
conversion check cannot see that either: it rebuilds torch's modules with the same options.  So
these options are never defaulted: each comes from a file that records it (a ``num_heads`` entry of
the state dict, or a small JSON config beside it, ``MODEL.config.json``) or from an explicit flag,
and :func:`resolve_options` reports which values no file confirmed.

Examples
--------
>>> opts = resolve_options("elman", {"nonlinearity": "relu"}, config={}, state_dict={})
>>> opts.values["nonlinearity"], opts.sources["nonlinearity"], opts.unconfirmed
('relu', '--nonlinearity', ('nonlinearity',))
>>> resolve_options("elman", {}, config={"nonlinearity": "tanh"}, state_dict={},
...                 config_path="m.config.json").sources
{'nonlinearity': 'm.config.json'}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .files import ModelFileError

__all__ = ["ImportOptions", "resolve_options", "read_config", "config_beside", "OPTIONS"]

#: option -> (architectures it applies to, config keys naming it (torch's own first), default or REQUIRED)
REQUIRED = object()
OPTIONS = {
    "nonlinearity": (("elman",), ("nonlinearity",), REQUIRED),
    "heads": (("transformer",), ("num_heads", "nhead", "heads"), REQUIRED),
    "activation": (("transformer",), ("activation",), REQUIRED),
    "causal": (("transformer",), ("causal", "is_causal"), True),
    "norm_first": (("transformer",), ("norm_first",), False),
    "residual": (("transformer",), ("residual",), False),
}
_FLAG = {"nonlinearity": "--nonlinearity", "heads": "--heads", "activation": "--activation",
         "causal": "--bidirectional", "norm_first": "--norm-first", "residual": "--residual"}
_CHOICES = {"nonlinearity": ("tanh", "relu"), "activation": ("relu",)}


@dataclass(frozen=True)
class ImportOptions:
    """Resolved options: ``values`` (name -> value), ``sources`` (name -> where it came from)."""

    values: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)

    @property
    def unconfirmed(self) -> tuple:
        """Options whose value no file recorded (a flag or a default)."""
        return tuple(k for k, s in self.sources.items() if s.startswith("--") or s == "default")


def config_beside(source) -> Path:
    """``model.pt`` -> ``model.config.json`` (the config file looked for next to a state dict)."""
    return Path(source).with_suffix(".config.json")


def read_config(path) -> dict:
    """A JSON object of torch options; :class:`ModelFileError` when unreadable or not an object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: not a readable JSON config ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise ModelFileError(f"{path}: a config must be a JSON object of options, not {type(data).__name__}")
    return data


def _normal(name, value, where):
    if name == "heads":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value or value < 1:
            raise ModelFileError(f"{where}: heads must be a positive integer, got {value!r}")
        return int(value)
    if name in _CHOICES:
        value = str(value).lower()
        if name == "activation" and value != "relu":
            raise ModelFileError(f"{where}: activation {value!r} is refused by name: torch's gelu is the exact "
                                 "erf form and commcomp's the tanh approximation, so outputs would differ; only "
                                 "relu is imported")
        if value not in _CHOICES[name]:
            raise ModelFileError(f"{where}: {name} must be one of {', '.join(_CHOICES[name])}, got {value!r}")
        return value
    if not isinstance(value, bool):
        raise ModelFileError(f"{where}: {name} must be true or false, got {value!r}")
    return value


def resolve_options(arch: str, given: dict, *, config: dict, state_dict: dict, config_path: str = "config",
                    encoder_layer: bool = True) -> ImportOptions:
    """Each option of ``arch`` from the state dict, the config, or a flag (``given``; None = not given).

    Raises
    ------
    ModelFileError
        An option given for an architecture it does not apply to, a flag that contradicts a file, a
        required option that nothing gives, or a value out of range.
    """
    values, sources = {}, {}
    for name, (archs, keys, default) in OPTIONS.items():
        flag = given.get(name)
        if arch not in archs or (name == "activation" and not encoder_layer) or (name == "residual" and encoder_layer):
            if flag is not None:
                what = (f"--arch {arch}" if arch not in archs else "encoder layers (always residual)"
                        if name == "residual" else "a bare nn.MultiheadAttention (no feed-forward)")
                raise ModelFileError(f"{_FLAG[name]} does not apply to {what}: leave it out")
            continue
        recorded = None
        if name == "heads" and "num_heads" in state_dict:
            recorded = (_normal(name, float(state_dict["num_heads"]), "the state dict's num_heads"),
                        "the state dict (num_heads)")
        for key in keys:
            if recorded is None and key in config:
                recorded = (_normal(name, config[key], f"{config_path}: {key}"), str(config_path))
        if flag is not None:
            flag = _normal(name, flag, _FLAG[name])
        if recorded is not None:
            if flag is not None and flag != recorded[0]:
                raise ModelFileError(f"{_FLAG[name]} says {name} = {flag!r}, {recorded[1]} says {recorded[0]!r}")
            values[name], sources[name] = recorded
        elif flag is not None:
            values[name], sources[name] = flag, _FLAG[name]
        elif default is REQUIRED:
            raise ModelFileError(f"a state dict does not record {name}: give {_FLAG[name]} "
                                 f"{'|'.join(_CHOICES.get(name, ('H',)))} or write it in {config_path} "
                                 f"(for example {{\"{keys[0]}\": ...}}); commcomp does not guess it")
        else:
            values[name], sources[name] = default, "default"
    return ImportOptions(values, sources)
