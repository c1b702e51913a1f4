"""Operation counts beside Khalil's (Table 7.5: 92n - 127 / 81n - 117; Table 7.6: RX-90).

Khalil's counts are for the inverse dynamic model without friction ("with a Coulomb and
viscous friction model, we add n multiplications, 2n additions and n sign functions") and
with an end-effector wrench given in the terminal frame. Ours are counted on the same models
with friction off; the text does not say whether rotor inertias (Ia qdd) are counted, so
the general 6R is given with and without them. The generated model has no end-effector
wrench (requests with one go to the core's rnea), which spares it the 6 additions of
``f_n + f_en, m_n + m_en`` and no multiplication.

* general 6R: Khalil's "general robot", modified DH with r1 = d1 = alpha1 = 0 and rn = 0,
  every other geometric parameter and every inertial parameter an arbitrary real value;
* RX-90 with general inertial parameters (Table 7.6, rows "general"), and with the
  simplified ones of his Table 7.4 (inertia matrices diagonal, two components of each first
  moment zero: Table 7.5's footnote *).
"""

from __future__ import annotations

import numpy as np

from ..model.dh import dh_model, load_dh_yaml
from ..model.registry import load_robot
from ..model.robot_model import RobotModel
from ..testing import random_inertia
from .direct import direct_operation_counts
from .generated import operation_counts

__all__ = ["general_robot", "rx90_variant", "table_7_5_robot", "khalil_comparison", "KHALIL_COUNTS"]

#: Khalil's published counts: (multiplications, additions).
KHALIL_COUNTS = {
    "general 6R, base parameters (92n-127, 81n-117)": (92 * 6 - 127, 81 * 6 - 117),
    "general 6R, base parameters, no rotor inertia": (92 * 6 - 127, 81 * 6 - 117),
    "RX-90 general inertia, standard parameters": (294, 283),
    "RX-90 general inertia, base parameters": (253, 238),
    "RX-90 simplified inertia, standard parameters": (202, 153),
    "RX-90 simplified inertia, base parameters": (160, 113),  # Table 7.5 prints 159
    # Table 7.5, "presented method" row (base parameters); robots in config/<name>_dh.yaml
    "Stanford 2RP(3R) general inertia, base parameters": (240, 227),
    "Stanford 2RP(3R) simplified inertia, base parameters": (142, 99),
    "TH8 R(2P)(3R) general inertia, base parameters": (175, 162),
    "TH8 R(2P)(3R) simplified inertia, base parameters": (104, 72),
    # 7.6.2, notes after [7.79] ([Khalil 97]): the recursive direct dynamic model of the RX-90
    "RX-90 general inertia, base parameters, direct dynamics": (889, 653),
    "RX-90 simplified inertia, base parameters, direct dynamics": (637, 423),
}


def general_robot(n: int = 6, seed: int = 0) -> RobotModel:
    """Khalil's general n-R robot: r1 = d1 = alpha1 = rn = 0, everything else arbitrary."""
    rng = np.random.default_rng(seed)
    links = []
    for j in range(n):
        alpha = 0.0 if j == 0 else float(rng.uniform(0.3, 1.2) * rng.choice([-1, 1]))
        d = 0.0 if j == 0 else float(rng.uniform(0.1, 0.5))
        r = 0.0 if j in (0, n - 1) else float(rng.uniform(0.1, 0.5))
        com = rng.uniform(-0.2, 0.2, 3)
        I = random_inertia(rng)
        links.append(
            {
                "name": f"link{j + 1}", "joint": f"joint{j + 1}", "alpha": alpha, "d": d, "theta": 0.0,
                "r": r, "mass": float(rng.uniform(1, 10)), "com": com.tolist(),
                "inertia": [I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]],
            }
        )
    model = dh_model({"name": f"general{n}R", "convention": "modified", "links": links})  # no limits to warn of
    return model.replace(rotor_inertia=rng.uniform(0.1, 1.0, n))


def table_7_5_robot(name: str, kind: str, seed: int = 0) -> RobotModel:
    """Stanford ('stanford') or TH8 ('th8') of Table 7.5 from its bundled DH table, with
    'general' or 'simplified' inertial parameters as :func:`rx90_variant`."""
    from ..model import share_directory

    return _inertia_variant(load_dh_yaml(share_directory() / "config" / f"{name}_dh.yaml"), kind, seed)


def rx90_variant(kind: str, seed: int = 0) -> RobotModel:
    """The RX-90 geometry with 'general' (random, full) or 'simplified' inertial parameters."""
    return _inertia_variant(load_robot("rx90"), kind, seed)


def _inertia_variant(model: RobotModel, kind: str, seed: int) -> RobotModel:
    rng = np.random.default_rng(seed)
    nb = model.nb
    if kind == "general":
        inertia = np.array([random_inertia(rng) for _ in range(nb)])
        com = rng.uniform(-0.2, 0.2, (nb, 3))
    elif kind == "simplified":
        inertia = np.array([np.diag(np.diag(I)) for I in model.inertia_com])
        com = np.zeros((nb, 3))
        for b in range(nb):
            k = int(np.argmax(np.abs(model.com[b])))
            com[b, k] = model.com[b, k] if model.com[b, k] != 0 else 0.05
    else:
        raise ValueError(kind)
    rotor = model.rotor_inertia if np.any(model.rotor_inertia) else rng.uniform(0.1, 1.0, model.nq)
    return model.replace(inertia_com=inertia, com=com, rotor_inertia=rotor)


def khalil_comparison() -> list[dict[str, object]]:
    """Rows: case, our multiplications/additions, Khalil's, number of parameters.

    The rows whose case ends in "direct dynamics" count the recursive direct dynamic model
    (7.6.2, :mod:`.direct`: joint accelerations from torques, a division counted as a
    multiplication); the others the inverse dynamic model (7.5).
    """
    cases = [
        ("general 6R, base parameters (92n-127, 81n-117)", general_robot(6), True),
        (
            "general 6R, base parameters, no rotor inertia",
            general_robot(6).replace(rotor_inertia=np.zeros(6)),
            True,
        ),
        ("RX-90 general inertia, standard parameters", rx90_variant("general"), False),
        ("RX-90 general inertia, base parameters", rx90_variant("general"), True),
        ("RX-90 simplified inertia, standard parameters", rx90_variant("simplified"), False),
        ("RX-90 simplified inertia, base parameters", rx90_variant("simplified"), True),
        ("Stanford 2RP(3R) general inertia, base parameters", table_7_5_robot("stanford", "general"), True),
        ("Stanford 2RP(3R) simplified inertia, base parameters", table_7_5_robot("stanford", "simplified"), True),
        ("TH8 R(2P)(3R) general inertia, base parameters", table_7_5_robot("th8", "general"), True),
        ("TH8 R(2P)(3R) simplified inertia, base parameters", table_7_5_robot("th8", "simplified"), True),
    ]
    rows = []
    for label, model, base in cases:
        counts, n_par = operation_counts(model, base=base, friction=False)
        km, ka = KHALIL_COUNTS[label]
        rows.append(
            {
                "case": label,
                "model": "inverse",
                "multiplications": counts.multiplications,
                "additions": counts.additions,
                "sin_cos": counts.functions,
                "khalil_multiplications": km,
                "khalil_additions": ka,
                "parameters": n_par,
            }
        )
    for kind in ("general", "simplified"):
        label = f"RX-90 {kind} inertia, base parameters, direct dynamics"
        counts, n_par = direct_operation_counts(rx90_variant(kind), base=True, friction=False)
        km, ka = KHALIL_COUNTS[label]
        rows.append(
            {
                "case": label,
                "model": "direct",
                "multiplications": counts.multiplications,
                "additions": counts.additions,
                "sin_cos": counts.functions,
                "khalil_multiplications": km,
                "khalil_additions": ka,
                "parameters": n_par,
            }
        )
    return rows
