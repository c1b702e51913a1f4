"""Draw docs/architecture.png: the four packages and the library's layers.

    python docs/architecture_figure.py

The layers are read from robot_dynamics/test/repository/test_layers.py (the list the tests hold
the source to), the packages' dependencies are those of their package.xml files.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "robot_dynamics" / "test"
sys.path.insert(0, str(TESTS))  # the test's helpers (import_graph, repo_files)
LAYERS = runpy.run_path(str(TESTS / "repository" / "test_layers.py"))["LAYERS"]

PACKAGES = {  # name: (x, y, what it holds)
    "robot_dynamics_bringup": (0.5, 4.3, "arm.launch.py, controllers.yaml:\nthe arm through ros2_control"),
    "robot_dynamics_control": (0.5, 2.7, "C++ controllers, SimulatedSystem\n(links the engine's CMake package)"),
    "robot_dynamics": (0.5, 1.1, "the library, the engine (C99),\nthe nodes, the CLI, the robots"),
    "robot_dynamics_interfaces": (2.85, 2.7, ".srv and .msg"),
}
DEPENDS = [("robot_dynamics_bringup", "robot_dynamics_control"), ("robot_dynamics_bringup", "robot_dynamics"),
           ("robot_dynamics_control", "robot_dynamics"), ("robot_dynamics_control", "robot_dynamics_interfaces"),
           ("robot_dynamics", "robot_dynamics_interfaces"), ("robot_dynamics_bringup", "robot_dynamics_interfaces")]


def box(ax, x, y, w, h, title, body, color):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02", fc=color, ec="0.3", lw=1))
    ax.text(x, y + h / 2 - 0.12, title, ha="center", va="top", fontsize=9, weight="bold")
    if body:
        ax.text(x, y - 0.05, body, ha="center", va="center", fontsize=7.5)


def packages(ax):
    w, h = 1.9, 0.95
    for name, (x, y, body) in PACKAGES.items():
        box(ax, x, y, w if name != "robot_dynamics_interfaces" else 2.15, h, name, body, "#e8f0fb")
    for a, b in DEPENDS:
        (xa, ya, _), (xb, yb, _) = PACKAGES[a], PACKAGES[b]
        start = (xa, ya - h / 2) if abs(xa - xb) < 0.1 else (xa + w / 2, ya)
        end = (xb, yb + h / 2) if abs(xa - xb) < 0.1 else (xb - 1.075, yb + (0.2 if yb < ya else -0.2))
        style = "arc3"
        if a == "robot_dynamics" and b == "robot_dynamics_interfaces":
            start, end = (xa + w / 2, ya), (xb, yb - h / 2)
        if a == "robot_dynamics_bringup" and b == "robot_dynamics":  # around the control package
            start, end, style = (xa - w / 2, ya), (xb - w / 2, yb), "arc3,rad=0.5"
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color="0.35", lw=1,
                                     connectionstyle=style))
    ax.set_xlim(-1.4, 4.0)
    ax.set_ylim(0.4, 5.0)
    ax.set_title("The packages (an arrow: depends on)", fontsize=10)
    ax.axis("off")


def layers(ax):
    n = len(LAYERS)
    for i, (name, units) in enumerate(LAYERS):
        y = i
        color = "#fdf1dc" if name != "engine boundary" else "#e3f4e1"
        ax.add_patch(FancyBboxPatch((0.0, y + 0.08), 7.4, 0.84, boxstyle="round,pad=0.01", fc=color, ec="0.5", lw=0.8))
        ax.text(0.12, y + 0.5, name, ha="left", va="center", fontsize=8.5, weight="bold")
        ax.text(3.05, y + 0.5, "  ".join(units[:5]) + ("\n" + "  ".join(units[5:]) if units[5:] else ""), ha="left", va="center",
                fontsize=7.5, family="monospace")
    ax.add_patch(FancyBboxPatch((0.0, -0.92), 7.4, 0.84, boxstyle="round,pad=0.01", fc="#e3f4e1", ec="0.5", lw=0.8))
    ax.text(0.12, -0.5, "the engine (C99)", ha="left", va="center", fontsize=8.5, weight="bold")
    ax.text(3.05, -0.5, "src/engine: rd_model + rd_work, the recursions,\nthe control laws, the plant's period",
            ha="left", va="center", fontsize=7.5)
    ax.annotate("", xy=(7.65, -0.9), xytext=(7.65, n - 0.1),
                arrowprops=dict(arrowstyle="-|>", color="0.35", lw=1.2))
    ax.text(7.75, n / 2 - 0.5, "imports point down only", rotation=90, va="center", fontsize=8)
    ax.set_xlim(-0.1, 8.1)
    ax.set_ylim(-1.0, n + 0.1)
    ax.set_title("Inside robot_dynamics: the layers, bottom up", fontsize=10)
    ax.axis("off")


def main() -> None:
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 5.6), gridspec_kw={"width_ratios": [1, 1.45]})
    packages(a)
    layers(b)
    fig.tight_layout()
    fig.savefig(HERE / "architecture.png", dpi=110)


if __name__ == "__main__":
    main()
