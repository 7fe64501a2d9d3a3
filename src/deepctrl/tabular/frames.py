"""Any table a user hands an estimator, as a pandas DataFrame with its column names.

pandas DataFrames pass through; polars, pyarrow and other data frames that narwhals knows
are read column by column (names kept, missing values as NaN/None, dates as datetime64);
numpy arrays, lists and scipy.sparse matrices become columns named ``x0, x1, ...`` (rules
then name columns by position).

>>> import numpy as np
>>> as_frame(np.array([[1.0, 2.0]])).columns.tolist()
['x0', 'x1']
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.validation import _check_sample_weight, validate_data

from deepctrl.tabular.cell_values import check_flat


def has_names(X: Any) -> bool:
    """Whether ``X`` is a data frame (its columns have names)."""
    return isinstance(X, pd.DataFrame) or _narwhals_frame(X) is not None


def named_table(X: Any) -> Any:
    """``X`` with the column names it carries kept: a pyarrow RecordBatch as a Table, a
    numpy record array or a list of dicts as a pandas DataFrame (which narwhals and
    scikit-learn would read as unnamed columns, or as one); a numpy masked array with its
    masked entries missing; anything else as given.

    >>> named_table([{"price": 1.0, "qty": 2}]).columns.tolist()
    ['price', 'qty']
    """
    if isinstance(X, np.ma.MaskedArray):
        X = _unmasked(X)
    kind = type(X)
    if kind.__name__ == "RecordBatch" and kind.__module__.split(".")[0] == "pyarrow":
        import pyarrow as pa

        return pa.Table.from_batches([X])
    if isinstance(X, np.ndarray) and X.dtype.names is not None:
        return pd.DataFrame(X)
    if isinstance(X, list) and X and all(isinstance(row, dict) for row in X):
        return pd.DataFrame(X)
    return X


def _unmasked(X: np.ma.MaskedArray) -> np.ndarray:
    """A masked array's values with its masked entries missing (NaN, or None for text),
    where numpy would read the hidden values beneath them.

    >>> _unmasked(np.ma.masked_array([1, 2, 3], mask=[False, True, False])).tolist()
    [1.0, nan, 3.0]
    >>> _unmasked(np.ma.masked_array(["a", "b"], dtype=object, mask=[True, False])).tolist()
    [None, 'b']
    """
    if not np.ma.getmask(X).any() or X.dtype.names is not None:
        return np.ma.getdata(X)
    numeric = X.dtype.kind in "biuf"
    values = np.ma.getdata(X).astype(np.float64 if numeric else object)
    values[np.ma.getmaskarray(X)] = np.nan if numeric else None
    return values


def refuse_lazy(X: Any, name: str) -> None:
    """A `ValueError` for a lazy frame (a query, not rows) given as ``name``."""
    if isinstance(nw.from_native(X, pass_through=True, allow_series=True), nw.LazyFrame):
        raise ValueError(
            f"{name} is a lazy frame ({type(X).__module__.split('.')[0]} {type(X).__name__}), "
            f"which holds a query, not rows: collect it first ({name}.collect())"
        )


def _narwhals_frame(X: Any) -> nw.DataFrame[Any] | None:
    if isinstance(X, pd.DataFrame | np.ndarray | list | tuple) or sp.issparse(X):
        return None
    frame = nw.from_native(named_table(X), eager_only=True, pass_through=True)
    return frame if isinstance(frame, nw.DataFrame) else None


def as_frame(X: Any, names: list[str] | None = None) -> pd.DataFrame:
    """``X`` as a pandas DataFrame with string column names; arrays get ``names`` (by
    default ``x0, x1, ...``). Columns of Python objects that are all numbers (or dates)
    become numeric (or dates), for arrays and data frames alike.

    >>> as_frame(pd.DataFrame({"price": [1.5, 2.0]}, dtype=object)).dtypes["price"]
    dtype('float64')
    """
    X = named_table(X)
    if isinstance(X, pd.DataFrame):
        frame = X.set_axis([str(c) for c in X.columns], axis=1)
        if any(d == np.dtype(object) for d in frame.dtypes):
            frame = _decimals_as_floats(frame.infer_objects())
        return frame
    frame = _narwhals_frame(X)
    if frame is not None:
        return pd.DataFrame({str(c): _values(frame[c], str(c)) for c in frame.columns})
    if sp.issparse(X):
        X = _dense(X)
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise ValueError(f"X must be a table (2-D), got an array of shape {arr.shape}")
    if names is None or len(names) != arr.shape[1]:
        names = [f"x{i}" for i in range(arr.shape[1])]
    frame = pd.DataFrame(arr, columns=names)
    return frame.infer_objects() if arr.dtype == object else frame


def _decimals_as_floats(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns of `decimal.Decimal` values (what SQL NUMERIC columns read as) as
    float64: numbers, not categories.

    >>> from decimal import Decimal
    >>> _decimals_as_floats(pd.DataFrame({"p": [Decimal("5.82"), None]}))["p"].tolist()
    [5.82, nan]
    """
    for name in frame.columns[frame.dtypes == np.dtype(object)]:
        present = frame[name].dropna()
        if len(present) and all(isinstance(v, Decimal) for v in present):
            frame = frame.assign(**{name: frame[name].astype(np.float64)})
    return frame


NESTED_DTYPES = (nw.List, nw.Array, nw.Struct)
WIDE_INTEGERS = (nw.Int128, nw.UInt128)


def _values(column: nw.Series[Any], name: str) -> Any:
    """A data frame's column for pandas: its values (dates with their time zone, decimals
    and 128-bit integers as float64), or pandas categories for a pyarrow column of
    dictionary-encoded values (a pandas category or a Parquet file's text), whose missing
    values narwhals reads as other categories (pyarrow's ``to_numpy`` of such a column cut
    in chunks fills them so), as a pandas frame holds them."""
    native = column.to_native()
    if type(native).__module__.split(".")[0] == "pyarrow":
        import pyarrow as pa

        if pa.types.is_dictionary(native.type):
            return native.to_pandas()
    dtype = column.dtype
    if isinstance(dtype, NESTED_DTYPES):
        kind = "records" if isinstance(dtype, nw.Struct) else "lists"
        raise ValueError(
            f"X: column {name!r} holds {kind}, not single values; spread them over columns "
            "of their own or leave the column out"
        )
    if isinstance(dtype, (nw.Decimal, *WIDE_INTEGERS)):
        return column.cast(nw.Float64).to_numpy()
    zone = getattr(dtype, "time_zone", None)
    if isinstance(dtype, nw.Datetime) and zone is not None:
        # to_numpy gives UTC without the zone: a pandas column keeps it (dates are read at
        # the wall-clock time they show)
        return pd.DatetimeIndex(column.to_numpy()).tz_localize("UTC").tz_convert(zone)
    return column.to_numpy()


DENSE_LIMIT_BYTES = 2**31
"""The largest dense float64 copy of a sparse matrix the estimators make (2 GiB)."""


def _dense(X: Any) -> np.ndarray:
    """A sparse matrix as a dense array; an error when that would take more than
    :data:`DENSE_LIMIT_BYTES` (every column of a table is one input of the network).

    >>> _dense(sp.csr_matrix((10**6, 10**4)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: X is a sparse matrix of 1000000 x 10000 with 0 values stored; the table ...
    """
    rows, cols = X.shape
    size = rows * cols * 8
    if size > DENSE_LIMIT_BYTES:
        raise ValueError(
            f"X is a sparse matrix of {rows} x {cols} with {X.nnz} values stored; the table "
            f"estimators read it dense, {size / 1e9:.1f} GB: reduce its columns first "
            "(feature selection, or TruncatedSVD)"
        )
    return X.toarray()


def checked_frame(est: Any, X: Any, reset: bool, names: list[str] | None) -> pd.DataFrame:
    """X as a DataFrame for estimator ``est``, checked the scikit-learn way (the number of
    columns, and their names for data frames, set at fit and compared later); arrays and
    sparse matrices take ``names`` (at fit: x0, x1, ...). A data frame given to a model
    fitted on an array is read by position, as scikit-learn does (with its warning)."""
    refuse_lazy(X, "X")
    X = named_table(X)
    if has_names(X):
        frame = as_frame(X)
        validate_data(est, frame, reset=reset, skip_check_array=True)
        if not reset and names is not None and not hasattr(est, "feature_names_in_"):
            frame = frame.set_axis(names, axis=1)
    else:
        arr = validate_data(
            est, X, reset=reset, dtype=None, accept_sparse=True, ensure_all_finite="allow-nan"
        )
        frame = as_frame(arr, names)
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError(f"X is empty: {frame.shape[0]} rows, {frame.shape[1]} columns")
    check_flat(frame)
    return frame


def target_names(y: Any) -> list[str] | None:
    """The column names of a target table, or the name of a target column (pandas, polars,
    pyarrow and other data frames narwhals knows); None when ``y`` has none.

    >>> target_names(pd.Series([1.0], name="sales")), target_names(np.zeros(3))
    (['sales'], None)
    """
    y = named_table(y)
    if isinstance(y, pd.DataFrame):
        return [str(c) for c in y.columns]
    if isinstance(y, pd.Series):
        return None if y.name is None else [str(y.name)]
    if isinstance(y, np.ndarray | list | tuple) or sp.issparse(y):
        return None
    native = nw.from_native(y, eager_only=True, allow_series=True, pass_through=True)
    if isinstance(native, nw.DataFrame):
        return [str(c) for c in native.columns]
    if isinstance(native, nw.Series) and native.name not in (None, ""):
        return [str(native.name)]
    return None


def sample_weights(sample_weight: Any, frame: pd.DataFrame) -> np.ndarray | None:
    """``sample_weight`` checked as one finite weight >= 0 per row of ``frame`` (float64),
    or None."""
    if sample_weight is None:
        return None
    try:
        checked = _check_sample_weight(
            named_table(sample_weight), frame, dtype=np.float64, ensure_non_negative=True
        )
    except ValueError as exc:  # scikit-learn 1.7 and later refuse all zeros in their words
        if "non-zero" in str(exc):
            raise ValueError(ALL_ZERO) from None
        raise
    if not checked.any():
        raise ValueError(ALL_ZERO)
    return checked


ALL_ZERO = "the sample weights are all zero"
"""The error for sample weights of which none is positive, whatever scikit-learn's version."""


def row_weights(
    sample_weight: Any, by_class: np.ndarray | None, frame: pd.DataFrame
) -> np.ndarray | None:
    """Per-row weights: ``sample_weight`` times the class weights, or None when every row
    weighs the same (training then runs exactly as without weights)."""
    if by_class is not None and not (np.isfinite(by_class).all() and (by_class >= 0).all()):
        raise ValueError("class_weight must give every class a finite weight >= 0")
    given = sample_weights(sample_weight, frame)
    parts = [p for p in (by_class, given) if p is not None]
    if not parts:
        return None
    weight = np.prod(parts, axis=0)
    if not weight.sum() > 0:
        raise ValueError(ALL_ZERO)
    return None if np.all(weight == weight[0]) else weight
