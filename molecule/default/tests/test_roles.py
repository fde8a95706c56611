# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What playbooks/site.yml leaves on each lab VM, read back on the real system."""

from __future__ import annotations

import pytest

HOSTS = ["vm1", "vm2"]


@pytest.mark.parametrize("name", HOSTS)
def test_kernel_modules_load_at_boot(name, request):
    host = request.getfixturevalue(name)
    conf = host.file("/etc/modules-load.d/rdma-fabric.conf")
    assert conf.exists
    listed = conf.content_string.split()
    assert {"rdma_rxe", "siw", "rdma_cm", "rdma_ucm", "ib_uverbs"} <= set(listed)
    for module in listed:
        assert host.file(f"/sys/module/{module}").is_directory, f"{module} is not loaded"


@pytest.mark.parametrize("name", HOSTS)
def test_link_is_persistent(name, request):
    host = request.getfixturevalue(name)
    rule = host.file("/etc/udev/rules.d/90-rdma-fabric-rxe0.rules")
    assert rule.exists
    assert "eth1" in rule.content_string


@pytest.mark.parametrize("name", HOSTS)
def test_memlock_for_logins_and_services(name, request):
    host = request.getfixturevalue(name)
    limits = host.file("/etc/security/limits.d/90-rdma-fabric-memlock.conf").content_string.split("\n")
    entries = [line.split() for line in limits if line.strip() and not line.startswith("#")]
    assert ["@rdma", "soft", "memlock", "unlimited"] in entries
    assert ["@rdma", "hard", "memlock", "unlimited"] in entries
    assert host.check_output("systemctl show --property=DefaultLimitMEMLOCK") == "DefaultLimitMEMLOCK=infinity"
    assert host.group("rdma").exists


@pytest.mark.parametrize("name", HOSTS)
def test_rdma_cm_defaults(name, request):
    host = request.getfixturevalue(name)
    # roce_mode in check mode reads the kernel's values and writes nothing.
    result = host.ansible("rdma.fabric.roce_mode", "device=rxe0 port=1", check=True)
    assert result.get("failed") is not True, result
    assert result["changed"] is False
    assert (result["mode"], result["tos"]) == ("v2", 106)


@pytest.mark.parametrize("name", HOSTS)
def test_ipoib_profile_is_stored(name, request):
    host = request.getfixturevalue(name)
    out = host.check_output("nmcli -t -g connection.type,infiniband.transport-mode,infiniband.mtu connection show lab-ib0")
    assert out.split("\n") == ["infiniband", "connected", "65520"]
