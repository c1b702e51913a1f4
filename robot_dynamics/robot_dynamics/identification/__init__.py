"""Dynamic identification of a real arm (Khalil 7.5; Gautier's IDIM-WLS).

Excite the arm (:func:`design_excitation`), record ``/joint_states`` (rosbag2 or CSV,
:func:`read_recording`), filter and decimate (:func:`prepare`), estimate the base parameters,
friction and effort offsets with their relative standard deviations (:func:`identify`), make
them physically consistent (:func:`consistent_parameters`), and write files the loaders take.
"""

from .data import Recording, concatenate, read_csv, read_recording, read_rosbag, write_csv
from .estimation import Estimate, identify, model_from_standard, rank_report, standard_from_base, true_base
from .excitation import ExcitationDesign, FourierExcitation, design_excitation, limit_usage, observation_condition
from .signal import Prepared, bandwidth, prepare

__all__ = [
    "Recording",
    "concatenate",
    "read_csv",
    "read_recording",
    "read_rosbag",
    "write_csv",
    "Estimate",
    "identify",
    "model_from_standard",
    "rank_report",
    "standard_from_base",
    "true_base",
    "ExcitationDesign",
    "FourierExcitation",
    "design_excitation",
    "limit_usage",
    "observation_condition",
    "Prepared",
    "bandwidth",
    "prepare",
]
