"""Robot models and their loaders (URDF, xacro, DH YAML, joint-properties YAML)."""

from .dh import load_dh_yaml
from .registry import DEFAULT_ROBOT, list_robots, load_robot, robot_files, share_directory
from .robot_model import JOINT_TYPES, JointSpec, LinkSpec, RobotModel, build_model
from .sidecar import apply_sidecar
from .urdf import load_urdf, parse_urdf, read_description
from .urdf_writer import specs_to_urdf

__all__ = [
    "DEFAULT_ROBOT",
    "JOINT_TYPES",
    "JointSpec",
    "LinkSpec",
    "RobotModel",
    "apply_sidecar",
    "build_model",
    "list_robots",
    "load_dh_yaml",
    "load_robot",
    "load_urdf",
    "parse_urdf",
    "read_description",
    "robot_files",
    "share_directory",
    "specs_to_urdf",
]
