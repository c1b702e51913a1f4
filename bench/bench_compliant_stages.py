"""Where the Cartesian impedance law's tick goes: each stage of rd_compliant_control on the iiwa14, against
the CRISP-style law and the peer libraries' calls for the same jobs, in one process.

    python bench/bench_compliant_stages.py [--calls 50000] [--rounds 10] [--cpu K] [--results JSON]

Compiles ``bench/compliant_stages.cpp`` (with the engine's sources and its own flags, the pin wheel's
Pinocchio, the system's Eigen, and robot_dynamics_control's bench files for the law's set-up and the
CRISP-style law) and runs it on the bundled iiwa14 under bench_update's moving state and gains. Each
subject is timed call by call in interleaved rounds:

* rd_compliant_control, the whole law (no joint limits, as bench_update's law-alone subject);
* each stage of it alone, in the law's order (``bench/compliant_stages.c``, the engine calls the law
  makes): rnea, the frame, crba, A's factor, the s_min test, S and its factor, the damping;
* the CRISP-style law (Pinocchio's computeAllTerms, computeMinverse, SVD pseudo-inverses);
* for most stages a peer library's call for the same job: Pinocchio's rnea(q, v, 0) and crba, Eigen's
  fixed-size LLT for A's factor, its triangular solve, product and LLT for S and its factor, its
  SelfAdjointEigenSolver for the damping's eigen-decomposition, and its JacobiSVD for s_min (which
  gives all six singular values where the law tests the smallest against its threshold).

Prints per subject p50 and p99 [us]; each stage's p50 less the timer's, and the stages' sum, as a share
of the law and over the CRISP-style law's p50, and ours over the peer's for the same job. The rest of the
law (its validation, pose error, wrench, null-space torques) is the law less the stages: it takes the
law's variation between runs too. Checks first that the CRISP-style law
given the engine's damping gives the law's torques, and Eigen's damping the engine's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import robot_dynamics as rd
from _results import print_table, write_results
from bench_task_space import ENGINE, HERE, build_with_pinocchio

CONTROL_BENCH = HERE.parent / "robot_dynamics_control" / "bench"
LAW, CRISP, TIMER = "rd_compliant_control", "CRISP-style Cartesian impedance (Pinocchio)", "timer"


def build(folder: str) -> str:
    """The stage driver's executable, built in `folder`."""
    include = Path(folder, "include")
    (include / "robot_dynamics_engine").mkdir(parents=True)  # the engine's header as its users include it
    shutil.copy(ENGINE / "engine.h", include / "robot_dynamics_engine" / "engine.h")
    cpp = [HERE / "compliant_stages.cpp", CONTROL_BENCH / "compliant_subjects.cpp",
           CONTROL_BENCH / "crisp_style_impedance.cpp"]
    return build_with_pinocchio(folder, "compliant_stages", cpp, c=(HERE / "compliant_stages.c",),
                                include=(include, HERE, CONTROL_BENCH), defines=("RD_BENCH_HAVE_PINOCCHIO",))


def run(exe: str, folder: str, calls: int, rounds: int, cpu: int | None) -> list[tuple[str, str, float, float]]:
    """The driver's lines: (subject, kind, p50 [s], p99 [s])."""
    from robot_dynamics.engine.layout import model_text

    model = rd.load_robot("iiwa14")
    text, urdf = Path(folder, "iiwa14.engine-model"), Path(folder, "iiwa14.urdf")
    text.write_text(model_text(model), encoding="utf-8")
    urdf.write_text(model.description, encoding="utf-8")
    command = [exe, str(text), str(urdf), str(calls), str(rounds)]
    if cpu is not None:
        command = ["taskset", "-c", str(cpu), *command]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"compliant_stages failed ({done.returncode}): {done.stderr.strip()}")
    print(done.stderr.strip().splitlines()[0])
    rows = []
    for line in done.stdout.splitlines():
        name, kind, p50, p99 = line.split("\t")
        rows.append((name, kind, float(p50) * 1e-9, float(p99) * 1e-9))
    return rows


def tables(rows: list[tuple[str, str, float, float]]) -> list[dict]:
    """The subjects' table and the stages' table (shares of the law and of the CRISP-style law)."""
    p50 = {name: a for name, _, a, _ in rows}
    timer = next(a for _, kind, a, _ in rows if kind == TIMER)
    law, crisp = p50[LAW] - timer, p50[CRISP] - timer
    peers = {kind[len("peer of "):]: (name, a - timer) for name, kind, a, _ in rows if kind.startswith("peer of ")}
    subjects = print_table("Each subject, one call [us] (the timer's own cost inside)", ["subject", "p50", "p99"],
                           [[name, f"{a * 1e6:.3f}", f"{b * 1e6:.3f}"] for name, _, a, b in rows])
    stage_rows, total = [], 0.0
    for name, kind, a, _ in rows:
        if kind != "stage":
            continue
        t = a - timer
        total += t
        peer = peers.get(name)
        stage_rows.append([name, f"{t * 1e6:.3f}", f"{t / law:.0%}", f"{t / crisp:.3f}", peer[0] if peer else "",
                           f"{peer[1] * 1e6:.3f}" if peer else "", f"{t / peer[1]:.2f}" if peer else ""])
    stage_rows.append(["the stages together", f"{total * 1e6:.3f}", f"{total / law:.0%}", f"{total / crisp:.3f}", "", "",
                       ""])
    rest = law - total
    stage_rows.append(["the rest: validation, pose error, wrench, null space", f"{rest * 1e6:.3f}", f"{rest / law:.0%}",
                       f"{rest / crisp:.3f}", "", "", ""])
    stage_rows.append([LAW, f"{law * 1e6:.3f}", "100%", f"{law / crisp:.3f}", "", "", ""])
    stages = print_table("The law's stages, p50 less the timer's [us]: share of the law, over the CRISP-style law's, "
                         "and over the peer's call for the same job",
                         ["stage", "p50", "of the law", "/ CRISP-style", "peer for the same job", "its p50", "ours / peer"],
                         stage_rows)
    return [subjects, stages]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=50000, help="timed calls per subject")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds")
    parser.add_argument("--cpu", type=int, default=None, help="pin the driver to this core")
    parser.add_argument("--results", default=None, metavar="JSON", help="also write the tables to this file")
    args = parser.parse_args(argv)
    if args.calls < args.rounds or args.rounds < 1:
        parser.error("--rounds must be at least 1 and at most --calls")
    with tempfile.TemporaryDirectory(prefix="bench_compliant_stages_") as folder:
        rows = run(build(folder), folder, args.calls, args.rounds, args.cpu)
    load = os.getloadavg()[0]
    print(f"load average {load:.2f}, {os.cpu_count()} cores")
    result = tables(rows)
    if args.results:
        write_results(args.results, "bench_compliant_stages.py", argv, load_average=load, tables=result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
