# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import shlex

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils import _kit, _nmcli
from ansible_collections.rdma.fabric.plugins.modules import ipoib_connection
from ansible_collections.rdma.fabric.tests.unit.support.module_harness import ModuleHarness

NMCLI = "/usr/bin/nmcli"


class FakeNM:
    """A NetworkManager 1.42 stand-in answering nmcli argv the way the lab VM did."""

    DEFAULTS = {
        "connection.interface-name": "", "connection.autoconnect": "yes", "infiniband.transport-mode": "datagram",
        "infiniband.mtu": "auto", "infiniband.p-key": "default", "infiniband.parent": "", "ipv4.method": "auto",
        "ipv4.addresses": "", "ipv4.gateway": "", "ipv4.dns": "", "ipv6.method": "auto", "ipv6.addresses": "",
        "ipv6.gateway": "", "ipv6.dns": "",
    }

    def __init__(self):
        self.profiles = []  # dicts with id, uuid, type, state, props
        self.calls = []
        self.running = True
        self.has_device = False
        self.counter = 0

    def add_profile(self, name, conn_type="infiniband", state="", **props):
        self.counter += 1
        uuid = f"00000000-0000-4000-8000-{self.counter:012d}"
        values = dict(self.DEFAULTS)
        values.update({key.replace("_", "-").replace("--", "."): value for key, value in props.items()})
        self.profiles.append({"id": name, "uuid": uuid, "type": conn_type, "state": state, "props": values})
        return uuid

    def by_uuid(self, uuid):
        for profile in self.profiles:
            if profile["uuid"] == uuid:
                return profile
        return None

    @staticmethod
    def _store(props, prop, value):
        if prop == "infiniband.mtu":
            value = "auto" if value == "0" else str(min(int(value), 65520))
        if prop.endswith(".addresses") and value:
            value = ", ".join(value.split(","))
        props[prop] = value

    def __call__(self, argv):
        self.calls.append(argv)
        assert argv[0] == NMCLI
        if not self.running:
            return 8, "", "Error: NetworkManager is not running.\n"
        args = argv[1:]
        if args[:4] == ["-t", "-f", "NAME,UUID,TYPE,DEVICE,STATE", "connection"]:
            lines = [":".join(_nmcli.escape_terse(v) for v in (p["id"], p["uuid"], p["type"], "", p["state"])) for p in self.profiles]
            return 0, "".join(line + "\n" for line in lines), ""
        if args[:2] == ["-t", "-f"] and args[3:5] == ["connection", "show"]:
            profile = self.by_uuid(args[6])
            out = []
            for field in args[2].split(","):
                if field == "connection.id":
                    value = profile["id"]
                elif field == "connection.uuid":
                    value = profile["uuid"]
                elif field == "connection.type":
                    value = profile["type"]
                else:
                    value = profile["props"][field]
                out.append(f"{field}:{value}\n")
            return 0, "".join(out), ""
        verb = args[1]
        if verb == "add":
            name = args[5]
            props = dict(zip(args[6::2], args[7::2]))
            if props.get("infiniband.p-key") and not props.get("infiniband.parent"):
                return 4, "", f"Error: Failed to add '{name}' connection: parent: InfiniBand P_Key connection did not specify parent interface name\n"
            uuid = self.add_profile(name)
            for prop, value in props.items():
                self._store(self.by_uuid(uuid)["props"], prop, value)
            return 0, f"Connection '{name}' ({uuid}) successfully added.\n", ""
        profile = self.by_uuid(args[3])
        if verb == "modify":
            for prop, value in zip(args[4::2], args[5::2]):
                self._store(profile["props"], prop, value)
            return 0, "", ""
        if verb == "delete":
            self.profiles.remove(profile)
            return 0, f"Connection '{profile['id']}' ({profile['uuid']}) successfully deleted.\n", ""
        if verb == "up":
            if not self.has_device:
                return 4, "", "Error: Connection activation failed: No suitable device found for this connection (device lo not available).\n"
            profile["state"] = "activated"
            return 0, "Connection successfully activated\n", ""
        if verb == "down":
            profile["state"] = ""
            return 0, "", ""
        raise AssertionError(f"unexpected argv {argv}")


@pytest.fixture
def nm(harness):
    fake = FakeNM()

    def run_command(argv, **kwargs):
        assert isinstance(argv, list)
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        return fake(argv)

    def bin_path(name):
        assert name == "nmcli"
        return fake.binary

    fake.binary = NMCLI
    harness.run_command = run_command
    harness.bin_path = bin_path
    return fake


def run(args, check_mode=False):
    return ModuleHarness.run(ipoib_connection, args, check_mode=check_mode)[1]


def writes(nm):
    return [argv for argv in nm.calls if argv[1] == "connection"]


def lines(argvs):
    """argv lists as the command lines the module reports."""
    return [_kit.command_line(argv) for argv in argvs]


CONNECTED = {"name": "ib0", "ifname": "ib0", "transport_mode": "connected", "mtu": 65520}


def test_create_connected_profile(nm):
    result = run(CONNECTED)
    assert result["changed"] is True
    assert writes(nm) == [[NMCLI, "connection", "add", "type", "infiniband", "con-name", "ib0", "connection.interface-name", "ib0",
                           "infiniband.transport-mode", "connected", "infiniband.mtu", "65520"]]
    assert result["commands"] == lines(writes(nm))
    assert result["connection"]["uuid"] == nm.profiles[0]["uuid"]
    assert result["connection"]["properties"]["infiniband.mtu"] == "65520"
    assert result["connection"]["device"] == "ib0"
    assert result["diff"]["before"] == ""
    assert "infiniband.mtu: 65520\n" in result["diff"]["after"]


def test_rerun_is_unchanged(nm):
    run(CONNECTED)
    nm.calls.clear()
    result = run(CONNECTED)
    assert result["changed"] is False
    assert writes(nm) == []
    assert result["commands"] == [] and result["changes"] == []
    assert result["diff"]["before"] == result["diff"]["after"]


def test_modify_only_the_mtu(nm):
    run(CONNECTED)
    nm.calls.clear()
    result = run(dict(CONNECTED, mtu=2044))
    assert result["changed"] is True
    uuid = nm.profiles[0]["uuid"]
    assert writes(nm) == [[NMCLI, "connection", "modify", "uuid", uuid, "infiniband.mtu", "2044"]]
    assert result["changes"] == [{"property": "infiniband.mtu", "before": "65520", "after": "2044"}]
    assert "infiniband.mtu: 65520\n" in result["diff"]["before"] and "infiniband.mtu: 2044\n" in result["diff"]["after"]
    assert result["diff"]["before"].replace("65520", "2044") == result["diff"]["after"]


def test_check_mode_create_and_modify_run_nothing(nm):
    result = run(CONNECTED, check_mode=True)
    assert result["changed"] is True
    assert nm.profiles == []
    assert writes(nm) == []
    assert shlex.split(result["commands"][0])[:7] == [NMCLI, "connection", "add", "type", "infiniband", "con-name", "ib0"]
    assert result["connection"]["uuid"] is None
    run(CONNECTED)
    nm.calls.clear()
    result = run(dict(CONNECTED, mtu=0), check_mode=True)
    assert result["changed"] is True
    assert writes(nm) == []
    assert nm.profiles[0]["props"]["infiniband.mtu"] == "65520"
    assert result["connection"]["properties"]["infiniband.mtu"] == "0"


def test_pkey_child_create_and_normalised_rerun(nm):
    result = run({"name": "ib0.8002", "parent": "ib0", "pkey": "0x0002"})
    assert result["changed"] is True
    assert writes(nm)[0][7:] == ["infiniband.transport-mode", "datagram", "infiniband.parent", "ib0", "infiniband.p-key", "0x8002"]
    assert result["connection"]["device"] == "ib0.8002"
    nm.calls.clear()
    for pkey in ("32770", "0x8002", "2"):
        again = run({"name": "ib0.8002", "parent": "ib0", "pkey": pkey})
        assert again["changed"] is False
    assert writes(nm) == []


def test_existing_0x0002_profile_is_the_same_partition(nm):
    nm.add_profile("child", infiniband__parent="ib0", infiniband__p_key="0x0002")
    result = run({"name": "child", "parent": "ib0", "pkey": "0x8002"})
    assert result["changed"] is False


def test_delete_child(nm):
    run({"name": "ib0.8002", "parent": "ib0", "pkey": "0x8002"})
    uuid = nm.profiles[0]["uuid"]
    nm.calls.clear()
    result = run({"name": "ib0.8002", "state": "absent"})
    assert result["changed"] is True
    assert writes(nm) == [[NMCLI, "connection", "delete", "uuid", uuid]]
    assert nm.profiles == []
    assert "infiniband.p-key: 0x8002" in result["diff"]["before"] and result["diff"]["after"] == ""
    again = run({"name": "ib0.8002", "state": "absent"})
    assert again["changed"] is False


def test_absent_check_mode(nm):
    nm.add_profile("gone")
    result = run({"name": "gone", "state": "absent"}, check_mode=True)
    assert result["changed"] is True
    assert len(nm.profiles) == 1
    assert result["commands"] == [f"{NMCLI} connection delete uuid {nm.profiles[0]['uuid']}"]


def test_absent_deletes_duplicates(nm):
    nm.add_profile("dup")
    nm.add_profile("dup")
    result = run({"name": "dup", "state": "absent"})
    assert result["changed"] is True
    assert nm.profiles == []
    assert len(result["commands"]) == 2


def test_absent_refuses_other_type(nm):
    nm.add_profile("eth", conn_type="802-3-ethernet")
    result = run({"name": "eth", "state": "absent"})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"].startswith("name: profile 'eth' (") and "has type 802-3-ethernet, not infiniband; refusing to delete it" in result["msg"]
    assert len(nm.profiles) == 1


def test_name_with_colon_and_backslash_round_trips(nm):
    name = "t:e\\st"
    result = run({"name": name, "transport_mode": "connected"})
    assert result["changed"] is True
    assert nm.profiles[0]["id"] == name
    again = run({"name": name, "transport_mode": "connected"})
    assert again["changed"] is False
    assert again["connection"]["name"] == name
    gone = run({"name": name, "state": "absent"})
    assert gone["changed"] is True and nm.profiles == []


def test_up_without_device_fails_clearly_and_keeps_profile(nm):
    result = run({"name": "ib0", "ifname": "ib0", "state": "up"})
    assert result["failed"] is True
    assert result["changed"] is True
    assert result["msg"] == ("activating connection 'ib0' (the profile is saved) failed (nmcli rc 4): Error: Connection activation failed: "
                             "No suitable device found for this connection (device lo not available)."
                             " [no InfiniBand device (or P_Key parent) on this host fits the profile]"
                             f" (already done: {NMCLI} connection add type infiniband con-name ib0 connection.interface-name ib0"
                             " infiniband.transport-mode datagram)")
    assert result["commands"] == lines(writes(nm)[:1])
    assert len(nm.profiles) == 1


def test_up_and_down(nm):
    nm.has_device = True
    result = run({"name": "ib0", "ifname": "ib0", "state": "up"})
    assert result["changed"] is True and result["connection"]["active"] is True
    assert writes(nm)[-1] == [NMCLI, "connection", "up", "uuid", nm.profiles[0]["uuid"]]
    again = run({"name": "ib0", "ifname": "ib0", "state": "up"})
    assert again["changed"] is False
    down = run({"name": "ib0", "state": "down"})
    assert down["changed"] is True and down["connection"]["active"] is False
    assert run({"name": "ib0", "state": "down"})["changed"] is False


def test_up_check_mode_runs_nothing(nm):
    nm.add_profile("ib0")
    result = run({"name": "ib0", "state": "up"}, check_mode=True)
    assert result["changed"] is True
    assert writes(nm) == []
    assert nm.profiles[0]["state"] == ""


def test_ipv4_settings(nm):
    args = {"name": "ib0", "ipv4": {"method": "manual", "addresses": ["192.0.2.10/24", "192.0.2.11"], "gateway": "192.0.2.1",
                                    "dns": ["192.0.2.53"]}}
    result = run(args)
    assert result["changed"] is True
    assert nm.profiles[0]["props"]["ipv4.addresses"] == "192.0.2.10/24, 192.0.2.11/32"
    assert run(args)["changed"] is False
    result = run({"name": "ib0", "ipv4": {"method": "disabled"}})
    assert result["changed"] is True
    assert {change["property"] for change in result["changes"]} == {"ipv4.method", "ipv4.addresses", "ipv4.gateway", "ipv4.dns"}
    assert nm.profiles[0]["props"]["ipv4.addresses"] == ""


def test_other_type_with_the_name_is_refused(nm):
    nm.add_profile("mgmt", conn_type="802-3-ethernet")
    result = run({"name": "mgmt", "mtu": 2044})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"] == "name: profile 'mgmt' exists with type 802-3-ethernet, not infiniband; refusing to change it"
    assert writes(nm) == []


def test_duplicates_are_refused_for_present(nm):
    first = nm.add_profile("dup")
    second = nm.add_profile("dup")
    result = run({"name": "dup", "mtu": 2044})
    assert result["failed"] is True
    assert result["msg"] == f"name: 2 profiles are named 'dup' ({first}, {second}); delete the duplicates or use state=absent"


def test_saved_mtu_too_big_for_new_mode_fails_before_modify(nm):
    run(CONNECTED)
    nm.calls.clear()
    result = run({"name": "ib0", "transport_mode": "datagram"})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"] == "mtu: the profile's MTU 65520 is too large for datagram mode; allowed: 0 (auto) or up to 4092"
    assert writes(nm) == []


def test_networkmanager_not_running(nm):
    nm.running = False
    result = run(CONNECTED)
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"] == "listing connections: NetworkManager is not running (nmcli rc 8); start it with 'systemctl start NetworkManager'"


def test_nmcli_missing(nm):
    nm.binary = None
    result = run(CONNECTED)
    assert result["failed"] is True
    assert result["msg"].startswith("nmcli: command not found; install NetworkManager")
    assert nm.calls == []


def test_nmcli_error_on_add_is_reported(nm):
    original = nm.__class__.__call__

    def refuse(self, argv):
        if argv[1:3] == ["connection", "add"]:
            self.calls.append(argv)
            return 4, "", "Error: Failed to add 'ib0' connection: something NM did not like\n"
        return original(self, argv)

    nm.__class__.__call__ = refuse
    try:
        result = run(CONNECTED)
    finally:
        nm.__class__.__call__ = original
    assert result["failed"] is True
    assert result["msg"] == "creating connection 'ib0' failed (nmcli rc 4): Error: Failed to add 'ib0' connection: something NM did not like"


@pytest.mark.parametrize("args, msg", [
    ({"name": "ib0", "mtu": 70000}, "mtu: 70000 is out of range; allowed: 0-65520"),
    ({"name": "ib0", "transport_mode": "datagram", "mtu": 65520}, "mtu: 65520 is too large for datagram mode; allowed: 0 (auto) or up to 4092"),
    ({"name": "ib0", "mtu": 65520}, "mtu: mtu 65520 is too large for datagram mode; allowed: 0 (auto) or up to 4092"),
    ({"name": "c", "parent": "ib0", "pkey": "0x8000"}, "pkey: '0x8000' is not a valid P_Key"),
    ({"name": "c", "parent": "ib0", "pkey": "0x0000"}, "pkey: '0x0000' is not a valid P_Key"),
    ({"name": "c", "parent": "ib0", "pkey": "0x10000"}, "pkey: '0x10000' is not a P_Key"),
    ({"name": "c", "pkey": "0x8002"}, "parameters are required together: parent, pkey"),
    ({"name": "-c"}, "name: invalid connection name '-c'"),
    ({"name": "a\nb"}, "name: invalid connection name 'a\\nb'"),
    ({"name": "c", "ifname": "../ib0"}, "ifname: invalid interface name '../ib0'"),
    ({"name": "c", "ifname": "ib0 x"}, "ifname: invalid interface name 'ib0 x'"),
    ({"name": "c", "parent": "-ib0", "pkey": "2"}, "parent: invalid interface name '-ib0'"),
    ({"name": "c", "ipv4": {"addresses": ["10.0.0.1/40"]}}, "ipv4.addresses: '10.0.0.1/40' is not an IPv4 address/prefix"),
    ({"name": "c", "ipv4": {"gateway": "10.0.0.1"}}, "ipv4.gateway: a gateway needs at least one address in ipv4.addresses"),
    ({"name": "c", "ipv6": {"method": "manual"}}, "ipv6.addresses: method manual needs at least one address"),
    ({"name": "c", "ipv6": {"dns": ["10.0.0.1"]}}, "ipv6.dns: '10.0.0.1' is an IPv4 address; allowed: IPv6 only"),
    ({"name": "c", "transport_mode": "bulk"}, "value of transport_mode must be one of: datagram, connected"),
    ({"name": "c", "mtu": 70000, "state": "absent"}, "mtu: 70000 is out of range; allowed: 0-65520"),
])
def test_bad_input_fails_before_any_change(nm, args, msg):
    result = run(args)
    assert result["failed"] is True
    assert result.get("changed", False) is False
    assert result["msg"].startswith(msg)
    assert writes(nm) == []
    assert nm.profiles == []


# --- the result contract: before/after, commands as lines, progress on failure -------------

def test_before_and_after_are_the_views_the_diff_shows(nm):
    created = run(CONNECTED)
    assert created["before"] is None and created["diff"]["before"] == ""
    assert created["after"] == {"connection.interface-name": "ib0", "infiniband.transport-mode": "connected", "infiniband.mtu": "65520"}
    assert created["diff"]["after"] == "".join(f"{prop}: {value}\n" for prop, value in created["after"].items())
    modified = run(dict(CONNECTED, mtu=2044))
    assert modified["before"] == created["after"]
    assert modified["after"] == dict(created["after"], **{"infiniband.mtu": "2044"})
    assert modified["diff"]["before"] == "".join(f"{prop}: {value}\n" for prop, value in modified["before"].items())
    again = run(dict(CONNECTED, mtu=2044))
    assert again["changed"] is False and again["before"] == again["after"] == modified["after"]


def test_absent_before_holds_each_deleted_profile_by_uuid(nm):
    uuid = nm.add_profile("gone", infiniband__mtu="2044")
    result = run({"name": "gone", "state": "absent"})
    assert result["after"] == {} and list(result["before"]) == [uuid]
    assert result["before"][uuid]["infiniband.mtu"] == "2044"
    assert result["diff"]["before"] == f"# gone ({uuid})\n" + "".join(f"{prop}: {value}\n" for prop, value in result["before"][uuid].items())
    assert run({"name": "gone", "state": "absent"})["before"] == {}


@pytest.mark.parametrize("name", ["t:e\\st", "my ib'0", "rdma:fabric\\ib0", "ib;0 $x"])
def test_commands_are_lines_a_shell_splits_back_into_the_argv_run(nm, name):
    result = run({"name": name, "transport_mode": "connected", "ipv4": {"method": "manual", "addresses": ["192.0.2.1/24"]}})
    assert result["changed"] is True and len(result["commands"]) == 1
    assert [shlex.split(line) for line in result["commands"]] == writes(nm)
    uuid = nm.profiles[0]["uuid"]
    result = run({"name": name, "mtu": 2044})
    assert result["commands"] == [f"{NMCLI} connection modify uuid {uuid} infiniband.mtu 2044"]
    result = run({"name": name, "state": "absent"}, check_mode=True)
    assert result["commands"] == [f"{NMCLI} connection delete uuid {uuid}"]


def test_check_mode_up_of_a_new_profile_lists_both_commands(nm):
    result = run({"name": "ib0", "ifname": "ib0", "state": "up"}, check_mode=True)
    assert result["changed"] is True and nm.profiles == [] and writes(nm) == []
    assert result["commands"] == [f"{NMCLI} connection add type infiniband con-name ib0 connection.interface-name ib0"
                                  " infiniband.transport-mode datagram",
                                  f"{NMCLI} connection up uuid '<new>'"]
    assert result["connection"]["active"] is True and result["before"] is None


def test_up_failing_on_a_saved_profile_changes_nothing_and_says_so_in_one_line(nm):
    nm.add_profile("ib0", connection__interface_name="ib0")
    result = run({"name": "ib0", "state": "up"})
    assert result["failed"] is True and result["changed"] is False
    assert result["msg"].endswith(" [no InfiniBand device (or P_Key parent) on this host fits the profile]")
    assert "already done" not in result["msg"] and result["commands"] == []


def test_a_failure_after_a_delete_reports_it_as_done(nm):
    first = nm.add_profile("dup")
    second = nm.add_profile("dup")
    original = nm.__class__.__call__

    def refuse_second(self, argv):
        if argv[1:3] == ["connection", "delete"] and argv[4] == second:
            self.calls.append(argv)
            return 4, "", "Error: Connection deletion failed: Insufficient privileges\n"
        return original(self, argv)

    nm.__class__.__call__ = refuse_second
    try:
        result = run({"name": "dup", "state": "absent"})
    finally:
        nm.__class__.__call__ = original
    assert result["failed"] is True and result["changed"] is True
    assert result["msg"] == (f"deleting connection 'dup' ({second}) failed (nmcli rc 4): Error: Connection deletion failed: "
                             f"Insufficient privileges (already done: {NMCLI} connection delete uuid {first})")
    assert result["commands"] == [f"{NMCLI} connection delete uuid {first}"]
    assert [profile["uuid"] for profile in nm.profiles] == [second]


def test_a_read_back_failure_after_a_modify_reports_it_as_done(nm):
    uuid = nm.add_profile("ib0")
    original = nm.__class__.__call__
    seen = []

    def fail_second_read(self, argv):
        if argv[4:6] == ["connection", "show"] and len(argv) > 6:
            seen.append(argv)
            if len(seen) == 2:
                return 10, "", "Error: unknown connection\n"
        return original(self, argv)

    nm.__class__.__call__ = fail_second_read
    try:
        result = run({"name": "ib0", "mtu": 2044})
    finally:
        nm.__class__.__call__ = original
    assert result["failed"] is True and result["changed"] is True
    assert result["msg"] == (f"reading connection {uuid} failed (nmcli rc 10): Error: unknown connection"
                             f" (already done: {NMCLI} connection modify uuid {uuid} infiniband.mtu 2044)")
