# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab proves itself: real rxe and siw, configfs rdma_cm, RDMA traffic between the VMs."""

from __future__ import annotations

import json
import re
import time

import pytest
from conftest import host_vars, roce_v2_ipv4_index

pytestmark = pytest.mark.usefixtures("vm1", "vm2")


@pytest.mark.parametrize("name", ["vm1", "vm2"])
def test_rxe_on_the_data_nic_is_active(name, request):
    host = request.getfixturevalue(name)
    netdev = host_vars(host)["lab_data_netdev"]
    links = json.loads(host.check_output("rdma -j link show"))
    rxe = [link for link in links if link.get("netdev") == netdev]
    assert rxe, f"no RDMA link on {netdev}: {links}"
    assert rxe[0]["state"] == "ACTIVE"
    assert rxe[0]["physical_state"] == "LINK_UP"


@pytest.mark.parametrize("name", ["vm1", "vm2"])
def test_kernel_is_debian_with_both_soft_drivers(name, request):
    host = request.getfixturevalue(name)
    assert host.file("/sys/module/rdma_rxe").is_directory
    assert host.file("/sys/module/siw").is_directory, "siw.ko did not load"
    assert "siw" in host.check_output("modinfo -F filename siw")


@pytest.mark.parametrize("name", ["vm1", "vm2"])
def test_configfs_rdma_cm_is_present(name, request):
    host = request.getfixturevalue(name)
    assert host.mount_point("/sys/kernel/config").exists
    assert host.file("/sys/kernel/config/rdma_cm").is_directory


@pytest.mark.parametrize("name", ["vm1", "vm2"])
def test_the_boot_left_out_what_labctl_trimmed(name, request):
    """labctl's kernel command line masks units and blacklists modules the lab has no use for: systemd took
    the masks, udev loaded none of those modules, and a load by name still works (only aliases are blocked)."""
    host = request.getfixturevalue(name)
    words = host.file("/proc/cmdline").content_string.split()
    masks = [word.split("=", 1)[1] for word in words if word.startswith("systemd.mask=")]
    blacklist = [module for word in words if word.startswith("modprobe.blacklist=") for module in word.split("=", 1)[1].split(",")]
    assert "getty@tty1.service" in masks and "kvm_amd" in blacklist, words
    states = host.run(f"systemctl is-enabled {' '.join(masks)}").stdout.split()
    assert states == ["masked-runtime"] * len(masks), dict(zip(masks, states))
    loaded = {line.split()[0] for line in host.file("/proc/modules").content_string.splitlines()}
    assert not loaded & set(blacklist), sorted(loaded & set(blacklist))
    assert "kvm.ko" in host.check_output("modprobe -n -v kvm_amd")
    # the image masks the getty generator (lab/build-image.sh): it wrote no unit, and the serial console's getty it
    # would have added runs as the image's own unit
    assert not host.file("/run/systemd/generator/getty.target.wants/serial-getty@ttyS0.service").exists
    assert host.service("serial-getty@ttyS0").is_running


def _listening(host, program: str) -> bool:
    """rping listens with an RDMA-CM ID, the verbs tools on TCP port 18515."""
    if program == "rping":
        cm_ids = json.loads(host.check_output("rdma -j resource show cm_id"))
        return any(cm.get("state") == "LISTEN" and cm.get("comm") == "rping" for cm in cm_ids)
    return host.check_output("ss -H -l -t -n sport = :18515") != ""


def _server(host, program: str, args: str) -> None:
    """Start a bounded server (60 s at most) in the background on host; return once it listens."""
    host.run(f"pkill -x {program}; nohup timeout 60 {program} {args} >/tmp/lab-server.log 2>&1 &")
    deadline = time.monotonic() + 30
    while not _listening(host, program):
        assert time.monotonic() < deadline, f"{program} not listening after 30 s: {host.run('cat /tmp/lab-server.log').stdout}"
        time.sleep(0.5)


def test_rping_between_the_vms(vm1, vm2):
    server_ip = host_vars(vm2)["lab_data_ip"]
    _server(vm2, "rping", f"-s -a {server_ip} -C 10")
    out = vm1.run(f"timeout 60 rping -c -a {server_ip} -C 10 -v")
    assert out.rc == 0, out.stderr
    assert len(re.findall(r"ping data: rdma-ping-\d+", out.stdout)) == 10


def test_ibv_rc_pingpong_with_the_roce_v2_gid_index(vm1, vm2):
    server_ip = host_vars(vm2)["lab_data_ip"]
    index1, index2 = roce_v2_ipv4_index(vm1), roce_v2_ipv4_index(vm2)
    dev2 = json.loads(vm2.check_output("rdma -j link show"))[0]["ifname"].split("/")[0]
    dev1 = json.loads(vm1.check_output("rdma -j link show"))[0]["ifname"].split("/")[0]
    _server(vm2, "ibv_rc_pingpong", f"-d {dev2} -g {index2} -n 200")
    out = vm1.run(f"timeout 60 ibv_rc_pingpong -d {dev1} -g {index1} -n 200 {server_ip}")
    assert out.rc == 0, out.stderr
    match = re.search(r"(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter", out.stdout)
    assert match and int(match.group(1)) == 200, out.stdout
