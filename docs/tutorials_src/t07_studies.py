"""
Studies of many simulations on Dask
===================================

A study is a description (a YAML file, a dict or a :class:`robot_dynamics.study.Study`): the
robot, the controller, the motion, the simulation options and the axes to vary, on grids or
random distributions. Every point is one closed-loop simulation and one row of the result
(a Parquet dataset written chunk by chunk, so an interrupted study resumes). It runs on a
Dask LocalCluster by default, on a running cluster by address
(``scheduler="tcp://head-node:8786"``), or in this process (``scheduler="inprocess"``).
From the shell: ``robot-dynamics sweep study.yaml --workers 8``.
"""

import tempfile

import matplotlib.pyplot as plt
import numpy as np

from robot_dynamics import study as sd

print("axes:", list(sd.AXES))

study = sd.load_study({
    "name": "planar2_payload",
    "robot": "planar2",
    "controller": {"type": "computed_torque", "omega": 20.0, "xi": 1.0},
    "motion": {"profile": "quintic", "duration": 1.0, "settle": 0.2},
    "simulation": {"control_rate": 250.0, "integrator": "rk4"},
    "axes": {
        "payload": {"link": "link2", "grid": [0.0, 0.25, 0.5, 1.0]},   # kg, unknown to the controller
        "mass_error": {"uniform": [-0.2, 0.2]},                        # the controller's model error
    },
    "samples": 3,
    "seed": 0,
})
print(len(sd.points(study)), "points")

# %%
# In this process first
# ---------------------
# ``scheduler="inprocess"`` runs every point here, without Dask: the reference to compare with.
local = sd.run_study(study, tempfile.mkdtemp(), scheduler="inprocess", progress=False)
print(f"{local.computed_points} points in {local.wall_time:.1f} s in this process")

# %%
# Then on a Dask cluster
# ----------------------
# ``scheduler="local"`` starts a LocalCluster of worker processes (in a script, under
# ``if __name__ == "__main__":``, as every program that starts processes). Here the cluster is
# started by hand with two workers inside this process, and the study is given its address,
# as it would be given a cluster's on other machines.
from distributed import LocalCluster

with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
    run = sd.run_study(study, tempfile.mkdtemp(), scheduler=cluster.scheduler_address, workers=2, progress=False)
print(f"{run.computed_points} points in {run.wall_time:.1f} s on the cluster")
table = run.table.to_pydict()
print("columns:", list(table))

# %%
# Both give the same table: every random draw is seeded by (seed, sample, axis), whatever runs
# it.
worst = np.array(table["rms_error"], dtype=float)    # RMS over the joints [rad]
assert np.allclose(worst, local.table.to_pydict()["rms_error"], rtol=1e-9)
assert all(status == "ok" for status in table["status"])

# %%
# The summary per axis value, and the tracking error against the payload.
for row in sd.summary(study, run.table)[:4]:
    print(row)
payload = np.array(table["payload"], dtype=float)
fig, ax = plt.subplots(figsize=(5.5, 3.2))
ax.plot(payload, 1e3 * worst, "o", alpha=0.7)
ax.set_xlabel("payload at link2 [kg] (unknown to the controller)")
ax.set_ylabel("RMS tracking error [mrad]")
ax.set_title("computed torque on planar2")
fig.tight_layout()
