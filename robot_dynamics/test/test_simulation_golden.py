"""Results of the bundled simulation cases equal the ones recorded before the simulation became
an object with a step (and before its compiled loop): every array's first, middle and last rows,
its per-column sums of |x|, the metrics and the messages, to 1e-12."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from simulation_cases import CASES, GOLDEN, digest

STORED = json.loads(GOLDEN.read_text())


def _close(a, b, where):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            assert a is b, where
        elif math.isnan(a):
            assert math.isnan(b), where
        else:
            assert b == pytest.approx(a, rel=1e-12, abs=1e-12), where
    else:
        assert a == b, where


def test_every_case_is_recorded():
    assert sorted(STORED) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_equal_the_recorded_ones(name):
    now = digest(CASES[name]())
    then = STORED[name]
    assert now["K"] == then["K"]
    for key in then:
        if isinstance(then[key], dict):
            for sub in then[key]:
                _close(then[key][sub], now[key][sub], f"{name}.{key}.{sub}")
        else:
            _close(then[key], now[key], f"{name}.{key}")
    # the messages are text: equal, in order, at the same ticks
    assert [m for _, m in now["messages"]] == [m for _, m in then["messages"]]
    np.testing.assert_array_equal([t for t, _ in now["messages"]], [t for t, _ in then["messages"]])
