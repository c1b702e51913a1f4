"""The engine's text form of a model: what C and C++ users (robot_dynamics_control's ros2_control
plugins) load, written by ``robot-dynamics engine-model`` from the package's one loader.

The text is parsed by the engine's own C parser (``rd_model_parse``, through the extension's
``parse_model``): the parsed model must give the very same doubles as the model Python packs,
for every bundled robot, and every malformed text must be refused with a reason naming the line.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.engine import engine
from robot_dynamics.engine.layout import TEXT_MAGIC, model_text, pack

TREE_ROBOTS = [name for name in rd.list_robots() if isinstance(rd.load_robot(name), rd.RobotModel)]


def test_the_field_list_is_the_engines():
    """pack() gives exactly the fields engine.h lists (RD_MODEL_FIELDS), plus the sizes."""
    fields = pack(rd.load_robot("puma560"))
    assert set(fields) == set(engine().FIELDS) | {"nb", "nq", "nr", "nf", "tree"}
    assert engine().FIELDS[0] == "parent" and engine().FIELDS[-1] == "gravity"


@pytest.mark.parametrize("name", TREE_ROBOTS)
def test_the_parsed_model_gives_the_same_doubles(name):
    model = rd.load_robot(name)
    parsed, names, limits = engine().parse_model(model_text(model))
    assert names == tuple(model.joint_names)
    np.testing.assert_array_equal(limits, model.effort_limit)
    rng = np.random.default_rng(7)
    e = engine()
    data = parsed.create_data()
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1.5, 1.5, size=(3, model.nq))
        tau = rd.rnea(model, q, qd, qdd)
        np.testing.assert_array_equal(e.rnea(parsed, data, q, qd, qdd, True), tau)
        np.testing.assert_array_equal(e.rnea(parsed, data, q, qd, qdd, False), rd.rnea(model, q, qd, qdd, friction=False))
        np.testing.assert_array_equal(e.aba(parsed, data, q, qd, tau, True), rd.aba(model, q, qd, tau))
        np.testing.assert_array_equal(e.crba(parsed, data, q), rd.crba(model, q))
        # and the dynamics are right, not only equal: aba undoes rnea
        np.testing.assert_allclose(e.aba(parsed, data, q, qd, tau, True), qdd, rtol=1e-9, atol=1e-9)


def test_the_geared_robot_keeps_its_drive_train():
    """three_dof_geared: rotor and secondary links (Chen & Wang) travel in the text (nr = 4)."""
    model = rd.load_robot("three_dof_geared")
    text = model_text(model)
    assert "\nnr 4\n" in text and "\ntree 0\n" in text
    parsed, _, _ = engine().parse_model(text)
    q = np.array([0.3, -0.7, 1.1])
    np.testing.assert_array_equal(engine().crba(parsed, parsed.create_data(), q), rd.crba(model, q))


def _with_line(text: str, key: str, line: str | None) -> str:
    out = []
    for row in text.splitlines():
        if row.split(" ", 1)[0] == key:
            if line is not None:
                out.append(line)
        else:
            out.append(row)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace(TEXT_MAGIC, "urdf", 1), "expected a first line"),
        (lambda t: t.replace(f"{TEXT_MAGIC} 1", f"{TEXT_MAGIC} 9", 1), "version 9"),
        (lambda t: _with_line(t, "mass", None), "no 'mass' line"),
        (lambda t: _with_line(t, "nq", None), "no 'nq' line"),
        (lambda t: _with_line(t, "mass", "mass 5 1 2 3 4 5"), "mass has 5 values, expected 6"),
        (lambda t: _with_line(t, "mass", "mass 6 1 2 3 4 5 x"), "mass: value 6 of 6 is not a number"),
        (lambda t: _with_line(t, "mass", "mass 6 1 2 3 4 5 nan"), "mass: value 6 is NaN"),
        (lambda t: _with_line(t, "mass", "mass 6 1 2 3 4 5 6 7"), "more than the 6 values"),
        (lambda t: t + "spring 1 2.0\n", "unknown entry 'spring'"),
        (lambda t: t + "mass 6 1 2 3 4 5 6\n", "'mass' given twice"),
        (lambda t: _with_line(t, "parent", "parent 6 -1 0 1 2 3 7"), "body 5: parent 7"),
        (lambda t: _with_line(t, "joint_names", "joint_names 5 a b c d e"), "joint_names has 5 names, expected nq = 6"),
        (lambda t: _with_line(t, "effort_limit", "effort_limit 6 1 1 1 1 1 0"), "expected > 0"),
        (lambda t: _with_line(t, "nb", "nb -3"), "nb: bad count"),
    ],
)
def test_a_malformed_text_is_refused_naming_the_reason(edit, message):
    text = edit(model_text(rd.load_robot("puma560")))
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        engine().parse_model(text)


def test_the_command_prints_the_text_the_engine_loads(tmp_path):
    """`robot-dynamics engine-model --urdf F --drivetrain Y`, as the ros2_control plugins run it."""
    model = rd.load_robot("puma560")
    urdf = tmp_path / "puma560.urdf"
    urdf.write_text(model.description, encoding="utf-8")
    drivetrain = tmp_path / "drive.yaml"
    drivetrain.write_text("joints:\n  joint1: {rotor_inertia: 1.14, viscous: 3.0}\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "engine-model", "--urdf", str(urdf),
                          "--drivetrain", str(drivetrain)], capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout
    expected = rd.load_urdf(urdf, drivetrain=drivetrain)
    assert out == model_text(expected)
    parsed, names, _ = engine().parse_model(out)
    assert names == tuple(expected.joint_names)
    q = np.array([0.1, -0.2, 0.3, -0.4, 0.5, -0.6])
    np.testing.assert_array_equal(engine().rnea(parsed, parsed.create_data(), q, q, q, True), rd.rnea(expected, q, q, q))
    assert expected.rotor_inertia[0] == 1.14 and expected.viscous[0] == 3.0


def test_a_joint_name_with_white_space_is_refused():
    from robot_dynamics.errors import ModelError

    urdf = rd.load_robot("planar2").description.replace('name="shoulder"', 'name="left shoulder"')
    model = rd.load_urdf(urdf)
    with pytest.raises(ModelError, match="white space"):
        model_text(model)


def test_strict_records_its_checks_in_a_line_the_parser_skips(tmp_path):
    """`engine-model --strict [--allow-no-effort-limit]`: the text ends in the line that
    robot_dynamics_control's plugins require (`# checks: strict ...`), a comment to the engine's
    parser, which reads the same model with it."""
    model = rd.load_robot("puma560")
    bare = model_text(model)

    def cli(*options):
        return subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "engine-model", "--robot", "puma560",
                               *options], capture_output=True, text=True, check=True, cwd=tmp_path).stdout

    assert cli() == bare
    assert cli("--strict") == bare + "# checks: strict\n"
    assert cli("--strict", "--allow-no-effort-limit") == bare + "# checks: strict allow-no-effort-limit\n"
    parsed, names, limits = engine().parse_model(cli("--strict"))
    assert names == tuple(model.joint_names)
    np.testing.assert_array_equal(limits, model.effort_limit)
    q = np.array([0.1, -0.2, 0.3, -0.4, 0.5, -0.6])
    np.testing.assert_array_equal(engine().rnea(parsed, parsed.create_data(), q, q, q, True), rd.rnea(model, q, q, q))


@pytest.mark.parametrize("name", TREE_ROBOTS)
def test_the_text_names_the_frames_in_the_models_frame_order(name):
    """`frame_names <nf> ...`: the description's links in the order of frame_body, frame_R and
    frame_p; the parsed model finds each by name (rd_frame_index) at the index the fields give it."""
    model = rd.load_robot(name)
    text = model_text(model)
    line = next(row for row in text.splitlines() if row.startswith("frame_names "))
    assert line.split()[1:] == [str(len(model.frame_names)), *model.frame_names]
    parsed, _, _ = engine().parse_model(text)
    assert parsed.frame_names == tuple(model.frame_names)
    for k, frame in enumerate(model.frame_names):
        assert parsed.frame_index(frame) == k == model.frame_index(frame)
    assert parsed.frame_index("no_such_link") == -1
    assert parsed.frame_index(model.joint_names[0]) == (model.frame_names.index(model.joint_names[0])
                                                         if model.joint_names[0] in model.frame_names else -1)


def test_the_frame_names_locate_the_frames_pose():
    """The frame rd_frame_index names is the one whose pose the engine computes: the iiwa14's tool
    frame iiwa_link_ee, at q = 0 on the base's z axis at 1.306 m (the URDF's joint origins: 0.1575 +
    0.2025 + 0.2045 + 0.2155 + 0.1845 + 0.2155 + 0.081 + 0.045), elsewhere where Python puts it."""
    model = rd.load_robot("iiwa14")
    e = engine()
    parsed, _, _ = e.parse_model(model_text(model))
    k = parsed.frame_index("iiwa_link_ee")
    assert k == len(model.frame_names) - 1
    (T,) = e.task_space(parsed, parsed.create_data(), np.zeros(7), None, k, 0, 0, 0.0, 1)
    np.testing.assert_allclose(T[:3, 3], [0.0, 0.0, 1.306], atol=1e-9)
    q = np.array([0.3, -0.5, 0.7, 1.1, -0.2, 0.4, -0.9])
    (T,) = e.task_space(parsed, parsed.create_data(), q, None, parsed.frame_index("iiwa_link_4"), 0, 0, 0.0, 1)
    np.testing.assert_allclose(T, rd.frame_pose(model, q, "iiwa_link_4"), atol=1e-12)


def test_a_text_without_frame_names_still_loads():
    """The line is optional: a text made before it (or by hand) loads, with no names to look up."""
    model = rd.load_robot("puma560")
    parsed, names, _ = engine().parse_model(_with_line(model_text(model), "frame_names", None))
    assert names == tuple(model.joint_names) and parsed.frame_names == ()
    assert parsed.frame_index(model.frame_names[-1]) == -1
    q = np.array([0.1, -0.2, 0.3, -0.4, 0.5, -0.6])
    np.testing.assert_array_equal(engine().rnea(parsed, parsed.create_data(), q, q, q, True), rd.rnea(model, q, q, q))


def test_the_packed_model_has_no_frame_names_and_keeps_working():
    """The Model Python packs from the fields (RobotModel.engine_model) carries no names: () and -1."""
    model = rd.load_robot("iiwa14")
    packed = model.engine_model
    assert packed.frame_names == () and packed.frame_index("iiwa_link_ee") == -1
    q = np.linspace(-0.5, 0.5, 7)
    np.testing.assert_allclose(rd.rnea(model, q, q, q), engine().rnea(packed, packed.create_data(), q, q, q, True),
                               rtol=0, atol=0)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: _with_line(t, "frame_names", "frame_names 6 a b c d e f"), "frame_names has 6 names, expected nf = 8"),
        (lambda t: _with_line(t, "frame_names", "frame_names 8 a b c d e f g"), "frame_names: name 8 missing"),
        (lambda t: _with_line(t, "frame_names", "frame_names 8 a b c d e f g h i"), "more than the 8 names announced"),
        (lambda t: _with_line(t, "frame_names", "frame_names 8 a b c d e f g " + "h" * 300), "name 8 missing or too long"),
        (lambda t: t + "frame_names 0\n", "'frame_names' given twice"),
    ],
)
def test_a_malformed_frame_names_line_is_refused(edit, message):
    text = edit(model_text(rd.load_robot("puma560")))
    with pytest.raises(ValueError, match=message):
        engine().parse_model(text)


def test_a_link_name_with_white_space_is_refused():
    from robot_dynamics.errors import ModelError

    description = rd.load_robot("planar2").description
    link = rd.load_robot("planar2").frame_names[-1]
    model = rd.load_urdf(description.replace(f'"{link}"', f'"tool {link}"'))
    with pytest.raises(ModelError, match="link name 'tool .*' has white space"):
        model_text(model)
