#!/usr/bin/env bash
# The package as a user gets it, away from the repository:
#   bash .ci/sdist.sh
# 1. `python -m build` (PyPI's build) makes the source distribution, then a wheel from that
#    sdist; the sdist must hold the engine's C sources (src/engine), the bundled robots and their
#    configurations (urdf/, config/), launch/, rviz/, package.xml and the test suite, and the
#    wheel must carry them as data files into share/robot_dynamics (and the engine's CMake
#    package into share/robot_dynamics_engine).
# 2. The sdist (not the wheel: pip compiles the engine from it) pip-installed into a fresh venv;
#    from an empty folder, the README's Python example and the main job (robot-dynamics
#    simulate, with its plot and its rosbag2 recording), both from that install.
# 3. The same package installed with `pip install --target DIR` (used with PYTHONPATH=DIR) and
#    with `pip install --user` (PYTHONUSERBASE in a temporary folder): each finds the bundled
#    robots it brought, in its own share/robot_dynamics.
# Everything happens in a temporary folder; the repository is only read (its tracked and
# untracked-but-not-ignored files, as a clone holds them). Fails on any failure; prints the time
# of each stage.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1
PY=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
START=$(date +%s)
stage_start=$START
stages=()
stage_done() {  # name: record the seconds since the last stage
  local now; now=$(date +%s)
  stages+=("$(printf '%-40s %5d s' "$1" $((now - stage_start)))")
  echo "   ($1: $((now - stage_start)) s)"
  stage_start=$now
}
fail() { echo "sdist check failed: $*" >&2; exit 1; }
# --user is checked with the interpreter itself, outside any venv (a venv's python refuses --user)
BASE_PY=$("$PY" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')

echo "-- the package's files, copied out of the repository"
mkdir -p "$work/src"
# the package folder and the README above it (setup.py's long description)
git ls-files -z -c -o --exclude-standard -- robot_dynamics README.md \
  | tar -cf - --null --ignore-failed-read -T - 2>/dev/null | tar -xf - -C "$work/src"
[ -f "$work/src/robot_dynamics/setup.py" ] || fail "robot_dynamics/setup.py was not copied"
echo "$(find "$work/src" -type f | wc -l) files"

echo "-- python -m build: the sdist, then a wheel built from it"
"$PY" -m venv "$work/tools"
"$work/tools/bin/python" -m pip install -q build
"$work/tools/bin/python" -m build --outdir "$work/dist" "$work/src/robot_dynamics" > "$work/build.txt" 2>&1 \
  || { tail -n 40 "$work/build.txt"; fail "python -m build"; }
sdist=$(ls "$work"/dist/robot_dynamics-*.tar.gz)
wheel=$(ls "$work"/dist/robot_dynamics-*.whl)
ls -l "$work/dist"
stage_done "build: sdist and wheel"

echo "-- the sdist's and the wheel's contents"
"$PY" - "$sdist" "$wheel" "$work/src/robot_dynamics" <<'PY'
import sys, tarfile, zipfile
from pathlib import Path

sdist, wheel, src = sys.argv[1], sys.argv[2], Path(sys.argv[3])
with tarfile.open(sdist) as t:
    names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
missing = []
# every engine source, bundled robot, configuration, launch file and rviz config of the package
wanted = [p.relative_to(src).as_posix() for d in ("src/engine", "urdf", "config", "launch", "rviz", "test")
          for p in sorted((src / d).rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
wanted += ["setup.py", "setup.cfg", "pyproject.toml", "MANIFEST.in", "package.xml", "resource/robot_dynamics",
           "robot_dynamics/py.typed", "PKG-INFO"]
missing = [w for w in wanted if w not in names]
stray = sorted(n for n in names if n.endswith((".so", ".pyc", ".o")) or n.startswith("build/"))
assert not missing, f"missing in the sdist: {missing}"
assert not stray, f"build products in the sdist: {stray}"
assert any(n.startswith("src/engine/") and n.endswith(".h") for n in names)
print(f"sdist: {len(names)} entries; the {sum(n.startswith('src/engine/') for n in names)} files of src/engine, "
      "urdf/, config/, launch/, rviz/, test/ and the setup files are in")

with zipfile.ZipFile(wheel) as z:
    wnames = set(z.namelist())
    meta = next(n for n in wnames if n.endswith(".dist-info/METADATA"))
    body = z.read(meta).decode().partition("\n\n")[2]
data = next(n.split("/data/")[0] for n in wnames if ".data/data/" in n) + "/data/share/robot_dynamics/"
for d in ("urdf", "config", "launch", "rviz"):
    here = sorted(p.name for p in (src / d).iterdir() if p.is_file())
    there = sorted(n[len(data) + len(d) + 1:] for n in wnames if n.startswith(f"{data}{d}/"))
    assert here == there, f"share/robot_dynamics/{d} in the wheel: {there}, the package has {here}"
assert data + "package.xml" in wnames
# the engine's CMake package (share/robot_dynamics_engine): what robot_dynamics_control finds
engine = data.replace("/share/robot_dynamics/", "/share/robot_dynamics_engine/")
for name in ("CMakeLists.txt", "engine.cmake", "engine.h", "cmake/robot_dynamics_engineConfig.cmake"):
    assert engine + name in wnames, f"share/robot_dynamics_engine/{name} is not in the wheel"
assert any(n.startswith("_robot_dynamics_engine") and n.endswith((".so", ".pyd")) for n in wnames), "no engine"
assert "# robot_dynamics" in body, "the wheel built from the sdist lost the README (long description)"
print(f"wheel (built from the sdist): {len(wnames)} files; the engine, share/robot_dynamics/{{urdf,config,launch,rviz}} "
      "and the README as its description")
PY
stage_done "sdist and wheel contents"

# The checks run from an empty folder with the installed package (never the repository).
check_example() {  # python: the README's first Python example, then its values checked
  "$1" - "$repo/README.md" <<'PY'
import re, sys
from pathlib import Path

readme = Path(sys.argv[1]).read_text(encoding="utf-8")
blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
assert blocks, "the README has no Python example"
source = next(b for b in blocks if "import robot_dynamics" in b and "rnea" in b)
ns: dict = {}
exec(compile(source, "README.md (Python example)", "exec"), ns)
import numpy as np
import robot_dynamics as rd
import _robot_dynamics_engine

assert Path(rd.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()), rd.__file__
assert Path(_robot_dynamics_engine.__file__).resolve().is_relative_to(Path(sys.prefix).resolve())
models = [v for v in ns.values() if isinstance(v, rd.RobotModel)]
assert models, "the README's example made no RobotModel"
model = rd.load_robot("puma560")
q = np.array([0.3, -0.5, 0.4, 0.1, -0.2, 0.6])
qd, qdd = np.linspace(-1.0, 1.0, 6), np.linspace(0.5, -0.5, 6)
tau = rd.rnea(model, q, qd, qdd)
M = rd.crba(model, q)
assert tau.shape == (6,) and np.all(np.isfinite(tau)) and np.any(tau != 0.0)
assert np.allclose(M, M.T) and np.all(np.linalg.eigvalsh(M) > 0.0), "M not symmetric positive definite"
np.testing.assert_allclose(rd.aba(model, q, qd, tau), qdd, atol=1e-9)  # direct undoes inverse dynamics
print(f"README example ran ({len(source.splitlines())} lines, models {[m.name for m in models]}); "
      f"rnea/crba/aba of the puma560 checked; {rd.__name__} from {Path(rd.__file__).parent}")
PY
}

echo "-- the sdist into a fresh venv"
"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$sdist"
"$work/venv/bin/python" -m pip list 2>/dev/null | grep -i "^robot.dynamics"
stage_done "pip install the sdist (fresh venv)"

echo "-- the README's Python example and the main job, from an empty folder"
mkdir "$work/run"
(
  cd "$work/run"
  check_example "$work/venv/bin/python"
  "$work/venv/bin/robot-dynamics" simulate
  for f in robot_dynamics_out/simulate_puma560.png robot_dynamics_out/simulate_puma560/metadata.yaml; do
    [ -s "$f" ] || fail "robot-dynamics simulate did not write $f"
  done
  "$work/venv/bin/python" - <<'PY'
from pathlib import Path
import yaml

png = Path("robot_dynamics_out/simulate_puma560.png").read_bytes()
assert png[:8] == b"\x89PNG\r\n\x1a\n", "the plot is not a PNG"
bag = Path("robot_dynamics_out/simulate_puma560")
meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
assert meta["storage_identifier"] == "mcap", meta["storage_identifier"]
assert meta["message_count"] > 1000, meta["message_count"]
assert [p.name for p in bag.glob("*.mcap")], "no .mcap beside metadata.yaml"
print(f"main job: {len(png)} B of PNG; rosbag2 with {meta['message_count']} messages")
PY
)
# the engine compiled from the sdist gives the recorded numbers of every bundled robot and of
# random trees (the sdist's own test/data/core_reference.npz, as test_core_reference.py reads it)
mkdir "$work/unpacked"
tar -xzf "$sdist" -C "$work/unpacked"
(cd "$work/run" && PYTHONPATH=$(echo "$work"/unpacked/robot_dynamics-*/test) "$work/venv/bin/python" - <<'PY'
import numpy as np
from core_reference import PATH, models, outputs

reference = np.load(PATH)
n = 0
for k, (case, model) in enumerate(models()):
    for key, thunk in outputs(model, 100 + k).items():
        ref = reference[f"{case}/{key}"]
        scale = max(float(np.max(np.abs(ref))), 1.0)
        np.testing.assert_allclose(thunk(), ref, rtol=1e-12, atol=1e-12 * scale, err_msg=f"{case}: {key}")
        n += 1
assert n == len(reference.files), (n, len(reference.files))
print(f"the installed engine reproduces the {n} recorded arrays of test/data/core_reference.npz to 1e-12")
PY
)
stage_done "README example + main job (venv)"

loads_from() {  # share python [args]: the bundled robots load, from the share folder given
  "${@:2}" - "$1" <<'PY'
import sys
from pathlib import Path
import robot_dynamics as rd

share = Path(sys.argv[1]).resolve()
prefix = share.parents[1]  # DIR of --target, the user base of --user
assert Path(rd.__file__).resolve().is_relative_to(prefix), f"robot_dynamics imported from {rd.__file__}, not {prefix}"
rd.load_robot("puma560")
found = rd.model.share_directory().resolve()
assert found == share, f"the bundled robots were read from {found}, not from {share}"
print(f"load_robot('puma560') from {found}; robots {rd.list_robots()}")
PY
}

echo "-- pip install --target DIR (PYTHONPATH=DIR)"
# the package alone into DIR (its dependencies come from the venv, whose share/robot_dynamics
# must not be the one read: the robots must come from DIR/share/robot_dynamics)
"$work/venv/bin/python" -m pip install -q --no-deps --target "$work/target" "$wheel"
[ -d "$work/target/share/robot_dynamics/urdf" ] || fail "--target: no DIR/share/robot_dynamics/urdf"
(
  cd "$work/run"
  PYTHONPATH="$work/target" "$work/venv/bin/python" -c 'import robot_dynamics as rd; rd.load_robot("puma560")'
  PYTHONPATH="$work/target" loads_from "$work/target/share/robot_dynamics" "$work/venv/bin/python"
)
stage_done "pip install --target"

echo "-- pip install --user (PYTHONUSERBASE=$work/userbase)"
# --user needs an interpreter outside any venv; a distribution's own Python marks itself
# externally managed (PEP 668), which does not concern a throwaway user base
# first the package itself (even where the interpreter's site-packages has a robot_dynamics),
# then whatever of its dependencies the interpreter lacks
export PIP_BREAK_SYSTEM_PACKAGES=1
PYTHONUSERBASE="$work/userbase" "$BASE_PY" -m pip install -q --user --no-warn-script-location --force-reinstall --no-deps "$wheel"
PYTHONUSERBASE="$work/userbase" "$BASE_PY" -m pip install -q --user --no-warn-script-location "$wheel"
unset PIP_BREAK_SYSTEM_PACKAGES
[ -d "$work/userbase/share/robot_dynamics/urdf" ] || fail "--user: no \$PYTHONUSERBASE/share/robot_dynamics/urdf"
(
  cd "$work/run"
  PYTHONUSERBASE="$work/userbase" "$BASE_PY" -c 'import robot_dynamics as rd; rd.load_robot("puma560")'
  PYTHONUSERBASE="$work/userbase" loads_from "$work/userbase/share/robot_dynamics" "$BASE_PY"
)
stage_done "pip install --user"

echo "-- timings"
printf '%s\n' "${stages[@]}"
printf '%-40s %5d s\n' "total" $(($(date +%s) - START))
echo "sdist checks passed"
