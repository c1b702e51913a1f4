"""Two source trees of robot_dynamics side by side: the peer ratios of benches, before and after.

    python bench/compare_trees.py BEFORE AFTER [--rounds 3] [--benches core derivatives simulation]

BEFORE and AFTER are checkouts of the repository, each with its engine built in place
(``python setup.py build_ext --inplace`` in its ``robot_dynamics`` folder). Each round runs
each bench of each tree once, alternately (before, after, before, ...), in a new process with
that tree first on ``PYTHONPATH``, and reads the JSON it writes with ``--results``. Every row
that has our time and the peer's time gives a ratio (ours / peer's: a machine that slows
down slows both); the table prints the median over the rounds of each tree and the change.
A refactoring of the engine that claims "speed unchanged" shows it here: every ratio within
a few percent, the spread between rounds beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# Each bench: its arguments (the quick, comparable part of it) and the columns of ours and the peer's.
BENCHES = {
    "core": ["--robots", "puma560", "iiwa14", "--urdf", "--sizes", "1000", "10000", "--threads", "1",
             "--skip-cold", "--skip-memory"],
    "derivatives": ["--robots", "puma560", "iiwa14", "three_dof_geared", "--urdf", "--sizes", "1000",
                    "--threads", "1"],
    "simulation": ["--repeat", "5"],
}
OURS = ("ours [us]", "ours")
PEERS = ("Pinocchio [us]", "Pinocchio", "Pinocchio (loop)")
KEYS = ("robot", "algorithm", "threads", "states")


def ratios(data: dict) -> dict[str, float]:
    """The ratios of one bench's JSON, keyed by table and row: ours / the peer's time."""
    out: dict[str, float] = {}
    for table in data.get("tables", []):
        cols = table["columns"]
        ours = next((cols.index(c) for c in OURS if c in cols), None)
        peer = next((cols.index(c) for c in PEERS if c in cols), None)
        if ours is None or peer is None:
            continue
        for row in table["rows"]:
            try:
                value = float(row[ours]) / float(row[peer])
            except (ValueError, ZeroDivisionError):
                continue
            key = " ".join(str(row[cols.index(k)]) for k in KEYS if k in cols)
            out[f"{table['title'].split(' (')[0]}: {key}"] = value
    for row in data.get("rows", []):  # bench_simulation: real-time factors (higher is faster)
        if row.get("pinocchio_loop"):
            out[f"simulation {row['robot']}: Python tick / Pinocchio loop time"] = row["pinocchio_loop"] / row["python_tick"]
        if row.get("pin_aba_us"):
            out[f"simulation {row['robot']}: one aba / pin.aba"] = row["aba_us"] / row["pin_aba_us"]
        if row.get("pin_aba_us") and row.get("compiled"):
            # the compiled loop's time per tick against Pinocchio's one aba (the machine's pace)
            out[f"simulation {row['robot']}: compiled loop tick / pin.aba"] = 1e3 / row["compiled"] / row["pin_aba_us"]
    return out


def run(tree: Path, bench: str, out: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree / "robot_dynamics"), MPLBACKEND="Agg")
    cmd = [sys.executable, str(tree / "bench" / f"bench_{bench}.py"), *BENCHES[bench], "--results", str(out)]
    subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    return ratios(json.loads(out.read_text()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--benches", nargs="+", default=list(BENCHES), choices=list(BENCHES))
    args = parser.parse_args(argv)
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for bench in args.benches:
            got: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
            for r in range(args.rounds):
                for side, tree in (("before", args.before), ("after", args.after)):
                    print(f"bench_{bench} round {r + 1}/{args.rounds}: {side}", file=sys.stderr, flush=True)
                    for key, value in run(tree.resolve(), bench, Path(tmp) / f"{bench}-{side}.json").items():
                        got[side].setdefault(key, []).append(value)
            print(f"\n## bench_{bench}: ours / peer, median of {args.rounds} rounds (spread: max/min - 1)")
            print(f"{'row':70s} {'before':>8s} {'after':>8s} {'change':>8s} {'spread':>7s}")
            for key in got["before"]:
                if key not in got["after"]:
                    continue
                b, a = statistics.median(got["before"][key]), statistics.median(got["after"][key])
                spread = max(max(v) / min(v) - 1 for v in (got["before"][key], got["after"][key]))
                change = a / b - 1
                worst = max(worst, abs(change))
                print(f"{key[:70]:70s} {b:8.3f} {a:8.3f} {change:+8.1%} {spread:7.1%}")
    print(f"\nlargest change of a ratio: {worst:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
