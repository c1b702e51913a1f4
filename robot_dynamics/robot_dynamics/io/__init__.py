"""Output of simulations: PNG figures, CSV tables, rosbag2 (MCAP) recordings."""

from .csv_file import simulation_columns, write_simulation_csv
from .plots import plot_simulation, save_figure
from .rosbag import TOPICS, rotation_to_quaternion, tf_tree, write_rosbag

__all__ = [
    "TOPICS",
    "plot_simulation",
    "rotation_to_quaternion",
    "save_figure",
    "simulation_columns",
    "tf_tree",
    "write_rosbag",
    "write_simulation_csv",
]
