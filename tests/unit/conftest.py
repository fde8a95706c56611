# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures shared by the unit tests: the module harness and the host-path seam (code in tests/unit/support/)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from ansible_collections.rdma.fabric.tests.unit.support.host_paths import reroot
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness


# make test runs the unit tests in its no-lab lane, under an autogroup of nice 19 beside the lab's emulated VMs: it
# gets the CPU they leave idle, so wall-clock limits mean nothing there (r8: Hypothesis's too_slow health check failed
# a property after 1.1 s). The example counts stay; only the time-based checks go.
settings.register_profile("rdma-fabric", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("rdma-fabric")


@pytest.fixture
def harness(monkeypatch):
    """A ModuleHarness: exit_json/fail_json, warnings, get_bin_path and run_command replaced for this test."""
    return ModuleHarness(monkeypatch)


@pytest.fixture
def host_paths(tmp_path, monkeypatch):
    """Every host path the modules use, re-rooted below tmp_path (/sys -> tmp_path/sys, ...): {name: path}."""
    return reroot(monkeypatch, tmp_path)
