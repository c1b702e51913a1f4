"""Every dependency key of every package.xml of the repository resolves in rosdep for Humble and for Jazzy.

usage: python3 .ci/check_rosdep_keys.py ROSDISTRO   (a clone of github.com/ros/rosdistro)

A key resolves when it is a package released in the distribution (``<distro>/distribution.yaml``),
a package of this repository, or a rosdep rule of ``rosdep/base.yaml`` / ``rosdep/python.yaml``
with an entry for Ubuntu (Humble: 22.04 jammy, Jazzy: 24.04 noble) that is not null. This is
what `rosdep install --from-paths src --ignore-src` looks up, read from the files rosdep
downloads; run it where github.com is reachable (CI here has no network).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
UBUNTU = {"humble": "jammy", "jazzy": "noble"}


def package_keys() -> dict[str, set[str]]:
    """package name -> the keys of its *depend elements."""
    keys = {}
    for xml in sorted(REPO.glob("*/package.xml")):
        root = ET.parse(xml).getroot()
        keys[root.findtext("name")] = {e.text.strip() for e in root if e.tag.endswith("depend") and e.text}
    return keys


def released(rosdistro: Path, distro: str) -> set[str]:
    data = yaml.safe_load((rosdistro / distro / "distribution.yaml").read_text(encoding="utf-8"))
    names = set()
    for repo, entry in data["repositories"].items():
        release = entry.get("release")
        if release:
            names.update(release.get("packages", [repo]))
    return names


def rule_resolves(rule, codename: str) -> bool:
    ubuntu = rule.get("ubuntu") if isinstance(rule, dict) else None
    if ubuntu is None:
        return False
    if isinstance(ubuntu, dict) and codename in ubuntu:
        return ubuntu[codename] is not None
    if isinstance(ubuntu, dict) and "*" in ubuntu:
        return ubuntu["*"] is not None
    return isinstance(ubuntu, list) or (isinstance(ubuntu, dict) and ("pip" in ubuntu or "apt" in ubuntu))


def main(rosdistro: Path) -> int:
    rules = {}
    for name in ("base.yaml", "python.yaml"):
        rules.update(yaml.safe_load((rosdistro / "rosdep" / name).read_text(encoding="utf-8")))
    ours = package_keys()
    bad = []
    for distro, codename in UBUNTU.items():
        packages = released(rosdistro, distro)
        for pkg, keys in ours.items():
            for key in sorted(keys):
                if key in ours or key in packages or (key in rules and rule_resolves(rules[key], codename)):
                    continue
                bad.append(f"{distro} ({codename}): {pkg}: no rosdep key {key!r}")
    n = sum(len(k) for k in ours.values())
    print("\n".join(bad) if bad else f"{n} keys of {sorted(ours)} resolve for {', '.join(UBUNTU)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
