# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scale lab's connection variables (lab/group_vars/scale_hosts.yml), as Ansible renders them.

Every scale host is reached through its VM's SSH (a ProxyCommand to its data address); the address
Ansible itself connects to must be a loopback one, so that nothing is sent to the link-local data
network from this machine, which would route it to its default gateway. Checked for the inventory that
lab/labctl writes and for molecule's, which puts its own ansible_ssh_common_args on every host.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
GROUP_VARS = os.path.join(TOP, "lab", "group_vars")
PER_VM = 16
HOSTS = [f"node{n:02d}" for n in range(1, 2 * PER_VM + 1)]
MOLECULE_COMMON_ARGS = "-o UserKnownHostsFile=/dev/null -o ControlMaster=auto -o StrictHostKeyChecking=no"


def inventory(tmp_path, molecule: bool) -> str:
    lines = ["all:", "  children:", "    scale_hosts:", "      hosts:"]
    for host in HOSTS:
        if molecule:  # molecule's default driver: host variables from its instance config
            lines.append(f"        {host}: {{ansible_host: 127.77.0.{100 + int(host[4:])}, ansible_port: 22, "
                         f"ansible_ssh_common_args: '{MOLECULE_COMMON_ARGS}'}}")
        else:
            lines.append(f"        {host}:")
    lines += ["  vars:", f"    lab_dir: {tmp_path}", "    lab_port_base: 3622", f"    lab_hosts_per_vm: {PER_VM}"]
    (tmp_path / "inventory.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.symlink(GROUP_VARS, tmp_path / "group_vars")
    return str(tmp_path / "inventory.yml")


@pytest.mark.parametrize("molecule", [False, True], ids=["labctl", "molecule"])
def test_every_scale_host_is_reached_through_its_vm_from_a_loopback_address(tmp_path, molecule):
    msg = "{{ {'host': ansible_host, 'extra': ansible_ssh_extra_args, 'common': ansible_ssh_common_args | default('')} | to_json }}"
    proc = subprocess.run([sys.executable, "-m", "ansible.cli.adhoc", "scale_hosts", "-i", inventory(tmp_path, molecule),
                           "-c", "local", "-o", "-m", "ansible.builtin.debug", "-a", f"msg={msg}"],
                          capture_output=True, text=True, check=False, timeout=300,
                          env=dict(os.environ, ANSIBLE_INVENTORY_UNPARSED_WARNING="False", ANSIBLE_NOCOLOR="1"))
    assert proc.returncode == 0, proc.stderr[-2000:] + proc.stdout[-2000:]
    # one line per host with -o: "node01 | SUCCESS => {...}"
    results = {}
    for line in proc.stdout.splitlines():
        host, sep, rest = line.partition(" | SUCCESS => ")
        if sep:
            results[host] = json.loads(rest)
    assert sorted(results) == HOSTS
    for host, result in results.items():
        number = int(host[4:])
        seen = json.loads(result["msg"])
        assert ipaddress.ip_address(seen["host"]).is_loopback, (host, seen)
        vm_port = 3622 + (number - 1) // PER_VM
        proxy = re.search(r'-o ProxyCommand="(.*)"', seen["extra"])
        assert proxy, (host, seen)
        assert f"-p {vm_port} " in proxy.group(1) and proxy.group(1).endswith(f"-W 169.254.77.{100 + number}:22 root@127.0.0.1")
        assert f"-i {tmp_path}/id_ed25519 " in proxy.group(1)
        if molecule:
            assert seen["common"] == MOLECULE_COMMON_ARGS  # molecule's own, and the ProxyCommand still applies
