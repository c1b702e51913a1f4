"""The ``controller`` node: any controller of robot_dynamics.control, effort commands out.

Subscribes ``joint_states_topic`` (sensor_msgs/JointState) and ``reference_topic`` (a
one-point trajectory_msgs/JointTrajectory, as the trajectory node's ``~/reference``); at
``rate`` publishes std_msgs/Float64MultiArray on ``command_topic``, the topic and the joint
order (``joints``) of ros2_control's effort forward-command controller
(effort_controllers/JointGroupEffortController listens on ``/<controller name>/commands``).

Every callback is one call into :class:`robot_dynamics.ros.motion.ControlLoop`. With
``command_log`` set, each command published is also recorded (the stamp of the joint state it
was computed from, when that state arrived, when the command left, the efforts:
:class:`robot_dynamics.ros.command_log.CommandRecorder`) and the file written when the node
stops; ``bench/bench_control_loop.py`` traces the delay from a hardware read to the effort
written for it with it.
"""

from __future__ import annotations

import os
import time
from typing import Any

from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from ..errors import InputError
from .conversion import stamp_nanoseconds
from .logic import load_model_from_parameters
from .command_log import CommandRecorder
from .motion import ControlLoop, build_controller, controller_options
from .node_common import LATEST, declare_parameters, run, seconds

__all__ = ["ControllerNode", "main"]


class ControllerNode(Node):
    """Thin rclpy shell over :class:`ControlLoop`."""

    def __init__(self, **kwargs: Any) -> None:
        """Build the node; ``kwargs`` go to rclpy's Node (parameter_overrides, context...)."""
        super().__init__("controller", **kwargs)
        p = declare_parameters(self, "controller")
        model = load_model_from_parameters(p)
        controller = build_controller(
            model, p["controller"], kp=p["gains.kp"], kd=p["gains.kd"], ki=p["gains.ki"],
            omega=p["gains.omega"], frame=p["frame"] or None, **controller_options(p),
        )
        self.loop = ControlLoop(model, controller, p["joints"], state_timeout=p["state_timeout"],
                                hold_on_start=p["hold_on_start"], command_space=p["command_space"])
        self.command_log = p["command_log"]
        folder = os.path.dirname(os.path.abspath(self.command_log)) if self.command_log else ""
        if folder and not os.access(folder, os.W_OK):
            raise InputError(f"command_log: cannot write into {folder!r}")
        self.recorder = (CommandRecorder(p["command_log_cycles"], self.loop.command_joints)
                         if self.command_log else None)
        self.command_pub = self.create_publisher(Float64MultiArray, p["command_topic"], 10)
        self.create_subscription(JointState, p["joint_states_topic"], self._on_joint_state, LATEST)
        self.create_subscription(JointTrajectory, p["reference_topic"], self._on_reference, LATEST)
        self.create_timer(1.0 / p["rate"], self._tick)
        self._last_status = ""
        self._last_log = -1.0
        self.get_logger().info(
            f"{p['controller']} on {model.name!r}, commands on {p['command_topic']} for {self.loop.command_joints}"
        )

    def _on_joint_state(self, msg: JointState) -> None:
        received = time.monotonic_ns()
        ok, status = self.loop.on_joint_state(msg, seconds(self))
        if ok and self.recorder is not None:
            self.recorder.on_state(stamp_nanoseconds(msg.header.stamp), received)
        if not ok:
            self.get_logger().warning(f"joint state ignored: {status}", throttle_duration_sec=2.0)

    def _on_reference(self, msg: JointTrajectory) -> None:
        ok, status = self.loop.on_reference(msg)
        if not ok:
            self.get_logger().warning(f"reference ignored: {status}", throttle_duration_sec=2.0)

    def _tick(self) -> None:
        effort, status = self.loop.tick(seconds(self))
        if status != self._last_status and time.monotonic() - self._last_log >= 1.0:
            # status changes only, at most one line a second (a 500 Hz loop can flip every tick)
            self._last_log = time.monotonic()
            self.get_logger().info(f"controller: {status}")
            self._last_status = status
        if effort is None:
            return
        msg = Float64MultiArray()
        msg.data = [float(v) for v in effort]
        if self.recorder is not None:
            self.recorder.on_command(time.monotonic_ns(), msg.data)
        self.command_pub.publish(msg)

    def destroy_node(self) -> None:
        """Write the command log (when on), then destroy the node."""
        if self.recorder is not None and self.recorder.count:
            try:
                rows = self.recorder.write_csv(self.command_log)
                self.get_logger().info(f"command log: {rows} commands written to {self.command_log}")
            except OSError as exc:
                self.get_logger().error(f"command log: cannot write {self.command_log!r}: {exc}")
            self.recorder = None
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Console script ``controller`` (``ros2 run robot_dynamics controller``)."""
    raise SystemExit(run(ControllerNode, args, exit_after=True))


if __name__ == "__main__":
    main()
