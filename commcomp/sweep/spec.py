"""A sweep specification: the operation, its fixed parameters and the grid axes.

A sweep is a small TOML file (YAML when PyYAML is importable, or JSON) with three tables::

    [sweep]
    name = "rnn-index"          # default: the file's stem
    operation = "verify"        # see ``commcomp sweep ops``
    seed = 0                    # the sweep seed; every point's seed is derived from it and the point
    repeats = 3                 # optional: adds an axis ``repeat = 0..2`` (independent seeds per point)
    db = "rnn-index.sqlite"     # optional, relative to this file: default ``<stem>.sqlite`` in the current directory
    workers = 2                 # optional: default the number of cores

    [params]                    # the same for every point
    task = "index-lookup"
    instances = 64

    [axes]                      # the grid: every combination is one job
    arch = ["elman", "lstm"]
    n = [4, 8, 16]
    width = [4, 8]

or command-line lists (``--op verify --axis n=4,8,16 --param task=index-lookup``), which also override the
file's entries. Names are normalised to ``lower_snake_case`` (``max-width`` is ``max_width``).

Examples
--------
>>> spec = spec_from_mapping({"sweep": {"operation": "selftest"}, "axes": {"n": [1, 2]}})
>>> spec.operation, spec.axes
('selftest', {'n': (1, 2)})
>>> parse_axis_text("precision=fixed:8:4,16,bfloat16")
('precision', ('fixed:8:4', 16, 'bfloat16'))
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any

from commcomp.errors import CommcompError, InvalidParameterError, SweepSpecError
from commcomp.limits import MAX_SEED, MAX_SWEEP_POINTS, check_int

__all__ = ["SweepSpec", "SweepSpecError", "load_spec", "spec_from_mapping", "parse_axis_text",
           "parse_param_text", "parse_scalar", "normalise_name", "RESERVED_NAMES"]

RESERVED_NAMES = ("seed",)  # the per-point seed is derived, never a parameter; use [sweep] seed / repeats
_SWEEP_KEYS = {"name", "operation", "op", "seed", "repeats", "db", "workers", "scheduler", "description"}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class SweepSpec:
    """A parsed sweep: what to run over which grid.

    Attributes
    ----------
    name : str
        Identifies the sweep's rows in the database (several sweeps may share one file).
    operation : str
        A name registered in :data:`commcomp.sweep.operations.OPERATIONS`.
    params : dict
        Parameters shared by every point.
    axes : dict[str, tuple]
        Ordered grid axes; the grid is their Cartesian product (the first axis varies slowest).
    seed : int
        The sweep seed; point seeds are derived from it (:func:`commcomp.sweep.grid.point_seed`).
    repeats : int
        ``> 1`` adds an axis ``repeat = 0..repeats-1``.
    db, workers, scheduler : optional settings from the file (the command line overrides them).
    source : str or None
        The file the spec came from (its stem names the default database, in the current directory).
    """

    operation: str
    name: str = ""
    params: dict = field(default_factory=dict)
    axes: dict = field(default_factory=dict)
    seed: int = 0
    repeats: int = 1
    db: str | None = None
    workers: int | None = None
    scheduler: str | None = None
    description: str = ""
    source: str | None = None

    def __post_init__(self):
        if not self.name:
            object.__setattr__(self, "name", self.operation)

    def default_db_path(self) -> str:
        """``db`` from the file (relative to the file: its author chose it), else ``<stem>.sqlite`` (or
        ``sweep-<name>.sqlite`` without a file) in the current directory: never beside a sweep file by
        default, which may sit in an installed package (the examples folder) or a read-only checkout."""
        if self.db:
            base = os.path.dirname(os.path.abspath(self.source)) if self.source else os.getcwd()
            return os.path.join(base, os.path.expanduser(self.db))
        stem = os.path.splitext(os.path.basename(self.source))[0] if self.source else f"sweep-{self.name}"
        return os.path.join(os.getcwd(), f"{stem}.sqlite")

    def to_dict(self) -> dict:
        """A JSON-able description (stored beside the results)."""
        return {"name": self.name, "operation": self.operation, "seed": self.seed, "repeats": self.repeats,
                "params": self.params, "axes": {k: list(v) for k, v in self.axes.items()},
                "description": self.description, "source": self.source}

    def with_overrides(self, *, operation=None, axes=(), params=(), seed=None, repeats=None,
                       name=None) -> "SweepSpec":
        """A copy with command-line entries applied (an ``--axis`` replaces the file's axis of that name)."""
        new_axes = dict(self.axes)
        new_params = dict(self.params)
        for key, values in axes:
            new_params.pop(key, None)
            new_axes[key] = values
        for key, value in params:
            new_axes.pop(key, None)
            new_params[key] = value
        updated = replace(self, operation=operation or self.operation, axes=new_axes, params=new_params,
                          seed=self.seed if seed is None else seed,
                          repeats=self.repeats if repeats is None else repeats,
                          name=name or self.name or operation or self.operation)
        return _validated(updated)


def normalise_name(name: str, what: str = "parameter") -> str:
    key = str(name).strip().lower().replace("-", "_")
    if not _NAME.match(key):
        raise SweepSpecError(f"bad {what} name {name!r}: use letters, digits, '_' or '-'")
    if key in RESERVED_NAMES:
        raise SweepSpecError(f"{what} name {name!r} is reserved: each point's seed is derived from "
                             "the sweep seed ([sweep] seed, --seed); use repeats/--repeats for several seeds")
    return key


def _check_value(value, where: str):
    """Accept JSON-able values (TOML dates and times are not)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SweepSpecError(f"{where}: non-finite number {value!r}")
        return value
    if isinstance(value, (list, tuple)):
        return [_check_value(v, where) for v in value]
    if isinstance(value, dict):
        return {str(k): _check_value(v, where) for k, v in value.items()}
    raise SweepSpecError(f"{where}: unsupported value {value!r} ({type(value).__name__}); "
                         "use numbers, strings, booleans or lists of them")


def parse_scalar(text: str):
    """A command-line value: int, float, true/false, null, a JSON list/object, else the string itself."""
    text = text.strip()
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none"):
        return None
    if text[:1] in "[{\"":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SweepSpecError(f"bad JSON value {text!r}: {exc.msg}") from None
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if kind is float and not math.isfinite(value):
            break
        return value
    return text


def parse_axis_text(text: str) -> tuple[str, tuple]:
    """``"name=v1,v2,..."`` -> ``(name, (v1, v2, ...))``, values parsed by :func:`parse_scalar`."""
    if "=" not in text:
        raise SweepSpecError(f"bad axis {text!r}: expected NAME=V1,V2,...")
    name, _, values = text.partition("=")
    key = normalise_name(name, "axis")
    items = [v for v in values.split(",")]
    if not values.strip() or any(not v.strip() for v in items):
        raise SweepSpecError(f"bad axis {text!r}: empty value")
    return key, _axis_values(key, [parse_scalar(v) for v in items])


def parse_param_text(text: str) -> tuple[str, Any]:
    """``"name=value"`` -> ``(name, value)`` (one value, which may itself be a JSON list)."""
    if "=" not in text:
        raise SweepSpecError(f"bad parameter {text!r}: expected NAME=VALUE")
    name, _, value = text.partition("=")
    if not value.strip():
        raise SweepSpecError(f"bad parameter {text!r}: empty value")
    return normalise_name(name), parse_scalar(value)


def _axis_values(key: str, values) -> tuple:
    if not isinstance(values, (list, tuple)):
        values = [values]  # a scalar in [axes] is a one-value axis
    if not values:
        raise SweepSpecError(f"axis {key!r} has no values")
    checked = [_check_value(v, f"axis {key!r}") for v in values]
    canon = [json.dumps(v, sort_keys=True) for v in checked]
    if len(set(canon)) != len(canon):
        dup = next(c for c in canon if canon.count(c) > 1)
        raise SweepSpecError(f"axis {key!r} repeats the value {dup}")
    return tuple(checked)


def _int_setting(value, key: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SweepSpecError(f"[sweep] {key} must be an integer >= {minimum}, got {value!r}")
    return value


def spec_from_mapping(data: dict, source: str | None = None) -> SweepSpec:
    """Build and validate a :class:`SweepSpec` from the parsed file (tables ``sweep``, ``params``, ``axes``)."""
    where = source or "sweep"
    if not isinstance(data, dict):
        raise SweepSpecError(f"{where}: expected a table at the top level")
    unknown = set(data) - {"sweep", "params", "axes"}
    if unknown:
        raise SweepSpecError(f"{where}: unknown table(s) {', '.join(sorted(map(str, unknown)))}; "
                             "expected [sweep], [params], [axes]")
    head = data.get("sweep") or {}
    if not isinstance(head, dict):
        raise SweepSpecError(f"{where}: [sweep] must be a table")
    bad = set(head) - _SWEEP_KEYS
    if bad:
        raise SweepSpecError(f"{where}: unknown [sweep] key(s) {', '.join(sorted(bad))}; "
                             f"known: {', '.join(sorted(_SWEEP_KEYS - {'op'}))}")
    operation = head.get("operation", head.get("op", ""))
    if not isinstance(operation, str):
        raise SweepSpecError(f"{where}: [sweep] operation must be a string")
    params, axes = {}, {}
    for table, target in (("params", params), ("axes", axes)):
        body = data.get(table) or {}
        if not isinstance(body, dict):
            raise SweepSpecError(f"{where}: [{table}] must be a table")
        for raw_key, value in body.items():
            key = normalise_name(raw_key, "axis" if table == "axes" else "parameter")
            if key in params or key in axes:
                raise SweepSpecError(f"{where}: {key!r} is given twice")
            target[key] = (_axis_values(key, value) if table == "axes"
                           else _check_value(value, f"parameter {key!r}"))
    workers = head.get("workers")
    name = str(head.get("name") or "") or (os.path.splitext(os.path.basename(source))[0] if source else "")
    spec = SweepSpec(operation=operation.strip().lower(), name=name,
                     params=params, axes=axes,
                     seed=_int_setting(head.get("seed", 0), "seed", 0),
                     repeats=_int_setting(head.get("repeats", 1), "repeats", 1),
                     db=head.get("db"), workers=None if workers is None else _int_setting(workers, "workers", 0),
                     scheduler=head.get("scheduler"), description=str(head.get("description", "")),
                     source=os.path.abspath(source) if source else None)
    return _validated(spec) if operation else spec


def check_grid_size(spec: SweepSpec) -> int:
    """The number of grid points (axes x repeats), refused past ``MAX_SWEEP_POINTS`` before any is built."""
    total = max(1, int(spec.repeats))
    for values in spec.axes.values():
        total *= len(values)
    return check_int("sweep points", total, 0, MAX_SWEEP_POINTS)


def _validated(spec: SweepSpec) -> SweepSpec:
    """Check the operation exists and accepts every parameter and axis name."""
    from .operations import get_operation

    if not spec.operation:
        raise SweepSpecError("no operation: give [sweep] operation in the file or --op")
    op = get_operation(spec.operation)
    if spec.operation != op.name:  # an alias: store the canonical name
        spec = replace(spec, operation=op.name, name=op.name if spec.name == spec.operation else spec.name)
    if isinstance(spec.seed, bool) or not isinstance(spec.seed, int) or not 0 <= spec.seed <= MAX_SEED:
        raise SweepSpecError(f"the sweep seed must be an integer in 0..{MAX_SEED}, got {spec.seed!r}")
    check_grid_size(spec)
    if "repeat" in spec.axes or "repeat" in spec.params:
        if spec.repeats > 1:
            raise SweepSpecError("give either repeats or an axis named 'repeat', not both")
    op.check_names(list(spec.params) + list(spec.axes))
    return spec


def load_spec(path: str) -> SweepSpec:
    """Read a sweep file (``.toml``; ``.yaml``/``.yml`` with PyYAML; ``.json``).

    Raises
    ------
    SweepSpecError
        Missing or unreadable file, a syntax error, or invalid content (one line, with the file name).
    """
    if not os.path.isfile(path):
        raise SweepSpecError(f"sweep file {path!r} not found")
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".toml", ".yaml", ".yml", ".json"):  # read as what its name says, never guessed
        raise SweepSpecError(f"sweep file {path!r}: a sweep file is .toml, .json, .yaml or .yml, not "
                             f"{suffix or 'a name without an extension'}")
    try:
        if suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ImportError:
                raise SweepSpecError(f"{path}: YAML sweep files need PyYAML (pip install pyyaml); "
                                     "or write the sweep as TOML") from None
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle)
        elif suffix == ".json":
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        else:
            import tomllib

            with open(path, "rb") as handle:
                data = tomllib.load(handle)
    except CommcompError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepSpecError(f"cannot read sweep file {path!r}: {exc}") from None
    except Exception as exc:  # tomllib.TOMLDecodeError, yaml.YAMLError, json.JSONDecodeError
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SweepSpecError(f"{path}: syntax error: {first}") from None
    return spec_from_mapping(data if data is not None else {}, source=path)
