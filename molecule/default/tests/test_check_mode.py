# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check mode writes nothing, for every module and state, on a real kernel.

On vm1, each step runs a module four times: in check mode, for real, in check mode
again and for real again, with a manifest (manifest.py: configfs, /etc/security,
/etc/systemd, udev, modules-load.d, /etc/rdma-fabric, NetworkManager profiles, with
inode, size, mtime, mode and SHA-256, plus `rdma -j link show`, `rdma -j dev show`,
`nmcli -t connection show` and the loaded kernel modules) before the first run and
after the first, second and fourth. The steps go from nothing to a link with
persistence, RDMA-CM defaults, memlock entries, IPoIB profiles, and back to nothing.

For every step: the check run leaves the manifest identical; check mode's `changed`
equals the real run's and the expected value; the real run changes the manifest
exactly when it says changed; the second check and real runs report changed=0 and
write nothing; failures fail alike in both modes with the same message.

roce_mode removes a configfs group that it made itself to read or write, so the
values would not show in a manifest: the test makes ckrxe's group before the
roce_mode steps (roce_mode leaves a group it did not make), and removes it before
the link goes.

The modules that read RDMA-CM defaults (roce_mode, gid_facts with roce_defaults) make
a missing configfs group for the read and remove it again, as documented: the kernel
shows the values only inside a group. The manifest compares configfs by content, so
the groups and every value must stay identical.
"""

from __future__ import annotations

import pytest
from labplay import STARTED, command, manifest, manifest_of, module, run
from manifest import differences
import test_faults  # its fault matrix (vm2) runs beside this module's play (vm1)

HOST = "vm1"
NETDEV = "ckmode0"
LIMITS = "/etc/security/limits.d/95-rdma-fabric-checkmode.conf"
IPV4 = {"method": "manual", "addresses": ["198.51.100.7/24"]}

# (label, module, args, changed on the first real run, message part when it must fail)
STEPS = [
    ("rdma_link present, not persistent", "rdma.fabric.rdma_link",
     {"name": "ckrxe", "type": "rxe", "netdev": NETDEV, "persistent": False}, True, None),
    ("rdma_link present, persistent", "rdma.fabric.rdma_link",
     {"name": "ckrxe", "type": "rxe", "netdev": NETDEV, "persistent": True}, True, None),
    ("gid_facts, all devices", "rdma.fabric.gid_facts", {}, False, None),
    ("gid_facts, one device without RDMA-CM defaults", "rdma.fabric.gid_facts",
     {"device": ["ckrxe"], "port": 1, "roce_defaults": False}, False, None),
    ("roce_mode ToS, not persistent", "rdma.fabric.roce_mode",
     {"device": "ckrxe", "tos": 106, "persistent": False}, True, None),
    ("roce_mode mode and ToS, persistent", "rdma.fabric.roce_mode",
     {"device": "ckrxe", "mode": "v2", "tos": 106, "persistent": True}, True, None),
    ("roce_mode DSCP, persistent", "rdma.fabric.roce_mode",
     {"device": "ckrxe", "dscp": 26, "persistent": True}, True, None),
    ("roce_mode v1 on rxe (RoCE v2 only)", "rdma.fabric.roce_mode",
     {"device": "ckrxe", "mode": "v1", "persistent": False}, False, "GID types on the port"),
    ("roce_mode persistence off", "rdma.fabric.roce_mode",
     {"device": "ckrxe", "dscp": 26, "persistent": False}, True, None),
    ("tc_rule on rxe (mlx5 only)", "rdma.fabric.tc_rule",
     {"device": "ckrxe", "traffic_class": 106}, False, "MLNX_OFED"),
    ("dcb_qos on a dummy netdev, unsupported=skip", "rdma.fabric.dcb_qos",
     {"netdev": NETDEV, "pfc": [3], "unsupported": "skip"}, False, None),
    ("dcb_qos on a dummy netdev, unsupported=fail", "rdma.fabric.dcb_qos",
     {"netdev": NETDEV, "pfc": [3]}, False, "no DCB support"),
    ("rdma_link absent", "rdma.fabric.rdma_link", {"name": "ckrxe", "state": "absent"}, True, None),
    ("rdma_link siw present", "rdma.fabric.rdma_link",
     {"name": "cksiw", "type": "siw", "netdev": NETDEV, "persistent": False}, True, None),
    ("rdma_link siw absent", "rdma.fabric.rdma_link", {"name": "cksiw", "state": "absent"}, True, None),
    ("memlock present, both limits and systemd", "rdma.fabric.memlock",
     {"domain": "@ckgroup", "value": "unlimited", "dest": LIMITS, "systemd": True}, True, None),
    ("memlock new value", "rdma.fabric.memlock",
     {"domain": "@ckgroup", "value": "1048576", "dest": LIMITS, "systemd": True}, True, None),
    ("memlock soft only", "rdma.fabric.memlock",
     {"domain": "ckuser", "limit_type": "soft", "value": "65536", "dest": LIMITS}, True, None),
    ("memlock absent", "rdma.fabric.memlock",
     {"domain": "@ckgroup", "state": "absent", "dest": LIMITS, "systemd": True}, True, None),
    ("memlock last entry absent", "rdma.fabric.memlock",
     {"domain": "ckuser", "limit_type": "soft", "state": "absent", "dest": LIMITS}, True, None),
    # the systemd drop-in is one file for the host: back to what converge (rdma_core) wrote
    ("memlock systemd drop-in back", "rdma.fabric.memlock", {"domain": "@rdma", "value": "unlimited", "systemd": True},
     True, None),
    ("ipoib_connection present", "rdma.fabric.ipoib_connection",
     {"name": "ck-ib", "ifname": "ckib0", "transport_mode": "connected", "mtu": 65520, "ipv4": IPV4,
      "autoconnect": False}, True, None),
    ("ipoib_connection new MTU", "rdma.fabric.ipoib_connection",
     {"name": "ck-ib", "ifname": "ckib0", "transport_mode": "datagram", "mtu": 2044}, True, None),
    ("ipoib_connection P_Key child", "rdma.fabric.ipoib_connection",
     {"name": "ck-ib.8002", "parent": "ckib0", "pkey": "0x0002", "autoconnect": False}, True, None),
    ("ipoib_connection down (not active)", "rdma.fabric.ipoib_connection",
     {"name": "ck-ib", "ifname": "ckib0", "state": "down"}, False, None),
    ("ipoib_connection child absent", "rdma.fabric.ipoib_connection", {"name": "ck-ib.8002", "state": "absent"}, True, None),
    ("ipoib_connection absent", "rdma.fabric.ipoib_connection", {"name": "ck-ib", "state": "absent"}, True, None),
]


CM_GROUP = "/sys/kernel/config/rdma_cm/ckrxe"

# Commands run before a step (then a fresh manifest is taken).
PREPARE = {
    "roce_mode ToS, not persistent": [["mkdir", CM_GROUP]],
    "rdma_link absent": [["rmdir", CM_GROUP]],
}


def step_tasks(number: int, label: str, name: str, args: dict) -> list:
    key = f"s{number}"
    prepare = [command(f"{key}_prepare{i}", argv) for i, argv in enumerate(PREPARE.get(label, []))]
    if prepare:
        prepare.append(manifest(f"{key}_m0"))
    return prepare + [
        module(f"{key}_check", name, args, check=True),
        manifest(f"{key}_m1"),
        module(f"{key}_real", name, args),
        manifest(f"{key}_m2"),
        module(f"{key}_check2", name, args, check=True),
        module(f"{key}_real2", name, args),
        manifest(f"{key}_m3"),
    ]


def before(results: dict, number: int) -> dict:
    """The manifest before a step: its own after a preparation, else the previous step's last one."""
    if f"s{number}_m0" in results:
        return manifest_of(results[f"s{number}_m0"])
    return manifest_of(results["m_start" if number == 0 else f"s{number - 1}_m3"])


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    steps = [command("setup_netdev", ["ip", "link", "add", NETDEV, "type", "dummy"]),
             command("setup_up", ["ip", "link", "set", NETDEV, "up"]),
             manifest("m_start")]
    for number, (label, name, args, _changed, _msg) in enumerate(STEPS):
        steps += step_tasks(number, label, name, args)
    cleanup = [command("cleanup_group", ["rmdir", CM_GROUP]),
               command("cleanup_rxe", ["rdma", "link", "delete", "ckrxe"]),
               command("cleanup_siw", ["rdma", "link", "delete", "cksiw"]),
               command("cleanup_netdev", ["ip", "link", "delete", NETDEV]),
               command("cleanup_child", ["nmcli", "connection", "delete", "ck-ib.8002"]),
               command("cleanup_ib", ["nmcli", "connection", "delete", "ck-ib"]),
               command("cleanup_limits", ["rm", "-f", LIMITS])]
    # test_faults' matrix runs on vm2 meanwhile, and ends before this fixture returns: the tests after this
    # module (test_facts first) read both VMs, and the matrix bind-mounts over /etc and stops NetworkManager.
    faults = test_faults.start_matrix(tmp_path_factory.mktemp("faults"))
    try:
        found = run(HOST, steps, cleanup, tmp_path_factory.mktemp("checkmode"))
    finally:
        faults.wait()
        STARTED["faults"] = faults
    assert found["setup_netdev"]["rc"] == 0, found["setup_netdev"]
    return found


def outcome(result: dict) -> tuple:
    assert result is not None, "the step never ran"
    # ansible-core 2.19 adds exception='(traceback unavailable)' to every failure
    assert "module_stderr" not in result and "Traceback" not in str(result.get("exception", "")) + str(result.get("msg", "")), result
    return bool(result.get("changed")), bool(result.get("failed")), result.get("msg")


@pytest.mark.parametrize("number", range(len(STEPS)), ids=[step[0] for step in STEPS])
def test_check_mode_writes_nothing_and_predicts_the_real_run(results, number):
    _label, _name, _args, expected, message = STEPS[number]
    key = f"s{number}"
    m0, m1, m2, m3 = [before(results, number)] + [manifest_of(results[f"{key}_m{i}"]) for i in (1, 2, 3)]
    for step in [k for k in results if k.startswith(f"{key}_prepare")]:
        assert results[step]["rc"] == 0, results[step]
    check, real = outcome(results[f"{key}_check"]), outcome(results[f"{key}_real"])
    assert differences(m0, m1) == [], "check mode changed the host"
    assert check[:2] == real[:2] == (expected, message is not None), (results[f"{key}_check"], results[f"{key}_real"])
    if message:
        assert message in check[2] and message in real[2] and "\n" not in check[2] + real[2]
    assert bool(differences(m0, m2)) == expected, differences(m0, m2)
    if expected:
        diff = results[f"{key}_check"].get("diff")
        diffs = diff if isinstance(diff, list) else [diff]
        assert any(d and d.get("before") != d.get("after") for d in diffs), f"no diff in check mode: {diff}"
    assert outcome(results[f"{key}_check2"])[:2] == (False, message is not None)
    assert outcome(results[f"{key}_real2"])[:2] == (False, message is not None)
    assert differences(m2, m3) == [], "the second runs changed the host"


def test_the_steps_end_where_they_started(results):
    first, last = manifest_of(results["m_start"]), manifest_of(results[f"s{len(STEPS) - 1}_m3"])
    # Files written again with the same content, and directories where files came and
    # went, have a new inode or mtime; the shared roce_mode rule and unit stay by design
    # (documented). Everything else is as it was.
    left = [line for line in differences(first, last, ignore=("inode", "mtime_ns")) if "rdma-fabric-roce" not in line]
    assert left == [], left
