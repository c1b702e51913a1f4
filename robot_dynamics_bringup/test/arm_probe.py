"""The probe of the bring-up's launch tests: an rclpy node in the test process that records
/joint_states, asks controller_manager for its controllers and runs the ros2 command line.

Importable without a sourced ROS 2 (rclpy is imported when a test class starts), so that a test
module can define its test classes, skipped, where a component it needs is missing.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import numpy as np

from robot_dynamics.ros.probe import ProbeTestCase, package_share, ros_message

#: The package's launch file, in its share folder (where `ros2 launch` finds it).
LAUNCH_FILE = ("launch", "arm.launch.py")


def arm_launch_file() -> str:
    """The installed arm.launch.py of robot_dynamics_bringup."""
    share = package_share("robot_dynamics_bringup")
    assert share is not None, "robot_dynamics_bringup is not built in this workspace"
    return os.path.join(share, *LAUNCH_FILE)


def repository_file(*parts: str) -> Path:
    """A file of the repository around this package (the tests run from its source tree)."""
    for folder in Path(__file__).resolve().parents:
        if (folder / "robot_dynamics_bringup" / "package.xml").is_file() and (folder / "docs").is_dir():
            path = folder.joinpath(*parts)
            assert path.is_file(), f"the repository at {folder} has no {'/'.join(parts)}"
            return path
    raise AssertionError(f"no repository around {Path(__file__).resolve().parent}")


def documented_command(page: str, starts_with: str) -> list[str]:
    """The first command of a ```bash block of ``page`` (under docs/) that starts with
    ``starts_with``, its continuation lines joined, split into arguments as the shell does."""
    import shlex

    text = repository_file("docs", page).read_text(encoding="utf-8")
    inside = False
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("```"):
            inside = line.strip() == "```bash" and not inside
            continue
        if inside and line.startswith(starts_with):
            command = line
            j = i
            while command.rstrip().endswith("\\"):
                j += 1
                command = command.rstrip()[:-1] + " " + lines[j].strip()
            return shlex.split(command, comments=True)
    raise AssertionError(f"docs/{page} has no command starting with {starts_with!r} in a bash block")


class ArmProbe(ProbeTestCase):
    """robot_dynamics' launch-test probe (one rclpy context per test class, per test a node
    ``probe_name`` whose ``states`` list receives every /joint_states message, ``spin_until``),
    with the PUMA 560's model and helpers over controller_manager's services."""

    probe_name = "arm_probe"

    def setUp(self):
        import robot_dynamics as rd

        self.model = rd.load_robot("puma560")
        super().setUp()

    def spin_for(self, seconds):
        self.spin_until(lambda: False, seconds)

    def model_order(self, state, field="position"):
        """A JointState's ``field`` in the model's joint order (joints matched by name)."""
        where = {n: i for i, n in enumerate(state.name)}
        return np.array([getattr(state, field)[where[n]] for n in self.model.joint_names])

    def controllers(self):
        """controller_manager's controllers: name -> (state, type); {} when it does not answer."""
        ListControllers = ros_message("controller_manager_msgs/srv/ListControllers")
        client = self.node.create_client(ListControllers, "/controller_manager/list_controllers")
        try:
            if not client.wait_for_service(timeout_sec=30.0):
                return {}
            future = client.call_async(ListControllers.Request())
            self.spin_until(future.done, 10.0)
            return {c.name: (c.state, c.type) for c in future.result().controller} if future.done() else {}
        finally:
            self.node.destroy_client(client)

    def wait_for_controllers(self, expected, timeout=120.0):
        """Spin until every controller of ``expected`` (name -> state) is in its state."""
        def ready():
            now = self.controllers()
            return all(now.get(name, ("",))[0] == state for name, state in expected.items())

        self.assertTrue(self.spin_until(ready, timeout), f"controllers: {self.controllers()}")

    def switch(self, deactivate=(), activate=()):
        """controller_manager's switch_controllers (strict): whether it succeeded."""
        SwitchController = ros_message("controller_manager_msgs/srv/SwitchController")
        client = self.node.create_client(SwitchController, "/controller_manager/switch_controller")
        try:
            self.assertTrue(client.wait_for_service(timeout_sec=30.0), "no switch_controller service")
            request = SwitchController.Request()
            # Humble names the lists start/stop, Jazzy activate/deactivate
            for names, fields in ((list(activate), ("activate_controllers", "start_controllers")),
                                  (list(deactivate), ("deactivate_controllers", "stop_controllers"))):
                setattr(request, next(f for f in fields if hasattr(request, f)), names)
            request.strictness = SwitchController.Request.STRICT
            request.timeout.sec = 5  # as `ros2 control switch_controllers`' default
            future = client.call_async(request)
            self.assertTrue(self.spin_until(future.done, 20.0), "no answer from switch_controller")
            return future.result().ok
        finally:
            self.node.destroy_client(client)

    def parameter(self, node, name):
        """The value of a node's parameter (rcl_interfaces/msg/ParameterValue)."""
        from rcl_interfaces.srv import GetParameters

        client = self.node.create_client(GetParameters, f"{node}/get_parameters")
        try:
            self.assertTrue(client.wait_for_service(timeout_sec=30.0), f"no {node}/get_parameters")
            future = client.call_async(GetParameters.Request(names=[name]))
            self.assertTrue(self.spin_until(future.done, 10.0), f"no answer from {node}/get_parameters")
            return future.result().values[0]
        finally:
            self.node.destroy_client(client)

    def restore_parameter(self, node, name, value):
        """Set a node's parameter back to ``value`` (a ParameterValue from :meth:`parameter`)."""
        from rcl_interfaces.msg import Parameter
        from rcl_interfaces.srv import SetParameters

        client = self.node.create_client(SetParameters, f"{node}/set_parameters")
        try:
            if client.wait_for_service(timeout_sec=10.0):
                future = client.call_async(SetParameters.Request(parameters=[Parameter(name=name, value=value)]))
                self.spin_until(future.done, 10.0)
        finally:
            self.node.destroy_client(client)

    def at_rest(self):
        """Spin until the last joint state is at rest (every velocity below 0.01); its positions."""
        def resting():
            return bool(self.states) and np.all(np.abs(self.model_order(self.states[-1], "velocity")) < 1e-2)

        self.assertTrue(self.spin_until(resting, 30.0), "the arm does not come to rest")
        return self.model_order(self.states[-1])

    def ros2(self, *args, timeout=60.0):
        """The ros2 command line, as a user runs it (stdout and stderr together). "Node not found"
        (the command's discovery has not seen the node yet, as a user may meet right after a
        launch) is asked again, for up to 20 s."""
        end = time.monotonic() + 20.0
        while True:
            done = subprocess.run(["ros2", *args], capture_output=True, text=True, timeout=timeout,
                                  env=dict(os.environ))
            if "Node not found" not in done.stdout + done.stderr or time.monotonic() > end:
                return done
            time.sleep(1.0)
