"""The robots the logic tests of test/ros share, loaded once per module."""

from __future__ import annotations

import pytest

import robot_dynamics as rd


@pytest.fixture(scope="module")
def planar():
    return rd.load_robot("planar2")


@pytest.fixture(scope="module")
def puma():
    return rd.load_robot("puma560")
