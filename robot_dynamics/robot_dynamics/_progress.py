"""A progress bar (tqdm) that shows no rate and no time left until they can be trusted.

The first tick of a run pays for warm-up (imports, compiled kernels, the first solve), often
thousands of times a later tick: a rate measured over it predicts hours for a run of seconds.
:func:`progress_bar` times the run from the end of the first tick, and shows a rate and an ETA
only after ``warmup`` more ticks; until then it shows ``warming up``.
"""

from __future__ import annotations

from typing import Any

from tqdm import tqdm

__all__ = ["WARMING_UP", "HonestBar", "progress_bar", "stderr_is_a_terminal"]

#: The bar's format until the rate is known: no rate, no time left.
WARMING_UP = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, warming up]"


class HonestBar(tqdm):  # type: ignore[misc]  # tqdm is untyped
    """tqdm whose rate (and so ETA) is the mean over the ticks after the first one, shown once
    ``warmup`` ticks have been timed after it."""

    def __init__(self, *args: Any, warmup: int = 3, **kwargs: Any) -> None:
        if warmup < 1:
            raise ValueError(f"warmup: expected at least 1 timed tick, got {warmup}")
        self._warmup = warmup
        self._first: tuple[float, float] | None = None  # (time, n) at the end of the first tick
        super().__init__(*args, **kwargs)

    def update(self, n: float | None = 1) -> bool | None:
        if self._first is None and not self.disable:
            self._first = (self._time(), self.n + (n or 0))  # the rate is measured from here on
        return super().update(n)

    @property
    def warm(self) -> bool:
        """True once ``warmup`` ticks after the first have been timed."""
        return self._first is not None and self.n - self._first[1] >= self._warmup

    def measured_rate(self) -> float | None:
        """Ticks per second since the end of the first tick; None while warming up."""
        if not self.warm:
            return None
        assert self._first is not None
        dt = self._time() - self._first[0]
        return (self.n - self._first[1]) / dt if dt > 0 else None

    @property
    def format_dict(self) -> dict[str, Any]:
        d = super().format_dict
        if getattr(self, "_warmup", None) is None:  # called from tqdm's __init__
            return d
        rate = self.measured_rate()
        if rate is None:
            d["rate"] = None
            d["bar_format"] = WARMING_UP
        else:
            d["rate"] = rate
        return d


def progress_bar(total: int, *, desc: str, unit: str = "it", warmup: int = 3, **kwargs: Any) -> HonestBar:
    """A :class:`HonestBar` on stderr (``tqdm`` keyword arguments pass through)."""
    return HonestBar(total=total, desc=desc, unit=unit, warmup=warmup, **kwargs)


def stderr_is_a_terminal() -> bool:
    """True when stderr is a terminal: where the command shows progress (a library call shows
    none unless asked, and a log file or a pipe gets no bar)."""
    import sys

    try:
        return bool(sys.stderr is not None and sys.stderr.isatty())
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
