"""What an estimator tells of text given as a signal: numbers kept as strings (to convert)
and other text, such as a label column of a DataFrame (to drop), each column by its label
(:func:`~tssdpa.estimators.arrays.as_2d` calls these)."""

from __future__ import annotations

import sys

import numpy as np

from tssdpa.checks import NUMBERS_ONLY, inferred_kind

__all__ = ["floats", "numeric", "pandas_floats", "refuse_text", "refuse_text_columns",
           "true_false_columns"]  # fmt: skip


def _text(values) -> tuple[np.ndarray, bool]:
    """``values`` (array-like, a pandas column) as an array, and whether it holds text. Only
    text and object dtypes are looked into."""
    a = values if isinstance(values, np.ndarray) else np.asarray(values)
    if a.dtype.kind != "O":
        return a, a.dtype.kind in "US"
    objects = a.ravel()
    if inferred_kind(objects) in NUMBERS_ONLY:  # the usual object column, without a loop
        return a, False
    return a, any(isinstance(v, (str, bytes)) for v in objects)


def _first_word(a: np.ndarray):
    """The first text entry of ``a`` that does not read as a number, or None where every one
    does (numbers kept as strings, which a conversion mends)."""
    for v in a.ravel():
        if isinstance(v, (str, bytes, np.str_, np.bytes_)):
            try:
                float(v)
            except ValueError:
                return v
    return None


_NOT_NUMERIC = "{name} must be a real numeric array, Series, DataFrame or tensor, got text"


def refuse_text(values, name: str) -> None:
    """``TypeError`` naming ``name`` where ``values`` (array-like, a pandas Series) holds text:
    asked for float64, numpy reads "1.5" (or b"1") as 1.5, so numbers kept as text (a column
    read as strings, a sample parsed from a line but not converted) were filtered as numbers
    while any other text was refused. The advice is to convert numbers kept as strings, and
    to give the signal for other text (which no conversion makes one)."""
    a, text = _text(values)
    if text:
        word = _first_word(a)
        why = ("numbers as strings: convert them first, e.g. pandas.to_numeric" if word is None
               else f"not numbers, e.g. {word!r}: pass the signal's values alone")  # fmt: skip
        raise TypeError(f"{_NOT_NUMERIC.format(name=name)} ({why})")


def refuse_text_columns(frame, name: str) -> None:
    """``TypeError`` naming ``name`` and, by label, each column of the DataFrame ``frame``
    that holds text: a stray label column ('site') is to be dropped, a column of numbers kept
    as strings converted (the message named neither, and told every one to convert)."""
    words, numbers = [], []
    for i, label in enumerate(frame.columns):  # by position: labels may repeat
        if frame.dtypes.iloc[i].kind in "OSU":
            a, text = _text(frame.iloc[:, i])
            if text:
                (numbers if _first_word(a) is None else words).append(label)
    why = []
    if words:
        why.append(f"the column(s) {words} hold text, not numbers: drop them "
                   f"({name}.drop(columns={words!r})) or make one the index")  # fmt: skip
    if numbers:
        why.append(f"the column(s) {numbers} hold numbers as strings: convert them first, "
                   f"e.g. {name}[{numbers!r}].apply(pandas.to_numeric)")  # fmt: skip
    if why:
        raise TypeError(f"{_NOT_NUMERIC.format(name=name)}: {'; '.join(why)}")


def true_false_columns(frame) -> tuple:
    """The labels of the DataFrame ``frame``'s columns of true / false values -- bool, pandas'
    ``boolean``, or objects all ``True`` / ``False`` or missing -- which are read as 1 and 0
    (:mod:`tssdpa.estimators.bool_columns` warns of them)."""
    found = []
    for i, (label, dtype) in enumerate(zip(frame.columns, frame.dtypes)):  # labels may repeat
        kind = dtype.kind
        # objects all True / False or missing, one pass in C (NaN, None, pd.NA skipped)
        if kind == "b" or (kind == "O" and inferred_kind(frame.iloc[:, i].to_numpy()) == "boolean"):
            found.append(label)
    return tuple(found)


def numeric(convert, x, name: str):
    """``convert()`` (``x`` as float64), or ``TypeError`` naming ``name`` and, in a list,
    the first value that is no number."""
    try:
        return convert()
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be a real numeric array, Series, DataFrame or tensor, "
            f"got {type(x).__name__}{_first_not_a_number(x)}"
        ) from None


def pandas_floats(x) -> np.ndarray:
    """A pandas Series or DataFrame as a new float64 array, pandas' NA read as a missing
    sample (NaN) in an object column (what pandas makes of ``[1.0, pd.NA]``) as it is in a
    nullable ``Float64`` one; numpy refused it there. Only where a column is of object dtype:
    ``DataFrame.to_numpy(float, na_value=nan)`` itself fails on such a column, so those go
    through objects, the slower way."""
    dtypes = x.dtypes if x.ndim == 2 else [x.dtype]
    if any(isinstance(d, np.dtype) and d.kind == "O" for d in dtypes):
        return np.array(x.to_numpy(dtype=object, na_value=np.nan), dtype=np.float64)
    return x.to_numpy(dtype=np.float64, copy=True)


def floats(values, copy: bool = True) -> np.ndarray:
    """``values`` (a list, an array) as a float64 array, a new one with ``copy``, pandas' NA
    in it read as a missing sample (NaN) as None is, and as :func:`pandas_floats` reads it in
    a column: ``[1.0, pd.NA]`` (a row built from a nullable column) was refused while
    ``[1.0, None]`` was taken. The caller's values are not changed."""
    try:
        return np.array(values, dtype=np.float64) if copy else np.asarray(values, np.float64)
    except TypeError:  # float(pd.NA) fails; the usual values never come here
        pd = sys.modules.get("pandas")  # loaded wherever a pd.NA exists
        if pd is None:
            raise
        objects = np.array(values, dtype=object)  # a new array: the caller's is not changed
        # pd.NA itself: pd.isna takes NaT, a time, as well
        missing = np.asarray(np.frompyfunc(lambda v: v is pd.NA, 1, 1)(objects), dtype=bool)
        if not missing.any() or complex_objects(objects):  # astype keeps a real part alone
            raise
        objects[missing] = np.nan
        return objects.astype(np.float64)


def complex_objects(objects: np.ndarray) -> bool:
    """Whether the object array ``objects`` holds a complex number (Python's or numpy's):
    numpy's float64 conversion of one keeps its real part, with only a ComplexWarning."""
    kinds = np.frompyfunc(lambda v: isinstance(v, (complex, np.complexfloating)), 1, 1)
    return bool(np.asarray(kinds(objects), dtype=bool).any())


def _first_not_a_number(x) -> str:
    """Where a list (an object array, a pandas object column) holds a value float() refuses:
    `` holding <type> <value>`` (a list with a dict was refused as "got list", lists being
    fine; a Series or DataFrame as "got Series"), else ''. None and pandas' NA are missing
    samples (:func:`floats`), never the value named."""
    if type(x).__name__ in ("Series", "DataFrame"):  # pandas' (not imported here)
        x = x.to_numpy(dtype=object)
    if not isinstance(x, (list, tuple, np.ndarray)):
        return ""
    try:
        flat = np.asarray(x, dtype=object).ravel()
    except ValueError:  # ragged nesting: numpy's own words say nothing more
        return ""
    for v in flat:
        try:  # None and pandas' NA are missing samples (floats); float() takes numpy's complex
            if isinstance(v, (complex, np.complexfloating)):  # with a warning, its real part
                raise TypeError
            float(np.nan if v is None or type(v).__name__ == "NAType" else v)
        except (TypeError, ValueError):
            hint = " (a missing sample is NaN)" if type(v).__name__ == "NaTType" else ""
            return f" holding {type(v).__name__} {v!r:.40}{hint}"
    return ""
