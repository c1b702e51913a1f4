"""The bundled robots are found in every install layout: the source tree, a venv or --prefix,
``pip install --user``, ``pip install --target DIR``, a colcon install tree, ``--home`` and
Windows' ``Lib/site-packages``.

Each layout is laid out as a fake install tree in tmp_path (the package folder where pip or
colcon puts it, the data files where setup.py's data_files put them) and the lookup is pointed
at it. The real installs (an sdist into a fresh venv, --target, --user) run in .ci/sdist.sh.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.errors import ModelError
from robot_dynamics.model import registry

SOURCE = Path(__file__).resolve().parents[2]  # robot_dynamics/: urdf/ and config/ beside the package
PY = f"python{sys.version_info[0]}.{sys.version_info[1]}"

#: layout -> (the folder of the package, the folder of the data files), relative to tmp_path
LAYOUTS = {
    "venv": (f"venv/lib/{PY}/site-packages/robot_dynamics", "venv/share/robot_dynamics"),
    "prefix": (f"opt/rd/lib/{PY}/site-packages/robot_dynamics", "opt/rd/share/robot_dynamics"),
    "debian-dist-packages": ("usr/local/lib/python3/dist-packages/robot_dynamics", "usr/local/share/robot_dynamics"),
    "user": (f"home/.local/lib/{PY}/site-packages/robot_dynamics", "home/.local/share/robot_dynamics"),
    "target": ("deps/robot_dynamics", "deps/share/robot_dynamics"),
    "colcon": (
        f"ws/install/robot_dynamics/lib/{PY}/site-packages/robot_dynamics",
        "ws/install/robot_dynamics/share/robot_dynamics",
    ),
    "home": ("home/rd/lib/python/robot_dynamics", "home/rd/share/robot_dynamics"),
    "windows": ("Python311/Lib/site-packages/robot_dynamics", "Python311/share/robot_dynamics"),
}


def install_tree(root: Path, layout: str, robots: tuple[str, ...] = ("puma560", "planar2")) -> tuple[Path, Path]:
    """Lay out an install of ``layout`` under ``root`` with the bundled files of ``robots``."""
    package_rel, share_rel = LAYOUTS[layout]
    package, share = root / package_rel, root / share_rel
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (share / "urdf").mkdir(parents=True)
    (share / "config").mkdir()
    for name in robots:
        shutil.copy(SOURCE / "urdf" / f"{name}.urdf", share / "urdf")
        sidecar = SOURCE / "config" / f"{name}_drivetrain.yaml"
        if sidecar.is_file():
            shutil.copy(sidecar, share / "config")
    return package, share


@pytest.fixture
def no_other_installs(monkeypatch, tmp_path):
    """No data files under the interpreter's prefixes, the active scheme or the ament index:
    only the tree beside the (fake) package can be found."""
    empty = tmp_path / "empty-prefix"
    monkeypatch.setattr(sys, "prefix", str(empty))
    monkeypatch.setattr(sys, "base_prefix", str(empty))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    real_get_path = sysconfig.get_path
    monkeypatch.setattr(
        sysconfig, "get_path", lambda name, *a, **k: str(empty) if name == "data" else real_get_path(name, *a, **k)
    )


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_each_layout_finds_the_data_beside_the_package(layout, tmp_path, monkeypatch, no_other_installs):
    package, share = install_tree(tmp_path, layout)
    monkeypatch.setattr(registry, "_package_dir", lambda: package)
    assert registry.share_directory() == share
    assert rd.list_robots() == ["planar2", "puma560"]
    urdf, sidecar = registry.robot_files("puma560")
    assert urdf == share / "urdf" / "puma560.urdf"
    assert sidecar == share / "config" / "puma560_drivetrain.yaml"
    # the robot loads from there, drive train included, and gives the source tree's torques
    model = rd.load_robot("puma560")
    assert model.nq == 6 and model.joint_names[0] == "joint1"
    monkeypatch.undo()
    reference = rd.load_urdf(SOURCE / "urdf" / "puma560.urdf", drivetrain=SOURCE / "config" / "puma560_drivetrain.yaml")
    q = np.array([0.1, -0.5, 0.3, 0.2, -0.4, 0.6])
    np.testing.assert_array_equal(rd.gravity_torques(model, q), rd.gravity_torques(reference, q))


def test_the_data_that_came_with_the_package_wins_over_the_interpreters(tmp_path, monkeypatch, no_other_installs):
    """A --target install used from an interpreter whose prefix holds another copy of the data:
    the copy beside the imported package is the one read."""
    package, share = install_tree(tmp_path, "target", robots=("puma560", "planar2"))
    _, other = install_tree(tmp_path / "interpreter", "venv", robots=("planar2",))
    monkeypatch.setattr(sys, "prefix", str(other.parents[1]))
    monkeypatch.setattr(registry, "_package_dir", lambda: package)
    assert registry.share_directory() == share
    assert rd.list_robots() == ["planar2", "puma560"]


def test_the_interpreters_prefix_is_still_searched(tmp_path, monkeypatch, no_other_installs):
    """The package imported from elsewhere (a zip, a copied folder): the venv's share is found."""
    _, share = install_tree(tmp_path, "venv", robots=("planar2",))
    monkeypatch.setattr(sys, "prefix", str(share.parents[1]))
    monkeypatch.setattr(registry, "_package_dir", lambda: tmp_path / "elsewhere" / "robot_dynamics")
    assert registry.share_directory() == share
    assert rd.list_robots() == ["planar2"]


def test_the_ament_index_is_searched(tmp_path, monkeypatch, no_other_installs):
    """ROS 2 sourced: a colcon install tree found through AMENT_PREFIX_PATH."""
    _, share = install_tree(tmp_path, "colcon")
    monkeypatch.setattr(registry, "_package_dir", lambda: tmp_path / "elsewhere" / "robot_dynamics")
    monkeypatch.setenv("AMENT_PREFIX_PATH", f"{tmp_path / 'nothing'}:{share.parents[1]}")
    assert registry.share_directory() == share


def test_a_source_tree_is_found_first(tmp_path, monkeypatch, no_other_installs):
    """Tests and editable installs: the package folder beside urdf/ and config/ (the layout of
    this repository) wins over an installed copy of the data."""
    source = tmp_path / "repo" / "robot_dynamics"
    package = source / "robot_dynamics"
    package.mkdir(parents=True)
    (source / "urdf").mkdir()
    shutil.copy(SOURCE / "urdf" / "puma560.urdf", source / "urdf")
    _, installed = install_tree(tmp_path / "interpreter", "venv", robots=("planar2",))
    monkeypatch.setattr(sys, "prefix", str(installed.parents[1]))
    monkeypatch.setattr(registry, "_package_dir", lambda: package)
    assert registry._candidates()[0] == source
    assert registry.share_directory() == source
    assert rd.list_robots() == ["puma560"]


def test_not_found_names_every_folder_looked_in(tmp_path, monkeypatch, no_other_installs):
    package = tmp_path / "deps" / "robot_dynamics"
    package.mkdir(parents=True)
    monkeypatch.setattr(registry, "_package_dir", lambda: package)
    with pytest.raises(ModelError, match="were not found") as err:
        rd.load_robot("puma560")
    message = str(err.value)
    assert str(tmp_path / "deps" / "share" / "robot_dynamics") in message  # --target
    assert str(tmp_path / "empty-prefix" / "share" / "robot_dynamics") in message  # sys.prefix


def test_a_folder_without_urdf_files_is_passed_over(tmp_path, monkeypatch, no_other_installs):
    """An empty share/robot_dynamics/urdf (a broken install) does not hide a complete one."""
    package, share = install_tree(tmp_path, "target")
    for f in (share / "urdf").iterdir():
        f.unlink()
    _, good = install_tree(tmp_path / "interpreter", "venv")
    monkeypatch.setattr(sys, "prefix", str(good.parents[1]))
    monkeypatch.setattr(registry, "_package_dir", lambda: package)
    assert registry.share_directory() == good


def test_the_levels_match_this_interpreters_schemes():
    """Independent of the lookup: for each install scheme of this interpreter, the data prefix
    is the one the lookup derives from the packages' folder."""
    levels = registry._levels_to_data()
    assert {2, 3} <= set(levels)
    schemes = [sysconfig.get_default_scheme()]
    if sys.platform != "win32":
        schemes += ["posix_user", "posix_home"]
    for scheme in schemes:
        paths = sysconfig.get_paths(scheme)
        for lib in ("purelib", "platlib"):
            site = Path(paths[lib])
            assert Path(paths["data"]) in [site.parents[level - 1] for level in levels], (scheme, lib)
