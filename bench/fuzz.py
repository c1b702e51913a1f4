"""Fuzz every entry point with many hostile inputs and count what happens to them.

    python bench/fuzz.py                 # 10,000 inputs per entry point
    python bench/fuzz.py --inputs 500    # a quick look

Per entry point (the targets of ``robot_dynamics/test/fuzz_targets.py``): inputs tried,
accepted (finite answers), refused cleanly (the package's own error; CLI exit 2 and one line),
raw exceptions, silent non-finite answers, wrong answers (an accepted input that the target's
own check finds wrong: limits out of order, an unknown key ignored) and over-time runs (longer
than ``--time-limit``). The rule is zeros in the last four columns; the first few offending
inputs of each are printed, and for each class of defect (outcome and exception type) how many
inputs the strategy needed to find it the first time.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "robot_dynamics" / "test"))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from tqdm import tqdm  # noqa: E402

from fuzz_targets import ACCEPTED, NONFINITE, RAW, REFUSED, TARGETS, WRONG, outcome  # noqa: E402


def fuzz(name: str, inputs: int, time_limit: float, cut_off: float) -> tuple[Counter[str], list[str], dict[str, int]]:
    """(outcome counts, the first offending inputs, defect class -> number of the input that first found it)."""
    strategy, target = TARGETS[name]
    counts: Counter[str] = Counter()
    examples: list[str] = []
    first: dict[str, int] = {}
    bar = tqdm(total=inputs, desc=f"{name:>20}", unit="input", leave=False)

    @settings(max_examples=inputs, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(strategy)
    def run(value):
        start = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, cut_off)  # a runaway input is cut off (counted as over time)
        try:
            kind, detail = outcome(lambda: target(value))
        except _CutOff:
            kind, detail = "over time", f"cut off after {cut_off:.0f} s"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if time.perf_counter() - start > time_limit:
            kind, detail = "over time", f"{time.perf_counter() - start:.1f} s"
        counts[kind] += 1
        if kind not in (ACCEPTED, REFUSED):
            cls = f"{kind}: {detail.split(':')[0]}" if kind == RAW else kind
            first.setdefault(cls, sum(counts.values()))
            if len(examples) < 3:
                examples.append(f"  {kind}: {detail} <- {value!r:.200}")
        bar.update(1)

    run()
    bar.close()
    return counts, examples, first


class _CutOff(BaseException):
    """Raised by the alarm inside an input that ran past the cut-off (a
    BaseException, so that the target's own ``except Exception`` does not swallow it)."""


def _alarm(signum: int, frame: object) -> None:
    raise _CutOff


def _warm_up() -> None:
    """Load the compiled kernels once, so that "over time" measures runs, not the first load."""
    import numpy as np

    import robot_dynamics as rd

    for robot in ("puma560", "iiwa14", "three_dof_geared"):
        m = rd.load_robot(robot)
        for x in (np.zeros(m.nq), np.zeros((2, m.nq))):
            rd.rnea(m, x, x, x), rd.aba(m, x, x, x), rd.crba(m, x), rd.coriolis_matrix(m, x, x)
            rd.frame_pose(m, x), rd.jacobian(m, x), rd.jacobian_dot_qdot(m, x, x), rd.mechanical_energy(m, x, x)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=10_000, help="inputs per entry point (default 10000)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds one input may take (default 10)")
    parser.add_argument("--only", action="append", help="entry point(s) to fuzz (default all)")
    parser.add_argument("--cut-off", type=float, help="seconds after which a run is stopped, counted over time "
                        "(default three times --time-limit; just above it makes a run on old code shorter)")
    args = parser.parse_args()
    cut_off = args.cut_off or 3 * args.time_limit
    if cut_off <= args.time_limit:
        parser.error("--cut-off must exceed --time-limit")
    names = args.only or list(TARGETS)
    signal.signal(signal.SIGALRM, _alarm)
    _warm_up()
    os.chdir(tempfile.mkdtemp(prefix="robot_dynamics_fuzz_"))  # the CLI target writes into its cwd
    header = (f"{'entry point':<20} {'tried':>7} {'accepted':>9} {'refused':>8} {'raw exc.':>9} {'non-finite':>11} "
              f"{'wrong':>6} {'over time':>10}")
    rows, details, found = [header, "-" * len(header)], [], []
    bad = 0
    for name in names:
        start = time.perf_counter()
        c, examples, first = fuzz(name, args.inputs, args.time_limit, cut_off)
        tried = sum(c.values())
        rows.append(f"{name[:20]:<20} {tried:>7} {c[ACCEPTED]:>9} {c[REFUSED]:>8} {c[RAW]:>9} {c[NONFINITE]:>11} "
                    f"{c[WRONG]:>6} {c['over time']:>10}   ({time.perf_counter() - start:.0f} s)")
        bad += c[RAW] + c[NONFINITE] + c[WRONG] + c["over time"]
        found.extend(f"  {name}: {cls} at input {k}" for cls, k in first.items())
        if examples:
            details.append(f"{name}:")
            details.extend(examples)
    print("\n".join(rows))
    if found:
        print("\nclasses found (input number of the first find):")
        print("\n".join(found))
    if details:
        print("\nfirst offending inputs:")
        print("\n".join(details))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
