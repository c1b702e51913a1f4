"""The engine against Pinocchio in one C++ process: rnea, aba and crba, no Python in between.

    python bench/bench_engine_vs_pinocchio.py [--robots puma560 iiwa14 rx90 planar2] [--urdf FILE ...]
                                              [--rounds 101] [--calls 200] [--build DIR]
                                              [--results bench/results/bench_engine_vs_pinocchio.json]

Builds bench/engine_vs_pinocchio (CMake): the engine's C sources with the flags of its release
build (robot_dynamics/src/engine/engine.cmake) and Pinocchio's algorithms compiled from the
headers of the ``pin`` wheel (its cmeel prefix) with the same optimisation, -O3 and no -march,
its URDF parser from the wheel's libraries. Per robot, it writes the engine's model text
(``robot-dynamics engine-model``'s form) and the URDF both load, checks that the two libraries
agree to 1e-10 on 16 random states (rnea, aba, and the joint-space inertia matrix, Pinocchio's
armature set to the model's rotor inertia), then times them interleaved: ``--rounds`` rounds of
a block of ``--calls`` calls of each, in alternating order; the table gives the medians [ns]
and the median of the rounds' ratios ours / Pinocchio's. ``crba`` compares the full symmetric
matrix both ways (Pinocchio's upper triangle mirrored, as the engine returns the whole matrix);
``crba (upper)`` Pinocchio's crba alone.

The robots: the bundled arms (--robots) and, by default, example-robot-data's UR5 and Panda (its
finger joints fixed) when the wheel carries them (as bench_core.py picks them), or any --urdf.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import sysconfig
import tempfile

import robot_dynamics as rd
from robot_dynamics.engine.layout import model_text
from _results import print_table, write_results
from bench_core import example_urdfs

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "engine_vs_pinocchio")
ALGORITHMS = ("rnea", "aba", "crba", "crba_upper")
GOAL = 0.5  # crba's ratio asked; rnea and aba are below it already


def cmeel_prefix() -> str:
    """The ``pin`` wheel's prefix (include/pinocchio, lib/libpinocchio_*.so)."""
    prefix = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix")
    if not os.path.isdir(os.path.join(prefix, "include", "pinocchio")):
        raise SystemExit(f"no Pinocchio headers under {prefix}: pip install pin")
    return prefix


def build(folder: str) -> tuple[str, dict[str, str]]:
    """Configures and builds the bench in ``folder``; returns the executable and the flags used."""
    subprocess.run(["cmake", "-S", SOURCE, "-B", folder, "-DCMAKE_BUILD_TYPE=Release",
                    f"-DPINOCCHIO_PREFIX={cmeel_prefix()}"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", folder, "-j", str(os.cpu_count() or 1)], check=True, stdout=subprocess.DEVNULL)
    cache = open(os.path.join(folder, "CMakeCache.txt"), encoding="utf-8").read()

    def entry(name: str) -> str:
        found = re.search(rf"^{name}:\w+=(.*)$", cache, re.MULTILINE)
        return found.group(1).strip() if found else ""

    engine = open(os.path.join(HERE, "..", "robot_dynamics", "src", "engine", "engine.cmake"), encoding="utf-8").read()
    engine_flags = re.search(r"set\(RD_ENGINE_FLAGS ([^)]*)\)", engine).group(1)
    compiler = ""
    for path in glob.glob(os.path.join(folder, "CMakeFiles", "*", "CMakeCCompiler.cmake")):
        text = open(path, encoding="utf-8").read()
        found = [re.search(rf'set\(CMAKE_C_COMPILER_{key} "([^"]*)"\)', text) for key in ("ID", "VERSION")]
        compiler = " ".join(f.group(1) for f in found if f)
    flags = {"compiler": compiler,
             "engine (C)": f"{entry('CMAKE_C_FLAGS_RELEASE')} {engine_flags}",
             "Pinocchio (C++17)": f"{entry('CMAKE_CXX_FLAGS_RELEASE')} -std=c++17"}
    return os.path.join(folder, "engine_vs_pinocchio"), flags


def measure(exe: str, model: rd.RobotModel, urdf: str | None, folder: str, rounds: int, calls: int) -> dict:
    """Runs the bench on one robot: {algorithm: (ours ns, Pinocchio ns, ratio)} and the agreement."""
    text = os.path.join(folder, f"{model.name}.engine-model")
    with open(text, "w", encoding="utf-8") as f:
        f.write(model_text(model))
    if urdf is None:
        urdf = os.path.join(folder, f"{model.name}.urdf")
        with open(urdf, "w", encoding="utf-8") as f:
            f.write(model.description)
    res = subprocess.run([exe, text, urdf, str(rounds), str(calls)], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{model.name}: {res.stderr.strip() or res.stdout.strip()}")
    out = {}
    for line in res.stdout.splitlines():
        word, *values = line.split()
        if word in ALGORITHMS:
            out[word] = tuple(float(v) for v in values)
        elif word == "agreement":
            out[word] = max(float(v) for v in values)
    return out


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="*", default=["puma560", "iiwa14", "rx90", "planar2"])
    parser.add_argument("--urdf", nargs="*", default=None,
                        help="URDF files loaded by both libraries (default: example-robot-data's UR5 and Panda if installed)")
    parser.add_argument("--rounds", type=int, default=101)
    parser.add_argument("--calls", type=int, default=200, help="calls of each library in one timed block")
    parser.add_argument("--build", default=os.path.join(tempfile.gettempdir(), "robot_dynamics_engine_vs_pinocchio"),
                        help="the CMake build folder (kept: a second run builds nothing)")
    parser.add_argument("--results", default=None, metavar="JSON",
                        help="also write the table to this JSON file (bench/results/ keeps the recorded run)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    exe, flags = build(args.build)
    import pinocchio

    for k, v in flags.items():
        print(f"{k}: {v}")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        cases = [(rd.load_robot(name), None) for name in args.robots]
        cases += [(rd.load_urdf(path), path) for path in (example_urdfs(folder) if args.urdf is None else args.urdf)]
        for model, urdf in cases:
            r = measure(exe, model, urdf, folder, args.rounds, args.calls)
            rows.append([model.name, str(model.nq), f"{r['agreement']:.0e}"]
                        + [f"{r[a][0]:.0f} / {r[a][1]:.0f} = {r[a][2]:.2f}" for a in ALGORITHMS])
            print(f"{model.name}: " + ", ".join(f"{a} {r[a][2]:.3f}" for a in ALGORITHMS), flush=True)
    table = print_table(f"The engine against Pinocchio {pinocchio.__version__} in one C++ process, one state "
                        f"[ns, ours / Pinocchio's = ratio; goal for crba <= {GOAL}]",
                        ["robot", "nq", "agreement", "rnea", "aba", "crba", "crba (upper)"], rows)
    if args.results:
        measured = list(sys.argv[1:] if argv is None else argv)
        if "--build" in measured:  # where it was built is no part of what was measured
            at = measured.index("--build")
            del measured[at:at + 2]
        write_results(args.results, "bench_engine_vs_pinocchio.py", measured, pinocchio=pinocchio.__version__,
                      flags=flags, tables=[table])
    return 0


if __name__ == "__main__":
    sys.exit(main())
