"""Saving and loading estimators: one format, a strict schema, nothing unpickled.

A saved estimator is a directory with

* ``config.json``: ``{"kind": class name, "format": 2, "params": constructor arguments,
  "fitted": fitted attributes in JSON types, "arrays_sha256": the arrays file's digest,
  "fitted_sha256": the fitted attributes' digest}`` (format 2 must carry both digests;
  format 1, files written before them, may lack them and still loads), and after a fit on
  pandas ``"pandas_output"``: what ``predict`` returns (:mod:`.pandas_out`);
* ``arrays.safetensors``: fitted numpy arrays, and the weights of a torch module under the
  ``net.`` prefix (read with safetensors: no code runs while loading).

:func:`load` accepts only what the class declares: ``params`` must be constructor arguments
(deprecated names are mapped) and pass the class's ``_validate_params``, ``fitted`` keys must
be in the class's ``_fitted_schema`` with one of the allowed types, arrays must be allowed by
its ``_array_allowed``. Anything else, a missing file, malformed JSON or state that cannot be
restored raises an error that names the file (and the key where there is one). Only classes
that declare a schema can be saved. A class's ``_set_state`` checks the values themselves
with :func:`require` / :func:`require_floats`, :func:`saved_channels` and
:func:`check_context`, and the digests refuse arrays or fitted values edited to other valid
ones: a file that loads gives the outputs of the estimator that wrote it.

The digests guard against accidents (a save that failed half-way, a value edited by hand or
by a script), not tampering: whoever can write the file can write its digests too (they are
plain SHA-256 of its own contents, no secret). A format-1 file, which may lack them, loads
with an :class:`UncheckedFileWarning` where it has no ``fitted_sha256``; a format-2 file
edited to format 1 is refused where it holds a key format 1 never wrote (``pandas_output``)
and otherwise cannot be told from a genuine older file.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from tssdpa.checks import LibraryWarning, as_path, check_int, warn
from tssdpa.estimators.input_notes import user_stacklevel
from tssdpa.estimators.pandas_out import ATTRIBUTE as OUTPUT_ATTRIBUTE
from tssdpa.estimators.pandas_out import loaded_output, saved_output
from tssdpa.files import replacing

__all__ = [
    "FORMAT",
    "UncheckedFileWarning",
    "check_context",
    "check_fitted",
    "jsonable",
    "load",
    "nest",
    "require",
    "require_floats",
    "save",
    "saved_channels",
    "unnest",
]

#: the format :func:`save` writes. 2: the digests are part of it, and so is ``structure`` for
#: an estimator whose state depends on parameters; a file without one is refused (deleting
#: ``fitted_sha256`` beside an edited value loaded the edit); 1: files from before them (with
#: or without), which load as they did
FORMAT = 2
FORMATS = (1, 2)
DIGESTS = ("arrays_sha256", "fitted_sha256")
#: keys only format 2 has written (pandas_output came after it): a format-1 file holding one is
#: a format-2 file downgraded, which format 1's optional digests would let load edited. The
#: other keys (the digests, structure, feature_names_in) were written by format 1 too, so a
#: downgraded file without them cannot be told from a genuine older one (load warns of it)
FORMAT_2_ONLY = ("pandas_output",)
CONFIG = "config.json"
ARRAYS = "arrays.safetensors"
_LEGACY_ARRAYS = "model.safetensors"  # learned estimators saved before the unified format


def jsonable(v, name: str = "value"):
    """Plain JSON types from numpy scalars / arrays / dtypes, lists, tuples, ranges and dicts
    (else TypeError)."""
    if isinstance(v, np.ndarray):
        return jsonable(v.tolist(), name)
    if isinstance(v, np.generic):
        return jsonable(v.item(), name)
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return np.dtype(v).name  # dtype=np.float32: saved as "float32", which it takes too
    if isinstance(v, (list, tuple, range)):  # a range of candidates is saved as their list
        return [jsonable(a, f"{name}[{i}]") for i, a in enumerate(v)]
    if isinstance(v, dict):
        return {str(k): jsonable(a, f"{name}[{k!r}]") for k, a in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(
        f"cannot save {name} of type {type(v).__name__} (JSON types, numpy scalars and arrays only)"
    )


def save(estimator, path) -> None:
    """Write ``estimator`` to directory ``path`` (made where new; the folder it is in must
    exist, as for :func:`~tssdpa.export.to_onnx`); everything is converted and checked before
    anything is created on disk. Both files are written under temporary names, then renamed
    onto their own, the arrays first, and the config records the arrays' SHA-256: a save
    that fails (a full disk) leaves the folder as it was; one killed between the two renames
    leaves a folder that does not load, never a new config beside old arrays (which loaded,
    a model of neither)."""
    from safetensors.numpy import save as safetensors_bytes

    if not (estimator._fitted_schema or estimator._array_schema):
        raise NotImplementedError(
            f"{type(estimator).__name__} has no save format yet (it declares no schema)"
        )
    path = as_path(path, folder_must_exist=True)  # as to_onnx's
    fitted, arrays = estimator._state()
    cfg = {
        "kind": type(estimator).__name__,
        "format": FORMAT,
        "params": jsonable(estimator.get_params(), "params"),
        "fitted": jsonable(fitted, "fitted"),
    }
    structure = estimator.__dict__.get("_fitted_structure_")
    if structure:  # what the state was fitted with: a hand-edited parameter is refused on load
        cfg["structure"] = jsonable(structure, "structure")
    names = estimator.__dict__.get("feature_names_in_")  # a DataFrame's columns (text names)
    if names is not None and all(isinstance(n, str) for n in names):
        cfg["feature_names_in"] = list(names)
    output = saved_output(estimator)  # what predict returns after a fit on pandas
    if output is not None:
        cfg["pandas_output"] = jsonable(output, "pandas_output")
    tensors = {}
    for k, v in arrays.items():
        a = np.ascontiguousarray(v)
        if a.dtype.kind not in "fiub":
            raise TypeError(f"cannot save array {k!r} of dtype {a.dtype}")
        tensors[k] = a
    blob = safetensors_bytes(tensors)
    cfg["arrays_sha256"] = hashlib.sha256(blob).hexdigest()
    cfg["fitted_sha256"] = _fitted_digest(cfg)
    text = json.dumps(cfg, indent=2, allow_nan=True)
    try:  # a file that would not load is not written (parameters changed after fit)
        _restore(type(estimator), json.loads(text), tensors, path, path / ARRAYS)
    except ValueError as exc:
        raise ValueError(
            f"cannot save to {path}, the file would not load: {exc} (where parameters were "
            "changed after fit: set them back, or fit again)"
        ) from None
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"{path} exists and is not a directory")
    if path.is_symlink() and not path.exists():  # mkdir said "File exists" of no such path
        raise FileNotFoundError(f"{path} is a link to {os.readlink(path)}, which does not "
                                "exist (a folder not made, or not mounted)")  # fmt: skip
    taken = [p.name for p in (path / CONFIG, path / ARRAYS) if p.is_dir()]
    if taken:  # os.replace onto a folder: a raw IsADirectoryError, the arrays written
        raise IsADirectoryError(f"{path}: {', '.join(taken)} is a folder, where save writes "
                                "a file; remove it or save elsewhere")  # fmt: skip
    path.mkdir(exist_ok=True)
    _write_both(path, blob, text.encode())


#: what format 2's ``fitted_sha256`` covers beside ``fitted``: what fit learned of a pandas
#: input (deleting ``feature_names_in`` let the loaded filter take swapped columns, each
#: channel filtered with the other's scale: off by 1.1)
_DIGESTED = ("feature_names_in", "pandas_output")
#: every key :func:`save` has written at the top of ``config.json`` (load refuses others)
KEYS = ("kind", "format", "params", "fitted", *DIGESTS, "structure", *_DIGESTED)


def _fitted_digest(cfg: dict) -> str:
    """SHA-256 of the JSON fitted state of ``cfg`` (canonical: sorted keys; floats print
    exactly): ``fitted``, and from format 2 also the keys of ``_DIGESTED``."""
    state = cfg["fitted"]
    if cfg["format"] >= 2:
        state = {"fitted": state, **{k: cfg.get(k) for k in _DIGESTED}}
    text = json.dumps(state, sort_keys=True, allow_nan=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _write_both(folder: Path, arrays: bytes, config: bytes) -> None:
    """Both files written under temporary names before either is renamed onto its own, the
    arrays first: a write that fails (a full disk) leaves the folder as it was (the config's
    failing after the arrays were renamed lost the old model)."""
    with replacing(folder / CONFIG) as config_tmp, replacing(folder / ARRAYS) as arrays_tmp:
        arrays_tmp.write_bytes(arrays)
        config_tmp.write_bytes(config)


def _saved_folder(path) -> Path:
    """The folder :func:`save` wrote, from ``path``: the folder itself, or one of the files
    it wrote there (``c_saved/config.json``, as a file dialog or tab completion gives it,
    was refused as "missing config.json" beside a config.json that exists)."""
    path = as_path(path)
    if path.is_file() and path.name in (CONFIG, ARRAYS, _LEGACY_ARRAYS):
        return path.parent
    if path.is_file():
        raise FileNotFoundError(f"{path} is a file; give the folder that save() wrote, which "
                                f"holds {CONFIG} and {ARRAYS}")  # fmt: skip
    return path


def _unique_keys(pairs: list) -> dict:
    """A JSON object as a dict, refusing a key given twice (json keeps the last silently,
    and save never writes one twice: a file edited by hand)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        twice = sorted({k for k, _ in pairs if sum(k == j for j, _ in pairs) > 1})
        raise ValueError(f"key(s) {twice} given twice in one object")
    return out


def _read_config(path: Path) -> dict:
    cfg_path = path / CONFIG
    if not cfg_path.is_file():
        raise FileNotFoundError(f"no saved estimator at {path} (missing {CONFIG})")
    try:  # ValueError: also an integer of over 4300 digits, which json cannot convert
        cfg = json.loads(cfg_path.read_text(), object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError too
        why = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise ValueError(f"{cfg_path} is not valid JSON: {why}") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{cfg_path} must hold a JSON object")
    for key, kind in (("kind", str), ("format", int), ("params", dict), ("fitted", dict)):
        if not isinstance(cfg.get(key), kind) or isinstance(cfg.get(key), bool):
            raise ValueError(f"{cfg_path}: missing or malformed {key!r}")
    if cfg["format"] not in FORMATS:
        newer = cfg["format"] > max(FORMATS)  # a later tssdpa's file: upgrading reads it
        raise ValueError(
            f"{cfg_path}: unsupported format {cfg['format']} (expected {FORMAT})"
            + ("; written by a newer tssdpa: upgrade to load it" if newer else "")
        )
    unknown = sorted(set(cfg) - set(KEYS))
    if unknown:  # as an unknown parameter or fitted key: a misspelt or foreign key is an edit
        raise ValueError(f"{cfg_path}: unknown key(s) {unknown} (a saved estimator's config "
                         f"holds only {', '.join(KEYS)}): an edited file")  # fmt: skip
    for key in DIGESTS if cfg["format"] >= 2 else ():
        if not isinstance(cfg.get(key), str):
            what = (
                f"missing {key!r}"
                if key not in cfg
                else f"{key!r} is of type {type(cfg[key]).__name__}, not text"
            )
            raise ValueError(f"{cfg_path}: {what} (a file of format {cfg['format']} "
                             "carries it as a hex digest: an edited file)")  # fmt: skip
    for key in FORMAT_2_ONLY if cfg["format"] < 2 else ():
        if key in cfg:  # format 1 was never written with it: its digests were removed
            raise ValueError(f"{cfg_path}: {key!r} in a file of format 1, which never "
                             "held it: a format-2 file edited to format 1")  # fmt: skip
    return cfg


def _type_ok(value, types: tuple) -> bool:
    """JSON ``value`` against allowed Python types (an int is also a valid float). A list must
    hold values of the schema's other types (e.g. ``(float, list)``: a list of numbers)."""
    if value is None:
        return type(None) in types
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int):
        return int in types or float in types
    if isinstance(value, list) and list in types:
        items = tuple(t for t in types if t is not list)
        return not items or all(_type_ok(v, items) for v in value)
    return any(isinstance(value, t) for t in types if t not in (bool, int, type(None)))


def check_fitted(cls, fitted: dict, where) -> None:
    """Every key of ``fitted`` is declared in ``cls._fitted_schema``, with an allowed type."""
    if not isinstance(fitted, dict):
        raise ValueError(f"{where}: fitted state must be a JSON object, got {fitted!r}")
    for k, v in fitted.items():
        types = cls._fitted_schema.get(k)
        if types is None:
            raise ValueError(f"{where}: unknown fitted attribute {k!r} for {cls.__name__}")
        if not _type_ok(v, types):
            names = "/".join(t.__name__ for t in types)
            raise ValueError(f"{where}: fitted {k!r} must be {names}, got {v!r}")


def nest(fitted: dict, arrays: dict, name: str, part) -> None:
    """Add the state of the fitted estimator ``part`` (an attribute ``name`` of the one being
    saved) to ``fitted`` / ``arrays``: its JSON state under ``fitted[name]``, its arrays
    prefixed ``name.``."""
    sub_fitted, sub_arrays = part._state()
    fitted[name] = sub_fitted
    arrays.update({f"{name}.{k}": v for k, v in sub_arrays.items()})


def unnest(part, fitted: dict, arrays: dict, name: str):
    """Restore into the unfitted estimator ``part`` what :func:`nest` stored under ``name``,
    checked against ``part``'s own schema; returns ``part``."""
    if name not in fitted:
        raise ValueError(f"missing fitted {name!r}")
    check_fitted(type(part), fitted[name], name)
    prefix = f"{name}."
    sub = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
    for k in sub:
        if not part._array_allowed(k):
            raise ValueError(f"unknown array {prefix + k!r} for {type(part).__name__}")
    try:
        part._set_state(fitted[name], sub)
    except ValueError as exc:  # name the part: the same field may be in the outer state too
        raise ValueError(f"{name}: {exc}") from exc
    part._record_structure()
    return part


def require(arrays: dict, *names: str) -> list:
    """The arrays ``names`` of a saved state, or an error naming the first one missing."""
    missing = [n for n in names if n not in arrays]
    if missing:
        raise ValueError(f"missing array {missing[0]!r}")
    return [arrays[n] for n in names]


def require_floats(arrays: dict, *names: str) -> list:
    """The arrays ``names`` of a numpy estimator's saved state: each present, float64 (what
    ``fit`` computes and :func:`save` writes; integers, booleans or a lower precision would
    load and quietly change every output) and without ±inf (NaN is checked by :func:`load`)."""
    out = require(arrays, *names)
    for n, v in zip(names, out):
        if v.dtype != np.float64:
            raise ValueError(f"array {n!r} must be float64, got {v.dtype}")
        if np.isinf(v).any():
            raise ValueError(f"array {n!r} holds inf (a fitted value is finite)")
    return out


def saved_channels(fitted: dict) -> int:
    """The saved ``n_channels_``, present and >= 1: what the per-channel arrays are checked
    against (without it the estimator would load unfitted)."""
    if "n_channels_" not in fitted:
        raise ValueError("missing fitted 'n_channels_'")
    return check_int(fitted["n_channels_"], "n_channels_")


def check_context(forecaster, train) -> None:
    """A forecaster's saved training series holds the samples ``predict`` starts from (a
    shorter one would load and then forecast NaN)."""
    need = forecaster._predict_context()
    if need is not None and len(train) < need:
        raise ValueError(f"train_ has {len(train)} samples; predict needs the last {need}")


def load(cls, path):
    """Read what :func:`save` wrote into a new ``cls``, checked against its schema."""
    from safetensors import SafetensorError
    from safetensors.numpy import load as load_bytes

    path = _saved_folder(path)
    cfg = _read_config(path)
    arr_path = path / ARRAYS
    if not arr_path.is_file() and (path / _LEGACY_ARRAYS).is_file():
        arr_path = path / _LEGACY_ARRAYS
    arrays = {}
    digest = cfg.get("arrays_sha256")  # written since 2026-12-04; format 1 may have none
    if digest is not None and not arr_path.is_file():
        raise ValueError(f"{path / CONFIG} names arrays, but {arr_path} is missing")
    if arr_path.is_file():
        try:
            blob = arr_path.read_bytes()
            arrays = load_bytes(blob)
        except (SafetensorError, OSError, ValueError) as exc:
            raise ValueError(f"{arr_path} is not a readable safetensors file: {exc}") from None
    est = _restore(cls, cfg, arrays, path, arr_path)  # a wrong array is named first
    if digest is not None and hashlib.sha256(blob).hexdigest() != digest:
        raise ValueError(f"{arr_path} is not the arrays {path / CONFIG} was saved with (a "
                         "save that failed half-way, or an edited file)")  # fmt: skip
    # what fit learned, as the arrays: a fitted value edited to another valid one (sigma_,
    # a ridge, a radius) loaded and changed every output; the parameters are not digested,
    # an edit there is a set_params (checked as such; structural ones against 'structure')
    fitted_digest = cfg.get("fitted_sha256")  # written since 2026-12-05 (format 1: optional)
    if fitted_digest is not None and _fitted_digest(cfg) != fitted_digest:
        raise ValueError(f"{path / CONFIG}: its 'fitted' state is not the one it was saved "
                         "with (an edited file: a fitted value, or from format 2 also its "
                         f"{' or '.join(map(repr, _DIGESTED))}): fit again and save")  # fmt: skip
    if fitted_digest is None:  # format 1 from before the digest, or a format-2 file edited so
        warn(f"{path / CONFIG}: a format-1 file without 'fitted_sha256' (written "
             "before 2026-12-05, or edited to look so): its fitted values load "
             "unchecked; save it again to write format 2, whose digests refuse an "
             "edited file", UncheckedFileWarning,
             stacklevel=user_stacklevel())  # fmt: skip
    return est


class UncheckedFileWarning(LibraryWarning):
    """A saved estimator loaded without the digest of its fitted values (format 1)."""


def _check_saved_structure(structure, params: dict, where) -> None:
    """The saved parameters agree with the ``structure`` the state was fitted with (the
    structural parameters as :func:`save` recorded them; a file written before 2026-12-03
    has none): a window or lookback edited in the config would load and change every output
    (the weights do not record it)."""
    if not isinstance(structure, dict):
        raise ValueError(f"{where}: 'structure' must be a JSON object, got {structure!r:.100}")
    for name, value in structure.items():
        if name not in params or params[name] != value:
            raise ValueError(f"{where}: {name}={params.get(name)!r}, but the saved state was "
                             f"fitted with {name}={value!r}")  # fmt: skip


def _restore(cls, cfg: dict, arrays: dict, path: Path, arr_path: Path):
    """A new ``cls`` from a saved config and its arrays, checked against its schema (errors
    name ``path`` and ``arr_path``)."""
    where = path / CONFIG
    if cfg["kind"] != cls.__name__:
        raise ValueError(f"{path} holds a {cfg['kind']!r}, not a {cls.__name__!r}")
    try:
        params = cls._rename(cfg["params"], warn=False)
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from None
    params = {**cls._saved_defaults, **params}
    known = set(cls._param_names())
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"{where}: unknown parameter(s) {unknown} for {cls.__name__}")
    _check_saved_structure(cfg.get("structure", {}), params, where)
    fitted = cfg["fitted"]
    check_fitted(cls, fitted, where)
    for k, v in arrays.items():
        if not cls._array_allowed(k):
            raise ValueError(f"{arr_path}: unknown array {k!r} for {cls.__name__}")
        # NaN in a coefficient would load and then turn every output into NaN, silently
        nan_ok = k.rsplit(".", 1)[-1] in cls._arrays_with_nan
        if v.dtype.kind == "f" and not nan_ok and np.isnan(v).any():
            raise ValueError(f"{arr_path}: array {k!r} holds NaN (a fitted value, never missing)")
    obj = cls(**params)
    try:
        obj._validate_params()  # the same checks as fit: a file holds no unchecked setting
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    try:
        obj._set_state(fitted, {k: np.array(v) for k, v in arrays.items()})
    except (KeyError, AttributeError, TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"{path}: cannot restore the saved {cls.__name__}: {exc}") from exc
    # format 2 writes what the state was fitted with wherever it depends on parameters:
    # without it, an edited library_size loaded (forecast_path off by 0.52)
    if cfg["format"] >= 2 and "structure" not in cfg and obj._structure_names():
        raise ValueError(f"{where}: missing 'structure' (a file of format 2 carries it for a "
                         f"{cls.__name__}: an edited file)")  # fmt: skip
    names = cfg.get("feature_names_in")  # written since 2026-12-05, for a DataFrame's fit
    if names is not None:
        n = getattr(obj, "n_channels_", None)
        if not (isinstance(names, list) and all(isinstance(c, str) for c in names)
                and len(names) == (len(names) if n is None else n)):  # fmt: skip
            raise ValueError(f"{where}: 'feature_names_in' must be one column name per "
                             f"channel (n_channels_={n}), got {names!r:.100}")  # fmt: skip
        obj.feature_names_in_ = names
    if cfg.get("pandas_output") is not None:  # written since 2026-12-05, for a pandas fit
        output = loaded_output(cfg["pandas_output"], where, getattr(obj, "n_channels_", None))
        obj.__dict__[OUTPUT_ATTRIBUTE] = output
    obj._record_structure()
    return obj
