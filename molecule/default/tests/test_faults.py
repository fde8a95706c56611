# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fault matrix, on a real kernel: every module under the faults a fleet meets.

On vm2, each case injects a fault (a tool moved away or replaced by an old one,
NetworkManager stopped, configfs unmounted, rdma_cm unloaded and blocked, a device
or netdev removed between runs, /etc read-only, a full file system, a non-root user,
the kernel refusing a second link), takes a manifest (manifest.py), runs the module,
takes another manifest and undoes the fault. Each case must end with a clear one-line
message (or, where the module can still do its job, a clean result), no traceback,
changed=false and an identical manifest, except where a case says what a partial
apply leaves behind and the message says so too.
"""

from __future__ import annotations

import pytest
from labplay import STARTED, command, manifest, manifest_of, module, start
from manifest import differences

HOST = "vm2"
DUMMY = "ftdummy0"
GONE = "ftgone0"
USER = "rdmafault"
ASIDE = ".rdma-fabric-fault-aside"
OLD_RDMA = "/root/rdma-fault-old"      # iproute2 before JSON: -j is an unknown option
TEXT_RDMA = "/root/rdma-fault-text"    # a tool that ignores -j and prints text
CM_BLOCK = "/etc/modprobe.d/rdma-fabric-fault.conf"
CONFIGFS_MOUNT = ["mount", "-t", "configfs", "-o", "nosuid,nodev,noexec", "configfs", "/sys/kernel/config"]  # as systemd does
LIMITS = "/etc/security/limits.d/90-rdma-fabric-memlock.conf"
IPOIB = {"name": "ft-ib", "ifname": "ftib0", "transport_mode": "datagram", "autoconnect": False}
LINK = {"name": "ftrxe", "type": "rxe", "netdev": DUMMY, "persistent": False}
NON_ROOT = {"become": True, "become_method": "ansible.builtin.su", "become_user": USER}
V2_106 = {"device": "rxe0", "mode": "v2", "tos": 106}  # what converge set and persisted on rxe0
REAPPLY_ROCE = [["systemctl", "restart", "rdma-fabric-roce@rxe0.service"], ["rmdir", "/sys/kernel/config/rdma_cm/rxe0"]]

OLD_RDMA_SCRIPT = """#!/bin/sh
# What an iproute2 rdma without JSON support answers to -j.
echo "rdma: invalid option -- 'j'" >&2
echo 'Usage: rdma [ OPTIONS ] OBJECT { COMMAND | help }' >&2
exit 255
"""
TEXT_RDMA_SCRIPT = """#!/bin/sh
echo 'link rxe0/1 state ACTIVE physical_state LINK_UP netdev eth1'
"""


def aside(path):
    return [["mv", path, path + ASIDE]], [["mv", path + ASIDE, path]]


def bind(source, target, read_only=False):
    setup = [["mount", "--bind", source, target]]
    if read_only:
        setup.append(["mount", "-o", "remount,bind,ro", target])
    return setup, [["umount", "--lazy", target]]


def unmount_configfs(remount=True):
    return [["umount", "/sys/kernel/config"]], [CONFIGFS_MOUNT] if remount else []


def block_rdma_cm():
    setup = [["sh", "-c", f"echo 'install rdma_cm /bin/false' > {CM_BLOCK}"],
             ["modprobe", "-r", "rpcrdma", "ib_iser", "rdma_ucm", "rdma_cm"]]
    # Reloading rdma_cm resets the defaults; the roce_mode persistence unit puts rxe0's back.
    return setup, [["rm", "-f", CM_BLOCK], ["modprobe", "-a", "rdma_cm", "rdma_ucm", "ib_iser", "rpcrdma"]] + REAPPLY_ROCE


def read_only_etc_for_networkmanager():
    """NetworkManager runs in its own mount namespace: restart it to make it see /etc read-only."""
    setup, undo = bind("/etc", "/etc", read_only=True)
    restart = ["systemctl", "restart", "NetworkManager"]
    return setup + [restart], undo + [restart]


def stop_networkmanager():
    return [["systemctl", "stop", "NetworkManager"]], [["systemctl", "start", "NetworkManager"]]


def full_limits_d():
    setup = [["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", "/etc/security/limits.d"],
             ["sh", "-c", "dd if=/dev/zero of=/etc/security/limits.d/zz-filler bs=1k count=64 2>/dev/null; true"]]
    return setup, [["umount", "/etc/security/limits.d"]]


def gone_device():
    """An rxe link whose netdev is deleted: the device disappears with it."""
    setup = [["ip", "link", "add", GONE, "type", "dummy"], ["rdma", "link", "add", "ftgone", "type", "rxe", "netdev", GONE],
             ["ip", "link", "delete", GONE]]
    return setup, []


NOTHING = ([], [])


def with_undo(fault, *more):
    setup, undo = fault
    return setup, undo + list(more)


def fails(text: str, touched: str = "") -> dict:
    """A clear one-line error containing text; changed=false; the host unchanged.

    touched: a directory whose mtime may change (a temporary file made and removed again).
    """
    return {"failed": True, "changed": False, "msg": text, "touched": touched}


def succeeds(contains=None, **paths) -> dict:
    """The module can still do its job: no error, changed=false, the host unchanged."""
    return {"failed": False, "changed": False, "values": paths, "contains": contains or {}}


def remedies(action: str, where: str) -> dict:
    """The module repairs the fault itself (documented): changed=true, the action listed, changes only under where."""
    return {"failed": False, "changed": True, "contains": {"actions": action}, "changes": where}


def partial(text: str, where: str) -> dict:
    """Fails after a first change: the message says what was already done; changes only in where."""
    return {"failed": True, "changed": True, "msg": text, "contains": {"msg": "already done: "}, "changes": where}


# (label, fault, module, args, task keywords, expectation)
CASES = [
    # tools missing or too old
    ("rdma absent: rdma_link present", aside("/usr/bin/rdma"), "rdma.fabric.rdma_link", LINK, {}, fails("rdma: command not found")),
    ("rdma absent: rdma_link absent", aside("/usr/bin/rdma"), "rdma.fabric.rdma_link",
     {"name": "ftrxe", "state": "absent"}, {}, fails("rdma: command not found")),
    ("rdma without -j: rdma_link present", bind(OLD_RDMA, "/usr/bin/rdma"), "rdma.fabric.rdma_link", LINK, {},
     fails("has no JSON output (-j)")),
    ("rdma prints text for -j: rdma_link present", bind(TEXT_RDMA, "/usr/bin/rdma"), "rdma.fabric.rdma_link", LINK, {},
     fails("not JSON")),
    ("nmcli absent: ipoib_connection present", aside("/usr/bin/nmcli"), "rdma.fabric.ipoib_connection", IPOIB, {},
     fails("nmcli: command not found; install NetworkManager")),
    ("nmcli absent: ipoib_connection absent", aside("/usr/bin/nmcli"), "rdma.fabric.ipoib_connection",
     {"name": "ft-ib", "state": "absent"}, {}, fails("nmcli: command not found; install NetworkManager")),
    ("dcb absent: dcb_qos", aside("/usr/sbin/dcb"), "rdma.fabric.dcb_qos", {"netdev": "eth1", "pfc": [3]}, {},
     fails("dcb: command not found")),
    # NetworkManager stopped
    ("NetworkManager stopped: ipoib_connection present", stop_networkmanager(), "rdma.fabric.ipoib_connection", IPOIB,
     {}, fails("NetworkManager")),
    ("NetworkManager stopped: ipoib_connection absent", stop_networkmanager(), "rdma.fabric.ipoib_connection",
     {"name": "ft-ib", "state": "absent"}, {}, fails("NetworkManager")),
    ("NetworkManager stopped: ipoib_connection down", stop_networkmanager(), "rdma.fabric.ipoib_connection",
     dict(IPOIB, state="down"), {}, fails("NetworkManager")),
    # configfs and rdma_cm
    ("configfs not mounted: roce_mode in check mode", unmount_configfs(), "rdma.fabric.roce_mode", V2_106,
     {"check_mode": True}, {"failed": False, "changed": True,
                            "contains": {"actions": "mounted configfs", "commands": "mount -t configfs configfs /sys/kernel/config"}}),
    ("configfs not mounted: roce_mode mounts it", unmount_configfs(remount=False), "rdma.fabric.roce_mode", V2_106, {},
     dict(remedies("mounted configfs at /sys/kernel/config", "/sys/kernel/config"),
          contains={"actions": "mounted configfs at /sys/kernel/config", "commands": "mount -t configfs configfs /sys/kernel/config"})),
    ("configfs not mounted: gid_facts", unmount_configfs(), "rdma.fabric.gid_facts", {}, {},
     succeeds(**{"ansible_facts.rdma_cm_status.readable": False})),
    ("rdma_cm missing and blocked: roce_mode", block_rdma_cm(), "rdma.fabric.roce_mode", V2_106, {},
     fails("modprobe rdma_cm failed")),
    ("rdma_cm missing: gid_facts", block_rdma_cm(), "rdma.fabric.gid_facts", {}, {},
     succeeds(**{"ansible_facts.rdma_cm_status.readable": False})),
    # a device or netdev removed between runs
    ("device removed: roce_mode", gone_device(), "rdma.fabric.roce_mode", {"device": "ftgone", "tos": 104}, {},
     fails("ftgone")),
    ("device removed: gid_facts for it", gone_device(), "rdma.fabric.gid_facts", {"device": ["ftgone"]}, {},
     succeeds(contains={"warnings": "no RDMA device named 'ftgone'"}, **{"ansible_facts.rdma_devices": {}})),
    ("device removed: tc_rule", gone_device(), "rdma.fabric.tc_rule", {"device": "ftgone", "traffic_class": 106}, {},
     fails("ftgone")),
    ("device removed: rdma_link absent", gone_device(), "rdma.fabric.rdma_link", {"name": "ftgone", "state": "absent"},
     {}, succeeds(changed=False)),
    ("netdev removed: rdma_link present", NOTHING, "rdma.fabric.rdma_link",
     {"name": "ftgone", "type": "rxe", "netdev": GONE, "persistent": False}, {}, fails(GONE)),
    ("netdev removed: dcb_qos", NOTHING, "rdma.fabric.dcb_qos", {"netdev": GONE, "pfc": [3]}, {}, fails(GONE)),
    # /etc read-only
    ("read-only /etc: memlock", bind("/etc", "/etc", read_only=True), "rdma.fabric.memlock",
     {"domain": "@ftgroup", "value": "unlimited"}, {}, fails("Read-only file system")),
    ("read-only /etc: memlock with systemd", bind("/etc", "/etc", read_only=True), "rdma.fabric.memlock",
     {"domain": "@ftgroup", "value": "unlimited", "systemd": True}, {}, fails("Read-only file system")),
    ("read-only /etc: rdma_link persistent", with_undo(bind("/etc", "/etc", read_only=True), ["rdma", "link", "delete", "ftrxe"]),
     "rdma.fabric.rdma_link", dict(LINK, persistent=True), {},
     partial("Read-only file system (already done: /usr/bin/rdma link add ftrxe", "rdma ")),
    ("read-only /etc: roce_mode persistent, new value", with_undo(bind("/etc", "/etc", read_only=True), *REAPPLY_ROCE),
     "rdma.fabric.roce_mode", dict(V2_106, tos=104), {},
     partial("cannot write /etc/rdma-fabric/roce/rxe0.conf: Read-only file system (already done: set tos to 104)", "/sys/kernel/config")),
    ("read-only /etc: roce_mode persistent, same value", bind("/etc", "/etc", read_only=True), "rdma.fabric.roce_mode",
     V2_106, {}, succeeds()),
    ("read-only /etc: ipoib_connection present", read_only_etc_for_networkmanager(), "rdma.fabric.ipoib_connection",
     IPOIB, {}, fails("creating connection 'ft-ib' failed")),
    ("read-only /etc: gid_facts", bind("/etc", "/etc", read_only=True), "rdma.fabric.gid_facts", {}, {},
     succeeds(**{"ansible_facts.rdma_cm_status.readable": True})),
    ("full file system: memlock", full_limits_d(), "rdma.fabric.memlock", {"domain": "@ftgroup", "value": "unlimited"},
     {}, fails("No space left on device", touched="/etc/security/limits.d")),
    ("memlock dest is a directory", NOTHING, "rdma.fabric.memlock",
     {"domain": "@ftgroup", "value": "unlimited", "dest": "/etc/security/limits.d"}, {}, fails("dest")),
    # not root
    ("non-root: rdma_link present", NOTHING, "rdma.fabric.rdma_link", LINK, NON_ROOT, fails("EPERM")),
    ("non-root: roce_mode", NOTHING, "rdma.fabric.roce_mode", V2_106, NON_ROOT, fails("Permission denied")),
    ("non-root: memlock", NOTHING, "rdma.fabric.memlock", {"domain": "@ftgroup", "value": "unlimited"}, NON_ROOT,
     fails("Permission denied")),
    ("non-root: ipoib_connection present", NOTHING, "rdma.fabric.ipoib_connection", IPOIB, NON_ROOT,
     fails("Insufficient privileges")),
    ("non-root: gid_facts", NOTHING, "rdma.fabric.gid_facts", {}, NON_ROOT,
     succeeds(contains={"ansible_facts.rdma_cm_status.reason": "Permission denied"},
              **{"ansible_facts.rdma_cm_status.readable": True})),
    ("non-root: tc_rule", NOTHING, "rdma.fabric.tc_rule", {"device": "rxe0", "traffic_class": 106}, NON_ROOT,
     fails("MLNX_OFED")),
    # the kernel refuses
    ("second rxe on a netdev (EEXIST)", NOTHING, "rdma.fabric.rdma_link",
     {"name": "ftrxe", "type": "rxe", "netdev": "eth1", "persistent": False}, {}, fails("rxe0")),
    ("check mode, rdma absent: rdma_link present", aside("/usr/bin/rdma"), "rdma.fabric.rdma_link", LINK,
     {"check_mode": True}, fails("rdma: command not found")),
    ("RoCE v1 on a RoCE v2-only port", NOTHING, "rdma.fabric.roce_mode", {"device": "rxe0", "mode": "v1"}, {},
     fails("GID types on the port")),
    ("dcb_qos on virtio (no DCB)", NOTHING, "rdma.fabric.dcb_qos", {"netdev": "eth1", "pfc": [3]}, {},
     fails("no DCB support")),
    ("tc_rule on rxe (mlx5 only)", NOTHING, "rdma.fabric.tc_rule", {"device": "rxe0", "traffic_class": 106}, {},
     fails("MLNX_OFED")),
]


def case_tasks(number: int, fault, name: str, args: dict, keywords: dict) -> list:
    setup, undo = fault
    key = f"f{number}"
    tasks = [command(f"{key}_setup{i}", argv) for i, argv in enumerate(setup)]
    tasks += [manifest(f"{key}_before"), module(f"{key}_run", name, args, **keywords), manifest(f"{key}_after")]
    tasks += [command(f"{key}_undo{i}", argv) for i, argv in enumerate(undo)]
    return tasks


def start_matrix(tmp_path):
    """Start the fault matrix on vm2 (labplay.start); test_check_mode starts it beside its own play on vm1."""
    steps = [
        {"name": "old_rdma", "register": "old_rdma",
         "ansible.builtin.copy": {"dest": OLD_RDMA, "content": OLD_RDMA_SCRIPT, "mode": "0755"}},
        {"name": "text_rdma", "register": "text_rdma",
         "ansible.builtin.copy": {"dest": TEXT_RDMA, "content": TEXT_RDMA_SCRIPT, "mode": "0755"}},
        command("user", ["useradd", "--create-home", "--shell", "/bin/sh", USER]),
        command("dummy", ["ip", "link", "add", DUMMY, "type", "dummy"]),
        # Start without RDMA-CM groups (after a reboot the roce_mode unit leaves rxe0's): a group pins
        # rdma_cm, which the rdma_cm cases unload, and the cases' undo steps remove the group they make.
        command("no_groups", ["sh", "-c", "for g in /sys/kernel/config/rdma_cm/*/; do rmdir \"$g\" || exit 1; done 2>/dev/null; true"]),
        manifest("m_start"),
    ]
    for number, (_label, fault, name, args, keywords, _expect) in enumerate(CASES):
        steps += case_tasks(number, fault, name, args, keywords)
    # Whatever happened above, put the host back (each of these is harmless when not needed).
    cleanup = [command(f"restore{i}", argv) for i, argv in enumerate([
        ["umount", "--lazy", "/usr/bin/rdma"], ["umount", "--lazy", "/etc"], ["umount", "/etc/security/limits.d"],
        ["mv", "/usr/bin/rdma" + ASIDE, "/usr/bin/rdma"], ["mv", "/usr/bin/nmcli" + ASIDE, "/usr/bin/nmcli"],
        ["mv", "/usr/sbin/dcb" + ASIDE, "/usr/sbin/dcb"], ["systemctl", "start", "NetworkManager"],
        CONFIGFS_MOUNT, ["rm", "-f", CM_BLOCK, OLD_RDMA, TEXT_RDMA],
        ["modprobe", "-a", "rdma_cm", "rdma_ucm", "ib_iser", "rpcrdma"], ["rdma", "link", "delete", "ftrxe"], ["ip", "link", "delete", DUMMY],
        ["nmcli", "connection", "delete", "ft-ib"], ["pkill", "-u", USER], ["timeout", "10", "pidwait", "-u", USER],
        ["userdel", "--remove", USER]])] + [manifest("m_end")]
    return start(HOST, steps, cleanup, tmp_path)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    pending = STARTED.pop("faults", None) or start_matrix(tmp_path_factory.mktemp("faults"))
    found = pending.results()
    assert found["user"]["rc"] == 0 and found["dummy"]["rc"] == 0, (found["user"], found["dummy"])
    return found


def value_at(result: dict, path: str):
    for part in path.split("."):
        result = result[part]
    return result


def test_the_matrix_has_at_least_30_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize("number", range(len(CASES)), ids=[case[0] for case in CASES])
def test_fault(results, number):
    _label, _fault, _name, _args, _keywords, expect = CASES[number]
    key = f"f{number}"
    for step in [k for k in results if k.startswith(f"{key}_setup")]:
        assert results[step]["rc"] == 0, f"could not inject the fault: {results[step]}"
    result = results[f"{key}_run"]
    assert result is not None, "the case never ran"
    text = str(result.get("msg", ""))
    # ansible-core 2.19 adds exception='(traceback unavailable)' to every failure
    assert "module_stderr" not in result and "Traceback" not in str(result.get("exception", "")) + text, result
    assert (bool(result.get("failed")), bool(result.get("changed"))) == (expect["failed"], expect["changed"]), result
    if expect.get("msg"):
        assert expect["msg"].lower() in text.lower() and "\n" not in text.strip(), text
    for path, value in expect.get("values", {}).items():
        assert value_at(result, path) == value, result
    for path, part in expect.get("contains", {}).items():
        assert part in str(value_at(result, path)), result
    allowed = [f"{expect['touched']}: mtime_ns"] if expect.get("touched") else []
    changes = [line for line in differences(manifest_of(results[f"{key}_before"]), manifest_of(results[f"{key}_after"]))
               if line not in allowed and not (expect.get("changes") and line.startswith(expect["changes"]))]
    assert changes == [], changes
    for step in [k for k in results if k.startswith(f"{key}_undo")]:
        assert results[step]["rc"] == 0, f"could not undo the fault: {results[step]}"


def test_the_host_is_as_before(results):
    first, last = manifest_of(results["m_start"]), manifest_of(results["m_end"])
    folders = {path for path, item in first["files"].items() if item["mode"].startswith("0o40")}
    left = [line for line in differences(first, last) if line not in {f"{path}: mtime_ns" for path in folders}]
    assert left == [], left
