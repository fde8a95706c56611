# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_system's main() against a kernel behind netlink (support/rdma_system_kernel.py) and `modprobe -c`."""

from __future__ import annotations

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_system
from ansible_collections.rdma.fabric.plugins.modules import rdma_system
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness
from ansible_collections.rdma.fabric.tests.unit.support.rdma_system_kernel import FakeKernel

INITIAL = "net:[4026531840]"


@pytest.fixture
def host(tmp_path, host_paths, harness, monkeypatch):
    """A kernel in shared mode with privileged-qkey, /proc with one process, modprobe -c reading the file."""
    kernel = FakeKernel()
    monkeypatch.setattr(rdma_system, "OPENER", kernel.opener)
    namespaces = {"1": INITIAL}
    monkeypatch.setattr(rdma_system, "namespace_ids", lambda: (INITIAL, list(namespaces.values())))
    kernel.extra_config = ""
    kernel.modprobe_calls = 0

    def run_command(args, **kwargs):
        assert args[1:] == ["-c"] and os.path.basename(args[0]) == "modprobe", args
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        kernel.modprobe_calls += 1
        try:
            with open(_rdma_system.MODPROBE_FILE, encoding="utf-8") as handle:
                ours = handle.read()
        except FileNotFoundError:
            ours = ""
        # modprobe reads /etc/modprobe.d in lexical order; the test's other file sorts after ours
        return 0, ours + kernel.extra_config, ""

    harness.run_command = run_command
    harness.bin_path = lambda name: f"/usr/sbin/{name}"
    kernel.namespaces_seen = namespaces
    kernel.file = _rdma_system.MODPROBE_FILE
    return kernel


def run(args, check=False):
    return ModuleHarness.run(rdma_system, args, check_mode=check, diff=True)


def test_reading_changes_nothing_and_sets_the_facts(host):
    exited, result = run({})
    assert exited and not result["changed"] and result["commands"] == []
    assert result["system"] == {"netns": "shared", "copy-on-fork": True, "privileged-qkey": False, "monitor": None}
    assert result["ansible_facts"]["rdma_system"]["boot_netns_mode"] == "shared"
    assert not os.path.exists(host.file)


def test_exclusive_now_and_at_boot_then_nothing_to_do(host):
    exited, result = run({"netns_mode": "exclusive"})
    assert exited and result["changed"], result
    assert host.netns is False and host.sets == [("netns", False)]
    assert result["commands"] == ["rdma system set netns exclusive"]
    assert result["system"]["netns"] == "exclusive" and result["boot_netns_mode"] == "exclusive"
    assert not result["reboot_required"] and result["namespaces"] == 0
    with open(host.file, encoding="utf-8") as handle:
        assert "options ib_core netns_mode=0\n" in handle.read()
    assert result["diff"][0]["before"]["netns"] == "shared" and result["diff"][0]["after"]["netns"] == "exclusive"
    assert "netns_mode=0" in result["diff"][1]["after"] and result["diff"][1]["before"] == ""
    exited, again = run({"netns_mode": "exclusive"})
    assert exited and not again["changed"] and again["commands"] == [] and host.sets == [("netns", False)]


def test_check_mode_predicts_and_writes_nothing(host):
    exited, result = run({"netns_mode": "exclusive"}, check=True)
    assert exited and result["changed"]
    assert host.netns is True and host.sets == [] and not os.path.exists(host.file)
    assert result["commands"] == ["rdma system set netns exclusive"]
    assert result["system"]["netns"] == "exclusive" and result["boot_netns_mode"] == "exclusive"


def test_busy_fails_in_one_line_with_the_count_and_changes_nothing(host):
    host.namespaces = 2
    host.namespaces_seen.update({"100": "net:[4026532201]", "200": "net:[4026532300]"})
    for check in (False, True):
        exited, result = run({"netns_mode": "exclusive"}, check=check)
        assert not exited and not result["changed"], result
        assert result["msg"].startswith("netns_mode: ") and "2 other network namespaces exist" in result["msg"]
        assert "\n" not in result["msg"] and result["commands"] == []
    assert host.netns is True and not os.path.exists(host.file)


def test_busy_with_when_busy_reboot_persists_and_asks_for_a_reboot(host):
    host.namespaces = 1
    host.namespaces_seen["100"] = "net:[4026532201]"
    exited, result = run({"netns_mode": "exclusive", "when_busy": "reboot"})
    assert exited and result["changed"] and result["reboot_required"]
    assert host.netns is True and result["system"]["netns"] == "shared" and result["boot_netns_mode"] == "exclusive"
    assert result["commands"] == []
    exited, again = run({"netns_mode": "exclusive", "when_busy": "reboot"})
    assert exited and not again["changed"] and again["reboot_required"]
    # the namespace is gone: the switch happens now
    host.namespaces = 0
    del host.namespaces_seen["100"]
    exited, now = run({"netns_mode": "exclusive", "when_busy": "reboot"})
    assert exited and now["changed"] and not now["reboot_required"] and host.netns is False


def test_persistent_false_removes_the_file_and_keeps_the_mode(host):
    run({"netns_mode": "exclusive"})
    exited, result = run({"netns_mode": "exclusive", "persistent": False})
    assert exited and result["changed"] and not os.path.exists(host.file)
    assert host.netns is False and result["boot_netns_mode"] == "shared"


def test_another_file_that_overrides_ours_fails_after_naming_it(host):
    host.extra_config = "options ib_core netns_mode=1\n"
    exited, result = run({"netns_mode": "exclusive"})
    assert not exited and "modprobe -c gives ib_core shared" in result["msg"] and "\n" not in result["msg"]


def test_privileged_qkey_on_a_kernel_that_has_it_and_one_that_does_not(host):
    exited, result = run({"privileged_qkey": True})
    assert exited and result["changed"] and host.qkey is True
    assert result["commands"] == ["rdma system set privileged-qkey on"]
    host.qkey = None
    exited, result = run({"privileged_qkey": True})
    assert not exited and result["msg"].startswith("privileged_qkey: this kernel (")
    assert host.sets == [("privileged-qkey", True)]


def test_an_unprivileged_caller_is_told_what_is_needed(host):
    host.privileged = False
    exited, result = run({"netns_mode": "exclusive"})
    assert not exited and not result["changed"]
    assert result["msg"].startswith("netns_mode: the kernel refused it: EPERM") and "CAP_NET_ADMIN" in result["msg"]
    assert not os.path.exists(host.file)


def test_no_rdma_netlink_fails_saying_to_load_ib_core(host, monkeypatch):
    def no_netlink():
        raise OSError(93, "Protocol not supported")

    monkeypatch.setattr(rdma_system, "OPENER", no_netlink)
    exited, result = run({"netns_mode": "exclusive"})
    assert not exited and "load ib_core" in result["msg"] and result["commands"] == []


def test_when_busy_reboot_needs_persistence(host):
    exited, result = run({"netns_mode": "exclusive", "when_busy": "reboot", "persistent": False})
    assert not exited and result["msg"].startswith("when_busy: ") and host.sets == []
