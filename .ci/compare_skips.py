"""The same tests on Humble and on Jazzy: a test skipped on one distribution runs on the other
only where that distribution's environment lacks a component, for a reason listed here; and no
test skips on either for a missing part of the C++ stack, which .ci/ros.sh builds for both
(rviz2 alone may be missing, on both, when RVIZ=0 leaves it out).

usage: python3 compare_skips.py RESULTS   (RESULTS holds skipped-humble.txt and skipped-jazzy.txt,
written by .ci/ros.sh: one "test id<TAB>reason" line per skipped test)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# distribution -> reasons (prefixes) allowed to skip there while the test runs on the other
ALLOWED = {
    # Humble's messages are built against numpy 1; beside numpy 1 pip gives pin 2.7, which lacks
    # the armature, mimic joints and ModelPool the Pinocchio peer comparisons use.
    "humble": ("the peer comparisons need Pinocchio >= 3, found 2.",),
    # Jazzy is built with the same C++ stack as Humble (../shared/ros2-jazzy-cpp): nothing.
    "jazzy": (),
}
# How a test names a missing ament package or message module (test/ros_presence.py): with the C++
# stack built for both distributions, such a skip is a build that lost a package, on either.
MISSING_PACKAGE = " is not built in this ROS 2"
# RVIZ=0 (.ci/ros.sh) leaves rviz2 out of both builds: then, and only then, rviz2 may be missing.
OPTIONAL_PACKAGES = ("rviz2", "rviz_default_plugins") if os.environ.get("RVIZ", "1") == "0" else ()


def read(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return dict(line.split("\t", 1) if "\t" in line else (line, "") for line in lines if line)


def main(folder: Path) -> int:
    missing = [d for d in ALLOWED if not (folder / f"skipped-{d}.txt").is_file()]
    if missing:
        print(f"no test results of {', '.join(missing)} (not built here): skips not compared")
        return 0
    skips = {d: read(folder / f"skipped-{d}.txt") for d in ALLOWED}
    bad, allowed = [], 0
    optional = tuple(f"{p}{MISSING_PACKAGE}" for p in OPTIONAL_PACKAGES)
    for distro in ALLOWED:
        for name, reason in sorted(skips[distro].items()):
            if MISSING_PACKAGE in reason and not reason.startswith(optional):
                bad.append(f"skipped on {distro} for a missing part of the C++ stack: {name}: {reason}")
    for distro, other in (("humble", "jazzy"), ("jazzy", "humble")):
        for name in sorted(set(skips[distro]) - set(skips[other])):
            reason = skips[distro][name]
            if reason.startswith(ALLOWED[distro]):
                allowed += 1
            else:
                bad.append(f"skipped on {distro} only: {name}: {reason}")
    both = len(set(skips["humble"]) & set(skips["jazzy"]))
    print("\n".join(bad) if bad else
          f"skipped on both: {both}; on one only, for a listed reason: {allowed}; otherwise none")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
