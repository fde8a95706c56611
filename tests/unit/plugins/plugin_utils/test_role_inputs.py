# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_role_inputs: the roles' variables checked with the modules' own argument specs and validators.

The role entry points themselves meet the bad-input corpus in tests/unit/roles/test_role_bad_input.py.
"""

from __future__ import annotations

import copy
import os
import re
import subprocess

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _ipoib, _rdma_tool, _roce, _tclass
from ansible_collections.rdma.fabric.plugins.modules import ipoib_connection, memlock, rdma_link, roce_mode, tc_rule
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_inputs

COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
ROLES = os.path.join(COLLECTION, "roles")


def defaults(role) -> dict:
    """The role's defaults, with what a play must set (fabric_check_ip), the shared intent and what a default takes from
    another role's variable (fabric_check_ib_ipoib: ipoib_connections)."""
    with open(os.path.join(ROLES, role, "defaults", "main.yml"), encoding="utf-8") as handle:
        settings = yaml.safe_load(handle) or {}
    if "rdma_qos_intent" in _role_inputs.ROLE_VARIABLES[role]:
        settings["rdma_qos_intent"] = {}
    if role == "fabric_check":
        settings.update(fabric_check_ip="192.0.2.1", fabric_check_report_dir="/srv/fabric-check", fabric_check_ib_ipoib=[])
    if role == "topology":  # the play's hosts, and a rail to read
        settings.update(topology_hosts=["node01", "node02"], topology_ib_rails=[{"name": "rail0", "host": "node01", "ca": "mlx5_0", "port": 1}])
    return settings


def with_changes(role, **changes) -> dict:
    settings = defaults(role)
    settings.update(changes)
    return settings


@pytest.mark.parametrize("role", sorted(_role_inputs.ROLE_VARIABLES))
def test_variables_are_the_documented_ones(role):
    with open(os.path.join(ROLES, role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    assert set(_role_inputs.ROLE_VARIABLES[role]) == set(options)


@pytest.mark.parametrize("role", sorted(_role_inputs.ROLE_VARIABLES))
def test_the_role_hands_every_variable_to_its_input_check(role):
    """The role's first task names every variable in the dict it gives the filter (the filter refuses fewer)."""
    tasks_dir = os.path.join(ROLES, role, "tasks")
    checks = []
    for name in sorted(os.listdir(tasks_dir)):
        with open(os.path.join(tasks_dir, name), encoding="utf-8") as handle:
            for task in yaml.safe_load(handle) or []:
                expression = str(task.get("vars", {}))
                if f"role_input_errors('{role}')" in expression:
                    checks.append((name, task))
    assert len(checks) == 1, checks
    _file, task = checks[0]
    for variable in _role_inputs.ROLE_VARIABLES[role]:
        assert re.search(rf"'{variable}': {variable}\b", str(task["vars"])), variable
    assert task["ansible.builtin.assert"]["quiet"] is True


@pytest.mark.parametrize("role", sorted(_role_inputs.ROLE_VARIABLES))
def test_defaults_pass(role):
    assert _role_inputs.errors(role, defaults(role)) == []


def test_lab_settings_pass():
    settings = with_changes(
        "soft_rdma",
        soft_rdma_links=[{"name": "rxe0", "type": "rxe", "netdev": "eth1"}],
        soft_rdma_kernel_modules=["rdma_rxe", "siw", "rdma_cm", "rdma_ucm", "ib_uverbs"],
        soft_rdma_roce=[{"device": "rxe0", "port": 1, "mode": "v2", "tos": 106}],
    )
    assert _role_inputs.errors("soft_rdma", settings) == []
    connection = {"name": "lab-ib0", "ifname": "ib0", "transport_mode": "connected", "mtu": 65520,
                  "ipv4": {"method": "manual", "addresses": ["192.0.2.1/24"]}, "autoconnect": False}
    assert _role_inputs.errors("ipoib", with_changes("ipoib", ipoib_connections=[connection])) == []


@pytest.mark.parametrize("role, changes, expected", [
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe0", "netdev": "-x"}]},
     [r"^soft_rdma_links\[0\]\.netdev: invalid interface name '-x'; allowed: "]),
    ("soft_rdma", {"soft_rdma_links": [{"name": "../x", "netdev": "eth1"}]}, [r"^soft_rdma_links\[0\]\.name: invalid RDMA device name '\.\./x'"]),
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe0", "netdev": "eth1", "state": "absent"}]},
     [r"^soft_rdma_links\[0\]\.state: unknown option; allowed: name, type, netdev, persistent, allow_rename$"]),
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe0", "netdev": "eth1"}, {"name": "rxe0", "netdev": "eth2"}]},
     [r"^soft_rdma_links\[1\]\.name: 'rxe0' is listed twice \(also soft_rdma_links\[0\]\)"]),
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe0", "netdev": "eth1"}, {"name": "rxe1", "type": "rxe", "netdev": "eth1"}]},
     [r"^soft_rdma_links\[1\]\.netdev: rxe link on 'eth1' is listed twice \(also soft_rdma_links\[0\]\); allowed: one rxe link per netdev$"]),
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe0", "netdev": "eth1"}, {"name": "siw0", "type": "siw", "netdev": "eth1"}]}, []),
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe+0", "netdev": "eth1", "persistent": False}]}, []),
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe0", "netdev": "eth1", "allow_rename": True}],
                   "soft_rdma_roce": [{"device": "rxe0", "tos": 106, "follow_rename": "yes"}]}, []),
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe0", "netdev": "eth1", "allow_rename": "sometimes"}],
                   "soft_rdma_roce": [{"device": "rxe0", "tos": 106, "follow_rename": [True]}]},
     [r"^soft_rdma_links\[0\]: argument 'allow_rename' is of type str and we were unable to convert to bool: "
      r"The value 'sometimes' is not a valid boolean",
      r"^soft_rdma_roce\[0\]: argument 'follow_rename' is of type list and we were unable to convert to bool"]),
    ("soft_rdma", {"soft_rdma_links": [{"name": "rxe+0", "netdev": "eth1"}]},
     [r"^soft_rdma_links\[0\]\.name: 'rxe\+0' cannot be written into a udev rule"]),
    ("soft_rdma", {"soft_rdma_kernel_modules": ["rdma_rxe", "x\ny"]}, [r"^soft_rdma_kernel_modules\[1\]: invalid kernel module name 'x\\ny'"]),
    ("soft_rdma", {"soft_rdma_kernel_modules": "rdma_rxe"}, [r"^soft_rdma_kernel_modules: 'rdma_rxe' is not a list$"]),
    ("soft_rdma", {"soft_rdma_roce": [{"device": "rxe0", "tos": 256}]}, [r"^soft_rdma_roce\[0\]\.tos: 256 is out of range; allowed: 0-255$"]),
    ("soft_rdma", {"soft_rdma_roce": [{"device": "rxe0", "tos": 1, "dscp": 2}]},
     [r"^soft_rdma_roce\[0\]: parameters are mutually exclusive: tos\|dscp$"]),
    ("soft_rdma", {"soft_rdma_roce": [{"device": "rxe0"}, {"device": "rxe0", "port": "1"}]},
     [r"^soft_rdma_roce\[1\]\.port: port 1 of 'rxe0' is listed twice"]),
    ("soft_rdma", {"soft_rdma_exclusive": "maybe"}, [r"^soft_rdma_exclusive: 'maybe' is not a boolean"]),
    ("rdma_core", {"rdma_core_memlock_value": "unlimited\n* hard memlock 0"},
     [r"^rdma_core_memlock_value: 'unlimited\\n\* hard memlock 0' is not a limit"]),
    ("rdma_core", {"rdma_core_memlock_value": 64}, []),
    ("rdma_core", {"rdma_core_memlock_domain": "@rdma\n* hard memlock 0"}, [r"^rdma_core_memlock_domain: invalid limits domain"]),
    ("rdma_core", {"rdma_core_group": "1000"}, [r"^rdma_core_group: invalid group name '1000'"]),
    ("rdma_core", {"rdma_core_group": "g" * 33}, [r"^rdma_core_group: invalid group name"]),
    ("rdma_core", {"rdma_core_extra_packages": ["perftest", "-y"]}, [r"^rdma_core_extra_packages\[1\]: invalid package name '-y'"]),
    ("ipoib", {"ipoib_connections": [{"name": "ib0", "mtu": 70000}]}, [r"^ipoib_connections\[0\]\.mtu: 70000 is out of range; allowed: 0-65520$"]),
    ("ipoib", {"ipoib_connections": [{"name": "ib0", "state": "gone\nx"}]},
     [r"^ipoib_connections\[0\]: value of state must be one of: present, absent, up, down, got: 'gone\\nx'$"]),
    ("ipoib", {"ipoib_connections": [{"name": "ib0", "pkey": "0x8002"}]},
     [r"^ipoib_connections\[0\]: parameters are required together: parent, pkey$"]),
    ("ipoib", {"ipoib_connections": [{"name": "ib0", "ipv4": {"foo": 1}}]},
     [r"^ipoib_connections\[0\]\.ipv4: unknown suboption 'foo'; allowed: addresses, dns, gateway, method$"]),
    # text for a list: ansible-core would split it at the comma; the module refuses it (issue 33), so the role does too
    ("ipoib", {"ipoib_connections": [{"name": "ib0", "ipv4": {"method": "manual", "addresses": "10.0.0.1/24,10.0.0.2/33"}}]},
     [r"^ipoib_connections\[0\]\.ipv4\.addresses: expected a list, got a string '10\.0\.0\.1/24,10\.0\.0\.2/33'; allowed: a list"]),
    ("ipoib", {"ipoib_connections": [{"name": "ib0", "ipv4": {"method": "manual", "addresses": ["10.0.0.1/24", "10.0.0.2/33"]}}]},
     [r"^ipoib_connections\[0\]\.ipv4\.addresses: '10\.0\.0\.2/33' is not an IPv4 address/prefix$"]),
    ("ipoib", {"ipoib_connections": [{"name": "ib0"}, {"name": "ib0", "state": "absent"}]},
     [r"^ipoib_connections\[1\]\.name: 'ib0' is listed twice"]),
    ("ipoib", {"ipoib_connections": ["ib0"]}, [r"^ipoib_connections\[0\]: 'ib0' is not a dictionary"]),
    ("roce_qos", {"rdma_qos_intent": {"roce": {"dscp": 99}}}, [r"^rdma_qos_intent\.roce\.dscp: 99 is out of range; allowed: 0-63$"]),
    ("roce_qos", {"roce_qos_interfaces": [{"netdev": "eth1"}, {"netdev": "eth1"}]}, [r"^roce_qos_interfaces\[1\]\.netdev: 'eth1' is listed twice"]),
    ("roce_qos", {"roce_qos_interfaces": [{"netdev": "eth+1"}]},
     [r"^roce_qos_interfaces\[0\]\.netdev: interface name 'eth\+1' cannot be used in a systemd unit name; .*roce_qos_persistent: false\)$"]),
    ("roce_qos", {"roce_qos_interfaces": [{"netdev": "eth+1"}], "roce_qos_persistent": False}, []),
    ("roce_qos", {"roce_qos_interfaces": [{"netdev": "eth1", "device": "mlx5_0"}, {"netdev": "eth2", "device": "mlx5_0", "port": 1}]},
     [r"^roce_qos_interfaces\[1\]\.device: port 1 of 'mlx5_0' is listed twice"]),
    ("roce_qos", {"roce_qos_interfaces": [{"netdev": "eth1", "device": "mlx5/0"}]}, [r"^roce_qos_interfaces\[0\]\.device: invalid RDMA device"]),
    ("roce_qos", {"roce_qos_interfaces": [{"netdev": "eth1", "port": 0}]}, [r"^roce_qos_interfaces\[0\]\.port: 0 is out of range"]),
    ("roce_qos", {"roce_qos_interfaces": [{"device": "mlx5_0"}]}, [r"^roce_qos_interfaces\[0\]\.netdev: None is not a string"]),
    ("roce_qos", {"roce_qos_tc_rules": [{"device": "mlx5_0", "ttl": 256}]}, [r"^roce_qos_tc_rules\[0\]\.ttl: 256 is out of range"]),
    ("roce_qos", {"roce_qos_tc_rules": [{"device": "mlx5_0", "rules": [{"src_ip": "192.0.2.1/32", "tclass": 1}]}]},
     [r"^roce_qos_tc_rules\[0\]\.rules\[0\]\.src_ip: '192\.0\.2\.1/32' has a mask"]),
    ("roce_qos", {"roce_qos_dcb_dir": "/etc/%i"}, [r"^roce_qos_dcb_dir: '/etc/%i' cannot be written into a unit"]),
    ("roce_qos", {"roce_qos_roce_mode": "v3"}, [r"^roce_qos_roce_mode: 'v3' is not allowed; allowed: v1, v2, ''$"]),
    ("switch_qos", {"switch_qos_consistency_check": "/usr/bin/check %s"}, [r"^switch_qos_consistency_check: '/usr/bin/check %s' cannot"]),
    ("switch_qos", {"switch_qos_nv": "-x"}, [r"^switch_qos_nv: '-x' is not a command"]),
    ("switch_qos", {"switch_qos_traffic_conf": "traffic.conf"}, [r"^switch_qos_traffic_conf: 'traffic\.conf' is not an absolute path"]),
    ("switch_qos", {"rdma_qos_intent": {"switch": {"ports": "swp1\nswp2"}}}, [r"^rdma_qos_intent\.switch\.ports\[0\]: 'swp1\\nswp2'"]),
    ("fabric_check", {"fabric_check_ip": "169.254.77.1/24"}, [r"^fabric_check_ip: '169\.254\.77\.1/24' is not an IPv4 address"]),
    ("fabric_check", {"fabric_check_tests": []}, [r"^fabric_check_tests: \[\] runs no traffic"]),
    ("fabric_check", {"fabric_check_tests": ["rping", "iperf"]}, [r"^fabric_check_tests\[1\]: 'iperf' is not allowed"]),
    ("fabric_check", {"fabric_check_write_bw_seconds": 30}, [r"^fabric_check_write_bw_seconds: 30 is not below fabric_check_timeout \(30\).*allowed: 1-29$"]),
    ("fabric_check", {"fabric_check_timeout": 1}, [r"^fabric_check_write_bw_seconds: 2 is not below .*allowed: none while fabric_check_timeout is 1$",
                                                   r"^fabric_check_ping_count: 5 packets .* do not fit fabric_check_timeout \(1 s\)"
                                                   r".*allowed: none while fabric_check_timeout is 1 \(3 or more",
                                                   r"^fabric_check_iperf3_seconds: 2 is not below .*allowed: none while fabric_check_timeout is 1$",
                                                   r"^fabric_check_ib_ping_count: 3 is not below .*allowed: 0 while fabric_check_timeout is 1$"]),
    ("fabric_check", {"fabric_check_ping_count": 141},
     [r"^fabric_check_ping_count: 141 packets \(0.2 s apart, 2 s for the last reply\) do not fit fabric_check_timeout \(30 s\), "
      r"which bounds ping; allowed: 1-140$"]),
    ("fabric_check", {"fabric_check_ping_count": 140, "fabric_check_iperf3_seconds": 29}, []),
    ("fabric_check", {"fabric_check_iperf3_port": 18515}, [r"^fabric_check_iperf3_port: 18515 is the port ibv_rc_pingpong and ib_write_bw listen on"]),
    ("fabric_check", {"fabric_check_counter_thresholds": {"retransmits": 3, "packets_sent": 1, "out_of_sequence": -2}},
     [r"^fabric_check_counter_thresholds\.packets_sent: not an error counter's common name; allowed: out_of_sequence, ",
      r"^fabric_check_counter_thresholds\.out_of_sequence: -2 is out of range"]),
    ("fabric_check", {"fabric_check_timeout": "30"}, []),
    ("fabric_check", {"fabric_check_roce": False, "fabric_check_ip": ""}, []),
    ("fabric_check", {"fabric_check_ip": ""}, [r"^fabric_check_ip: '' is not an IPv4 address"]),
    ("fabric_check", {"fabric_check_roce": "maybe"}, [r"^fabric_check_roce: 'maybe' is not a boolean"]),
    ("fabric_check", {"fabric_check_ib": "sometimes"}, [r"^fabric_check_ib: 'sometimes' is not allowed; allowed: auto, true or false$"]),
    ("fabric_check", {"fabric_check_ib": True, "fabric_check_ib_rate": 200}, []),
    ("fabric_check", {"fabric_check_pairs": [["vm1", "vm2"], ["vm3", "vm1"]], "fabric_check_max_pairs": 4}, []),
    ("fabric_check", {"fabric_check_pairs": "vm1,vm2"}, [r"^fabric_check_pairs: 'vm1,vm2' is not a list$"]),
    ("fabric_check", {"fabric_check_pairs": [["vm1", "vm2"], ["vm1"]]},
     [r"^fabric_check_pairs\[1\]: \['vm1'\] is not a pair; allowed: \[client, server\], two inventory host names$"]),
    ("fabric_check", {"fabric_check_pairs": [["vm1", " vm2"]]}, [r"^fabric_check_pairs\[0\]: \['vm1', ' vm2'\] is not a pair"]),
    ("fabric_check", {"fabric_check_pairs": [["vm1", 2]]}, [r"^fabric_check_pairs\[0\]: \['vm1', 2\] is not a pair"]),
    ("fabric_check", {"fabric_check_pairs": [["vm2", "vm2"]]}, [r"^fabric_check_pairs\[0\]: \['vm2', 'vm2'\] pairs 'vm2' with itself"]),
    ("fabric_check", {"fabric_check_pairs": [["vm1", "vm2"], ["vm3", "vm4"], ["vm2", "vm1"]]},
     [r"^fabric_check_pairs\[2\]: \['vm2', 'vm1'\] is listed twice \(also fabric_check_pairs\[0\]\); allowed: each pair once"]),
    ("fabric_check", {"fabric_check_max_pairs": -1}, [r"^fabric_check_max_pairs: -1 is out of range"]),
    ("fabric_check", {"fabric_check_outlier_fraction": 1}, []),
    ("fabric_check", {"fabric_check_outlier_fraction": 0}, [r"^fabric_check_outlier_fraction: 0 is not allowed; allowed: a number above 0 and at most 1"]),
    ("fabric_check", {"fabric_check_outlier_fraction": "0.5"}, [r"^fabric_check_outlier_fraction: '0\.5' is not allowed"]),
    ("fabric_check", {"fabric_check_outlier_fraction": True}, [r"^fabric_check_outlier_fraction: True is not allowed"]),
    ("fabric_check", {"fabric_check_max_pairs": "2 "}, [r"^fabric_check_max_pairs: '2 ' is not an integer"]),
    ("fabric_check", {"fabric_check_ib": "no", "fabric_check_ib_rate": "2.5"}, []),
    ("fabric_check", {"fabric_check_ib_rate": -1}, [r"^fabric_check_ib_rate: -1 is not a rate; allowed: 0 \(the fastest"]),
    ("fabric_check", {"fabric_check_ib_rate": "fast"}, [r"^fabric_check_ib_rate: 'fast' is not a rate"]),
    ("fabric_check", {"fabric_check_ib_ipoib": [{"name": "s", "parent": "ib0", "pkey": "0x8000"}]},
     [r"^fabric_check_ib_ipoib\[0\]\.pkey: '0x8000' is not a valid P_Key"]),
    ("fabric_check", {"fabric_check_ib_ipoib": [{"name": "s", "parent": "ib0", "pkey": "0x8002", "transport_mode": "datagram", "mtu": 9000}]},
     [r"^fabric_check_ib_ipoib\[0\]\.mtu: 9000 is too large for datagram mode"]),
    ("fabric_check", {"fabric_check_ib_ipoib": [{"name": "ib0"}, {"name": "ib0"}]}, [r"^fabric_check_ib_ipoib\[1\]\.name: 'ib0' is listed twice"]),
    ("fabric_check", {"fabric_check_ib_sm_hosts": ["sm1", "sm1\nx", "sm1"]},
     [r"^fabric_check_ib_sm_hosts\[1\]: 'sm1\\nx' is not an inventory host name", r"^fabric_check_ib_sm_hosts\[2\]: 'sm1' is listed twice"]),
    ("fabric_check", {"fabric_check_ib_ping_count": 30},
     [r"^fabric_check_ib_ping_count: 30 is not below fabric_check_timeout \(30\), which bounds ibping .*allowed: 0-29$"]),
    ("fabric_check", {"fabric_check_ib_error_threshold": -1}, [r"^fabric_check_ib_error_threshold: -1 is out of range"]),
    ("fabric_check", {"fabric_check_ib_error_thresholds": {"SymbolErrorCounter": 10, "PortXmitWait": 5, "LinkDownedCounter": "x"}},
     [r"^fabric_check_ib_error_thresholds\.PortXmitWait: not an error counter; allowed: SymbolErrorCounter, ",
      r"^fabric_check_ib_error_thresholds\.LinkDownedCounter: 'x' is not an integer"]),
    ("fabric_check", {"fabric_check_ib_error_thresholds": [1]}, [r"^fabric_check_ib_error_thresholds: \[1\] is not a dictionary"]),
    ("fabric_check", {"fabric_check_mtu": False, "fabric_check_bonds": "no", "fabric_check_bond_slaves": 2}, []),
    ("fabric_check", {"fabric_check_bond_slaves": {"bond0": 2, "bond1": "4"}}, []),
    ("fabric_check", {"fabric_check_bond_slaves": "2"}, []),
    ("fabric_check", {"fabric_check_mtu": "sometimes", "fabric_check_bonds": [True]},
     [r"^fabric_check_mtu: 'sometimes' is not a boolean", r"^fabric_check_bonds: \[True\] is not a boolean"]),
    ("fabric_check", {"fabric_check_bond_slaves": 0},
     [r"^fabric_check_bond_slaves: 0 is not allowed; allowed: an integer of 1 or more for every bond, \{bond: count\} per bond, or \{\}"]),
    ("fabric_check", {"fabric_check_bond_slaves": [2]}, [r"^fabric_check_bond_slaves: \[2\] is not allowed; allowed: "]),
    ("fabric_check", {"fabric_check_bond_slaves": True}, [r"^fabric_check_bond_slaves: True is not allowed; allowed: "]),
    ("fabric_check", {"fabric_check_bond_slaves": {"bond0": 0, "bond/1": 2, "bond2": "two", "bond3": 2}},
     [r"^fabric_check_bond_slaves\.bond0: 0 is not a slave count; allowed: an integer of 1 or more$",
      r"^fabric_check_bond_slaves\.bond/1: invalid interface name 'bond/1'",
      r"^fabric_check_bond_slaves\.bond2: 'two' is not a slave count; allowed: an integer of 1 or more$"]),
    ("fabric_check", {"fabric_check_report_dir": "/tmp/a\nb", "fabric_check_report_only": "maybe"},
     [r"^fabric_check_report_dir: '/tmp/a\\nb' is not a path", r"^fabric_check_report_only: 'maybe' is not a boolean"]),
])
def test_errors(role, changes, expected):
    found = _role_inputs.errors(role, with_changes(role, **changes))
    assert len(found) == len(expected), found
    for message, pattern in zip(found, expected):
        assert re.search(pattern, message), message
        assert len(message.splitlines()) == 1


def test_entries_meet_the_modules_own_messages():
    """The role's message is the entry's path, a dot, and exactly what the module would say."""
    params = dict(name="rxe0", type="rxe", netdev="-x", state="present", persistent=True)
    with pytest.raises(ValueError) as err:
        _rdma_tool.validate_params(params)
    settings = with_changes("soft_rdma", soft_rdma_links=[{"name": "rxe0", "netdev": "-x"}])
    assert _role_inputs.errors("soft_rdma", settings) == [f"soft_rdma_links[0].{err.value}"]
    with pytest.raises(ValueError) as err:
        _tclass.validate_params(dict(device="mlx5_0", port=1, ttl=300))
    settings = with_changes("roce_qos", roce_qos_tc_rules=[{"device": "mlx5_0", "ttl": 300}])
    assert _role_inputs.errors("roce_qos", settings) == [f"roce_qos_tc_rules[0].{err.value}"]


# (role, list variable, module, a valid entry, what the role's task fills in): each string option of the module
# gets a YAML number and a boolean in turn; the module itself (its main(), through the harness) refuses both,
# and so must the role's input check, naming the entry's index and the option.
MODULE_ENTRIES = [
    ("soft_rdma", "soft_rdma_links", rdma_link, {"name": "rxe0", "type": "rxe", "netdev": "eth1"},
     {"persistent": True, "allow_rename": False, "state": "present"}),
    ("soft_rdma", "soft_rdma_roce", roce_mode, {"device": "rxe0", "port": 1, "mode": "v2"}, {"persistent": True, "follow_rename": False}),
    ("roce_qos", "roce_qos_tc_rules", tc_rule, {"device": "mlx5_0", "port": 1, "dscp": 26,
                                                "rules": [{"src_ip": "192.0.2.1", "dst_ip": "192.0.2.2", "dscp": 26}]}, {"state": "present"}),
    ("ipoib", "ipoib_connections", ipoib_connection, {"name": "ib0", "ifname": "ib0", "transport_mode": "datagram",
                                                      "ipv4": {"method": "manual", "addresses": ["192.0.2.1/24"], "gateway": "192.0.2.254"}},
     {"state": "present"}),
    ("fabric_check", "fabric_check_ib_ipoib", ipoib_connection, {"name": "ib0.8002", "parent": "ib0", "pkey": "0x8002"}, {"state": "present"}),
]


def _string_paths(spec: dict, entry: dict, prefix: str = "") -> list:
    """(path, setter) for every string option of spec present in entry, nested dicts and list items too."""
    found = []
    for key, option in spec.items():
        if key not in entry:
            continue
        kind = option.get("type", "str")
        if kind == "str":
            found.append((prefix + key, entry, key))
        elif kind == "dict" and isinstance(entry[key], dict):
            found.extend(_string_paths(option.get("options") or {}, entry[key], f"{prefix}{key}."))
        elif kind == "list" and option.get("elements") == "dict":
            for index, item in enumerate(entry[key]):
                found.extend(_string_paths(option.get("options") or {}, item, f"{prefix}{key}[{index}]."))
        elif kind == "list" and option.get("elements") == "str" and entry[key]:
            found.append((f"{prefix}{key}[0]", entry[key], 0))
    return found


def _module_cases():
    for role, variable, module, entry, filled in MODULE_ENTRIES:
        for path, _parent, _key in _string_paths(dict(_MODULE_SPECS)[module.__name__], entry):
            for value in (1000, True, 2.5):
                if module is ipoib_connection and path == "pkey" and not isinstance(value, bool):
                    continue  # the one string option that takes a number (as its decimal text), in the module and the role alike
                yield pytest.param(role, variable, module, entry, filled, path, value, id=f"{variable}.{path}={value!r}")


_MODULE_SPECS = [(rdma_link.__name__, _rdma_tool.ARGUMENT_SPEC), (roce_mode.__name__, _roce.ARGUMENT_SPEC),
                 (tc_rule.__name__, _tclass.ARGUMENT_SPEC), (ipoib_connection.__name__, _ipoib.ARGUMENT_SPEC)]


@pytest.mark.parametrize("role, variable, module, entry, filled, path, value", list(_module_cases()))
def test_the_input_check_refuses_what_the_module_refuses(harness, role, variable, module, entry, filled, path, value):
    """A YAML number or boolean for a module's string option: the module fails on it, so the role check must too."""
    spec = dict(_MODULE_SPECS)[module.__name__]
    bad = copy.deepcopy(entry)
    for where, parent, key in _string_paths(spec, bad):
        if where == path:
            parent[key] = value
    exited, result = harness.run(module, dict(filled, **bad), check_mode=True)
    assert not exited, result
    found = _role_inputs.errors(role, with_changes(role, **{variable: [entry, bad]}))
    assert found == [f"{variable}[1].{result['msg']}"], (found, result["msg"])


@pytest.mark.parametrize("option, value", [("rdma_core_memlock_domain", 1000), ("rdma_core_memlock_domain", True),
                                           ("rdma_core_group", 1000), ("rdma_core_group", False), ("rdma_core_memlock_domain", 1.5)])
def test_rdma_core_names_are_never_numbers(harness, option, value):
    """memlock refuses a number for its domain; the role refuses it (and the group, which becomes '@group') first."""
    if option == "rdma_core_memlock_domain":
        exited, result = harness.run(memlock, {"domain": value, "value": "unlimited"}, check_mode=True)
        assert not exited and result["msg"].startswith("domain: expected a string"), result
    found = _role_inputs.errors("rdma_core", with_changes("rdma_core", **{option: value}))
    assert found == [f"{option}: expected a string, got {'a boolean' if isinstance(value, bool) else 'a number'} {value!r} (quote it in YAML)"]


def test_every_problem_is_reported():
    settings = with_changes("switch_qos", switch_qos_nv="-x", switch_qos_backup="maybe", switch_qos_platform="cumulus")
    assert [message.split(":")[0] for message in _role_inputs.errors("switch_qos", settings)] == [
        "switch_qos_platform", "switch_qos_nv", "switch_qos_backup"]


def test_the_argument_specs_are_left_as_they_were():
    specs = [copy.deepcopy(spec) for spec in (_rdma_tool.ARGUMENT_SPEC, _roce.ARGUMENT_SPEC, _ipoib.ARGUMENT_SPEC, _tclass.ARGUMENT_SPEC)]
    _role_inputs.errors("ipoib", with_changes("ipoib", ipoib_connections=[{"name": "ib0", "ipv4": {"method": "manual"}}]))
    _role_inputs.errors("roce_qos", with_changes("roce_qos", roce_qos_interfaces=[{"netdev": "eth1", "device": "x"}],
                                                 roce_qos_tc_rules=[{"device": "x", "rules": [{"dst_ip": "192.0.2.1", "tclass": 1}]}]))
    _role_inputs.errors("soft_rdma", with_changes("soft_rdma", soft_rdma_links=[{"name": "x", "netdev": "y"}],
                                                  soft_rdma_roce=[{"device": "x"}]))
    assert specs == [_rdma_tool.ARGUMENT_SPEC, _roce.ARGUMENT_SPEC, _ipoib.ARGUMENT_SPEC, _tclass.ARGUMENT_SPEC]


@pytest.mark.parametrize("role, settings, message", [
    ("nope", {}, r"^role: 'nope' is not a role with inputs to check; allowed: soft_rdma, "),
    ("ipoib", [], r"^_input: \[\] is not a dictionary of the variables of ipoib$"),
    ("ipoib", {"ipoib_connections": []}, r"^_input: give exactly the variables of ipoib .*missing: ipoib_install_networkmanager; unknown: none$"),
    ("ipoib", {"ipoib_connections": [], "ipoib_install_networkmanager": True, "x": 1}, r"; missing: none; unknown: x$"),
])
def test_caller_mistakes(role, settings, message):
    with pytest.raises(ValueError, match=message):
        _role_inputs.errors(role, settings)


@pytest.mark.parametrize("text, expected", [("a\nb", "a\\nb"), ("tab\there", "tab\\there"), ("ok é", "ok é"), ("x\u2028y", "x\\u2028y"),
                                            ("\x00", "\\x00")])
def test_one_line(text, expected):
    assert _role_inputs.one_line(text) == expected


# --- issue 33: contradictions the consumer would resolve silently, named with both indexes ----------------

@pytest.mark.parametrize("rules, expected", [
    ([{"device": "mlx5_0", "traffic_class": 3}, {"device": "mlx5_0", "dscp": 26}],
     r"^roce_qos_tc_rules\[1\]: sets the global traffic class of port 1 of 'mlx5_0' to 104, roce_qos_tc_rules\[0\] to 3;"),
    ([{"device": "mlx5_0", "ttl": 64}, {"device": "mlx5_0", "port": 1, "ttl": 32}],
     r"^roce_qos_tc_rules\[1\]: sets the TTL of port 1 of 'mlx5_0' to 32, roce_qos_tc_rules\[0\] to 64;"),
    ([{"device": "mlx5_0", "ttl": 64}, {"device": "mlx5_0", "exclusive": True}],
     r"^roce_qos_tc_rules\[1\]: a second entry for port 1 of 'mlx5_0' \(also roce_qos_tc_rules\[0\]\) where one is exclusive"),
    ([{"device": "mlx5_0", "rules": [{"dst_ip": "192.0.2.0/24", "tclass": 3}]},
      {"device": "mlx5_0", "rules": [{"dst_ip": "192.0.2.0/25", "tclass": 3}]}],
     r"^roce_qos_tc_rules\[1\]: sets the rule dst=192\.0\.2\.0 of port 1 of 'mlx5_0' to tclass 3 \(dst /25\), roce_qos_tc_rules\[0\] to tclass 3 \(dst /24\)"),
    ([{"device": "mlx5_0", "rules": [{"src_ip": "192.0.2.1", "dst_ip": "192.0.2.2", "tclass": 3}]},
      {"device": "mlx5_0", "state": "absent", "rules": [{"src_ip": "192.0.2.1", "dst_ip": "192.0.2.2"}]}],
     r"^roce_qos_tc_rules\[1\]: sets the rule src=192\.0\.2\.1,dst=192\.0\.2\.2 of port 1 of 'mlx5_0' to absent, roce_qos_tc_rules\[0\] to tclass 3"),
])
def test_tc_rules_for_one_port_must_agree(rules, expected):
    found = _role_inputs.errors("roce_qos", with_changes("roce_qos", roce_qos_tc_rules=rules))
    assert len(found) == 1 and re.search(expected, found[0]), found


@pytest.mark.parametrize("rules", [
    [{"device": "mlx5_0", "traffic_class": 3}, {"device": "mlx5_0", "port": 2, "traffic_class": 5}],  # two ports
    [{"device": "mlx5_0", "traffic_class": 3}, {"device": "mlx5_1", "traffic_class": 5}],  # two devices
    [{"device": "mlx5_0", "dscp": 26}, {"device": "mlx5_0", "traffic_class": 104, "ttl": 64}],  # the same value twice
    [{"device": "mlx5_0", "rules": [{"dst_ip": "192.0.2.1", "tclass": 3}]}, {"device": "mlx5_0", "rules": [{"dst_ip": "192.0.2.2", "tclass": 3}]}],
    [{"device": "mlx5_0", "exclusive": True, "rules": [{"dst_ip": "192.0.2.1", "tclass": 3}]}, {"device": "mlx5_1", "exclusive": True}],
])
def test_tc_rules_that_agree_pass(rules):
    assert _role_inputs.errors("roce_qos", with_changes("roce_qos", roce_qos_tc_rules=rules)) == []


@pytest.mark.parametrize("role, option, connections, interface", [
    ("ipoib", "ipoib_connections", [{"name": "a", "ifname": "ib0", "state": "up"}, {"name": "b", "ifname": "ib0", "state": "up"}], "ib0"),
    ("ipoib", "ipoib_connections", [{"name": "a", "ifname": "ib0"}, {"name": "b", "ifname": "ib0", "state": "up"}], "ib0"),  # autoconnects
    ("ipoib", "ipoib_connections", [{"name": "a", "parent": "ib0", "pkey": "0x8002", "state": "up"},
                                    {"name": "b", "ifname": "ib0.8002", "state": "up"}], "ib0.8002"),
    ("fabric_check", "fabric_check_ib_ipoib", [{"name": "a", "ifname": "ib0"}, {"name": "b", "ifname": "ib0", "state": "up"}], "ib0"),
])
def test_two_profiles_up_on_one_interface_are_refused(role, option, connections, interface):
    found = _role_inputs.errors(role, with_changes(role, **{option: connections}))
    assert found == [f"{option}[1]: profile 'b' and {option}[0] are both to be up on interface {interface!r}, where NetworkManager keeps "
                     "one active profile; allowed: one such profile per interface"]


@pytest.mark.parametrize("role, option, connections", [
    ("ipoib", "ipoib_connections", [{"name": "a", "ifname": "ib0", "state": "up"}, {"name": "b", "ifname": "ib0", "state": "down"}]),
    ("ipoib", "ipoib_connections", [{"name": "a", "ifname": "ib0", "state": "up"}, {"name": "b", "ifname": "ib1", "state": "up"}]),
    ("ipoib", "ipoib_connections", [{"name": "a", "ifname": "ib0"}, {"name": "b", "ifname": "ib0", "autoconnect": False}]),
    ("fabric_check", "fabric_check_ib_ipoib", [{"name": "a", "ifname": "ib0"}, {"name": "b", "ifname": "ib0", "state": "absent"}]),
])
def test_profiles_on_their_own_interfaces_pass(role, option, connections):
    assert _role_inputs.errors(role, with_changes(role, **{option: connections})) == []


def test_a_test_listed_twice_is_refused():
    found = _role_inputs.errors("fabric_check", with_changes("fabric_check", fabric_check_tests=["ping", "rping", "ping"]))
    assert found == ["fabric_check_tests[2]: 'ping' is listed twice (also fabric_check_tests[0]); allowed: each test once"]


# --- issue 33: values checked in the form the task uses them --------------------------------------------

FABRIC_COUNTS = ("fabric_check_timeout", "fabric_check_pingpong_iters", "fabric_check_write_bw_seconds", "fabric_check_ping_count",
                 "fabric_check_iperf3_seconds", "fabric_check_iperf3_port", "fabric_check_ib_ping_count")


@pytest.mark.parametrize("option", FABRIC_COUNTS)
@pytest.mark.parametrize("text", ["3 ", " 3", "+3", "03", "3_0", "3.0", "\u0663", "\u00b2", "3\n", 3.0])
def test_fabric_check_counts_are_checked_as_the_argv_gets_them(option, text):
    """Each goes into an argv as it is given ("{{ fabric_check_timeout }}"): only plain decimal text or a YAML integer."""
    found = _role_inputs.errors("fabric_check", with_changes("fabric_check", **{option: text}))
    assert found and found[0].startswith(f"{option}: {text!r} is not an integer"), found


@pytest.mark.parametrize("text", ["30 ", "\u0663", "3_0", "+5", "5.0"])
def test_timeout_refuses_what_the_role_refuses(text):
    """The consumer: coreutils timeout exits 125 on each text the role refuses for fabric_check_timeout."""
    assert subprocess.run(["timeout", text, "true"], capture_output=True, check=False).returncode in (0, 125)
    refused = _role_inputs.errors("fabric_check", with_changes("fabric_check", fabric_check_timeout=text))
    assert refused[0].startswith("fabric_check_timeout:"), refused


@given(st.one_of(st.integers(min_value=-5, max_value=200000), st.text(alphabet="0123456789 +-_.\u0663\u00b2\n", max_size=7)))
@settings(max_examples=150, deadline=None)
def test_every_timeout_the_role_takes_runs_timeout(value):
    """Property: whatever fabric_check_timeout the role accepts, `timeout <value as the task renders it> true` runs (rc 0)."""
    settings = with_changes("fabric_check", fabric_check_timeout=value, fabric_check_ib_ping_count=0)
    accepted = not [message for message in _role_inputs.errors("fabric_check", settings) if message.startswith("fabric_check_timeout")]
    if accepted:
        assert subprocess.run(["timeout", str(value), "true"], capture_output=True, check=False).returncode == 0, value


# --- issue 33: a final newline and other scripts' digits -------------------------------------------------

@pytest.mark.parametrize("key", ["pfc_group", "ecn_group"])
def test_a_group_name_with_a_final_newline_is_refused(key):
    """re.match's '$' matches before a final newline: the name would be written into traffic.conf as two lines."""
    intent = {"switch": {key: "roce\n", "ports": "swp1"}}
    found = _role_inputs.errors("switch_qos", with_changes("switch_qos", rdma_qos_intent=intent))
    assert found == [f"rdma_qos_intent.switch.{key}: 'roce\\n' is not a port group name; allowed: a letter, then up to 63 letters, "
                     "digits, '_' or '-'"]


@pytest.mark.parametrize("role, changes, path", [
    ("switch_qos", {"rdma_qos_intent": {"roce": {"priority": "\u00b2"}}}, "rdma_qos_intent.roce.priority"),
    ("switch_qos", {"rdma_qos_intent": {"pfc": {"priorities": ["\u0663"]}}}, "rdma_qos_intent.pfc.priorities[0]"),
    ("roce_qos", {"roce_qos_tc_rules": [{"device": "mlx5_0", "ttl": "\u00b2"}]}, "roce_qos_tc_rules[0].ttl"),
    ("roce_qos", {"roce_qos_interfaces": [{"netdev": "eth1", "port": "\u0663"}]}, "roce_qos_interfaces[0].port"),
    ("fabric_check", {"fabric_check_counter_threshold": "\u00b2"}, "fabric_check_counter_threshold"),
    ("fabric_check", {"fabric_check_ib_error_thresholds": {"symbol_error": "\u0663"}}, "fabric_check_ib_error_thresholds.symbol_error"),
])
def test_digits_of_other_scripts_are_refused_naming_the_variable(role, changes, path):
    found = _role_inputs.errors(role, with_changes(role, **changes))
    assert len(found) == 1 and re.match(re.escape(path) + r"[: .]", found[0]), found
