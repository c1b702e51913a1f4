"""The progress bar shows no rate and no time left until ticks after the first (warm-up) one
have been timed; then the rate is theirs alone."""

from __future__ import annotations

import io
import re

import pytest

from robot_dynamics._progress import progress_bar


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _bar(total: int, warmup: int = 3, initial: int = 0):
    clock = Clock()
    bar = progress_bar(total, desc="run", unit="tick", warmup=warmup, initial=initial, file=io.StringIO(),
                       mininterval=0, miniters=1, ncols=100)
    bar._time = clock  # tqdm reads its clock through _time
    bar.start_t = bar.last_print_t = 0.0
    return bar, clock


def _eta_seconds(text: str) -> float | None:
    m = re.search(r"<(?:(\d+):)?(\d+):(\d+)", text)
    if m is None:
        return None
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    return 3600 * h + 60 * mi + s


def test_a_slow_first_tick_gives_no_eta_then_the_rate_of_the_later_ticks():
    bar, clock = _bar(1000)
    clock.t = 60.0  # the first tick compiles for a minute: tqdm alone would predict 999 minutes
    bar.update(1)
    for _ in range(2):
        text = str(bar)
        assert "warming up" in text and _eta_seconds(text) is None and "tick/s" not in text
        clock.t += 0.01
        bar.update(1)
    assert "warming up" in str(bar)  # two ticks timed after the first: not yet
    clock.t += 0.01
    bar.update(1)  # the third
    text = str(bar)
    assert "warming up" not in text
    assert bar.measured_rate() == pytest.approx(100.0)  # 3 ticks in 0.03 s, the first one left out
    assert "100.00tick/s" in text
    assert _eta_seconds(text) == 9  # 996 ticks left at 100 ticks/s: 9.96 s, shown truncated
    for _ in range(96):
        clock.t += 0.01
        bar.update(1)
    assert _eta_seconds(str(bar)) in (8, 9)  # 900 ticks left at 100 ticks/s (float sums of 0.01 s)
    bar.close()


def test_a_resumed_run_counts_from_its_first_new_tick():
    bar, clock = _bar(200, warmup=2, initial=100)  # 100 points done in an earlier run
    clock.t = 30.0
    bar.update(1)
    clock.t += 0.5
    bar.update(1)
    assert not bar.warm and bar.measured_rate() is None
    clock.t += 0.5
    bar.update(1)
    assert bar.warm and bar.measured_rate() == pytest.approx(2.0)  # not 103 points in 31 s
    assert _eta_seconds(str(bar)) == 48  # 97 points at 2 per second: 48.5 s, shown truncated
    bar.close()


def test_warmup_needs_a_timed_tick():
    with pytest.raises(ValueError, match="warmup"):
        progress_bar(10, desc="run", warmup=0, file=io.StringIO())
