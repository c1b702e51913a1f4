"""Shape checking at the API boundary: one helper for every ``(..., n)`` input."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import InputError

__all__ = ["as_batch", "broadcast_batch"]


def real_array(x: ArrayLike, what: str, expected: str = "numbers") -> NDArray[np.float64]:
    """``x`` as a float64 array; InputError (naming ``what``) for complex values, text, objects
    or integers too large for a double."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        return x
    try:
        complex_values = np.iscomplexobj(x)
        arr = None if complex_values else np.asarray(x, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        if "inhomogeneous" in str(exc):  # rows of different lengths, or numbers mixed with lists
            raise InputError(f"{what}: expected {expected} (every row of the same length), got a ragged or "
                             f"mixed sequence {str(x)[:80]!r}") from None
        raise InputError(f"{what}: expected {expected}, got {str(x)[:80]!r}") from None
    if arr is None:
        raise InputError(f"{what}: expected real {expected}, got complex values")
    return arr


def as_batch(
    x: ArrayLike, n: int, what: str, names: Sequence[str] | None = None
) -> tuple[NDArray[np.float64], tuple[int, ...]]:
    """Validate ``x`` of shape (..., n) and flatten it to (N, n).

    Returns:
        (array of shape (N, n), the leading batch shape).

    Raises:
        InputError: wrong last dimension, non-numeric or non-finite values; the message names
            the expected shape (and the joint names when given).
    """
    arr = real_array(x, what, f"numbers of shape (..., {n})")
    if arr.ndim == 0 or arr.shape[-1] != n:
        hint = f" ordered as {list(names)}" if names is not None else ""
        raise InputError(f"{what}: expected shape (..., {n}){hint}, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{what}: contains NaN or infinite values")
    batch = arr.shape[:-1]
    return arr.reshape(-1, n), batch


def broadcast_batch(
    arrays: Sequence[tuple[NDArray[np.float64], tuple[int, ...]]],
) -> tuple[list[NDArray[np.float64]], tuple[int, ...]]:
    """Broadcast several flattened (N_i, n_i) arrays with batch shapes to one common batch.

    Every result is a :func:`kernel_array`.
    """
    shapes = [b for _, b in arrays]
    shape = shapes[0] if shapes.count(shapes[0]) == len(shapes) else np.broadcast_shapes(*shapes)
    out = []
    for flat, b in arrays:
        full = flat if b == shape else np.broadcast_to(flat.reshape(b + flat.shape[-1:]), shape + flat.shape[-1:])
        out.append(kernel_array(full).reshape(-1, flat.shape[-1]))
    return out, shape


def kernel_array(x: ArrayLike) -> NDArray[np.float64]:
    """x as the compiled kernels are typed on it: float64, C-contiguous and writeable (copied
    only when it is not already). A read-only array (np.broadcast_to's, or a caller's) would
    compile a second specialisation of a kernel on its first use (seconds)."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    return a if a.flags.writeable else a.copy()
