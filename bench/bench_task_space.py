"""One frame's task space against Pinocchio, side by side on the same URDF.

    python bench/bench_task_space.py [--robots iiwa14 puma560] [--urdf FILE ...] [--batch 1000]
                                     [--engines] [--results JSON]

Prints per robot the cost of a call and the ratio ours / Pinocchio's (below 1: robot_dynamics is
cheaper):

* one state from Python: the frame pose, the Jacobian (LOCAL_WORLD_ALIGNED), Jdot qd (Pinocchio's
  forwardKinematics(q, v, 0) and getFrameClassicalAcceleration), the task inertia Lambda (Pinocchio's
  computeMinverse, computeFrameJacobian, then numpy's inverse of J A^-1 J^T, as a Pinocchio user writes
  it in Python) and the four operational-space quantities (J, Lambda, J_bar, N);
* a batch of states from Python: ours in one call against a Python loop of Pinocchio's calls
  (Pinocchio has no batched Jacobian);
* with --engines, the engine against Pinocchio's C++ in one process (``bench/task_space_engines.cpp``,
  compiled here with g++ against the ``pin`` wheel's headers and libraries and the system's Eigen):
  rd_task_space against computeFrameJacobian, getFrameClassicalAcceleration, and Lambda by
  computeMinverse (or crba and Eigen's LLT, as ours) and Eigen's products.

Every comparison checks first that both sides give the same numbers.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import robot_dynamics as rd
from _results import print_table, write_results
from bench_core import _pinocchio

HERE = Path(__file__).resolve().parent
ENGINE = HERE.parent / "robot_dynamics" / "src" / "engine"


def best_time(fn: Callable[[], object], number: int) -> float:
    """Best of 5 timings of ``number`` calls, seconds per call."""
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def race(ours: Callable[[], object], theirs: Callable[[], object], number: int) -> tuple[float, float]:
    """Interleaved rounds (both sides see the same machine load): the best seconds per call of each."""
    ours(), theirs()
    a = b = np.inf
    for _ in range(3):
        a = min(a, best_time(ours, number))
        b = min(b, best_time(theirs, number))
    return a, b


def python_calls(pin, model: rd.RobotModel, pm, frame: str) -> dict[str, tuple[Callable, Callable, Callable]]:
    """Per quantity: ours, Pinocchio's (each a function of (q, qd)) and a check that they agree."""
    pd = pm.createData()
    fid = pm.getFrameId(frame)
    LWA = pin.LOCAL_WORLD_ALIGNED

    def pin_pose(q, qd):
        pin.forwardKinematics(pm, pd, q)
        return pin.updateFramePlacement(pm, pd, fid).homogeneous

    def pin_bias(q, qd):
        pin.forwardKinematics(pm, pd, q, qd, 0 * qd)
        a = pin.getFrameClassicalAcceleration(pm, pd, fid, LWA)
        return np.concatenate([a.linear, a.angular])

    def pin_space(q, qd):
        J = pin.computeFrameJacobian(pm, pd, q, fid, LWA)
        Minv = pin.computeMinverse(pm, pd, q)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T  # Pinocchio fills the upper triangle
        JMi = J @ Minv
        Lambda = np.linalg.inv(JMi @ J.T)
        return J, Lambda, JMi.T @ Lambda, np.eye(model.nq) - J.T @ (JMi.T @ Lambda).T

    return {
        "frame pose": (lambda q, qd: rd.frame_pose(model, q, frame), pin_pose),
        "Jacobian": (lambda q, qd: rd.jacobian(model, q, frame),
                     lambda q, qd: pin.computeFrameJacobian(pm, pd, q, fid, LWA)),
        "Jdot qd": (lambda q, qd: rd.jacobian_dot_qdot(model, q, qd, frame), pin_bias),
        "Lambda": (lambda q, qd: rd.task_inertia(model, q, frame), lambda q, qd: pin_space(q, qd)[1]),
        "J, Lambda, J_bar, N": (lambda q, qd: tuple(rd.operational_space(model, q, frame)), pin_space),
    }


def _agree(a: object, b: object) -> None:
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        scale = max(1.0, float(np.abs(y).max()))
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9 * scale)


def compare(pin, name: str, model: rd.RobotModel, path: str | None, batch: int, rows: list, batch_rows: list) -> None:
    pm = _pinocchio(pin, model, path)
    frame = model.end_effector
    rng = np.random.default_rng(0)
    Q, QD = rng.uniform(-1, 1, (2, max(batch, 1), model.nq))
    q, qd = Q[0].copy(), QD[0].copy()
    for what, (ours, theirs) in python_calls(pin, model, pm, frame).items():
        _agree(ours(q, qd), theirs(q, qd))
        a, b = race(lambda: ours(q, qd), lambda: theirs(q, qd), 5000)
        rows.append((name, what, a, b))
        if batch and what != "frame pose":
            batched = {"Jacobian": lambda: rd.jacobian(model, Q, frame),
                       "Jdot qd": lambda: rd.jacobian_dot_qdot(model, Q, QD, frame),
                       "Lambda": lambda: rd.task_inertia(model, Q, frame),
                       "J, Lambda, J_bar, N": lambda: rd.operational_space(model, Q, frame)}[what]
            a, b = race(batched, lambda: [theirs(Q[k], QD[k]) for k in range(batch)], max(1, 2000 // batch))
            batch_rows.append((name, what, batch, a / batch, b / batch))


# -- the engine against Pinocchio's C++ ----------------------------------------------------------------
def _cmake_set(name: str) -> list[str]:
    """A set(NAME words...) of the engine's engine.cmake (as setup.py reads it)."""
    text = re.sub(r"#[^\n]*", "", (ENGINE / "engine.cmake").read_text(encoding="utf-8"))
    return re.search(rf"\bset\(\s*{name}\s+([^)]*)\)", text).group(1).split()


def build_with_pinocchio(folder: str, name: str, cpp: list[Path], c: tuple[Path, ...] = (),
                         include: tuple[Path, ...] = (), defines: tuple[str, ...] = ()) -> str:
    """Compiles the C++ sources `cpp` (the first holds main) and the C sources `c` with the engine's sources
    (its own flags, ``engine.cmake``) against the pin wheel's Pinocchio (its CMake config's compile
    definitions) and the system's Eigen, the folders `include` searched and the macros `defines` set too:
    the executable `name`'s path in `folder`."""
    prefix = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix"
    eigen = next((p for p in ("/usr/include/eigen3", str(prefix / "include" / "eigen3")) if Path(p, "Eigen").is_dir()), None)
    if not (prefix / "include" / "pinocchio").is_dir() or eigen is None or shutil.which("g++") is None:
        raise SystemExit("needs g++, the pin wheel (pip install pin) and Eigen (apt install libeigen3-dev)")
    searched = [f"-I{ENGINE}", *(f"-I{p}" for p in include)]
    defines = [*defines, "BOOST_MPL_LIMIT_LIST_SIZE=30", "BOOST_MPL_LIMIT_VECTOR_SIZE=30", "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
               "BOOST_FUSION_INVOKE_MAX_ARITY=12", "PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION", "PINOCCHIO_WITH_URDFDOM"]
    cxx = ["g++", "-std=c++17", "-O3", "-DNDEBUG", "-Wno-deprecated-declarations", *(f"-D{d}" for d in defines),
           *searched, f"-I{prefix / 'include'}", f"-I{eigen}"]
    compiles = [["gcc", *_cmake_set("RD_ENGINE_FLAGS"), *searched, "-c", str(source)]
                for source in [ENGINE / s for s in _cmake_set("RD_ENGINE_SOURCES")] + list(c)]
    compiles += [[*cxx, "-c", str(source)] for source in cpp]
    objects = [os.path.join(folder, f"{k}_{Path(command[-1]).stem}.o") for k, command in enumerate(compiles)]
    print(f"compiling {len(compiles)} sources for {name} (Pinocchio's headers: a few minutes)", flush=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # one compiler a core
        list(pool.map(lambda job: subprocess.run([*job[0], "-o", job[1]], check=True), zip(compiles, objects)))
    exe = os.path.join(folder, name)
    subprocess.run(["g++", *objects, f"-L{prefix / 'lib'}", f"-Wl,-rpath,{prefix / 'lib'}", "-lpinocchio_default",
                    "-lpinocchio_parsers", "-o", exe], check=True)
    return exe


def build_engines(folder: str) -> str:
    """task_space_engines.cpp built by build_with_pinocchio: the executable's path."""
    return build_with_pinocchio(folder, "task_space_engines", [HERE / "task_space_engines.cpp"])


def engines(exe: str, folder: str, name: str, model: rd.RobotModel, path: str | None) -> list[tuple]:
    """The C++ driver's rows for one robot: (robot, quantity, ours [s], Pinocchio's [s])."""
    from robot_dynamics.engine.layout import model_text

    text = os.path.join(folder, f"{model.name}.engine-model")
    Path(text).write_text(model_text(model), encoding="utf-8")
    if path is None:
        path = os.path.join(folder, f"{model.name}.urdf")
        Path(path).write_text(model.description, encoding="utf-8")
    out = subprocess.run([exe, text, path, model.end_effector, "2000"], capture_output=True, text=True, check=True).stdout
    return [(name, what, float(a) * 1e-9, float(b) * 1e-9) for what, a, b in (line.split("\t") for line in out.splitlines())]


def _table(title: str, rows: list) -> dict:
    return print_table(title, ["robot", "quantity", "ours [us]", "Pinocchio [us]", "ratio"],
                       [[r, w, f"{a * 1e6:.3f}", f"{b * 1e6:.3f}", f"{a / b:.2f}"] for r, w, a, b in rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", default=["iiwa14", "puma560"])
    parser.add_argument("--urdf", nargs="*", default=None, help="URDF files loaded by both (default: example-robot-data's UR5 if installed)")
    parser.add_argument("--batch", type=int, default=1000, help="states of the batch comparison (0: none)")
    parser.add_argument("--engines", action="store_true", help="also the engine against Pinocchio's C++ in one process")
    parser.add_argument("--results", default=None, metavar="JSON", help="also write the tables to this file")
    args = parser.parse_args(argv)
    try:
        import pinocchio as pin
    except ImportError:
        print("Pinocchio is not installed (pip install pin): nothing to compare against", file=sys.stderr)
        return 1
    ur5 = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots/ur_description/urdf/ur5_robot.urdf"
    robots = [(n, rd.load_robot(n), None) for n in args.robots]
    for path in args.urdf if args.urdf is not None else ([str(ur5)] if ur5.is_file() else []):
        model = rd.load_urdf(path)
        robots.append((f"{model.name} (file)", model, path))
    rows: list = []
    batch_rows: list = []
    for name, model, path in robots:
        compare(pin, name, model, path, args.batch, rows, batch_rows)
    print(f"pinocchio {pin.__version__}, {os.cpu_count()} cores; the end effector of each robot")
    tables = [_table("One state from Python", rows)]
    if batch_rows:
        tables.append(print_table("A batch from Python, per state (ours: one call; Pinocchio: a Python loop)",
                                  ["robot", "quantity", "states", "ours [us]", "Pinocchio [us]", "ratio"],
                                  [[r, w, str(n), f"{a * 1e6:.3f}", f"{b * 1e6:.3f}", f"{a / b:.2f}"]
                                   for r, w, n, a, b in batch_rows]))
    if args.engines:
        with tempfile.TemporaryDirectory(prefix="bench_task_space_") as folder:
            exe = build_engines(folder)
            native = [row for name, model, path in robots for row in engines(exe, folder, name, model, path)]
        tables.append(_table("The engine against Pinocchio's C++, one process, one state", native))
    if args.results:
        write_results(args.results, "bench_task_space.py", None, pinocchio=pin.__version__, tables=tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
