"""The ``simulator`` node: the robot's direct dynamics driven by effort commands.

Subscribes ``command_topic`` (std_msgs/Float64MultiArray in the order of ``joints``, as
ros2_control's effort forward-command controller takes them; or, with ``command_type:
joint_state``, sensor_msgs/JointState with efforts by name, as ros2_control's TopicBasedSystem
sends them when the simulator is the hardware behind controller_manager), integrates
:func:`robot_dynamics.aba` with RK4 (``substeps`` per period of ``1/rate``, command held) and
publishes sensor_msgs/JointState on ``joint_states_topic`` at ``rate``, so robot_state_publisher
and rviz show the motion. The simulated arm keeps to the node's clock: a late timer callback
integrates every period due since the last (a Python timer asked for 1 kHz fires a few hundred
times a second on a loaded machine). A command older than ``command_timeout`` is dropped (zero
effort).

Every callback is one call into :class:`robot_dynamics.ros.motion.SimulatedPlant`.
"""

from __future__ import annotations

import time
from typing import Any

from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .logic import load_model_from_parameters
from .motion import SimulatedPlant
from .node_common import LATEST, declare_parameters, run, seconds

__all__ = ["SimulatorNode", "main"]


class SimulatorNode(Node):
    """Thin rclpy shell over :class:`SimulatedPlant`."""

    def __init__(self, **kwargs: Any) -> None:
        """Build the node; ``kwargs`` go to rclpy's Node (parameter_overrides, context...)."""
        super().__init__("simulator", **kwargs)
        p = declare_parameters(self, "simulator")
        model = load_model_from_parameters(p)
        self.plant = SimulatedPlant(
            model, p["initial_positions"], p["joints"], command_timeout=p["command_timeout"],
            friction=p["friction"], effort_saturation=p["effort_saturation"], command_space=p["command_space"],
            command_type=p["command_type"],
        )
        self.period = 1.0 / p["rate"]
        self.substeps = int(p["substeps"])
        self.state_pub = self.create_publisher(JointState, p["joint_states_topic"], 10)
        self.create_subscription(JointState if p["command_type"] == "joint_state" else Float64MultiArray,
                                 p["command_topic"], self._on_command, LATEST)
        self.create_timer(self.period, self._step)
        self._last_status = ""
        self._last_log = -1.0
        self._publish()
        self.get_logger().info(f"simulating {model.name!r} at {p['rate']} Hz, commands from {p['command_topic']}")

    def _on_command(self, msg: Float64MultiArray | JointState) -> None:
        ok, status = self.plant.on_command(msg, seconds(self))
        if not ok:
            self.get_logger().warning(f"command ignored: {status}", throttle_duration_sec=2.0)

    def _step(self) -> None:
        ok, status = self.plant.step_to(seconds(self), self.period, self.substeps)
        if status != self._last_status and time.monotonic() - self._last_log >= 1.0:
            self._last_log = time.monotonic()
            # one call site per severity: rclpy refuses a severity change at one call site
            if ok:
                self.get_logger().info(f"simulator: {status}")
            else:
                self.get_logger().error(f"simulator: {status}")
            self._last_status = status
        self._publish()

    def _publish(self) -> None:
        msg = JointState()
        msg.header.stamp = self.get_clock().now().to_msg()
        self.plant.joint_state(msg)
        self.state_pub.publish(msg)


def main(args: list[str] | None = None) -> None:
    """Console script ``simulator`` (``ros2 run robot_dynamics simulator``)."""
    raise SystemExit(run(SimulatorNode, args, exit_after=True))


if __name__ == "__main__":
    main()
