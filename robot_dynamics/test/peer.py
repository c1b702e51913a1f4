"""Pinocchio, the peer library, on the same URDF: joints matched by name, never by index.

Pinocchio stores a continuous joint as (cos, sin) and orders spatial vectors [linear; angular];
these helpers convert our one-angle-per-joint state and read results back in our joint order.
"""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd

try:
    import pinocchio as pin
except ImportError:  # pragma: no cover - pin is a test dependency
    pin = None


def require_pinocchio() -> None:
    """Skip the calling test without Pinocchio >= 3.

    numpy < 2 environments (ROS 2 Humble's) resolve `pin` to 2.7, which lacks the armature,
    mimic joints and ModelPool these comparisons use. The skip happens inside the test, never at
    import: launch_testing's pytest plugin imports every test module and would skip them all.
    """
    if pin is None:
        pytest.skip("the peer comparisons need Pinocchio (pip install pin)")
    if int(pin.__version__.split(".")[0]) < 3:
        pytest.skip(f"the peer comparisons need Pinocchio >= 3, found {pin.__version__}")


@pytest.fixture(autouse=False)
def pinocchio3():
    """A fixture form of :func:`require_pinocchio`."""
    require_pinocchio()
    return pin


class Peer:
    """A Pinocchio model of the same URDF with name-matched index maps."""

    def __init__(self, model: rd.RobotModel, urdf_text: str | None = None, mimic: bool = False):
        require_pinocchio()
        text = urdf_text or model.description
        assert text is not None
        self.model = model
        self.pm = pin.buildModelFromXML(text, mimic=mimic) if mimic else pin.buildModelFromXML(text)
        self.pd = self.pm.createData()
        self.joints = [self.pm.joints[self.pm.getJointId(n)] for n in model.joint_names]
        assert all(self.pm.getJointId(n) < self.pm.njoints for n in model.joint_names)
        self.iv = np.array([j.idx_v for j in self.joints])
        # Pinocchio's armature is our rotor inertia Ia (Khalil [7.29]), in rnea, crba and aba.
        self.pm.armature[self.iv] = model.rotor_inertia
        self.pd = self.pm.createData()

    def q(self, q: np.ndarray) -> np.ndarray:
        qp = pin.neutral(self.pm)
        for i, j in enumerate(self.joints):
            if j.nq == 2:  # continuous joint: (cos, sin)
                qp[j.idx_q : j.idx_q + 2] = [np.cos(q[i]), np.sin(q[i])]
            else:
                qp[j.idx_q] = q[i]
        return qp

    def v(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pm.nv)
        out[self.iv] = v
        return out

    def rnea(self, q, qd, qdd) -> np.ndarray:
        return pin.rnea(self.pm, self.pd, self.q(q), self.v(qd), self.v(qdd))[self.iv].copy()

    def crba(self, q) -> np.ndarray:
        M = pin.crba(self.pm, self.pd, self.q(q)).copy()
        M = np.triu(M) + np.triu(M, 1).T
        return M[np.ix_(self.iv, self.iv)]

    def aba(self, q, qd, tau) -> np.ndarray:
        return pin.aba(self.pm, self.pd, self.q(q), self.v(qd), self.v(tau))[self.iv].copy()

    def frame_placement(self, q, frame: str) -> np.ndarray:
        pin.framesForwardKinematics(self.pm, self.pd, self.q(q))
        return self.pd.oMf[self.pm.getFrameId(frame)].homogeneous.copy()

    def jacobian(self, q, frame: str) -> np.ndarray:
        qp = self.q(q)
        pin.computeJointJacobians(self.pm, self.pd, qp)
        pin.framesForwardKinematics(self.pm, self.pd, qp)
        J = pin.getFrameJacobian(self.pm, self.pd, self.pm.getFrameId(frame), pin.LOCAL_WORLD_ALIGNED)
        return J[:, self.iv].copy()


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max(|b|, 1): relative for large values, absolute near zero."""
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(float(np.max(np.abs(b))), 1.0))
