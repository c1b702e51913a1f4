"""The rule, fuzzed: every entry point either accepts an input and answers finite numbers (and
right ones, where the target can check), or refuses it with the package's own error (CLI: exit
2, one line). A CI-sized run: a few hundred hostile inputs per entry point (``bench/fuzz.py``
runs tens of thousands)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from fuzz_targets import NONFINITE, RAW, TARGETS, WRONG, outcome

EXAMPLES = 300
#: Entry points whose inputs run whole commands (a simulation and its plot each): fewer here.
HEAVY = {"CLI simulate": 60}


@pytest.mark.parametrize("name", list(TARGETS))
def test_accepted_and_finite_or_refused_cleanly(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    strategy, target = TARGETS[name]
    failures: list[str] = []

    @settings(max_examples=HEAVY.get(name, EXAMPLES), deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value):
        kind, detail = outcome(lambda: target(value))
        if kind in (RAW, NONFINITE, WRONG) and len(failures) < 5:
            failures.append(f"{kind}: {detail} <- {value!r:.300}")

    run()
    assert not failures, "\n".join(failures)
