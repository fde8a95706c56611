# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import os
import pathlib
import re
import shlex
import shutil
import stat

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _kit, _nldev, _persist
from ansible_collections.rdma.fabric.plugins.modules import rdma_link
from ansible_collections.rdma.fabric.tests.unit.support import rdma_netlink_recorded as nlrec
from ansible_collections.rdma.fabric.tests.unit.support import rdma_sysfs_trees as trees
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness
from ansible_collections.rdma.fabric.tests.unit.support.rdma_system_kernel import FakeKernel as FakeNetlink

RDMA = "/usr/bin/rdma"
UDEVADM = "/usr/bin/udevadm"
SYSTEMCTL = "/usr/bin/systemctl"
BINARIES = {"rdma": RDMA, "udevadm": UDEVADM, "systemctl": SYSTEMCTL}
RELEASE = "6.1.0-56-amd64"


class FakeKernel:
    """rdma(8) and the kernel behind it, as the lab VM answers (lab-facts.md), over a sysfs tree."""

    def __init__(self, root):
        self.root = root
        self.links = []
        self.calls = []
        self.siw_available = True
        self.show_reply = None
        self.add_reply = None
        self.delete_reply = None
        self.udevadm_reply = (0, "", "")
        self.systemctl_reply = (0, "", "")

    # -- state helpers --
    def add(self, name, link_type, netdev):
        if link_type == "rxe":
            trees.add_rxe(self.root, name=name, netdev=netdev, slots=4)
        else:
            trees.add_siw(self.root, name=name)
        index = int(open(os.path.join(self.root, "class/net", netdev, "ifindex"), encoding="utf-8").read())
        self.links.append({"ifindex": len(self.links), "ifname": name, "port": 1, "state": "ACTIVE",
                           "physical_state": "LINK_UP", "netdev": netdev, "netdev_index": index})

    def delete(self, name):
        self.links = [entry for entry in self.links if entry["ifname"] != name]
        os.unlink(os.path.join(self.root, "class/infiniband", name))
        shutil.rmtree(os.path.join(self.root, "devices/virtual/infiniband", name))

    def type_of(self, name):
        return "rxe" if os.path.exists(os.path.join(self.root, "class/infiniband", name, "parent")) else "siw"

    # -- AnsibleModule.run_command --
    def run_command(self, args, **kwargs):
        assert isinstance(args, list), "argv lists only"
        assert kwargs.get("environ_update") == _kit.C_LOCALE
        assert kwargs.get("check_rc") is False
        self.calls.append(list(args))
        if args[0] == UDEVADM:
            assert args[1:] == ["control", "--reload"]
            return self.udevadm_reply
        if args[0] == SYSTEMCTL:
            assert args[1:] == ["daemon-reload"]
            return self.systemctl_reply
        assert args[0] == RDMA
        if args[1:] == ["-j", "link", "show"]:
            return self.show_reply or (0, json.dumps(self.links) + "\n", "")
        if args[1:3] == ["link", "add"]:
            if self.add_reply:
                return self.add_reply
            _name, link_type, netdev = args[3], args[5], args[7]
            if link_type == "siw" and not self.siw_available:
                return 255, "", "error: Invalid argument\n"
            if not os.path.exists(os.path.join(self.root, "class/net", netdev)):
                return 255, "", "error: No such device\n"
            for entry in self.links:
                if entry["ifname"] == _name or (entry["netdev"] == netdev and self.type_of(entry["ifname"]) == link_type):
                    return 255, "", "error: File exists\n"
            self.add(_name, link_type, netdev)
            return 0, "", ""
        if args[1:3] == ["link", "delete"]:
            if self.delete_reply:
                return self.delete_reply
            if not any(entry["ifname"] == args[3] for entry in self.links):
                return 1, "", f"Wrong device name - {args[3]}\n"
            self.delete(args[3])
            return 0, "", ""
        raise AssertionError(f"unexpected command {args}")

    def writes(self):
        return [call for call in self.calls if call[1:3] in (["link", "add"], ["link", "delete"])]

    def reloads(self):
        return [call for call in self.calls if call[0] == UDEVADM]

    def daemon_reloads(self):
        return [call for call in self.calls if call[0] == SYSTEMCTL]


@pytest.fixture
def env(host_paths, harness, monkeypatch):
    root = pathlib.Path(host_paths["SYSFS_ROOT"])
    root.mkdir()
    for name, mac, index in (("lo", "00:00:00:00:00:00", 1), ("eth0", "52:54:00:00:00:01", 2),
                             ("eth1", trees.ETH1_MAC, 3), ("dummy0", "f6:0a:65:dc:65:bb", 4)):
        trees.add_netdev(root, name, mac, index)
    rules = pathlib.Path(host_paths["UDEV_RULES_DIR"])
    rules.mkdir(parents=True)
    systemd = pathlib.Path(host_paths["SYSTEMD_DIR"])
    systemd.mkdir(parents=True)
    links = pathlib.Path(host_paths["LINKS_DIR"])  # created by the module
    modules = pathlib.Path(host_paths["MODULES_ROOT"]) / RELEASE
    modules.mkdir(parents=True)
    (modules / "modules.alias").write_text("alias rdma-link-rxe rdma_rxe\nalias rdma-link-siw siw\n")
    kernel = FakeKernel(str(root))
    monkeypatch.setattr(rdma_link.platform, "release", lambda: RELEASE)
    harness.run_command = kernel.run_command
    harness.bin_path = BINARIES.get
    kernel.warnings = harness.warnings
    kernel.modules_dir = modules
    kernel.rules = rules
    kernel.systemd = systemd
    kernel.links_dir = links
    # rxe0 on eth1 as rendered with the paths above
    kernel.rule = _persist.render_rule("rxe0", "rxe", "eth1")
    kernel.config = _persist.render_config("rxe0", "rxe", "eth1")
    kernel.unit = _persist.render_unit(RDMA)
    return kernel


def run(args, check_mode=False):
    return ModuleHarness.run(rdma_link, args, check_mode=check_mode)


def rule_file(env, name="rxe0"):
    return env.rules / f"90-rdma-fabric-{name}.rules"


def config_file(env, name="rxe0"):
    return env.links_dir / f"{name}.conf"


def unit_file(env):
    return env.systemd / "rdma-fabric-link@.service"


def persistence(env, name="rxe0", present=True):
    return {"rule": str(rule_file(env, name)), "config": str(config_file(env, name)), "unit": str(unit_file(env)),
            "present": present}


def files_diff(env, rule, config, unit, name="rxe0"):
    return {"rule": {"path": str(rule_file(env, name)), "content": rule},
            "config": {"path": str(config_file(env, name)), "content": config},
            "unit": {"path": str(unit_file(env)), "content": unit}}


RXE0 = {"name": "rxe0", "type": "rxe", "netdev": "eth1"}
# what rdma_link wrote before the unit: udevd ran rdma itself, inside its IPAddressDeny=any sandbox
OLD_RUN_RULE = (
    'ACTION=="add", SUBSYSTEM=="net", NAME=="eth1", RUN+="/usr/bin/rdma link add rxe0 type rxe netdev eth1"\n'
    'ACTION=="add", SUBSYSTEM=="net", NAME=="", KERNEL=="eth1", RUN+="/usr/bin/rdma link add rxe0 type rxe netdev eth1"\n'
)


# --- changed, unchanged, check mode, diff --------------------------------------------

def test_create_then_unchanged(env):
    ok, result = run(RXE0)
    assert ok and result["changed"] is True
    assert env.writes() == [[RDMA, "link", "add", "rxe0", "type", "rxe", "netdev", "eth1"]]
    assert result["commands"] == ["/usr/bin/rdma link add rxe0 type rxe netdev eth1"]
    assert result["link"] == {"name": "rxe0", "type": "rxe", "netdev": "eth1", "port": 1, "state": "ACTIVE",
                              "physical_state": "LINK_UP", "netdev_index": 3}
    assert result["persistence"] == persistence(env)
    assert rule_file(env).read_text() == env.rule
    assert config_file(env).read_text() == env.config
    assert unit_file(env).read_text() == env.unit
    for path in (rule_file(env), config_file(env), unit_file(env)):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert stat.S_IMODE(env.links_dir.stat().st_mode) == 0o755
    # no temporary file left
    assert [p.name for p in env.rules.iterdir()] == ["90-rdma-fabric-rxe0.rules"]
    assert [p.name for p in env.links_dir.iterdir()] == ["rxe0.conf"]
    assert [p.name for p in env.systemd.iterdir()] == ["rdma-fabric-link@.service"]
    assert result["diff"]["before"] == {"link": {}, "persistence": files_diff(env, None, None, None)}
    assert result["diff"]["after"] == {"link": RXE0, "persistence": files_diff(env, env.rule, env.config, env.unit)}
    assert env.reloads() == [[UDEVADM, "control", "--reload"]]
    assert env.daemon_reloads() == [[SYSTEMCTL, "daemon-reload"]]
    # the link, then systemd learns the unit, then udevd the rule that pulls it in
    assert env.calls.index(env.writes()[0]) < env.calls.index(env.daemon_reloads()[0]) < env.calls.index(env.reloads()[0])
    assert env.warnings == []

    env.calls.clear()
    ok, again = run(RXE0)
    assert ok and again["changed"] is False
    assert env.writes() == [] and env.reloads() == [] and env.daemon_reloads() == []
    assert again["commands"] == []
    assert again["diff"]["before"] == again["diff"]["after"]
    assert again["link"]["state"] == "ACTIVE"


def test_check_mode_create_writes_nothing(env):
    ok, result = run(RXE0, check_mode=True)
    assert ok and result["changed"] is True
    assert env.writes() == [] and env.reloads() == [] and env.daemon_reloads() == []
    assert env.links == []
    assert not rule_file(env).exists() and not unit_file(env).exists() and not env.links_dir.exists()
    assert result["commands"] == ["/usr/bin/rdma link add rxe0 type rxe netdev eth1"]
    assert result["link"] == {"name": "rxe0", "type": "rxe", "netdev": "eth1", "port": None, "state": None,
                              "physical_state": None, "netdev_index": None}
    assert result["diff"]["after"]["persistence"] == files_diff(env, env.rule, env.config, env.unit)
    assert result["persistence"] == persistence(env)


def test_check_mode_delete_leaves_link_and_rule(env):
    run(RXE0)
    env.calls.clear()
    ok, result = run({"name": "rxe0", "state": "absent"}, check_mode=True)
    assert ok and result["changed"] is True
    assert result["commands"] == ["/usr/bin/rdma link delete rxe0"]
    assert env.writes() == []
    assert [entry["ifname"] for entry in env.links] == ["rxe0"]
    assert rule_file(env).read_text() == env.rule and config_file(env).read_text() == env.config
    assert result["diff"]["before"] == {"link": RXE0, "persistence": files_diff(env, env.rule, env.config, env.unit)}
    assert result["diff"]["after"] == {"link": {}, "persistence": files_diff(env, None, None, env.unit)}
    assert result["link"] == {} and result["persistence"] == persistence(env, present=False)


def test_check_mode_unchanged_reports_the_link(env):
    run(RXE0)
    ok, result = run(RXE0, check_mode=True)
    assert ok and result["changed"] is False
    assert result["link"]["state"] == "ACTIVE" and result["link"]["type"] == "rxe"


def test_absent_removes_link_and_rule_then_unchanged(env):
    run(RXE0)
    env.calls.clear()
    ok, result = run({"name": "rxe0", "state": "absent"})
    assert ok and result["changed"] is True
    assert env.writes() == [[RDMA, "link", "delete", "rxe0"]]
    assert env.reloads() == [[UDEVADM, "control", "--reload"]]
    assert env.daemon_reloads() == []
    assert env.links == [] and not rule_file(env).exists() and not config_file(env).exists()
    assert unit_file(env).read_text() == env.unit  # shared by all links: kept
    assert result["link"] == {} and result["persistence"] == persistence(env, present=False)
    assert result["diff"]["after"]["persistence"] == files_diff(env, None, None, env.unit)
    ok, again = run({"name": "rxe0", "state": "absent"})
    assert ok and again["changed"] is False


@pytest.mark.parametrize("leftover", ["rule", "config"])
def test_absent_removes_a_leftover_file(env, leftover):
    path = rule_file(env) if leftover == "rule" else config_file(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(env.rule if leftover == "rule" else env.config)
    ok, result = run({"name": "rxe0", "state": "absent"})
    assert ok and result["changed"] is True and result["commands"] == []
    assert not path.exists()
    assert env.reloads() == ([[UDEVADM, "control", "--reload"]] if leftover == "rule" else [])


@pytest.mark.parametrize("change, expected", [
    ({"netdev": "lo"}, [[RDMA, "link", "delete", "rxe0"], [RDMA, "link", "add", "rxe0", "type", "rxe", "netdev", "lo"]]),
    ({"type": "siw"}, [[RDMA, "link", "delete", "rxe0"], [RDMA, "link", "add", "rxe0", "type", "siw", "netdev", "eth1"]]),
])
def test_replace_on_netdev_or_type_change(env, change, expected):
    run(RXE0)
    env.calls.clear()
    wanted = dict(RXE0, **change)
    ok, result = run(wanted)
    assert ok and result["changed"] is True
    assert env.writes() == expected
    assert result["link"]["netdev"] == wanted["netdev"] and result["link"]["type"] == wanted["type"]
    assert rule_file(env).read_text() == _persist.render_rule("rxe0", wanted["type"], wanted["netdev"])
    assert config_file(env).read_text() == _persist.render_config("rxe0", wanted["type"], wanted["netdev"])
    assert env.daemon_reloads() == []  # the unit did not change
    assert result["diff"]["before"]["link"] == RXE0 and result["diff"]["after"]["link"] == wanted
    ok, again = run(wanted)
    assert ok and again["changed"] is False


def test_persistent_false_keeps_link_and_removes_rule(env):
    run(RXE0)
    env.calls.clear()
    ok, result = run(dict(RXE0, persistent=False))
    assert ok and result["changed"] is True and env.writes() == []
    assert env.reloads() == [[UDEVADM, "control", "--reload"]]
    assert not rule_file(env).exists() and not config_file(env).exists() and result["persistence"]["present"] is False
    assert unit_file(env).exists()
    assert [entry["ifname"] for entry in env.links] == ["rxe0"]
    ok, again = run(dict(RXE0, persistent=False))
    assert ok and again["changed"] is False


def test_rule_rewritten_when_it_differs(env):
    env.add("rxe0", "rxe", "eth1")
    rule_file(env).write_text("# edited by hand\n")
    os.chmod(rule_file(env), 0o600)
    ok, result = run(RXE0)
    assert ok and result["changed"] is True and env.writes() == []
    assert rule_file(env).read_text() == env.rule
    assert stat.S_IMODE(rule_file(env).stat().st_mode) == 0o644
    assert result["diff"]["before"]["persistence"]["rule"]["content"] == "# edited by hand\n"
    assert env.reloads() == [[UDEVADM, "control", "--reload"]]


@pytest.mark.parametrize("kind", ["config", "unit"])
def test_config_or_unit_rewritten_when_it_differs(env, kind):
    env.add("rxe0", "rxe", "eth1")
    run(RXE0)
    env.calls.clear()
    path = config_file(env) if kind == "config" else unit_file(env)
    path.write_text("RDMA_LINK_TYPE=siw\n")
    ok, result = run(RXE0)
    assert ok and result["changed"] is True and env.writes() == []
    assert path.read_text() == (env.config if kind == "config" else env.unit)
    assert result["diff"]["before"]["persistence"][kind]["content"] == "RDMA_LINK_TYPE=siw\n"
    assert env.daemon_reloads() == ([[SYSTEMCTL, "daemon-reload"]] if kind == "unit" else [])
    assert env.reloads() == []  # the rule did not change


def test_old_run_rule_is_replaced_by_the_unit(env):
    # a host persisted by an earlier version: the link is there, the rule runs rdma from udevd's sandbox
    env.add("rxe0", "rxe", "eth1")
    rule_file(env).write_text(OLD_RUN_RULE)
    ok, result = run(RXE0)
    assert ok and result["changed"] is True and result["commands"] == [] and env.writes() == []
    assert rule_file(env).read_text() == env.rule and "RUN+=\"" not in env.rule
    assert config_file(env).read_text() == env.config and unit_file(env).read_text() == env.unit
    assert result["diff"]["before"]["persistence"] == files_diff(env, OLD_RUN_RULE, None, None)
    assert env.daemon_reloads() == [[SYSTEMCTL, "daemon-reload"]] and env.reloads() == [[UDEVADM, "control", "--reload"]]


def test_unit_is_written_once_for_all_links(env):
    run(RXE0)
    env.calls.clear()
    ok, result = run({"name": "siw0", "type": "siw", "netdev": "eth1"})
    assert ok and result["changed"] is True
    assert env.daemon_reloads() == [] and env.reloads() == [[UDEVADM, "control", "--reload"]]
    assert result["diff"]["before"]["persistence"]["unit"] == result["diff"]["after"]["persistence"]["unit"]
    assert sorted(p.name for p in env.links_dir.iterdir()) == ["rxe0.conf", "siw0.conf"]
    assert config_file(env, "siw0").read_text() == _persist.render_config("siw0", "siw", "eth1")
    assert rule_file(env, "siw0").read_text() == _persist.render_rule("siw0", "siw", "eth1")
    ok, _gone = run({"name": "siw0", "state": "absent"})
    assert ok and unit_file(env).read_text() == env.unit and config_file(env).read_text() == env.config


def test_siw_on_eth1_next_to_rxe(env):
    env.add("rxe0", "rxe", "eth1")
    ok, result = run({"name": "siw0", "type": "siw", "netdev": "eth1"})
    assert ok and result["changed"] is True
    assert result["link"]["type"] == "siw"
    assert sorted(entry["ifname"] for entry in env.links) == ["rxe0", "siw0"]


# --- errors: validated before anything runs ------------------------------------------------

@pytest.mark.parametrize("args, message", [
    ({"name": "../x", "type": "rxe", "netdev": "eth1"}, r"^name: invalid RDMA device name '\.\./x'; allowed: "),
    ({"name": "-x", "type": "rxe", "netdev": "eth1"}, r"^name: invalid RDMA device name '-x'"),
    ({"name": "rxe 0", "type": "rxe", "netdev": "eth1"}, r"^name: invalid RDMA device name 'rxe 0'"),
    ({"name": "rxe0\n", "type": "rxe", "netdev": "eth1"}, r"^name: invalid RDMA device name 'rxe0\\n'"),
    ({"name": "rxe%d", "type": "rxe", "netdev": "eth1"}, r"^name: invalid RDMA device name 'rxe%d'"),
    ({"name": "rxe0", "type": "rxe", "netdev": "-eth1"}, r"^netdev: invalid interface name '-eth1'"),
    ({"name": "rxe0", "type": "rxe", "netdev": "../eth1"}, r"^netdev: invalid interface name '\.\./eth1'"),
    ({"name": "rxe0", "type": "rxe", "netdev": "eth 1"}, r"^netdev: invalid interface name 'eth 1'"),
    ({"name": "rxe0", "type": "rxe", "netdev": "a-very-long-netdev"}, r"^netdev: invalid interface name"),
    ({"name": "rxe0", "type": "rxe", "netdev": "eth*"}, r"^netdev: 'eth\*' cannot be written into a udev rule"),
    ({"name": "rxe+0", "type": "rxe", "netdev": "eth1"}, r"^name: 'rxe\+0' cannot be written into a udev rule and a systemd unit name"),
    ({"name": "rxe0", "type": "roce", "netdev": "eth1"}, r"value of type must be one of: rxe, siw, got: roce"),
    ({"name": "rxe0", "netdev": "eth1"}, r"state is present but all of the following are missing: type"),
    ({"name": "rxe0", "type": "rxe"}, r"state is present but all of the following are missing: netdev"),
    ({"name": "rxe0", "state": "gone"}, r"value of state must be one of: present, absent"),
])
def test_bad_input_fails_before_any_command(env, args, message):
    ok, result = run(args)
    assert not ok
    assert result.get("changed", False) is False
    assert "\n" not in result["msg"].rstrip("\n")
    assert re.search(message, result["msg"]), result["msg"]
    assert env.calls == []
    assert list(env.rules.iterdir()) == [] and list(env.systemd.iterdir()) == [] and not env.links_dir.exists()


def test_unsafe_netdev_is_fine_without_persistence(env):
    trees.add_netdev(env.root, "eth*", "52:54:00:77:00:09", 9)
    ok, result = run({"name": "rxe0", "type": "rxe", "netdev": "eth*", "persistent": False})
    assert ok and result["changed"] is True and result["link"]["netdev"] == "eth*"


@pytest.mark.parametrize("binaries, reply, warning", [
    ({"rdma": RDMA, "systemctl": SYSTEMCTL}, None, "persistent: udevadm not found; udevd reads {rule}"),
    (BINARIES, (1, "", "Failed to send reload request: No such file or directory\n"),
     "persistent: 'udevadm control --reload' failed (Failed to send reload request: No such file or directory); "
     "udevd reads {rule}"),
])
def test_udev_reload_trouble_is_a_warning(env, harness, binaries, reply, warning):
    harness.bin_path = binaries.get
    env.udevadm_reply = reply
    ok, result = run(RXE0)
    assert ok and result["changed"] is True
    assert rule_file(env).read_text() == env.rule
    assert env.warnings == [warning.format(rule=rule_file(env))]


@pytest.mark.parametrize("binaries, reply, warning", [
    ({"rdma": RDMA, "udevadm": UDEVADM}, None,
     "persistent: systemctl not found; systemd loads the unit at its next daemon-reload or boot: {unit}"),
    (BINARIES, (1, "", "System has not been booted with systemd as init system (PID 1). Can't operate.\n"),
     "persistent: 'systemctl daemon-reload' failed (System has not been booted with systemd as init system (PID 1). "
     "Can't operate.); systemd loads the unit at its next daemon-reload or boot: {unit}"),
])
def test_daemon_reload_trouble_is_a_warning(env, harness, binaries, reply, warning):
    harness.bin_path = binaries.get
    env.systemctl_reply = reply
    ok, result = run(RXE0)
    assert ok and result["changed"] is True
    assert unit_file(env).read_text() == env.unit and rule_file(env).read_text() == env.rule
    assert env.warnings == [warning.format(unit=unit_file(env))]


def test_rdma_missing(env, harness):
    harness.bin_path = lambda name: None
    ok, result = run(RXE0)
    assert not ok and result["changed"] is False
    assert result["msg"] == "rdma: command not found; install iproute2 with 'rdma link' support (5.x or later)"


@pytest.mark.parametrize("missing, what", [("rules", "udev"), ("systemd", "systemd")])
def test_rules_or_systemd_dir_missing(env, missing, what):
    directory = env.rules if missing == "rules" else env.systemd
    directory.rmdir()
    ok, result = run(RXE0)
    assert not ok and result["changed"] is False
    assert result["msg"] == (f"persistent: {directory} does not exist (is {what} installed?); "
                             "use persistent=false to manage the link without persistence")
    assert env.calls == []


def test_netdev_missing_is_caught_before_adding(env):
    ok, result = run(dict(RXE0, netdev="eth9"))
    assert not ok and result["changed"] is False
    assert result["msg"] == "netdev: eth9 does not exist (no /sys/class/net/eth9)"
    assert env.writes() == []


def test_netdev_missing_is_caught_in_check_mode_too(env):
    ok, result = run(dict(RXE0, netdev="eth9"), check_mode=True)
    assert not ok and "netdev: eth9 does not exist" in result["msg"]


def test_replace_to_missing_netdev_keeps_the_old_link(env):
    run(RXE0)
    env.calls.clear()
    ok, result = run(dict(RXE0, netdev="eth9"))
    assert not ok and env.writes() == []
    assert [entry["netdev"] for entry in env.links] == ["eth1"]


def test_conflicting_link_on_netdev_is_named(env):
    env.add("rxe0", "rxe", "eth1")
    ok, result = run({"name": "rxe1", "type": "rxe", "netdev": "eth1"})
    assert not ok and result["changed"] is False
    assert result["msg"] == "netdev: eth1 already carries rxe device rxe0; delete it or use name=rxe0"
    assert env.writes() == []


def test_eexist_from_the_kernel_names_the_owner(env, harness):
    # a link that appears between our read and our add (another run, udev): the kernel answers EEXIST
    original = env.run_command

    def racing(args, **kwargs):
        if args[1:3] == ["link", "add"] and not any(e["ifname"] == "rxe9" for e in env.links):
            env.add("rxe9", "rxe", "eth1")
        return original(args, **kwargs)

    harness.run_command = racing
    ok, result = run(RXE0)
    assert not ok and result["changed"] is False
    assert result["msg"] == "netdev: eth1 already carries rxe device rxe9; delete it or use name=rxe9"
    assert not rule_file(env).exists()


def test_driver_missing_is_caught_before_adding(env):
    (env.modules_dir / "modules.alias").write_text("alias rdma-link-rxe rdma_rxe\n")
    ok, result = run({"name": "siw0", "type": "siw", "netdev": "eth1"})
    assert not ok and result["changed"] is False
    assert result["msg"] == (f"type: the running kernel ({RELEASE}) has no siw driver "
                             "(module siw is neither loaded, built in nor installed)")
    assert env.writes() == []


def test_driver_missing_answered_by_the_kernel(env):
    (env.modules_dir / "modules.alias").unlink()  # nothing to go by: the module tries
    env.siw_available = False
    ok, result = run({"name": "siw0", "type": "siw", "netdev": "eth1"})
    assert not ok and result["changed"] is False
    assert result["msg"].startswith("type: the kernel has no siw driver (module siw)")


def test_enodev_from_the_kernel(env):
    env.add_reply = (255, "", "error: No such device\n")
    ok, result = run(RXE0)
    assert not ok
    assert result["msg"] == "netdev: eth1 does not exist (ENODEV from rdma link add rxe0 type rxe netdev eth1)"


@pytest.mark.parametrize("reply, message", [
    ((255, "Unknown parameter 'add'.\n", ""), "this iproute2's rdma tool has no 'rdma link add/delete' (too old)"),
    ((255, "", "error: Operation not permitted\n"), "netdev: rxe cannot attach to eth1 (EPERM"),
])
def test_add_errors_are_one_line_causes(env, reply, message):
    env.add_reply = reply
    ok, result = run(RXE0)
    assert not ok and message in result["msg"] and "\n" not in result["msg"]
    assert not rule_file(env).exists()


def test_old_iproute2_without_rdma_link(env):
    env.show_reply = (255, "", "Unknown object 'link'.\n")
    ok, result = run(RXE0)
    assert not ok and result["changed"] is False
    assert result["msg"].startswith("rdma -j link show: this iproute2's rdma tool has no 'rdma link' (too old)")


def test_garbage_from_link_show(env):
    env.show_reply = (0, "rxe0 eth1\n", "")
    ok, result = run(RXE0)
    assert not ok and result["msg"].startswith("rdma -j link show: output is not JSON")


def test_replace_that_fails_after_the_delete_says_so(env):
    run(RXE0)
    env.calls.clear()
    env.add_reply = (255, "", "error: Something new\n")
    ok, result = run(dict(RXE0, netdev="lo"))
    assert not ok and result["changed"] is True
    assert result["msg"] == ("rdma link add rxe0 type rxe netdev lo failed (rc=255): error: Something new "
                             "(already done: /usr/bin/rdma link delete rxe0)")
    assert result["commands"] == ["/usr/bin/rdma link delete rxe0"]


def test_delete_error(env):
    env.add("rxe0", "rxe", "eth1")
    env.delete_reply = (1, "", "Wrong device name - rxe0\n")
    ok, result = run({"name": "rxe0", "state": "absent"})
    assert not ok and result["changed"] is False
    assert result["msg"] == "name: no RDMA link named rxe0 (rdma link delete rxe0: Wrong device name - rxe0)"


def test_hardware_device_is_never_touched(env):
    trees.add_mlx5_ib(env.root)
    env.links.append({"ifindex": 0, "ifname": "mlx5_0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP"})
    for args in ({"name": "mlx5_0", "state": "absent"}, {"name": "mlx5_0", "type": "rxe", "netdev": "eth1"}):
        ok, result = run(args)
        assert not ok and result["changed"] is False
        assert result["msg"].startswith("name: mlx5_0 is an RDMA device that is not an rxe/siw link")
    assert env.writes() == []


def test_rule_write_failure(env, monkeypatch):
    env.add("rxe0", "rxe", "eth1")

    def refuse(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_kit.tempfile, "mkstemp", refuse)
    ok, result = run(RXE0)
    assert not ok and result["changed"] is False
    assert result["msg"] == f"persistent: cannot write {unit_file(env)}: Permission denied"
    assert result["commands"] == []
    assert not unit_file(env).exists() and not rule_file(env).exists()


def test_rule_write_failure_after_the_unit_and_config(env, monkeypatch):
    env.add("rxe0", "rxe", "eth1")
    real = _kit.tempfile.mkstemp

    def refuse_rules(*args, **kwargs):
        if kwargs.get("dir") == str(env.rules):
            raise PermissionError(13, "Permission denied")
        return real(*args, **kwargs)

    monkeypatch.setattr(_kit.tempfile, "mkstemp", refuse_rules)
    ok, result = run(RXE0)
    assert not ok and result["changed"] is True  # the unit and the config were written
    assert result["msg"] == (f"persistent: cannot write {rule_file(env)}: Permission denied "
                             f"(already done: wrote {unit_file(env)}; wrote {config_file(env)})")
    assert unit_file(env).read_text() == env.unit and config_file(env).read_text() == env.config and not rule_file(env).exists()


# --- the result contract: before/after, commands as pasteable lines, progress through the kit --------

def test_before_and_after_are_the_diff_views(env):
    for args, check_mode in ((RXE0, True), (RXE0, False), (RXE0, False), ({"name": "rxe0", "state": "absent"}, False)):
        ok, result = run(args, check_mode=check_mode)
        assert ok and result["before"] == result["diff"]["before"] and result["after"] == result["diff"]["after"]
        assert set(result) >= {"changed", "diff", "before", "after", "commands", "link", "persistence"}
        assert all(isinstance(line, str) for line in result["commands"])


def test_commands_split_back_into_the_argv_run(env):
    trees.add_netdev(env.root, "eth*", "52:54:00:77:00:09", 9)
    ok, result = run({"name": "rxe0", "type": "rxe", "netdev": "eth*", "persistent": False})
    assert ok and result["commands"] == ["/usr/bin/rdma link add rxe0 type rxe netdev 'eth*'"]
    assert [shlex.split(line) for line in result["commands"]] == env.writes()


def test_delete_then_file_failure_reports_both(env, monkeypatch):
    run(RXE0)
    env.calls.clear()
    real_unlink = _kit.os.unlink

    def refuse(path, *args, **kwargs):
        if path == str(rule_file(env)):
            raise PermissionError(13, "Permission denied")
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(_kit.os, "unlink", refuse)
    ok, result = run({"name": "rxe0", "state": "absent"})
    assert not ok and result["changed"] is True
    assert result["msg"] == (f"persistent: cannot remove {rule_file(env)}: Permission denied "
                             "(already done: /usr/bin/rdma link delete rxe0)")
    assert result["commands"] == ["/usr/bin/rdma link delete rxe0"]
    assert env.links == [] and rule_file(env).exists()


# --- the naming guard: udev's rdma_rename policies (module_utils/_naming.py) ----------------------------------

NAMING_RULES = "60-rdma-persistent-naming.rules"
STOCK_NAMING_RULE = 'ACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_FALLBACK"\n'
RDMA_RENAME_44 = b"\x7fELF...%s: Leave kernel names, do nothing\n\0"
RDMA_RENAME_56 = RDMA_RENAME_44 + b"%s: Leave user-assigned names, do nothing\n\0"


def naming_host(env, host_paths, monkeypatch, debian, site_policy, recording=None):
    """Debian 12 (rdma-core 44 in /lib/udev) or 13 (56 in /usr/lib/udev) with a site policy in /etc/udev/rules.d;
    RDMA netlink answers as the recording, or not at all."""
    udev = pathlib.Path(host_paths["LIB_UDEV_DIR" if debian == 12 else "USR_UDEV_DIR"])
    (udev / "rules.d").mkdir(parents=True)
    (udev / "rules.d" / NAMING_RULES).write_text(STOCK_NAMING_RULE)
    (udev / "rdma_rename").write_bytes(RDMA_RENAME_44 if debian == 12 else RDMA_RENAME_56)
    if site_policy:
        (env.rules / NAMING_RULES).write_text(
            f'ACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k {site_policy}"\n')

    def opener():
        if recording is None:
            raise OSError(93, "Protocol not supported")
        return nlrec.ReplaySocket(nlrec.RECORDED[recording])

    monkeypatch.setattr(_nldev, "open_socket", opener)
    return env.rules / NAMING_RULES


def test_naming_reported_without_rules(env):
    ok, result = run(RXE0)
    assert ok and result["naming"]["policy"] is None and result["naming"]["rules"] == []
    assert result["naming"]["keeps_name"] is True


@pytest.mark.parametrize("check_mode", [False, True])
def test_guard_refuses_a_link_udev_would_rename(env, host_paths, monkeypatch, check_mode):
    """Debian 12 with NAME_GUID: Linux 6.1 does not mark rxe names and rdma-core 44 would not look."""
    site = naming_host(env, host_paths, monkeypatch, 12, "NAME_GUID", "6.1 initial namespace")
    ok, result = run({"name": "rxet", "type": "rxe", "netdev": "eth1"}, check_mode=check_mode)
    assert not ok and result["changed"] is False
    assert result["msg"] == (
        f"name: udev would rename the new rxe link rxet to rocex505400fffe770001 (rdma_rename NAME_GUID in {site} "
        "line 1) and this rdma_rename predates rdma-core 53, which leaves user-assigned names alone, so later runs "
        "would not find it; set NAME_KERNEL there or in a file of the same name in /etc/udev/rules.d, or "
        "allow_rename=true to create it anyway")
    assert env.writes() == [] and env.links == [] and result["commands"] == []
    assert not rule_file(env, "rxet").exists() and not env.links_dir.exists() and not unit_file(env).exists()


def test_guard_can_be_overridden(env, host_paths, monkeypatch):
    naming_host(env, host_paths, monkeypatch, 12, "NAME_GUID", "6.1 initial namespace")
    ok, result = run({"name": "rxet", "type": "rxe", "netdev": "eth1", "allow_rename": True})
    assert ok and result["changed"] is True
    assert env.writes() == [[RDMA, "link", "add", "rxet", "type", "rxe", "netdev", "eth1"]]
    assert (result["naming"]["keeps_name"], result["naming"]["renamed_to"]) == (False, "rocex505400fffe770001")


def test_guard_lets_debian13_create(env, host_paths, monkeypatch):
    """Debian 13 with the same policy: Linux 6.12 marks rxe names as the user's and rdma-core 56 leaves them alone."""
    naming_host(env, host_paths, monkeypatch, 13, "NAME_GUID", "6.12 initial namespace")
    ok, result = run(RXE0)
    assert ok and result["changed"] is True and env.links[0]["ifname"] == "rxe0"
    naming = result["naming"]
    assert (naming["policy"], naming["rename_skips_user_names"], naming["kernel_marks_user_names"],
            naming["kernel_marks_from"], naming["keeps_name"]) == ("NAME_GUID", True, True, "RDMA netlink", True)


def test_guard_with_stock_rules_creates(env, host_paths, monkeypatch):
    naming_host(env, host_paths, monkeypatch, 12, None)
    ok, result = run(RXE0)
    assert ok and result["changed"] is True
    assert (result["naming"]["policy"], result["naming"]["renamed_by"], result["naming"]["keeps_name"]) == \
        ("NAME_FALLBACK", None, True)


def test_guard_leaves_an_existing_link_alone(env, host_paths, monkeypatch):
    run(RXE0)
    naming_host(env, host_paths, monkeypatch, 12, "NAME_GUID", "6.1 initial namespace")
    env.calls.clear()
    ok, result = run(RXE0)
    assert ok and result["changed"] is False and env.writes() == []
    assert result["naming"]["keeps_name"] is False


def test_guard_before_a_replacement_deletes_nothing(env, host_paths, monkeypatch):
    run(RXE0)
    naming_host(env, host_paths, monkeypatch, 12, "NAME_FIXED fab0", "6.1 initial namespace")
    env.calls.clear()
    ok, result = run(dict(RXE0, netdev="dummy0"))
    assert not ok and env.writes() == [] and [entry["netdev"] for entry in env.links] == ["eth1"]
    assert result["msg"].startswith("name: udev would rename the new rxe link rxe0 to fab0 (rdma_rename NAME_FIXED in ")


# --- netns: the device moved into a named network namespace (exclusive netns mode) ------------------

MOVE = {"name": "rxe0", "type": "rxe", "netdev": "eth1", "persistent": False, "netns": "node01"}


@pytest.fixture
def netns_env(env, host_paths, harness, monkeypatch):
    """env, with the RDMA subsystem in exclusive mode, /run/netns/node01, and `rdma dev set ... netns` moving a link
    out of the module's namespace into node01's (whose netlink socket lists it)."""
    netns_dir = pathlib.Path(host_paths["NETNS_DIR"])
    netns_dir.mkdir(parents=True)
    (netns_dir / "node01").write_text("")
    env.system = FakeNetlink(netns=False)  # the module's own namespace: the settings
    env.node01 = FakeNetlink(netns=False)  # node01's namespace: the devices it lists
    env.opened = []
    env.inside = False  # whether the module runs in node01 itself

    def namespace_opener(path):
        env.opened.append(path)
        return env.node01.opener

    monkeypatch.setattr(rdma_link, "OPENER", env.system.opener)
    monkeypatch.setattr(rdma_link, "NAMESPACE_OPENER", namespace_opener)
    # the namespace file must exist (os.stat raises as the real check does); node01 is not the module's namespace unless inside
    monkeypatch.setattr(rdma_link._nldev, "same_namespace", lambda path: bool(os.stat(path)) and env.inside)
    rdma_command = env.run_command
    harness.bin_path = dict(BINARIES, ip="/usr/bin/ip").get

    def run_command(args, **kwargs):
        if args[:4] == ["/usr/bin/ip", "netns", "exec", "node01"]:
            # as 7.3 in exclusive mode: the netdev is looked up in node01, the device appears in the initial namespace
            env.calls.append(list(args))
            return rdma_command(args[4:], **kwargs)
        if args[1:3] == ["dev", "set"]:
            env.calls.append(list(args))
            name, target = args[3], args[5]
            if env.system.netns:
                return 1, "", "error: Operation not supported\n"
            env.delete(name)
            assert target == "node01"
            env.node01.devices.append(name)
            return 0, "", ""
        return rdma_command(args, **kwargs)

    env.run_command = run_command
    harness.run_command = run_command
    return env


def moves(env):
    return [call for call in env.calls if call[1:3] == ["dev", "set"]]


def test_netns_creates_then_moves_then_unchanged(netns_env, harness):
    ok, result = run(MOVE, check_mode=False)
    assert ok and result["changed"] is True, result
    assert result["commands"] == ["/usr/bin/ip netns exec node01 /usr/bin/rdma link add rxe0 type rxe netdev eth1",
                                  "/usr/bin/rdma dev set rxe0 netns node01"]
    assert result["link"] == {"name": "rxe0", "type": "rxe", "netdev": "eth1", "netns": "node01", "port": None,
                              "state": None, "physical_state": None, "netdev_index": None}
    assert result["diff"]["before"]["link"] == {}
    assert result["diff"]["after"]["link"] == dict(RXE0, netns="node01")
    assert netns_env.links == [] and netns_env.node01.devices == ["rxe0"]
    # again: the module's namespace no longer lists it, node01's does: nothing to do
    netns_env.calls.clear()
    ok, result = run(MOVE)
    assert ok and result["changed"] is False and result["commands"] == [] and netns_env.writes() == [] == moves(netns_env)
    assert result["diff"]["before"] == result["diff"]["after"]
    assert result["link"]["netns"] == "node01"


def test_netns_moves_an_existing_link(netns_env, harness):
    netns_env.add("rxe0", "rxe", "eth1")
    ok, result = run(MOVE)
    assert ok and result["changed"] is True
    assert result["commands"] == ["/usr/bin/rdma dev set rxe0 netns node01"]
    assert result["diff"]["before"]["link"] == dict(RXE0, netns=None)
    assert result["diff"]["after"]["link"] == dict(RXE0, netns="node01")
    assert netns_env.node01.devices == ["rxe0"] and netns_env.writes() == []


def test_netns_check_mode_moves_nothing(netns_env, harness):
    netns_env.add("rxe0", "rxe", "eth1")
    ok, result = run(MOVE, check_mode=True)
    assert ok and result["changed"] is True
    assert result["commands"] == ["/usr/bin/rdma dev set rxe0 netns node01"]
    assert moves(netns_env) == [] and netns_env.node01.devices == [] and [link["ifname"] for link in netns_env.links] == ["rxe0"]
    assert result["link"]["netns"] == "node01" and result["link"]["port"] is None


def test_netns_inside_the_namespace_moves_nothing(netns_env, harness):
    """Run in node01 itself (exclusive mode creates the device in the caller's namespace): create, no move."""
    harness.run_command = netns_env.run_command
    netns_env.inside = True
    ok, result = run(MOVE)
    assert ok and result["changed"] is True
    assert result["commands"] == ["/usr/bin/rdma link add rxe0 type rxe netdev eth1"]
    assert result["link"]["netns"] == "node01" and result["link"]["port"] == 1
    assert netns_env.opened == []
    ok, result = run(MOVE)
    assert ok and result["changed"] is False and result["diff"]["before"]["link"] == dict(RXE0, netns="node01")


def test_netns_in_shared_mode_fails_naming_the_mode(netns_env, harness):
    netns_env.system.netns = True
    netns_env.add("rxe0", "rxe", "eth1")
    ok, result = run(MOVE)
    assert not ok and result["changed"] is False
    assert result["msg"] == (f"netns: the RDMA subsystem is in shared netns mode (kernel {RELEASE}), where every namespace "
                             "lists every device and none can move; set netns_mode=exclusive with rdma.fabric.rdma_system first")
    assert "\n" not in result["msg"] and moves(netns_env) == []


def test_netns_missing_namespace(netns_env):
    ok, result = run(dict(MOVE, netns="node09"))
    assert not ok and result["changed"] is False
    assert result["msg"].startswith("netns: no network namespace node09 (") and "No such file or directory" in result["msg"]
    assert netns_env.writes() == []


def test_netns_kernel_refuses_the_move(netns_env, harness):
    """The kernel answers EOPNOTSUPP (it switched to shared mode after the module read it): one line, the add done."""
    harness.run_command = netns_env.run_command

    def shared_on_move(args, **kwargs):
        if args[1:3] == ["dev", "set"]:
            netns_env.calls.append(list(args))
            return 1, "", "error: Operation not supported\n"
        return netns_env.run_command(args, **kwargs)

    harness.run_command = shared_on_move
    ok, result = run(MOVE)
    assert not ok and result["changed"] is True
    assert result["msg"] == ("netns: the kernel refused to move rxe0 (EOPNOTSUPP from rdma dev set rxe0 netns node01): the RDMA "
                             "subsystem is in shared netns mode, or the driver cannot change namespace "
                             "(already done: /usr/bin/ip netns exec node01 /usr/bin/rdma link add rxe0 type rxe netdev eth1)")


def test_netns_moved_but_not_listed_there(netns_env, harness):
    real = netns_env.run_command

    def lost(args, **kwargs):
        answer = real(args, **kwargs)
        if args[1:3] == ["dev", "set"]:
            netns_env.node01.devices.clear()
        return answer

    harness.run_command = lost
    ok, result = run(MOVE)
    assert not ok and result["msg"].startswith("netns: rxe0 was moved to node01, but that namespace does not list it")


@pytest.mark.parametrize("extra, message", [
    ({"persistent": True}, "netns: needs persistent=false (the udev rule would bring the link back in the initial namespace "
                           "at boot, not in the named one)"),
    ({"state": "absent"},
     "netns: only with state=present (delete a moved link inside its namespace, or delete the namespace: its netdev goes "
     "and the link with it)"),
    ({"netns": "a/b"}, "netns: invalid network namespace name 'a/b'; allowed: 1-255 bytes, not '.' or '..', no '/', white "
                       "space, control or other unprintable characters, or leading '-'"),
])
def test_netns_input_refused_before_anything(netns_env, extra, message):
    ok, result = run(dict(MOVE, **extra))
    assert not ok and result["msg"] == message and netns_env.calls == []
