"""Random robots for tests (Featherstone's ``autoTree`` in spirit), written as URDF text.

The generator exercises what real URDFs do to libraries: branches, revolute, continuous and
prismatic joints, oblique and negative axes, rotated joint origins, inertial frames with
rotated origins, fixed joints with massive links between moving joints, links without
``<inertial>``, and optionally mimic joints.
"""

from __future__ import annotations

import numpy as np

from .spatial import rpy_to_matrix

__all__ = ["random_inertia", "random_tree_urdf"]


def random_inertia(rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """A random physical rotational inertia (principal moments obey the triangle inequality)."""
    # Inertia of a random box, rotated: always physical.
    m = 1.0
    dims = rng.uniform(0.05, 0.5, 3) * scale
    Ip = m / 12.0 * np.array([dims[1] ** 2 + dims[2] ** 2, dims[0] ** 2 + dims[2] ** 2, dims[0] ** 2 + dims[1] ** 2])
    R = rpy_to_matrix(rng.uniform(-np.pi, np.pi, 3))
    return R @ np.diag(Ip) @ R.T


def _fmt(v: np.ndarray) -> str:
    return " ".join(repr(float(x)) for x in v)


def _inertial_link_xml(lname: str, xyz: str, rpy: str, mass: str, I: np.ndarray, extra: str = "") -> str:
    """A ``<link>`` with an ``<inertial>``: its origin (``xyz`` [m], ``rpy`` [rad] as URDF text),
    ``mass`` [kg] as text, the tensor I (3, 3) [kg m^2] in the inertial frame, then ``extra``
    elements (indented lines)."""
    return (
        f'  <link name="{lname}">\n    <inertial>\n      <origin xyz="{xyz}" rpy="{rpy}"/>\n'
        f'      <mass value="{mass}"/>\n'
        f'      <inertia ixx="{float(I[0, 0])!r}" ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" '
        f'iyy="{float(I[1, 1])!r}" iyz="{float(I[1, 2])!r}" izz="{float(I[2, 2])!r}"/>\n    </inertial>\n'
        f"{extra}  </link>"
    )


def _random_origin_axis(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random joint origin (xyz (3,) [m], rpy (3,) [rad], zero 30% of the time) and unit axis (3,)."""
    xyz = rng.uniform(-0.4, 0.4, 3)
    rpy = rng.uniform(-np.pi, np.pi, 3) * (rng.random() < 0.7)
    axis = rng.normal(size=3)
    if rng.random() < 0.4:  # axis-aligned, sometimes negative, as real URDFs have
        axis = np.zeros(3)
        axis[int(rng.integers(0, 3))] = rng.choice([-1.0, 1.0])
    axis /= np.linalg.norm(axis)
    return xyz, rpy, axis


def _random_link_xml(rng: np.random.Generator, lname: str, massless_links: bool) -> tuple[str, bool]:
    """``(xml, has_inertial)`` of a random link: a rotated inertial frame and a mesh that no
    package holds, or (with ``massless_links``, 15% of the time) no ``<inertial>`` at all."""
    has_inertial = not (massless_links and rng.random() < 0.15)
    if not has_inertial:
        return f'  <link name="{lname}"/>', False
    mass = rng.uniform(0.2, 5.0)
    I = random_inertia(rng) * mass
    ixyz = rng.uniform(-0.2, 0.2, 3)
    irpy = rng.uniform(-np.pi, np.pi, 3)
    # The URDF inertia is given in the (rotated) inertial frame.
    Ri = rpy_to_matrix(irpy)
    Iin = Ri.T @ I @ Ri
    visual = f'    <visual><geometry><mesh filename="package://missing_pkg/meshes/{lname}.stl"/></geometry></visual>\n'
    return _inertial_link_xml(lname, _fmt(ixyz), _fmt(irpy), repr(float(mass)), Iin, visual), True


def _joint_xml(
    rng: np.random.Generator,
    k: int,
    jtype: str,
    parent: str,
    lname: str,
    origin_axis: tuple[np.ndarray, np.ndarray, np.ndarray],
    mimic: bool,
    moving_names: list[str],
) -> str:
    """The ``<joint>`` named ``joint{k}`` from ``parent`` to ``lname``; with ``mimic``, 20% of the
    moving joints mimic an earlier independent one. Appends independent joints to ``moving_names``."""
    xyz, rpy, axis = origin_axis
    body = [
        f'  <joint name="joint{k}" type="{jtype}">',
        f'    <parent link="{parent}"/>',
        f'    <child link="{lname}"/>',
        f'    <origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>',
    ]
    if jtype != "fixed":
        body.append(f'    <axis xyz="{_fmt(axis)}"/>')
        lim = "" if jtype == "continuous" else 'lower="-3.0" upper="3.0" '
        body.append(f'    <limit {lim}effort="100" velocity="5"/>')
        if mimic and moving_names and rng.random() < 0.2:
            target = moving_names[int(rng.integers(0, len(moving_names)))]
            body.append(f'    <mimic joint="{target}" multiplier="{float(rng.uniform(-2, 2))!r}" offset="{float(rng.uniform(-0.5, 0.5))!r}"/>')
        else:
            moving_names.append(f"joint{k}")
    body.append("  </joint>")
    return "\n".join(body)


def _give_leaves_mass(
    rng: np.random.Generator, links: list[str], link_xml: list[str], joint_xml: list[str], massive: dict[str, bool]
) -> None:
    """Give every link without children a mass (1 kg, replacing its entry of ``link_xml``) so no
    moving joint drives a massless subtree."""
    parents = {line.split('"')[1] for j in joint_xml for line in j.splitlines() if "<parent" in line}
    for idx, lname in enumerate(links[1:], start=1):
        if lname not in parents and not massive[lname]:
            I = random_inertia(rng)
            link_xml[idx] = _inertial_link_xml(lname, "0.1 0 0", "0 0 0", "1.0", I)


def random_tree_urdf(
    rng: np.random.Generator,
    n_bodies: int = 10,
    *,
    n_fixed: int = 2,
    prismatic: bool = True,
    continuous: bool = True,
    mimic: bool = False,
    massless_links: bool = True,
    name: str = "random_tree",
) -> str:
    """URDF text of a random tree with ``n_bodies`` moving joints and ``n_fixed`` fixed joints.

    Every moving leaf carries mass, so the mass matrix is positive definite.
    """
    links = ["base_link"]
    link_xml = ['  <link name="base_link"/>']
    joint_xml = []
    massive: dict[str, bool] = {}
    kinds = ["revolute"] * 3 + (["continuous"] if continuous else []) + (["prismatic"] if prismatic else [])
    total = n_bodies + n_fixed
    fixed_slots = set(rng.choice(np.arange(1, total), size=min(n_fixed, total - 1), replace=False).tolist())
    moving_names: list[str] = []
    for k in range(total):
        lname = f"link{k}"
        # prefer chains with occasional branches
        parent = links[-1] if rng.random() < 0.6 else links[int(rng.integers(0, len(links)))]
        jtype = "fixed" if k in fixed_slots else kinds[int(rng.integers(0, len(kinds)))]
        origin_axis = _random_origin_axis(rng)
        xml, has_inertial = _random_link_xml(rng, lname, massless_links)
        link_xml.append(xml)
        massive[lname] = has_inertial
        joint_xml.append(_joint_xml(rng, k, jtype, parent, lname, origin_axis, mimic, moving_names))
        links.append(lname)
    _give_leaves_mass(rng, links, link_xml, joint_xml, massive)
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n' + "\n".join(link_xml + joint_xml) + "\n</robot>\n"
