"""The ``dynamics`` node: torque-query services and gravity compensation for /joint_states.

Services (robot_dynamics_interfaces): ``~/inverse_dynamics``, ``~/forward_dynamics``,
``~/mass_matrix``, ``~/trajectory_effort``, ``~/linearize``. Publishes ``~/gravity_compensation``
(std_msgs/Float64MultiArray) for every JointState on ``joint_states_topic``.

The robot comes from the ``robot_description`` parameter, ``urdf_path`` or ``robot``; when
none is set, from the ``/robot_description`` topic (beside a real arm whose
robot_state_publisher already runs). Every callback is one call into
:class:`robot_dynamics.ros.logic.DynamicsServices`.

The services keep ``service_queue_depth`` requests (default 1000; rclpy's default of 10 lost
calls when several clients sent at once). A client under load should keep a deep history too
(``qos_profile=node_common.service_qos(1000)``): its reader receives the answers to every client
of the service, and at rclpy's 10 it loses its own when more than 10 others come in first.
"""

from __future__ import annotations

from typing import Any

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectoryPoint

from robot_dynamics_interfaces.srv import (
    ForwardDynamics,
    InverseDynamics,
    Linearize,
    MassMatrix,
    TrajectoryEffort,
)

from ..errors import RobotDynamicsError
from . import conversion as cv
from .logic import DynamicsServices, load_model_from_parameters
from .motion import command_joint_order
from .node_common import declare_parameters, run, service_qos

__all__ = ["DynamicsNode", "main"]


class DynamicsNode(Node):
    """Thin rclpy shell over :class:`DynamicsServices`."""

    def __init__(self, **kwargs: Any) -> None:
        """Build the node; ``kwargs`` go to rclpy's Node (parameter_overrides, context...)."""
        super().__init__("dynamics", **kwargs)
        self.params = declare_parameters(self, "dynamics")
        self.services_: DynamicsServices | None = None
        self.gravity_joints: list[str] = []
        if self.params["robot_description"] or self.params["urdf_path"] or self.params["robot"]:
            self._set_model(load_model_from_parameters(self.params))
        else:
            latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                 reliability=ReliabilityPolicy.RELIABLE)
            self.create_subscription(String, self.params["robot_description_topic"], self._on_description, latched)
            self.get_logger().info(f"waiting for the URDF on {self.params['robot_description_topic']}")
        qos = service_qos(self.params["service_queue_depth"])
        self.create_service(InverseDynamics, "~/inverse_dynamics", self._inverse_dynamics, qos_profile=qos)
        self.create_service(ForwardDynamics, "~/forward_dynamics", self._forward_dynamics, qos_profile=qos)
        self.create_service(MassMatrix, "~/mass_matrix", self._mass_matrix, qos_profile=qos)
        self.create_service(TrajectoryEffort, "~/trajectory_effort", self._trajectory_effort, qos_profile=qos)
        self.create_service(Linearize, "~/linearize", self._linearize, qos_profile=qos)
        self.gravity_pub = self.create_publisher(Float64MultiArray, "~/gravity_compensation", 10)
        self.create_subscription(JointState, self.params["joint_states_topic"], self._on_joint_state, 10)

    def _set_model(self, model: Any) -> None:
        self.gravity_joints = command_joint_order(model, self.params["gravity_compensation_joints"])
        self.services_ = DynamicsServices(model, friction=self.params["friction"])
        self.get_logger().info(f"robot {model.name!r}: {model.nq} joints {list(model.joint_names)}")

    def _on_description(self, msg: String) -> None:
        try:
            params = dict(self.params, robot_description=msg.data)
            self._set_model(load_model_from_parameters(params))
        except RobotDynamicsError as exc:
            self.get_logger().error(f"robot_description could not be loaded: {exc}")
        except Exception as exc:  # noqa: BLE001 - a callback never raises, whatever the text holds
            self.get_logger().error(f"robot_description could not be loaded ({type(exc).__name__}): {exc}")

    def _unavailable(self, response: Any) -> Any:
        response.success = False
        response.message = "no robot model yet (waiting for robot_description)"
        return response

    def _inverse_dynamics(self, request: InverseDynamics.Request, response: InverseDynamics.Response) -> Any:
        if self.services_ is None:
            return self._unavailable(response)
        return self.services_.inverse_dynamics(request, response)

    def _forward_dynamics(self, request: ForwardDynamics.Request, response: ForwardDynamics.Response) -> Any:
        if self.services_ is None:
            return self._unavailable(response)
        return self.services_.forward_dynamics(request, response)

    def _mass_matrix(self, request: MassMatrix.Request, response: MassMatrix.Response) -> Any:
        if self.services_ is None:
            return self._unavailable(response)
        return self.services_.mass_matrix(request, response)

    def _trajectory_effort(self, request: TrajectoryEffort.Request, response: TrajectoryEffort.Response) -> Any:
        if self.services_ is None:
            return self._unavailable(response)
        return self.services_.trajectory_effort(request, response, JointTrajectoryPoint)

    def _linearize(self, request: Linearize.Request, response: Linearize.Response) -> Any:
        if self.services_ is None:
            return self._unavailable(response)
        return self.services_.linearize(request, response)

    def _on_joint_state(self, msg: JointState) -> None:
        if self.services_ is None or not self.params["publish_gravity_compensation"]:
            return
        ok, values, status = self.services_.gravity_compensation(msg)
        if not ok:
            self.get_logger().warning(f"/joint_states ignored: {status}", throttle_duration_sec=2.0)
            return
        out = Float64MultiArray()
        cv.fill_float64_multi_array(out, values, self.services_.names, self.gravity_joints)
        self.gravity_pub.publish(out)


def main(args: list[str] | None = None) -> None:
    """Console script ``dynamics`` (``ros2 run robot_dynamics dynamics``)."""
    raise SystemExit(run(DynamicsNode, args, exit_after=True))


if __name__ == "__main__":
    main()
