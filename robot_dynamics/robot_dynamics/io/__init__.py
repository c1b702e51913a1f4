"""Output of simulations: PNG figures, CSV tables, rosbag2 (MCAP) recordings, 3-D animations."""

from .animation import ANIMATION_FORMATS, animate_robot, skeleton_segments
from .csv_file import simulation_columns, write_simulation_csv
from .plots import plot_residual, plot_simulation, save_figure
from .rosbag import TOPICS, rotation_to_quaternion, tf_tree, write_rosbag

__all__ = [
    "ANIMATION_FORMATS",
    "TOPICS",
    "animate_robot",
    "plot_residual",
    "plot_simulation",
    "rotation_to_quaternion",
    "save_figure",
    "simulation_columns",
    "skeleton_segments",
    "tf_tree",
    "write_rosbag",
    "write_simulation_csv",
]
