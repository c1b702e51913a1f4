"""Robot models, their loaders (URDF, xacro, DH YAML, joint-properties YAML) and their checks."""

from .checks import ISSUE_KINDS, ModelIssue, check_model
from .dh import load_dh_yaml
from .registry import DEFAULT_ROBOT, list_robots, load_robot, robot_files, share_directory
from .robot_model import JOINT_TYPES, JointSpec, LinkSpec, RobotModel, build_model
from .sidecar import apply_sidecar
from .urdf import load_urdf, parse_urdf, read_description
from .urdf_writer import specs_to_urdf

__all__ = [
    "DEFAULT_ROBOT",
    "ISSUE_KINDS",
    "JOINT_TYPES",
    "JointSpec",
    "LinkSpec",
    "ModelIssue",
    "RobotModel",
    "apply_sidecar",
    "build_model",
    "check_model",
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
