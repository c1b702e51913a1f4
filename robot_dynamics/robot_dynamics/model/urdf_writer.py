"""Write link and joint specs as URDF text (DH tables to URDF, generated test robots)."""

from __future__ import annotations

import numpy as np

from ..spatial import matrix_to_rpy
from .robot_model import JointSpec, LinkSpec

__all__ = ["specs_to_urdf", "with_visuals"]


def _fmt(values: np.ndarray) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(values).ravel())


def _origin(T: np.ndarray) -> str:
    return f'<origin xyz="{_fmt(T[:3, 3])}" rpy="{_fmt(matrix_to_rpy(T[:3, :3]))}"/>'


def specs_to_urdf(name: str, links: list[LinkSpec], joints: list[JointSpec]) -> str:
    """URDF text for the specs; inertias are written about the COM in link axes (rpy = 0).

    Numbers are written with full ``repr`` precision so a round trip is exact to 1 ulp.
    """
    out = ['<?xml version="1.0"?>', f'<robot name="{name}">']
    for link in links:
        if link.mass == 0.0 and not np.any(link.inertia):
            out.append(f'  <link name="{link.name}"/>')
            continue
        I = link.inertia
        out += [
            f'  <link name="{link.name}">',
            "    <inertial>",
            f'      <origin xyz="{_fmt(link.com)}" rpy="0 0 0"/>',
            f'      <mass value="{float(link.mass)!r}"/>',
            f'      <inertia ixx="{float(I[0, 0])!r}" ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" '
            f'iyy="{float(I[1, 1])!r}" iyz="{float(I[1, 2])!r}" izz="{float(I[2, 2])!r}"/>',
            "    </inertial>",
            "  </link>",
        ]
    for j in joints:
        out += [
            f'  <joint name="{j.name}" type="{j.type}">',
            f'    <parent link="{j.parent}"/>',
            f'    <child link="{j.child}"/>',
            f"    {_origin(j.origin)}",
        ]
        if j.type != "fixed":
            out.append(f'    <axis xyz="{_fmt(j.axis)}"/>')
            # URDF has no unlimited value, and urdfdom (robot_state_publisher, rviz) requires
            # effort and velocity: a missing limit is written as +-1e6 and named in `unlimited`,
            # which urdfdom ignores and this package's loader reads back as inf.
            values = {"effort": j.effort, "velocity": j.velocity}
            if j.type != "continuous":
                values = {"lower": j.lower, "upper": j.upper, **values}
            attrs = [f'{k}="{float(v if np.isfinite(v) else np.copysign(1e6, v))!r}"' for k, v in values.items()]
            unlimited = [k for k, v in values.items() if not np.isfinite(v)]
            if unlimited:
                attrs.append(f'unlimited="{" ".join(unlimited)}"')
            out.append(f"    <limit {' '.join(attrs)}/>")
            if j.damping or j.friction:
                out.append(f'    <dynamics damping="{float(j.damping)!r}" friction="{float(j.friction)!r}"/>')
            if j.mimic is not None:
                out.append(
                    f'    <mimic joint="{j.mimic[0]}" multiplier="{float(j.mimic[1])!r}" offset="{float(j.mimic[2])!r}"/>'
                )
        out.append("  </joint>")
    out.append("</robot>")
    return with_visuals("\n".join(out) + "\n")


# The colour of with_visuals' geometry (rviz gives every visual of a link the first one's material).
MATERIAL = '<material name="robot_dynamics_link"><color rgba="0.95 0.55 0.15 1"/></material>'
USE_MATERIAL = '<material name="robot_dynamics_link"/>'


def with_visuals(text: str) -> str:
    """The URDF with simple geometry for rviz: every link drawn from its own size.

    Each link gets a sphere at its origin (the joint housing) and a cylinder from its origin to
    the origin of each child joint (the link's body), with radii from the robot's scale; a
    link without children but with mass gets a sphere at its centre of mass. Existing visuals
    are replaced (a mesh from a package that is not installed shows nothing). The spheres and the
    cylinders take one orange material defined at the top of the robot (rviz draws a visual
    without a material in its error red). Inertial, joint and every other element are kept as
    written.
    """
    import re

    from .urdf import parse_urdf

    _, links, joints, _ = parse_urdf(text)
    lengths = [float(np.linalg.norm(j.origin[:3, 3])) for j in joints]
    scale = max(max(lengths, default=0.1), 0.05)
    r_body = 0.08 * scale
    children: dict[str, list[np.ndarray]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j.origin[:3, 3])
    by_name = {link.name: link for link in links}

    def visuals(name: str) -> str:
        parts = [f'    <visual><geometry><sphere radius="{1.3 * r_body:.4g}"/></geometry>{USE_MATERIAL}</visual>']
        for p in children.get(name, []):
            length = float(np.linalg.norm(p))
            if length < 1e-6:
                continue
            z = p / length
            # a rotation whose z axis runs along the segment (URDF cylinders lie along z)
            x = np.cross([0.0, 0.0, 1.0], z) if abs(z[2]) < 0.9 else np.cross([1.0, 0.0, 0.0], z)
            x /= np.linalg.norm(x)
            R = np.column_stack([x, np.cross(z, x), z])
            parts.append(
                f'    <visual><origin xyz="{_fmt(p / 2)}" rpy="{_fmt(matrix_to_rpy(R))}"/>'
                f'<geometry><cylinder radius="{r_body:.4g}" length="{length:.6g}"/></geometry>{USE_MATERIAL}</visual>'
            )
        link = by_name[name]
        if name not in children and link.mass > 0:
            parts.append(f'    <visual><origin xyz="{_fmt(link.com)}" rpy="0 0 0"/>'
                         f'<geometry><sphere radius="{1.6 * r_body:.4g}"/></geometry>{USE_MATERIAL}</visual>')
        return "\n".join(parts)

    text = re.sub(r"\s*<visual>.*?</visual>", "", text, flags=re.S)
    text = re.sub(r'\s*<material name="robot_dynamics_link">.*?</material>', "", text, flags=re.S)
    text = re.sub(r"(<robot\b[^>]*>)", lambda m: m.group(1) + "\n  " + MATERIAL, text, count=1)

    def expand(m: re.Match[str]) -> str:
        name = m.group("name")
        if m.group("selfclose"):
            return f'<link name="{name}">\n{visuals(name)}\n  </link>'
        return f'<link name="{name}">{m.group("body")}\n{visuals(name)}\n  </link>'

    pattern = r'<link name="(?P<name>[^"]+)"\s*(?:(?P<selfclose>/>)|>(?P<body>.*?)\s*</link>)'
    return re.sub(pattern, expand, text, flags=re.S)
