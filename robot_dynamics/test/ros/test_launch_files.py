"""The launch files, run without ROS: launch/launch_ros replaced by recording stand-ins.

The stand-ins have the constructor signatures of launch and launch_ros (DeclareLaunchArgument,
OpaqueFunction, RegisterEventHandler, OnProcessExit(target_action, on_exit),
OnProcessIO(target_action, on_stdout, on_stderr), Shutdown(reason), TimerAction(period, actions),
IfCondition, LaunchConfiguration.perform, Node(package, executable, name, parameters, arguments,
condition), ParameterValue(value, value_type)); they record what the launch file builds so the
nodes, parameters and files it starts can be checked. The launch files are this package's and
robot_dynamics_bringup's arm.launch.py (read from the repository). The real launch runs are
test_launch_sim.py and robot_dynamics_bringup's tests (skipped without ROS 2).
"""

from __future__ import annotations

import ast
import configparser
import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.ros.launch_support import as_bool, dynamics_parameters, parse_vector, sim_parameters

from repo_files import repository_file

PKG = Path(__file__).resolve().parents[2]
LAUNCH = PKG / "launch"
BRINGUP = "robot_dynamics_bringup"


def _launch_file(filename: str) -> Path:
    """A launch file of this package, else of robot_dynamics_bringup (the repository's)."""
    return LAUNCH / filename if (LAUNCH / filename).is_file() else repository_file(BRINGUP, "launch", filename)


def _console_scripts() -> set[str]:
    text = (PKG / "setup.py").read_text()
    return set(re.findall(r'"([\w-]+) = robot_dynamics[\w.]*:main"', text))


class _Record:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class _LaunchConfiguration:
    def __init__(self, name, default=None):
        self.name = name

    def perform(self, context):
        return context.launch_configurations[self.name]


class _ParameterValue:
    def __init__(self, value, *, value_type=None):
        self.value, self.value_type = value, value_type


def _fake_modules(monkeypatch):
    mods = {
        "launch": types.ModuleType("launch"),
        "launch.actions": types.ModuleType("launch.actions"),
        "launch.conditions": types.ModuleType("launch.conditions"),
        "launch.event_handlers": types.ModuleType("launch.event_handlers"),
        "launch.substitutions": types.ModuleType("launch.substitutions"),
        "launch_ros": types.ModuleType("launch_ros"),
        "launch_ros.actions": types.ModuleType("launch_ros.actions"),
        "launch_ros.parameter_descriptions": types.ModuleType("launch_ros.parameter_descriptions"),
        "ament_index_python": types.ModuleType("ament_index_python"),
        "ament_index_python.packages": types.ModuleType("ament_index_python.packages"),
    }
    mods["launch"].LaunchDescription = lambda entities: list(entities)
    mods["launch.actions"].DeclareLaunchArgument = type("DeclareLaunchArgument", (_Record,), {})
    mods["launch.actions"].OpaqueFunction = type("OpaqueFunction", (_Record,), {})
    mods["launch.actions"].RegisterEventHandler = type("RegisterEventHandler", (_Record,), {})
    mods["launch.actions"].Shutdown = type("Shutdown", (_Record,), {})
    mods["launch.actions"].TimerAction = type("TimerAction", (_Record,), {})
    mods["launch.event_handlers"].OnProcessExit = type("OnProcessExit", (_Record,), {})
    mods["launch.event_handlers"].OnProcessIO = type("OnProcessIO", (_Record,), {})
    mods["launch.conditions"].IfCondition = type("IfCondition", (_Record,), {})
    mods["launch.substitutions"].LaunchConfiguration = _LaunchConfiguration
    mods["launch_ros.actions"].Node = type("Node", (_Record,), {})
    mods["launch_ros.parameter_descriptions"].ParameterValue = _ParameterValue

    def share(package):
        assert package in ("robot_dynamics", BRINGUP), package
        return str(PKG) if package == "robot_dynamics" else str(repository_file(BRINGUP, "package.xml").parent)

    mods["ament_index_python.packages"].get_package_share_directory = share
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name, mod)


def _run_launch(monkeypatch, filename, **arguments):
    """Execute a launch file: declared arguments (defaults overridden) -> the Node records."""
    _fake_modules(monkeypatch)
    spec = importlib.util.spec_from_file_location(filename.replace(".", "_"), _launch_file(filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entities = module.generate_launch_description()
    declared = {e.args[0]: e.kwargs["default_value"] for e in entities if type(e).__name__ == "DeclareLaunchArgument"}
    unknown = set(arguments) - set(declared)
    assert not unknown, f"{filename} has no arguments {unknown}"
    context = types.SimpleNamespace(launch_configurations={**declared, **arguments})
    nodes = [e for e in entities if type(e).__name__ == "Node"]
    for e in entities:
        if type(e).__name__ == "OpaqueFunction":
            nodes += _started(e.kwargs["function"](context))
    return declared, {n.kwargs.get("name") or n.kwargs["executable"]: n for n in nodes}, context


#: the launch context the OnProcessExit handlers see: running, not shutting down
RUNNING = types.SimpleNamespace(is_shutdown=False)


def _started(actions):
    """The Node records among ``actions`` and those their OnProcessExit handlers start once the
    processes they wait for (spawners) have exited with code 0, in the order of the handlers."""
    nodes = [a for a in actions if type(a).__name__ == "Node"]
    for a in actions:
        if type(a).__name__ == "RegisterEventHandler" and "on_exit" in a.args[0].kwargs:
            handler = a.args[0]
            if handler.kwargs["target_action"].kwargs.get("executable") == "ros2_control_node":
                continue  # its end ends the launch
            exited = types.SimpleNamespace(action=handler.kwargs["target_action"], returncode=0)
            nodes += _started(handler.kwargs["on_exit"](exited, RUNNING) or [])
    return nodes


def test_launch_files_parse_and_define_generate_launch_description():
    for path in [*sorted(LAUNCH.glob("*.launch.py")), _launch_file("arm.launch.py")]:
        tree = ast.parse(path.read_text(), filename=str(path))
        names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert "generate_launch_description" in names, path.name
    # the ros2_control bring-up needs robot_dynamics_control: it is robot_dynamics_bringup's
    assert {p.name for p in LAUNCH.glob("*.launch.py")} == {"sim.launch.py", "dynamics.launch.py"}


def test_sim_launch_starts_the_five_nodes_and_rviz(monkeypatch):
    declared, nodes, context = _run_launch(monkeypatch, "sim.launch.py")
    assert {"robot", "controller", "use_rviz"} <= set(declared)
    assert declared["robot"] == "puma560"
    assert set(nodes) == {"robot_state_publisher", "simulator", "controller", "trajectory", "dynamics", "rviz2"}
    scripts = _console_scripts()
    urdf_text = (PKG / "urdf" / "puma560.urdf").read_text()
    for name, node in nodes.items():
        k = node.kwargs
        if k["package"] == "robot_dynamics":
            assert k["executable"] in scripts
            config, overrides = k["parameters"]
            assert Path(config).is_file() and Path(config).name == f"{name}_node.yaml"
            desc = overrides["robot_description"]
            assert isinstance(desc, _ParameterValue) and desc.value_type is str and desc.value == urdf_text
            assert overrides["drivetrain"].endswith("puma560_drivetrain.yaml")
    rsp = nodes["robot_state_publisher"].kwargs
    assert rsp["package"] == "robot_state_publisher" and rsp["parameters"][0]["robot_description"].value == urdf_text
    assert nodes["controller"].kwargs["parameters"][1]["controller"] == "computed_torque"
    rviz = nodes["rviz2"].kwargs
    assert rviz["package"] == "rviz2"
    d = rviz["arguments"][rviz["arguments"].index("-d") + 1]
    assert Path(d).is_file() and Path(d).suffix == ".rviz"
    assert rviz["arguments"][rviz["arguments"].index("-f") + 1] == "base_link"
    condition = rviz["condition"]
    assert condition.args[0].name == "use_rviz"


def test_sim_launch_arguments_reach_the_nodes(monkeypatch):
    _, nodes, _ = _run_launch(monkeypatch, "sim.launch.py", robot="iiwa14", controller="pd_gravity",
                              goal="0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7", use_rviz="false")
    assert nodes["controller"].kwargs["parameters"][1]["controller"] == "pd_gravity"
    assert nodes["trajectory"].kwargs["parameters"][1]["initial_goal"] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    assert nodes["rviz2"].kwargs["arguments"][-1] == "iiwa_link_0"
    assert nodes["simulator"].kwargs["parameters"][1]["drivetrain"] == ""  # iiwa14 has no drive-train file


@pytest.mark.parametrize(
    "arguments, error, match",
    [
        ({"robot": "r2d2"}, rd.UnknownNameError, "Valid robots"),
        ({"controller": "h_infinity"}, rd.InputError, "Valid choices"),
        ({"goal": "0.1,0.2"}, rd.InputError, "goal: expected 6 values"),
        ({"goal": "a,b"}, rd.InputError, "expected numbers"),
        ({"urdf": "no/such/file.urdf"}, rd.ModelError, "not found"),
    ],
)
def test_sim_launch_rejects_bad_arguments_before_starting(monkeypatch, arguments, error, match):
    with pytest.raises(error, match=match):
        _run_launch(monkeypatch, "sim.launch.py", **arguments)


def _arm_actions(monkeypatch, **arguments):
    """arm.launch.py's actions for ``arguments`` (defaults otherwise): the Node records, the
    OnProcessExit handlers (target, on_exit) and the OnProcessIO handlers."""
    _fake_modules(monkeypatch)
    spec = importlib.util.spec_from_file_location("arm_launch_py", _launch_file("arm.launch.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entities = module.generate_launch_description()
    declared = {e.args[0]: e.kwargs["default_value"] for e in entities if type(e).__name__ == "DeclareLaunchArgument"}
    context = types.SimpleNamespace(launch_configurations={**declared, **arguments})
    actions = [a for e in entities if type(e).__name__ == "OpaqueFunction" for a in e.kwargs["function"](context)]
    nodes = [a for a in actions if type(a).__name__ == "Node"]
    handlers = [a.args[0] for a in actions if type(a).__name__ == "RegisterEventHandler"]
    exits = [h for h in handlers if type(h).__name__ == "OnProcessExit"]
    io = [h for h in handlers if type(h).__name__ == "OnProcessIO"]
    return module, nodes, exits, io


@pytest.mark.parametrize("arguments, spawned", [({"control": "node", "hardware": "topic"}, 2), ({}, 3)],
                         ids=["node-topic", "defaults"])
def test_arm_launch_starts_the_trajectory_node_once_every_spawner_has_succeeded(monkeypatch, arguments, spawned):
    # The trajectory node begins its motion a fixed delay after its first /joint_states, which
    # joint_state_broadcaster publishes before the commanding controller is active: started with
    # the other nodes, its motion could run before the arm is commanded.
    for order in ([*range(spawned)], [*reversed(range(spawned))]):
        _, nodes, exits, _ = _arm_actions(monkeypatch, goal="0.5,-0.4,0.3,0.2,-0.1,0.6", **arguments)
        spawners = [n for n in nodes if n.kwargs["executable"] == "spawner"]
        assert "trajectory" not in {n.kwargs.get("name") for n in nodes} and len(spawners) == spawned

        def exit_in_turn(which):
            """What the handlers of the spawners ``which`` start as those exit with code 0, in turn."""
            started = []
            for i in which:
                event = types.SimpleNamespace(action=spawners[i], returncode=0)
                for h in (h for h in exits if h.kwargs["target_action"] is spawners[i]):
                    started += [a for a in (h.kwargs["on_exit"](event, RUNNING) or []) if type(a).__name__ == "Node"]
            return started

        # whichever spawner exits last starts it, and only then
        assert exit_in_turn(order[:-1]) == []
        started = exit_in_turn(order[-1:])
        assert [n.kwargs["name"] for n in started] == ["trajectory"]
        assert started[0].kwargs["parameters"][1]["initial_goal"] == [0.5, -0.4, 0.3, 0.2, -0.1, 0.6]


def test_arm_launch_starts_nothing_after_a_failed_spawner_or_a_ctrl_c(monkeypatch):
    for codes, context in (({0: 1}, RUNNING), ({}, types.SimpleNamespace(is_shutdown=True))):
        _, nodes, exits, _ = _arm_actions(monkeypatch)
        spawners = [n for n in nodes if n.kwargs["executable"] == "spawner"]
        waiting = [h for h in exits if h.kwargs["target_action"] in spawners]
        started = []
        for i, spawner in enumerate(spawners):
            event = types.SimpleNamespace(action=spawner, returncode=codes.get(i, 0))
            for h in (h for h in waiting if h.kwargs["target_action"] is spawner):
                try:
                    out = h.kwargs["on_exit"](event, context)
                except RuntimeError:
                    continue
                started += [a for a in (out or []) if type(a).__name__ in ("Node", "TimerAction", "OpaqueFunction")]
        assert [a for a in started if type(a).__name__ == "Node"] == [], (codes, context)


def _run_failure(action, context=RUNNING):
    """Run what a failure handler returned (a TimerAction or an OpaqueFunction) as launch would."""
    if type(action).__name__ == "TimerAction":
        (action,) = action.kwargs["actions"]
    return action.kwargs["function"](context)


def test_arm_launch_fails_loudly_when_controller_manager_ends(monkeypatch):
    module, nodes, exits, io = _arm_actions(monkeypatch, hardware="no_such_pkg/NoSuchSystem")
    manager = next(n for n in nodes if n.kwargs["executable"] == "ros2_control_node")
    (heard,) = [h for h in io if h.kwargs["target_action"] is manager]
    said = (b"[INFO] [1.0] [controller_manager]: Subscribing to '~/robot_description'\n"
            b"terminate called after throwing an instance of 'pluginlib::LibraryLoadException'\n"
            b"  what():  According to the loaded plugin descriptions the class no_such_pkg/NoSuchSystem with base "
            b"class type hardware_interface::SystemInterface does not exist.\n")
    heard.kwargs["on_stderr"](types.SimpleNamespace(text=said))
    (ended,) = [h for h in exits if h.kwargs["target_action"] is manager]
    (failure,) = ended.kwargs["on_exit"](types.SimpleNamespace(action=manager, returncode=-6), RUNNING)
    # the processes started beside it get the time to finish starting before they are stopped
    assert type(failure).__name__ == "TimerAction" and 0 < failure.kwargs["period"] <= module.START_GRACE_S
    with pytest.raises(module.BringupError) as error:
        _run_failure(failure)
    message = str(error.value)
    assert message.startswith("controller_manager (ros2_control_node) ended (exit code -6, SIGABRT)")
    assert "hardware plugin no_such_pkg/NoSuchSystem" in message
    assert "controller_manager said: According to the loaded plugin descriptions the class " \
           "no_such_pkg/NoSuchSystem" in message
    assert _run_failure(failure, types.SimpleNamespace(is_shutdown=True)) is None  # Ctrl-C meanwhile: no error
    # stopped by a SIGINT of its own: the launch ends, without an error
    (stop,) = ended.kwargs["on_exit"](types.SimpleNamespace(action=manager, returncode=0), RUNNING)
    assert type(stop).__name__ == "Shutdown"
    # while the launch shuts down (Ctrl-C), its end is no failure
    assert ended.kwargs["on_exit"](types.SimpleNamespace(action=manager, returncode=-2),
                                   types.SimpleNamespace(is_shutdown=True)) is None


def test_arm_launch_fails_loudly_when_a_spawner_fails(monkeypatch):
    module, nodes, exits, io = _arm_actions(monkeypatch)
    inactive = next(n for n in nodes if n.kwargs["executable"] == "spawner" and "--inactive" in n.kwargs["arguments"])
    assert inactive.kwargs["arguments"][:2] == ["gravity_compensation_controller", "pd_gravity_controller"]
    failures = []
    for h in (h for h in exits if h.kwargs["target_action"] is inactive):
        out = h.kwargs["on_exit"](types.SimpleNamespace(action=inactive, returncode=1), RUNNING)
        failures += [a for a in (out or []) if type(a).__name__ in ("TimerAction", "OpaqueFunction")]
    (failure,) = failures
    with pytest.raises(module.BringupError, match=r"^the spawner of gravity_compensation_controller, "
                                                  r"pd_gravity_controller, cartesian_impedance_controller, operational_space_controller ended "
                                                  r"\(exit code 1\)"):
        _run_failure(failure)
    # every spawner gives up, with an error, when no controller manager answers
    for spawner in (n for n in nodes if n.kwargs["executable"] == "spawner"):
        arguments = spawner.kwargs["arguments"]
        assert arguments[arguments.index("--controller-manager-timeout") + 1] == "60"


def test_dynamics_launch_beside_a_real_arm(monkeypatch, tmp_path):
    declared, nodes, _ = _run_launch(monkeypatch, "dynamics.launch.py")
    assert set(nodes) == {"dynamics"}
    config, overrides = nodes["dynamics"].kwargs["parameters"]
    assert "robot_description" not in overrides  # taken from the /robot_description topic
    assert overrides["joint_states_topic"] == "/joint_states"
    urdf = tmp_path / "arm.urdf"
    urdf.write_text((PKG / "urdf" / "planar2.urdf").read_text())
    _, nodes, _ = _run_launch(monkeypatch, "dynamics.launch.py", urdf=str(urdf), joint_states_topic="/arm/joint_states")
    _, overrides = nodes["dynamics"].kwargs["parameters"]
    assert overrides["robot_description"].value == urdf.read_text()
    assert overrides["joint_states_topic"] == "/arm/joint_states"


def test_launch_support_helpers():
    assert parse_vector("0.5, -0.4 1e-3", "goal") == [0.5, -0.4, 0.001]
    assert parse_vector("", "goal") == []
    assert as_bool("True") and not as_bool("0")
    with pytest.raises(rd.InputError):
        as_bool("maybe")
    params = sim_parameters(PKG, robot="planar2", initial_positions="0.1,0.2")
    assert params["simulator"][1]["initial_positions"] == [0.1, 0.2]
    assert params["fixed_frame"] == ["base_link"]
    assert dynamics_parameters(PKG)[1] == {"drivetrain": ""}


def test_rviz_config_shows_the_robot_from_robot_description():
    data = yaml.safe_load((PKG / "rviz" / "robot_dynamics.rviz").read_text())
    displays = {d["Class"]: d for d in data["Visualization Manager"]["Displays"]}
    model = displays["rviz_default_plugins/RobotModel"]
    assert model["Description Source"] == "Topic"
    assert model["Description Topic"]["Value"] == "/robot_description"
    assert model["Description Topic"]["Durability Policy"] == "Transient Local"  # robot_state_publisher latches it
    assert "rviz_default_plugins/TF" in displays


def test_setup_installs_what_the_launch_files_use():
    # setup.py's data_files put launch/*.launch.py, urdf/, config/ and rviz/ under share/;
    # setup.cfg puts the console scripts under lib/robot_dynamics, where ros2 run looks.
    text = (PKG / "setup.py").read_text()
    for folder in ('share("launch", "*.launch.py")', 'share("urdf")', 'share("config")', 'share("rviz")'):
        assert folder in text
    cfg = configparser.ConfigParser()
    cfg.read(PKG / "setup.cfg")
    assert cfg["install"]["install_scripts"] == "$base/lib/robot_dynamics"
    assert {"dynamics", "trajectory", "controller", "simulator"} <= _console_scripts()
    for node in ("dynamics", "trajectory", "controller", "simulator"):
        module = importlib.util.find_spec(f"robot_dynamics.ros.{node}_node")
        assert module is not None
        source = Path(module.origin).read_text()
        assert "def main(args: list[str] | None = None) -> None:" in source
        assert "raise SystemExit(run(" in source  # rclpy.init / spin / destroy_node / shutdown
