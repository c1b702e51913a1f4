"""Fuzz every entry point with many hostile inputs and count what happens to them.

    python bench/fuzz.py                 # 10,000 inputs per entry point
    python bench/fuzz.py --inputs 500    # a quick look

Per entry point (the targets of ``robot_dynamics/test/fuzz_targets.py``): inputs tried,
accepted (finite answers), refused cleanly (the package's own error; CLI exit 2 and one line),
raw exceptions, silent non-finite answers and over-time runs (longer than ``--time-limit``).
The rule is zeros in the last three columns; the first few offending inputs of each are printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "robot_dynamics" / "test"))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from tqdm import tqdm  # noqa: E402

from fuzz_targets import ACCEPTED, NONFINITE, RAW, REFUSED, TARGETS, outcome  # noqa: E402


def fuzz(name: str, inputs: int, time_limit: float, seed: int) -> tuple[Counter[str], list[str]]:
    strategy, target = TARGETS[name]
    counts: Counter[str] = Counter()
    examples: list[str] = []
    bar = tqdm(total=inputs, desc=f"{name:>20}", unit="input", leave=False)

    @settings(max_examples=inputs, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(strategy)
    def run(value):
        start = time.perf_counter()
        kind, detail = outcome(lambda: target(value))
        if time.perf_counter() - start > time_limit:
            kind, detail = "over time", f"{time.perf_counter() - start:.1f} s"
        counts[kind] += 1
        if kind not in (ACCEPTED, REFUSED) and len(examples) < 3:
            examples.append(f"  {kind}: {detail} <- {value!r:.200}")
        bar.update(1)

    run()
    bar.close()
    return counts, examples


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
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    names = args.only or list(TARGETS)
    _warm_up()
    os.chdir(tempfile.mkdtemp(prefix="robot_dynamics_fuzz_"))  # the CLI target writes into its cwd
    header = f"{'entry point':<20} {'tried':>7} {'accepted':>9} {'refused':>8} {'raw exc.':>9} {'non-finite':>11} {'over time':>10}"
    rows, details = [header, "-" * len(header)], []
    bad = 0
    for name in names:
        start = time.perf_counter()
        c, examples = fuzz(name, args.inputs, args.time_limit, args.seed)
        tried = sum(c.values())
        rows.append(f"{name:<20} {tried:>7} {c[ACCEPTED]:>9} {c[REFUSED]:>8} {c[RAW]:>9} {c[NONFINITE]:>11} "
                    f"{c['over time']:>10}   ({time.perf_counter() - start:.0f} s)")
        bad += c[RAW] + c[NONFINITE] + c["over time"]
        if examples:
            details.append(f"{name}:")
            details.extend(examples)
    print("\n".join(rows))
    if details:
        print("\nfirst offending inputs:")
        print("\n".join(details))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
