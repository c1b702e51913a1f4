"""The model checks (issue kinds massless_link, inertia_not_positive_definite, triangle_inequality,
no_effort_limit): found on the bodies the dynamics use, warned of by every loader naming the
link or joint, declared accepted in the robot's YAML, and refused by `engine-model --strict`."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.cli import main
from robot_dynamics.errors import ModelError, ModelWarning, UnknownNameError
from robot_dynamics.model import ISSUE_KINDS, check_model, share_directory

BUNDLED = rd.list_robots()
DH_TABLES = sorted((share_directory() / "config").glob("*_dh.yaml"))

BOX = '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/>'


def _link(name: str, mass: str = "1", inertia: str = BOX, rpy: str = "0 0 0") -> str:
    return (f'<link name="{name}"><inertial><origin xyz="0.1 0 0" rpy="{rpy}"/><mass value="{mass}"/>{inertia}'
            f"</inertial></link>")


def _joint(name: str, parent: str, child: str, kind: str = "revolute", limit: str = 'effort="50" ') -> str:
    lim = "" if kind == "fixed" else f'<axis xyz="0 0 1"/><limit lower="-2" upper="2" {limit}velocity="2"/>'
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0.3 0 0"/>{lim}</joint>')


def _robot(*parts: str) -> str:
    return '<robot name="small"><link name="base"/>' + "".join(parts) + "</robot>"


#: A sound two-link arm, the reference that none of the checks may flag.
SOUND = _robot(_link("upper"), _link("fore"), _joint("shoulder", "base", "upper"), _joint("elbow", "upper", "fore"))


def _loaded_with_warnings(source, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = rd.load_urdf(source, **kwargs)
    return model, [w for w in caught if issubclass(w.category, ModelWarning)]


# -- the bundled robots ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", BUNDLED)
def test_loading_a_bundled_robot_warns_of_nothing(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        model = rd.load_robot(name)
    assert check_model(model) == []


@pytest.mark.parametrize("path", DH_TABLES, ids=[p.name for p in DH_TABLES])
def test_loading_a_bundled_dh_table_warns_of_nothing(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        model = rd.load_dh_yaml(path)
    assert check_model(model) == []


@pytest.mark.parametrize("load", [lambda: rd.load_robot("puma560"),
                                  lambda: rd.load_dh_yaml(share_directory() / "config" / "puma560_dh.yaml")],
                         ids=["urdf", "dh"])
def test_the_puma_keeps_the_published_link3_and_says_why(load):
    """Link 3 (the forearm) keeps Armstrong, Khatib and Burdick's moments 0.066, 0.086, 0.0125
    kg m^2 about its centre of mass, which break A + B >= C; the issue is declared, not hidden."""
    model = load()
    b = model.body_names.index("link3")
    np.testing.assert_allclose(np.linalg.eigvalsh(model.inertia_com[b]), [0.0125, 0.066, 0.086], atol=1e-15)
    assert model.mass[b] == 4.8
    issues = check_model(model, include_accepted=True)
    assert [(i.kind, i.name) for i in issues] == [("triangle_inequality", "link3")]
    assert "0.0125 + 0.066 < 0.086" in issues[0].message
    assert "Armstrong, Khatib and Burdick" in issues[0].accepted and "golden values" in issues[0].accepted


@pytest.mark.parametrize("name", [n for n in BUNDLED if n != "puma560"])
def test_the_other_bundled_robots_need_no_declaration(name):
    model = rd.load_robot(name)
    assert model.accepted_issues == ()
    assert check_model(model, include_accepted=True) == []


# -- one issue of each kind, warned of by the loader ----------------------------------------------

CASES = {
    # a leaf link without <inertial>: nothing moves with joint 'elbow'
    "massless leaf": (_robot(_link("upper"), '<link name="fore"/>', _joint("shoulder", "base", "upper"),
                             _joint("elbow", "upper", "fore")),
                      "massless_link", "fore", "nor has anything it carries"),
    # <mas> for <mass>: massless by the URDF spec, though its inertia is given
    "misspelt mass": (_robot(_link("upper"), _link("fore").replace("<mass ", "<mas "), _joint("shoulder", "base", "upper"),
                             _joint("elbow", "upper", "fore")),
                      "massless_link", "fore", "has no mass"),
    # a link between two joints, carrying 1 kg: reported, with what it carries
    "massless middle": (_robot('<link name="upper"/>', _link("fore"), _joint("shoulder", "base", "upper"),
                               _joint("elbow", "upper", "fore")),
                        "massless_link", "upper", "the links it carries have 1 kg"),
    "point mass": (_robot(_link("upper"), _link("fore", inertia='<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>'),
                          _joint("shoulder", "base", "upper"), _joint("elbow", "upper", "fore")),
                   "inertia_not_positive_definite", "fore", "principal moments 0, 0, 0 kg m^2"),
    "rod": (_robot(_link("upper", inertia='<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0"/>'), _link("fore"),
                   _joint("shoulder", "base", "upper"), _joint("elbow", "upper", "fore")),
            "inertia_not_positive_definite", "upper", "principal moments 0, 0.1, 0.1 kg m^2"),
    # a zero tensor's round-off (iCub's ankle): a point mass, whatever its moments' ratios
    "round-off of zero": (_robot(_link("upper"), _link("fore", inertia='<inertia ixx="4.888e-21" ixy="0" ixz="0" '
                                                                   'iyy="3.547e-20" iyz="0" izz="5.45e-20"/>'),
                                 _joint("shoulder", "base", "upper"), _joint("elbow", "upper", "fore")),
                          "inertia_not_positive_definite", "fore", "principal moments 4.888e-21, 3.547e-20, 5.45e-20"),
    # entries near the largest double: the symmetric part overflows, a finding, not a LinAlgError
    "overflowing inertia": (_robot(_link("upper"), _link("fore", inertia='<inertia ixx="1e308" ixy="1e308" ixz="0" '
                                                                     'iyy="1e308" iyz="0" izz="1e308"/>'),
                                  _joint("shoulder", "base", "upper"), _joint("elbow", "upper", "fore")),
                            "inertia_not_positive_definite", "fore", "is not finite"),
    # the moments in a rotated inertial frame: the check is on the principal moments
    "triangle": (_robot(_link("upper"), _link("fore", inertia='<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.05"/>',
                                            rpy="0.3 -0.7 1.1"),
                        _joint("shoulder", "base", "upper"), _joint("elbow", "upper", "fore")),
                 "triangle_inequality", "fore", "0.01 + 0.02 < 0.05 kg m^2"),
    "no effort": (_robot(_link("upper"), _link("fore"), _joint("shoulder", "base", "upper"),
                         _joint("elbow", "upper", "fore", limit="")),
                  "no_effort_limit", "elbow", "joint 'elbow' has no effort limit"),
    "zero effort": (_robot(_link("upper"), _link("fore"), _joint("shoulder", "base", "upper", limit='effort="0" '),
                           _joint("elbow", "upper", "fore")),
                    "no_effort_limit", "shoulder", "effort limit of 0"),
}


def test_the_sound_arm_has_no_issue():
    model, caught = _loaded_with_warnings(SOUND)
    assert caught == [] and check_model(model) == []


@pytest.mark.parametrize("case", list(CASES))
def test_each_kind_is_warned_of_once_naming_the_link_or_joint(case):
    text, kind, name, words = CASES[case]
    model, caught = _loaded_with_warnings(text)
    assert len(caught) == 1, [str(w.message) for w in caught]
    issue = caught[0].message.issue
    assert (issue.kind, issue.name, issue.accepted) == (kind, name, None)
    assert words in issue.message and f"'{name}'" in issue.message
    assert str(caught[0].message) == f"robot 'small': {issue.message}"
    assert "\n" not in issue.message
    assert check_model(model) == [issue]


def test_the_warning_points_at_the_callers_line():
    with pytest.warns(ModelWarning) as record:
        rd.load_urdf(CASES["no effort"][0])
    assert Path(record[0].filename).name == Path(__file__).name


def test_every_kind_has_a_case():
    assert {CASES[c][1] for c in CASES} == set(ISSUE_KINDS)


def test_several_issues_come_in_tree_order_links_first():
    text = _robot('<link name="upper"/>', _link("fore", inertia='<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.05"/>'),
                  _joint("shoulder", "base", "upper", limit=""), _joint("elbow", "upper", "fore"))
    model, caught = _loaded_with_warnings(text)
    expected = [("massless_link", "upper"), ("triangle_inequality", "fore"), ("no_effort_limit", "shoulder")]
    assert [(w.message.issue.kind, w.message.issue.name) for w in caught] == expected
    assert [(i.kind, i.name) for i in check_model(model)] == expected


def test_moments_on_the_triangles_edge_pass():
    """A disc (A = B = C / 2) is on the edge: exact, or rounded to seven digits, it passes; a
    percent short of it does not."""
    def moments(a, b, c):
        return f'<inertia ixx="{a}" ixy="0" ixz="0" iyy="{b}" iyz="0" izz="{c}"/>'

    for a, b, c, found in [(0.0125, 0.0125, 0.025, False), (0.01249999, 0.0125, 0.025, False),
                           (0.0123, 0.0125, 0.025, True)]:
        model, caught = _loaded_with_warnings(_robot(_link("upper"), _link("fore", inertia=moments(a, b, c)),
                                                     _joint("shoulder", "base", "upper"), _joint("elbow", "upper", "fore")))
        assert [i.kind for i in check_model(model)] == (["triangle_inequality"] if found else [])
        assert len(caught) == found


# -- the bodies after fixed-joint merging -------------------------------------------------------------

def test_a_massless_moving_link_with_a_fixed_massive_child_is_sound():
    """The body is the moving link with what it carries fixed: 1 kg, a box's inertia."""
    text = _robot('<link name="upper"/>', _link("housing"), _link("fore"), _joint("shoulder", "base", "upper"),
                  _joint("bolt", "upper", "housing", "fixed"), _joint("elbow", "upper", "fore"))
    model, caught = _loaded_with_warnings(text)
    assert caught == [] and model.mass[model.body_names.index("upper")] == 1.0


def test_an_impossible_link_fixed_to_a_sound_one_is_judged_with_it():
    """A flat link that breaks A + B >= C alone, bolted 0.3 m from a 1 kg body: the lumped body
    has moments a rigid body has."""
    flat = '<inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.005"/>'
    text = _robot(_link("upper"), _link("plate", mass="0.1", inertia=flat), _link("fore"),
                  _joint("shoulder", "base", "upper"), _joint("bolt", "upper", "plate", "fixed"), _joint("elbow", "upper", "fore"))
    model, caught = _loaded_with_warnings(text)
    assert caught == []
    alone, caught = _loaded_with_warnings(_robot(_link("plate", mass="0.1", inertia=flat), _joint("j", "base", "plate")))
    assert [(w.message.issue.kind, w.message.issue.name) for w in caught] == [("triangle_inequality", "plate")]


def test_a_massless_fixed_child_of_a_massless_moving_link_is_named_by_the_moving_link():
    text = _robot(_link("upper"), '<link name="fore"/>', '<link name="flange"/>', _joint("shoulder", "base", "upper"),
                  _joint("elbow", "upper", "fore"), _joint("tool", "fore", "flange", "fixed"))
    _, caught = _loaded_with_warnings(text)
    assert [(w.message.issue.kind, w.message.issue.name) for w in caught] == [("massless_link", "fore")]


# -- check_model's arguments ----------------------------------------------------------------------

def test_allow_leaves_a_kind_out_and_names_the_valid_kinds():
    model, _ = _loaded_with_warnings(_robot(_link("upper"), _joint("shoulder", "base", "upper", limit="")))
    assert [i.kind for i in check_model(model)] == ["no_effort_limit"]
    assert check_model(model, allow=("no_effort_limit",)) == []
    assert check_model(model, allow="no_effort_limit") == []  # one kind, bare
    with pytest.raises(UnknownNameError, match=r"Unknown issue kind 'no_effort'.*did you mean 'no_effort_limit'"):
        check_model(model, allow=["no_effort"])


# -- accepted_model_issues ---------------------------------------------------------------------------

TRIANGLE = CASES["triangle"][0]


def test_a_declared_issue_is_quiet_and_kept_with_its_reason():
    doc = {"accepted_model_issues": {"fore": {"triangle_inequality": "as  published\n by the maker"}}}
    model, caught = _loaded_with_warnings(TRIANGLE, drivetrain=doc)
    assert caught == [] and check_model(model) == []
    (issue,) = check_model(model, include_accepted=True)
    assert (issue.kind, issue.name, issue.accepted) == ("triangle_inequality", "fore", "as published by the maker")
    assert model.accepted_issues == (("fore", "triangle_inequality", "as published by the maker"),)


def test_a_declaration_covers_its_kind_only():
    text = CASES["no effort"][0]
    doc = {"accepted_model_issues": {"fore": {"massless_link": "meant"}}}
    _, caught = _loaded_with_warnings(text, drivetrain=doc)
    assert [w.message.issue.name for w in caught] == ["elbow"]  # the joint's issue still warns
    _, caught = _loaded_with_warnings(text, drivetrain={"accepted_model_issues": {"elbow": {"no_effort_limit": "the "
                                                                                   "controller limits it"}}})
    assert caught == []


def test_a_yaml_applied_later_adds_to_the_declarations():
    puma = rd.load_robot("puma560")
    more = rd.model.apply_sidecar(puma, {"accepted_model_issues": {"joint1": {"no_effort_limit": "x"}}})
    assert [(n, k) for n, k, _ in more.accepted_issues] == [("link3", "triangle_inequality"), ("joint1", "no_effort_limit")]


@pytest.mark.parametrize("section, words", [
    ({"forearm": {"triangle_inequality": "r"}},
     r"accepted_model_issues\.forearm: not a moving link or a joint of 'small'\. Valid links: \['upper', 'fore'\]; "
     r"valid joints: \['shoulder', 'elbow'\]; did you mean 'fore'\?"),
    ({"base": {"massless_link": "r"}}, r"accepted_model_issues\.base: not a moving link"),  # the base moves nothing
    ({"fore": {"no_effort_limit": "r"}},
     r"accepted_model_issues\.fore\.no_effort_limit: not an issue kind of a link\. Valid kinds for 'fore': "
     r"\['massless_link', 'inertia_not_positive_definite', 'triangle_inequality'\]"),
    ({"elbow": {"triangle_inequality": "r"}}, r"not an issue kind of a joint\. Valid kinds for 'elbow': \['no_effort_limit'\]"),
    ({"fore": {"triangle_inequalty": "r"}}, r"did you mean 'triangle_inequality'\?"),
    ({"fore": {"triangle_inequality": ""}}, r"fore\.triangle_inequality: expected the reason as text"),
    ({"fore": {"triangle_inequality": 3}}, r"expected the reason as text .*got 3"),
    ({"fore": "reason"}, r"accepted_model_issues\.fore: expected a mapping of issue kinds to reasons"),
    (["fore"], r"accepted_model_issues: expected a mapping of link or joint names"),
])
def test_a_bad_declaration_is_refused_naming_the_valid_choices(section, words):
    with pytest.raises(ModelError, match=words):
        rd.load_urdf(TRIANGLE, drivetrain={"accepted_model_issues": section})


def test_a_dh_table_declares_its_own_and_warns_of_the_rest():
    row = {"name": "link1", "joint": "joint1", "type": "revolute", "alpha": 0.0, "d": 0.0, "theta": 0.0, "r": 0.0,
           "mass": 2.0, "com": [0.1, 0, 0], "inertia": [0.01, 0, 0, 0.01, 0, 0.05], "limits": {"effort": 20.0}}
    table = {"name": "one", "convention": "modified", "links": [row]}
    with pytest.warns(ModelWarning, match=r"robot 'one': link 'link1': .*0\.01 \+ 0\.01 < 0\.05"):
        rd.load_dh_yaml(table)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        model = rd.load_dh_yaml({**table, "accepted_model_issues": {"link1": {"triangle_inequality": "a test"}}})
    assert model.accepted_issues == (("link1", "triangle_inequality", "a test"),)
    with pytest.raises(ModelError, match=r"accepted_model_issues\.link2: not a moving link"):
        rd.load_dh_yaml({**table, "accepted_model_issues": {"link2": {"triangle_inequality": "a test"}}})


def test_khalils_general_robot_has_no_limits_and_loads_quietly():
    from robot_dynamics.codegen.khalil import general_robot

    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        model = general_robot(6)
    assert np.all(np.isinf(model.effort_limit))  # it has none to give: quiet by construction, not by luck


# -- the command line --------------------------------------------------------------------------------

@pytest.fixture
def urdf_file(tmp_path):
    def write(text: str) -> str:
        path = tmp_path / "small.urdf"
        path.write_text(text, encoding="utf-8")
        return str(path)
    return write


def test_engine_model_strict_refuses_in_one_last_line_naming_every_issue(urdf_file, capsys):
    path = urdf_file(CASES["massless middle"][0].replace('effort="50" ', "", 1))  # also: shoulder unlimited
    assert main(["engine-model", "--urdf", path, "--strict"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[-1].startswith("robot-dynamics engine-model: error: robot 'small' fails the model checks (2 issues): ")
    assert "link 'upper' (moved by joint 'shoulder') has no mass" in lines[-1]
    assert "joint 'shoulder' has no effort limit" in lines[-1]
    assert "accepted_model_issues" in lines[-1] and "--allow-no-effort-limit" in lines[-1]


def test_engine_model_allow_no_effort_limit_leaves_that_kind_out(urdf_file, capsys):
    path = urdf_file(CASES["no effort"][0])
    assert main(["engine-model", "--urdf", path, "--strict", "--allow-no-effort-limit"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("robot_dynamics-engine-model 1 small\n")
    assert main(["engine-model", "--urdf", path, "--strict"]) == 2
    assert "joint 'elbow' has no effort limit" in capsys.readouterr().err
    path = urdf_file(CASES["massless middle"][0].replace('effort="50" ', "", 1))
    assert main(["engine-model", "--urdf", path, "--strict", "--allow-no-effort-limit"]) == 2
    err = capsys.readouterr().err
    assert "(1 issue)" in err and "link 'upper'" in err and "effort" not in err.split("(1 issue)")[1]


def test_engine_model_without_strict_warns_on_stderr_and_prints_the_model(urdf_file, capsys):
    path = urdf_file(CASES["triangle"][0])
    assert main(["engine-model", "--urdf", path]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("robot_dynamics-engine-model 1 small\n")
    model, _ = _loaded_with_warnings(path)
    (issue,) = check_model(model)
    assert err.splitlines() == [f"robot-dynamics engine-model: warning: robot 'small': {issue.message}"]
    assert CASES["triangle"][3] in err


def test_engine_model_strict_takes_the_bundled_robots_with_their_declarations(capsys):
    for name in BUNDLED:
        assert main(["engine-model", "--robot", name, "--strict"]) == 0
        out, err = capsys.readouterr()
        assert err == "" and out.startswith(f"robot_dynamics-engine-model 1 {name}\n")


def test_engine_model_strict_reads_declarations_from_the_drivetrain(urdf_file, tmp_path, capsys):
    path = urdf_file(CASES["triangle"][0])
    yaml_path = tmp_path / "small.yaml"
    yaml_path.write_text("accepted_model_issues:\n  fore: {triangle_inequality: measured so}\n", encoding="utf-8")
    assert main(["engine-model", "--urdf", path, "--drivetrain", str(yaml_path), "--strict"]) == 0
    assert capsys.readouterr().err == ""


def test_other_commands_print_one_warning_line_per_issue(urdf_file, capsys):
    path = urdf_file(CASES["no effort"][0])
    assert main(["torque", "--urdf", path, "--json"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == ["robot-dynamics torque: warning: robot 'small': joint 'elbow' has no effort limit, so it "
                                "is never saturated (<limit effort=...> in the URDF or joints.elbow.limits.effort in the "
                                "drive-train YAML)"]


def test_the_pumas_urdf_alone_warns_of_link3_whose_declaration_is_in_its_yaml():
    from robot_dynamics.model import robot_files

    urdf, yaml_path = robot_files("puma560")
    model, caught = _loaded_with_warnings(urdf)
    assert [(w.message.issue.kind, w.message.issue.name) for w in caught] == [("triangle_inequality", "link3")]
    assert "accepted_model_issues:\n  link3:\n    triangle_inequality:" in yaml_path.read_text(encoding="utf-8")
    _, caught = _loaded_with_warnings(urdf, drivetrain=yaml_path)
    assert caught == []


def test_info_lists_the_issues_declared_ones_too(capsys):
    import json

    assert main(["info", "--robot", "puma560", "--json"]) == 0
    out, err = capsys.readouterr()
    (issue,) = json.loads(out)["model_issues"]
    assert err == "" and (issue["kind"], issue["name"]) == ("triangle_inequality", "link3")
    assert issue["accepted"].startswith("the forearm's published moments")
    assert main(["info", "--robot", "puma560"]) == 0
    text = capsys.readouterr().out
    assert "model checks: 1 issue (1 declared accepted)\n  triangle_inequality: link 'link3': " in text
    assert main(["info", "--robot", "rx90"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("model checks: no issues")
