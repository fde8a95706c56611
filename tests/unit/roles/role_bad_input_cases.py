# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Malformed inputs for the entry points of the twelve roles, as data.

Each case starts from BASE[role], the role's valid settings, and sets one
variable path to a bad value (settings_for()). Run through the role, every case
must fail in the role's first tasks - its argument spec or its input check -
with a message that names the variable (Case.named, by default the path that was
set), change nothing and never contact the host. BASE itself must get past those
tasks. FACTS are the facts the first tasks read (supplied as variables).

Only the standard library is used, so that a test against a real host can import
the same corpus (tests/unit/roles/test_role_bad_input.py runs it against an
unreachable host).
"""

from __future__ import annotations

import collections
import copy
import re

# role, the variable path that is set ('soft_rdma_links[0].netdev'), a label, the value, and the path the
# message must name when that differs from the one set (checks across entries name the later entry).
Case = collections.namedtuple("Case", "role variable label value named", defaults=(None,))

MISSING = object()  # as a value: remove the key

ROLES = ("soft_rdma", "rdma_core", "ipoib", "roce_qos", "switch_qos", "fabric_check", "subnet_manager", "nfs_rdma", "topology",
         "nic_firmware", "container_host", "gpudirect")

FACTS = {"os_family": "Debian", "distribution": "Debian", "distribution_version": "12"}

_INTENT = {"roce": {"dscp": 26, "priority": 3}, "cnp": {"dscp": 48, "priority": 6}, "switch": {"ports": "swp1-swp4,swp6"}}

BASE = {
    "soft_rdma": {
        "soft_rdma_kernel_modules": ["rdma_rxe", "rdma_cm", "rdma_ucm", "ib_uverbs"],
        "soft_rdma_links": [
            {"name": "rxe0", "type": "rxe", "netdev": "eth1"},
            {"name": "siw0", "type": "siw", "netdev": "eth1", "persistent": False},
        ],
        "soft_rdma_exclusive": False,
        "soft_rdma_roce": [
            {"device": "rxe0", "port": 1, "mode": "v2", "tos": 106},
            {"device": "siw0", "port": 1, "dscp": 26},
        ],
    },
    "rdma_core": {
        "rdma_core_install_packages": True,
        "rdma_core_extra_packages": ["perftest", "rdma-core=44.0-2"],
        "rdma_core_group": "rdma",
        "rdma_core_memlock_domain": "@rdma",
        "rdma_core_memlock_value": "unlimited",
        "rdma_core_memlock_systemd": True,
    },
    "ipoib": {
        "ipoib_connections": [
            {"name": "ib0", "ifname": "ib0", "transport_mode": "connected", "mtu": 65520,
             "ipv4": {"method": "manual", "addresses": ["192.0.2.1/24"], "gateway": "192.0.2.254"}},
            {"name": "ib0.8002", "parent": "ib0", "pkey": "0x8002", "transport_mode": "datagram", "mtu": 2044},
        ],
        "ipoib_install_networkmanager": True,
    },
    "roce_qos": {
        "rdma_qos_intent": _INTENT,
        "roce_qos_interfaces": [{"netdev": "eth1", "device": "mlx5_0", "port": 1}],
        "roce_qos_unsupported": "fail",
        "roce_qos_roce_mode": "v2",
        "roce_qos_persistent": True,
        "roce_qos_dscp_prio_exclusive": False,
        "roce_qos_tc_rules": [
            {"device": "mlx5_0", "port": 1, "dscp": 26, "ttl": 64,
             "rules": [{"src_ip": "192.0.2.1", "dst_ip": "192.0.2.0/24", "dscp": 26}]},
        ],
        "roce_qos_dcb_dir": "/etc/rdma-fabric/dcb",
    },
    "switch_qos": {
        "rdma_qos_intent": _INTENT,
        "switch_qos_platform": "nvue",
        "switch_qos_asic": "spectrum",
        "switch_qos_state": "present",
        "switch_qos_traffic_conf": "/etc/cumulus/datapath/traffic.conf",
        "switch_qos_features_conf": "/etc/cumulus/datapath/qos/qos_features.conf",
        "switch_qos_syntax_check": True,
        "switch_qos_consistency_check": "/usr/cumulus/bin/cl-consistency-check",
        "switch_qos_spectrum_reload": "/cumulus/switchd/config/traffic/reload",
        "switch_qos_nv": "nv",
        "switch_qos_apply": True,
        "switch_qos_backup": True,
    },
    "fabric_check": {
        "fabric_check_ip": "192.0.2.1",
        "fabric_check_topology": "auto",
        "fabric_check_pairs": [],
        "fabric_check_max_pairs": 0,
        "fabric_check_outlier_fraction": 0.5,
        "fabric_check_tests": ["rping", "ibv_rc_pingpong", "ib_write_bw", "ping", "iperf3"],
        "fabric_check_timeout": 30,
        "fabric_check_pingpong_iters": 500,
        "fabric_check_write_bw_seconds": 2,
        "fabric_check_report_dir": "/nonexistent/rdma-fabric-check",
        "fabric_check_report_only": False,
        "fabric_check_roce": True,
        "fabric_check_ib": "auto",
        "fabric_check_ib_rate": 0,
        "fabric_check_ib_ipoib": [{"name": "ib0.8002", "parent": "ib0", "pkey": "0x8002", "transport_mode": "datagram", "mtu": 4092}],
        "fabric_check_ib_sm_hosts": [],
        "fabric_check_ib_ping_count": 3,
        "fabric_check_ib_error_threshold": 0,
        "fabric_check_ib_error_thresholds": {"SymbolErrorCounter": 10},
        "fabric_check_ping_count": 5,
        "fabric_check_iperf3_seconds": 2,
        "fabric_check_iperf3_port": 5201,
        "fabric_check_counters": True,
        "fabric_check_counter_threshold": 0,
        "fabric_check_counter_thresholds": {"retransmits": 10},
        "fabric_check_mtu": True,
        "fabric_check_bonds": True,
        "fabric_check_bond_slaves": {"bond0": 2},
    },
    "subnet_manager": {
        "subnet_manager_partitions": [
            {"name": "storage", "pkey": "0x0002", "ipoib": True, "mtu": 5,
             "members": [{"guid": "0x0002c90300002001", "membership": "full"}, {"guid": "ALL_CAS", "membership": "limited"}]},
        ],
        "subnet_manager_options": {"sm_priority": 14},
        "subnet_manager_ports": ["0x0002c90300001001"],
        "subnet_manager_install": True,
        "subnet_manager_manage_service": True,
        "subnet_manager_config_dir": "",
        "subnet_manager_validate": True,
    },
    "nic_firmware": {
        # the module's first query reaches for the host
        "nic_firmware_devices": [{"device": "0000:03:00.0", "settings": {"SRIOV_EN": True, "NUM_OF_VFS": 8, "LINK_TYPE_P1": "ETH"},
                                  "raw_settings": {"NUM_OF_PF": 1}, "allow": ["NUM_OF_PF"]}],
        "nic_firmware_tool": "auto",
        "nic_firmware_reboot": True,
        "nic_firmware_reboot_batch": 1,
        "nic_firmware_reboot_timeout": 900,
        "nic_firmware_rdma_devices": ["mlx5_0"],
        "nic_firmware_reboot_test_command": "whoami",
    },
    "container_host": {
        # rdma_system, the first task after the input check, reaches for the host
        "container_host_netns_mode": "exclusive",
        "container_host_netns_when_busy": "reboot",
        "container_host_reboot": False,
        "container_host_reboot_timeout": 900,
        "container_host_reboot_test_command": "systemctl is-system-running --wait",
        "container_host_cgroup_limits": [{"unit": "kubepods.slice", "device": "mlx5_0", "hca_handle": 64, "hca_object": "4096"},
                                         {"unit": "containerd.service", "device": "mlx5_0", "hca_handle": "max"}],
        "container_host_runtime_services": ["containerd.service", "kubelet.service"],
        "container_host_memlock": "unlimited",
        "container_host_restart_services": False,
        "container_host_check": True,
        "container_host_check_image": "registry.example/rdma/check:1.0",
        "container_host_check_run_options": ["--security-opt", "apparmor=unconfined"],
    },
    "gpudirect": {
        # the modules-load.d file, the first task after the input check, reaches for the host
        "gpudirect_devices": ["mlx5_0", "mlx5_1"],
        "gpudirect_require": "dmabuf",
        "gpudirect_acs_scope": "all",
        "gpudirect_acs_fix": True,
        "gpudirect_acs_persistent": True,
        "gpudirect_peermem": "present",
        "gpudirect_peermem_module": "nvidia_peermem",
        "gpudirect_dmabuf_probe": True,
        "gpudirect_fail": True,
        "gpudirect_reload_modules": ["mlx5_ib", "mlx5_core"],
    },
    "topology": {
        # LLDP read on the host itself: the first task after the input check reaches for the host
        "topology_source": "lldp",
        "topology_ib_rails": [{"name": "rail0", "host": "sm1", "ca": "mlx5_0", "port": 1}],
        "topology_ibnetdiscover": {},
        "topology_lldp_neighbors": {},
        "topology_lldp_interfaces": ["eth1"],
        "topology_lldp_rails": {"eth1": "rail0"},
        "topology_lldp_switches": {},
        "topology_hosts": ["node01", "node02"],
        "topology_guid_map": {"0x0002c90300001001": "node01"},
        "topology_switch_names": {"0x0002c90300000100": "leaf1"},
        "topology_groups": True,
        "topology_group_prefix": "fabric",
        "topology_slurm_hosts": ["slurmctld1"],
        "topology_slurm_dir": "/etc/slurm",
        "topology_slurm_form": "block",
        "topology_slurm_rail": "",
        "topology_slurm_yaml_rails": [],
        "topology_slurm_node_names": {"node01": "n01"},
        "topology_slurm_nodes": [],
        "topology_slurm_block_sizes": [4, 16],
        "topology_slurm_reconfigure": False,
    },
    "nfs_rdma": {
        "nfs_rdma_server": True,
        "nfs_rdma_exports": [
            {"path": "/srv/rdma", "clients": [{"host": "169.254.77.0/24", "options": ["rw", "sync", "no_subtree_check"]}]},
        ],
        "nfs_rdma_port": 20049,
        "nfs_rdma_threads": 0,
        "nfs_rdma_mounts": [{"server": "169.254.77.1", "export": "/srv/rdma", "path": "/mnt/rdma", "options": ["vers=4.2"]}],
        "nfs_rdma_links": ["rxe0"],
        "nfs_rdma_install": True,
        "nfs_rdma_state": "present",
    },
}

# --- the kinds of bad value ---------------------------------------------------------------------

# The name kinds of the issue - '/', '..', a leading '-', white space, newlines, '%', too long - in the
# spelling of each kind of name; the first variable of a kind gets the long list, the others the short one.
BAD_NETDEVS = [
    ("slash", "eth/1"),
    ("dotdot-path", "../eth1"),
    ("leading-dash", "-x"),
    ("space", "eth 1"),
    ("newline", "eth1\nlo"),
    ("16-bytes", "e" * 16),
    ("colon", "eth1:1"),
    ("tab", "eth\t1"),
    ("nul", "eth\x001"),
    ("empty", ""),
]
SHORT_NETDEVS = BAD_NETDEVS[:6]

BAD_RDMA_NAMES = [
    ("slash", "rxe/0"),
    ("dotdot-path", "../x"),
    ("leading-dash", "-x"),
    ("space", "rxe 0"),
    ("newline", "rxe0\nsiw0"),
    ("percent", "rxe%d"),
    ("64-bytes", "r" * 64),
    ("dotdot", ".."),
]
SHORT_RDMA_NAMES = [BAD_RDMA_NAMES[index] for index in (1, 2, 4, 5, 6)]

BAD_PORTS = [("zero", 0), ("256", 256)]


def _corpus() -> list:
    cases = []

    def case(role, variable, label, value, named=None):
        cases.append(Case(role, variable, label, value, named))

    def each(role, variable, values):
        for label, value in values:
            case(role, variable, label, value)

    # soft_rdma ---------------------------------------------------------------------------------
    each("soft_rdma", "soft_rdma_kernel_modules[1]", [
        ("newline-injection", "rdma_rxe\nevil"), ("dotdot-path", "../rdma_rxe"), ("leading-dash", "-r"), ("space", "rdma rxe"),
        ("percent", "rdma%rxe"), ("56-bytes", "m" * 56)])
    each("soft_rdma", "soft_rdma_links[0].name", BAD_RDMA_NAMES)
    each("soft_rdma", "soft_rdma_links[0].netdev", BAD_NETDEVS)
    # persistent links: the names go into a udev rule and a unit instance name
    each("soft_rdma", "soft_rdma_links[0].name", [("persistent-plus", "rxe+0"), ("persistent-quote", 'rxe"0')])
    each("soft_rdma", "soft_rdma_links[0].netdev", [("persistent-percent", "eth%1"), ("persistent-hash", "eth#1")])
    case("soft_rdma", "soft_rdma_links[0].name", "missing", MISSING)
    case("soft_rdma", "soft_rdma_links[0].type", "unknown", "roce")
    case("soft_rdma", "soft_rdma_links[0].state", "unknown-key", "absent")
    case("soft_rdma", "soft_rdma_links[2]", "duplicate-name", {"name": "rxe0", "netdev": "eth2"}, "soft_rdma_links[2].name")
    case("soft_rdma", "soft_rdma_links[2]", "second-rxe-on-netdev", {"name": "rxe1", "netdev": "eth1"}, "soft_rdma_links[2].netdev")
    each("soft_rdma", "soft_rdma_roce[0].device", SHORT_RDMA_NAMES[:4])
    each("soft_rdma", "soft_rdma_roce[0].port", BAD_PORTS)
    each("soft_rdma", "soft_rdma_roce[0].tos", [("256", 256), ("minus-1", -1)])
    case("soft_rdma", "soft_rdma_roce[1].dscp", "64", 64)
    case("soft_rdma", "soft_rdma_roce[0].dscp", "with-tos", 26)
    case("soft_rdma", "soft_rdma_roce[0].device", "persistent-plus", "rxe+0")
    case("soft_rdma", "soft_rdma_roce[2]", "duplicate-port", {"device": "rxe0", "port": 1, "tos": 0}, "soft_rdma_roce[2].port")
    case("soft_rdma", "soft_rdma_exclusive", "not-a-boolean", "maybe")

    # rdma_core ---------------------------------------------------------------------------------
    each("rdma_core", "rdma_core_memlock_value", [
        ("newline-injection", "unlimited\n* hard memlock 0"), ("number-newline-injection", "64\n*\thard\tmemlock\t0"),
        ("negative", "-2"), ("word", "lots"), ("unit-suffix", "64k"), ("inner-space", "64 64"), ("too-large", str(2**64))])
    each("rdma_core", "rdma_core_memlock_domain", [
        ("newline-injection", "@rdma\n*\thard\tmemlock\t0"), ("space", "@rdma users"), ("hash", "#rdma"), ("slash", "@rd/ma"),
        ("leading-dash", "-rdma"), ("empty", "")])
    each("rdma_core", "rdma_core_group", [
        ("slash", "rd/ma"), ("dotdot", ".."), ("leading-dash", "-rdma"), ("newline", "rdma\nroot"), ("percent", "rdma%"),
        ("only-digits", "1000"), ("33-chars", "g" * 33)])
    each("rdma_core", "rdma_core_extra_packages[0]", [
        ("leading-dash", "-y"), ("space", "perftest rdma-core"), ("newline", "perftest\nrdma-core"), ("256-chars", "p" * 256)])
    case("rdma_core", "rdma_core_install_packages", "not-a-boolean", "maybe")

    # ipoib -------------------------------------------------------------------------------------
    each("ipoib", "ipoib_connections[0].name", [
        ("newline", "ib0\nib1"), ("leading-dash", "-ib0"), ("nul", "ib\x000"), ("escape", "ib0\x1b[31m"), ("256-chars", "n" * 256)])
    each("ipoib", "ipoib_connections[0].ifname", SHORT_NETDEVS[:5])
    each("ipoib", "ipoib_connections[1].parent", [("slash", "ib/0"), ("newline", "ib0\nib1"), ("child-too-long", "ib0123456789a")])
    each("ipoib", "ipoib_connections[1].pkey", [
        ("zero", "0x0000"), ("full-bit-only", "0x8000"), ("17-bits", "0x10000"), ("newline-inside", "0x80\n02")])
    case("ipoib", "ipoib_connections[1].pkey", "parent-without-pkey", MISSING, "ipoib_connections[1].parent")
    each("ipoib", "ipoib_connections[0].mtu", [("negative", -1), ("above-65520", 65521), ("word", "jumbo")])
    case("ipoib", "ipoib_connections[1].mtu", "datagram-4093", 4093)
    for label, value in (("prefix-33", "192.0.2.1/33"), ("octet-300", "300.1.1.1/24"), ("double-prefix", "192.0.2.0/24/1"),
                         ("newline", "192.0.2.1/24\n10.0.0.1/8")):
        case("ipoib", "ipoib_connections[0].ipv4.addresses", label, [value])
    case("ipoib", "ipoib_connections[0].ipv4.gateway", "octet-300", "300.1.1.1")
    case("ipoib", "ipoib_connections[0].state", "unknown", "gone")
    case("ipoib", "ipoib_connections[0].mut", "unknown-key", 9000)
    case("ipoib", "ipoib_connections[2]", "duplicate-name", {"name": "ib0"}, "ipoib_connections[2].name")

    # roce_qos ----------------------------------------------------------------------------------
    each("roce_qos", "rdma_qos_intent.roce.dscp", [("64", 64), ("minus-1", -1)])
    case("roce_qos", "rdma_qos_intent.roce.priority", "8", 8)
    case("roce_qos", "rdma_qos_intent.ecn.probability", "101", 101)
    case("roce_qos", "rdma_qos_intent.pfc.priorities", "9", [3, 9], "rdma_qos_intent.pfc.priorities[1]")
    each("roce_qos", "roce_qos_interfaces[0].netdev", SHORT_NETDEVS)
    case("roce_qos", "roce_qos_interfaces[0].netdev", "persistent-plus", "eth+1")
    each("roce_qos", "roce_qos_interfaces[0].device", SHORT_RDMA_NAMES)
    each("roce_qos", "roce_qos_interfaces[0].port", BAD_PORTS)
    case("roce_qos", "roce_qos_interfaces[1]", "duplicate-netdev", {"netdev": "eth1"}, "roce_qos_interfaces[1].netdev")
    for variable, label, value in (
        ("roce_qos_tc_rules[0].dscp", "64", 64),
        ("roce_qos_tc_rules[0].ttl", "256", 256),
        ("roce_qos_tc_rules[0].device", "dotdot-path", "../mlx5_0"),
        ("roce_qos_tc_rules[0].rules[0].dst_ip", "mask-33", "192.0.2.0/33"),
        ("roce_qos_tc_rules[0].rules[0].dst_ip", "comma-injection", "192.0.2.1,tclass=0"),
        ("roce_qos_tc_rules[0].rules[0].src_ip", "with-mask", "192.0.2.1/32"),
    ):
        case("roce_qos", variable, label, value)
    case("roce_qos", "roce_qos_tc_rules[1]", "tclass-256", {"device": "mlx5_0", "port": 2, "traffic_class": 256},
         "roce_qos_tc_rules[1].traffic_class")
    each("roce_qos", "roce_qos_dcb_dir", [
        ("relative", "dcb"), ("space", "/etc/rdma fabric"), ("newline", "/etc/dcb\nExecStart=/bin/sh"), ("percent-specifier", "/etc/%i")])
    case("roce_qos", "roce_qos_roce_mode", "v3", "v3")

    # switch_qos --------------------------------------------------------------------------------
    for label, value in (("newline", "swp1\nswp2"), ("descending", "swp1,swp6-swp2"), ("not-a-port", "eth0"), ("empty", ""),
                         ("semicolon", "swp1;reboot")):
        named = "rdma_qos_intent.switch.ports[1]" if label == "descending" else "rdma_qos_intent.switch.ports"
        case("switch_qos", "rdma_qos_intent.switch.ports", label, value, named)
    each("switch_qos", "rdma_qos_intent.switch.pfc_group", [("newline", "ROCE\nPFC"), ("space", "ROCE PFC")])
    case("switch_qos", "rdma_qos_intent.switch.xoff_size", "minus-1", -1)
    each("switch_qos", "switch_qos_traffic_conf", [("relative", "traffic.conf"), ("newline", "/etc/traffic.conf\n/etc/passwd")])
    case("switch_qos", "switch_qos_spectrum_reload", "empty", "")
    each("switch_qos", "switch_qos_consistency_check", [("format", "/usr/bin/check %s"), ("relative", "cl-consistency-check")])
    each("switch_qos", "switch_qos_nv", [("leading-dash", "-x"), ("space", "nv show"), ("newline", "nv\nreboot"), ("dotdot-path", "../nv")])
    case("switch_qos", "switch_qos_platform", "unknown", "cumulus")

    # fabric_check ------------------------------------------------------------------------------
    each("fabric_check", "fabric_check_ip", [
        ("with-prefix", "169.254.77.1/24"), ("octet-300", "300.1.1.1"), ("three-octets", "192.0.2"), ("leading-zero", "192.0.2.01"),
        ("trailing-newline", "192.0.2.1\n"), ("ipv6", "2001:db8::1")])
    case("fabric_check", "fabric_check_tests", "empty", [])
    case("fabric_check", "fabric_check_tests", "unknown-test", ["rping", "iperf"])
    each("fabric_check", "fabric_check_timeout", [("zero", 0), ("above-a-day", 86401)])
    case("fabric_check", "fabric_check_pingpong_iters", "zero", 0)
    case("fabric_check", "fabric_check_write_bw_seconds", "not-below-timeout", 30)
    case("fabric_check", "fabric_check_report_dir", "newline", "/tmp/report\nx")
    case("fabric_check", "fabric_check_topology", "unknown", "mesh")
    each("fabric_check", "fabric_check_pairs[0]", [
        ("one-host", ["vm1"]), ("with-itself", ["vm1", "vm1"]), ("number", ["vm1", 2]), ("not-in-the-play", ["vm1", "vm2"])])
    each("fabric_check", "fabric_check_max_pairs", [("negative", -1), ("word", "two")])
    each("fabric_check", "fabric_check_outlier_fraction", [("zero", 0), ("above-one", 1.5)])
    case("fabric_check", "fabric_check_ib", "unknown-mode", "sometimes")
    each("fabric_check", "fabric_check_ib_rate", [("negative", -1), ("word", "fast")])
    case("fabric_check", "fabric_check_ib_ipoib[0].pkey", "no-partition", "0x8000")
    case("fabric_check", "fabric_check_ib_sm_hosts[0]", "newline", "sm1\nsm2")
    case("fabric_check", "fabric_check_ib_ping_count", "not-below-timeout", 30)
    case("fabric_check", "fabric_check_ib_error_thresholds.PortXmitWait", "not-an-error-counter", 5)
    each("fabric_check", "fabric_check_ping_count", [("zero", 0), ("not-within-timeout", 141), ("word", "five")])
    each("fabric_check", "fabric_check_iperf3_seconds", [("zero", 0), ("not-below-timeout", 30)])
    each("fabric_check", "fabric_check_iperf3_port", [("zero", 0), ("above-65535", 65536), ("perftest-port", 18515)])
    case("fabric_check", "fabric_check_counters", "word", "sometimes")
    each("fabric_check", "fabric_check_counter_threshold", [("negative", -1), ("word", "few")])
    each("fabric_check", "fabric_check_counter_thresholds.packets_sent", [("not-an-error-counter", 5)])
    case("fabric_check", "fabric_check_counter_thresholds.retransmits", "negative", -1)
    case("fabric_check", "fabric_check_counter_thresholds", "list", ["retransmits"])
    case("fabric_check", "fabric_check_mtu", "word", "sometimes")
    case("fabric_check", "fabric_check_bonds", "list", [True])
    each("fabric_check", "fabric_check_bond_slaves", [("zero", 0), ("negative", -2), ("word", "two"), ("boolean", True),
                                                      ("list", [2]), ("fraction", 1.5)])
    each("fabric_check", "fabric_check_bond_slaves.bond0", [("zero", 0), ("word", "two"), ("leading-zero", "02")])
    case("fabric_check", "fabric_check_bond_slaves.bond/0", "slash-in-bond-name", 2)

    # subnet_manager ----------------------------------------------------------------------------
    each("subnet_manager", "subnet_manager_partitions[0].pkey", [
        ("zero", 0), ("full-bit", "0x8002"), ("above-16-bits", 0x10000), ("not-hex", "0xZZ"), ("bool", True)])
    each("subnet_manager", "subnet_manager_partitions[0].name", [
        ("equals", "a=b"), ("semicolon", "x;y"), ("newline-injection", "x\ny=0x3 : ALL=full;"), ("space", "a b"), ("65-chars", "n" * 65)])
    case("subnet_manager", "subnet_manager_partitions[0].mtu", "4096-not-a-code", 4096)
    case("subnet_manager", "subnet_manager_partitions[0].rate", "unknown-code", 23)
    case("subnet_manager", "subnet_manager_partitions[0].sl", "16", 16)
    case("subnet_manager", "subnet_manager_partitions[0].members[0].guid", "short", "0x2c90300002001")
    case("subnet_manager", "subnet_manager_partitions[0].members[0].guid", "newline-injection", "ALL;\nx=0x3 : ALL")
    case("subnet_manager", "subnet_manager_partitions[0].members[0].membership", "both-without-allow-both-pkeys", "both")
    case("subnet_manager", "subnet_manager_partitions[1]", "duplicate-pkey",
         {"name": "other", "pkey": 2, "members": [{"guid": "ALL"}]}, "subnet_manager_partitions[1].pkey")
    case("subnet_manager", "subnet_manager_options.sm_priority", "16", 16)
    case("subnet_manager", "subnet_manager_options.log_file", "newline-injection", "/var/log/x\nsm_priority 15")
    case("subnet_manager", "subnet_manager_options.bogus_option", "unknown-option", 1)
    case("subnet_manager", "subnet_manager_ports[0]", "keyword", "ALL")
    case("subnet_manager", "subnet_manager_config_dir", "with-the-service", "/srv/opensm")

    # nfs_rdma ----------------------------------------------------------------------------------
    # paths, clients and options go into /etc/exports.d and a systemd mount unit: nothing may add a line, a client or an option
    each("nfs_rdma", "nfs_rdma_exports[0].path", [
        ("dotdot-path", "/srv/../etc"), ("space", "/srv/rdma x"), ("comma", "/srv/rdma,x"),
        ("newline-injection", "/srv/rdma\n/ *(rw,no_root_squash)")])
    case("nfs_rdma", "nfs_rdma_exports[1]", "duplicate-path", {"path": "/srv/rdma/", "clients": [{"host": "*"}]}, "nfs_rdma_exports[1].path")
    case("nfs_rdma", "nfs_rdma_exports[0].clients[0].host", "space", "a b")
    case("nfs_rdma", "nfs_rdma_exports[0].clients[0].options[0]", "comma-injection", "rw,no_root_squash")
    case("nfs_rdma", "nfs_rdma_mounts[0].path", "root", "/")
    case("nfs_rdma", "nfs_rdma_mounts[0].options[1]", "role-sets-proto", "proto=tcp")
    case("nfs_rdma", "nfs_rdma_mounts[0].server", "ipv6-zone-newline-injection", "fe80::1%x\nOptions=proto=tcp")
    case("nfs_rdma", "nfs_rdma_port", "zero", 0)
    case("nfs_rdma", "nfs_rdma_links[0]", "dotdot-path", "../x")
    # issue 33: numbers and booleans where a module takes text, values checked as the task uses them, list items whose
    # problem ansible-core's argument spec check would report without the index, contradictions across entries
    case("soft_rdma", "soft_rdma_links[1].name", "number-for-text", 5)
    case("soft_rdma", "soft_rdma_links[1].netdev", "bool-for-text", True)
    case("soft_rdma", "soft_rdma_links[1]", "item-not-a-dict", "rxe1")
    case("soft_rdma", "soft_rdma_roce[1].mode", "number-for-text", 2)
    case("rdma_core", "rdma_core_memlock_domain", "number-for-text", 1000)
    case("rdma_core", "rdma_core_group", "number-for-text", 1000)
    case("ipoib", "ipoib_connections[1]", "item-not-a-dict", "ib1")
    case("ipoib", "ipoib_connections[1].ifname", "number-for-text", 7)
    case("ipoib", "ipoib_connections[2]", "second-profile-up-on-ib0",
         {"name": "other", "ifname": "ib0"}, "ipoib_connections[2]")
    case("roce_qos", "roce_qos_tc_rules[1]", "second-global-tclass",
         {"device": "mlx5_0", "port": 1, "traffic_class": 3}, "roce_qos_tc_rules[1]")
    case("roce_qos", "roce_qos_tc_rules[0].device", "number-for-text", 5)
    case("roce_qos", "roce_qos_interfaces[1]", "item-not-a-dict", "eth2")
    case("switch_qos", "rdma_qos_intent.switch.pfc_group", "final-newline", "roce\n")
    case("switch_qos", "rdma_qos_intent.pfc.priorities", "arabic-indic-digit", ["\u0663"], "rdma_qos_intent.pfc.priorities[0]")
    case("fabric_check", "fabric_check_timeout", "trailing-space", "30 ")
    case("fabric_check", "fabric_check_ping_count", "superscript-digit", "\u00b2")
    case("fabric_check", "fabric_check_ib_ipoib[1]", "item-not-a-dict", "ib0")
    case("subnet_manager", "subnet_manager_partitions[0].mtu", "not-a-number", "x")
    case("subnet_manager", "subnet_manager_partitions[0].members[1]", "item-not-a-dict", "0x0002c90300000001")
    # issue 33: what exportfs or the kernel would resolve silently or refuse after the file is written
    case("nfs_rdma", "nfs_rdma_exports[0].clients[0].options[1]", "ro-with-rw", "ro")
    case("nfs_rdma", "nfs_rdma_exports[0].clients[0].options[2]", "async-with-sync", "async")
    case("nfs_rdma", "nfs_rdma_exports[0].clients[0].options[0]", "flag-with-value", "rw=1")
    case("nfs_rdma", "nfs_rdma_exports[0].clients[0].options[0]", "anonuid-without-number", "anonuid=x")
    case("nfs_rdma", "nfs_rdma_exports[0].clients[1]", "one-client-two-spellings", {"host": "169.254.77.0/255.255.255.0"},
         "nfs_rdma_exports[0].clients[1].host")
    case("nfs_rdma", "nfs_rdma_exports", "one-fsid-two-paths",
         [{"path": "/srv/a", "clients": [{"host": "*", "options": ["rw", "fsid=root"]}]},
          {"path": "/srv/b", "clients": [{"host": "*", "options": ["ro", "fsid=0"]}]}], "nfs_rdma_exports[1].clients[0].options[1]")
    case("nfs_rdma", "nfs_rdma_mounts[0].options[1]", "nfsvers-with-vers", "nfsvers=3")
    case("nfs_rdma", "nfs_rdma_mounts[0].options[1]", "xprtsec-over-rdma", "xprtsec=tls")
    case("nfs_rdma", "nfs_rdma_state", "unknown", "gone")

    # topology ----------------------------------------------------------------------------------
    # rail, switch and node names go into Slurm's files, where ',', '[', '=' and spaces are syntax; the port goes into argv
    each("topology", "topology_ib_rails[0].port", [("text-with-leading-zero", "01"), ("zero", 0), ("above-255", 256)])
    case("topology", "topology_ib_rails[0].ca", "option-injection", "-x")
    case("topology", "topology_ib_rails[0].name", "comma", "a,b")
    case("topology", "topology_ib_rails[0]", "item-not-a-dict", "rail0")
    case("topology", "topology_ib_rails[1]", "duplicate-name", {"name": "rail0", "host": "sm2", "ca": "mlx5_1", "port": 1},
         "topology_ib_rails[1].name")
    case("topology", "topology_ibnetdiscover", "bracket-in-rail", {"rail[0]": "text"}, "topology_ibnetdiscover['rail[0]']")
    case("topology", "topology_lldp_interfaces[0]", "option-injection", "-x")
    case("topology", "topology_lldp_rails.eth1", "space", "rail 0", "topology_lldp_rails['eth1']")
    case("topology", "topology_hosts[2]", "duplicate", "node01")
    case("topology", "topology_guid_map", "not-a-guid", {"0xZZ": "node01"}, "topology_guid_map['0xZZ']")
    case("topology", "topology_switch_names", "equals", {"0x0002c90300000100": "leaf=1"}, "topology_switch_names['0x0002c90300000100']")
    case("topology", "topology_group_prefix", "starts-with-digit", "1fabric")
    case("topology", "topology_slurm_form", "unknown", "torus")
    case("topology", "topology_slurm_dir", "relative", "etc/slurm")
    case("topology", "topology_slurm_node_names.node01", "bracket-injection", "n[1-2]", "topology_slurm_node_names['node01']")
    each("topology", "topology_slurm_block_sizes", [("decreasing", [16, 4]), ("zero", [0])])
    case("topology", "topology_slurm_reconfigure", "word", "sometimes")

    # nic_firmware ------------------------------------------------------------------------------
    # what the module refuses without the card, per card: the device, the keys and values, dangerous keys, the reboot's text
    each("nic_firmware", "nic_firmware_devices[0].device", [("interface-name", "eth0"), ("option-injection", "-y")])
    each("nic_firmware", "nic_firmware_devices[0].settings.NUM_OF_VFS", [("above-127", 128), ("leading-zero", "08")])
    case("nic_firmware", "nic_firmware_devices[0].settings.LINK_TYPE_P1", "unknown-type", "infiniband")
    case("nic_firmware", "nic_firmware_devices[0].settings.PCI_WR_ORDERING", "not-first-class", 1)
    case("nic_firmware", "nic_firmware_devices[0].raw_settings.SRIOV_EN", "first-class-as-raw", 1)
    case("nic_firmware", "nic_firmware_devices[0].allow", "dangerous-not-allowed", [], "nic_firmware_devices[0].raw_settings.NUM_OF_PF")
    case("nic_firmware", "nic_firmware_devices[0].allow[1]", "not-a-dangerous-key", "SRIOV_EN", "nic_firmware_devices[0].allow[1]")
    case("nic_firmware", "nic_firmware_devices[1]", "same-card-twice", {"device": "0000:03:00.0"}, "nic_firmware_devices[1].device")
    case("nic_firmware", "nic_firmware_tool", "unknown", "flint")
    each("nic_firmware", "nic_firmware_reboot_batch", [("zero", 0), ("text-with-space", "2 ")])
    case("nic_firmware", "nic_firmware_reboot_timeout", "too-short", 5)
    case("nic_firmware", "nic_firmware_rdma_devices[0]", "dotdot-path", "../x")
    case("nic_firmware", "nic_firmware_reboot_test_command", "number-for-text", 5)

    # container_host ----------------------------------------------------------------------------
    # rdma_system's choices, each cgroup limit as rdma_cgroup checks it (persistent: a service or a slice), the runtimes'
    # services, the memlock value as it is written, the image as docker and podman read their argv
    case("container_host", "container_host_netns_mode", "unknown", "private")
    case("container_host", "container_host_netns_when_busy", "unknown", "wait")
    case("container_host", "container_host_reboot", "word", "maybe")
    case("container_host", "container_host_reboot_timeout", "too-short", 5)
    case("container_host", "container_host_reboot_test_command", "number-for-text", 5)
    units = [("scope", "docker-4f2a.scope"), ("no-type", "kubepods"), ("dotdot-path", "../x.slice"), ("space", "a b.slice")]
    each("container_host", "container_host_cgroup_limits[0].unit", units)
    each("container_host", "container_host_cgroup_limits[0].device", [("slash", "mlx5/0"), ("newline", "mlx5_0\n"), ("256", "m" * 256)])
    limits = [("negative", -1), ("leading-zero", "064"), ("word", "unlimited"), ("boolean", True), ("too-large", 2**31)]
    each("container_host", "container_host_cgroup_limits[0].hca_handle", limits)
    case("container_host", "container_host_cgroup_limits[1].hca_object", "fraction", "1.5")
    case("container_host", "container_host_cgroup_limits[0].state", "unknown-key", "absent")
    case("container_host", "container_host_cgroup_limits[1].unit", "same-device-twice", "kubepods.slice")
    case("container_host", "container_host_cgroup_limits[0].unit", "missing", MISSING)
    each("container_host", "container_host_runtime_services", [("word", "all"), ("text", "containerd.service")])
    each("container_host", "container_host_runtime_services[0]", [("socket", "docker.socket"), ("slice", "kubepods.slice"), ("leading-dash", "-x.service")])
    case("container_host", "container_host_runtime_services[1]", "listed-twice", "containerd.service")
    each("container_host", "container_host_memlock", [("negative", "-2"), ("unit-suffix", "64M"), ("percent", "50%")])
    case("container_host", "container_host_restart_services", "word", "later")
    each("container_host", "container_host_check_image", [("leading-dash", "--privileged"), ("space", "debian bookworm"), ("number-for-text", 5)])
    each("container_host", "container_host_check_run_options[1]", [("newline-injection", "a\nb"), ("empty", ""), ("list", ["x"])])
    case("container_host", "container_host_check_run_options", "text", "--privileged")
    case("gpudirect", "gpudirect_devices", "text", "mlx5_0")
    each("gpudirect", "gpudirect_devices[0]", [("slash", "mlx5/0"), ("leading-dash", "-mlx5_0"), ("number", 5)])
    case("gpudirect", "gpudirect_devices[1]", "listed-twice", "mlx5_0")
    case("gpudirect", "gpudirect_require", "unknown", "all")
    case("gpudirect", "gpudirect_acs_scope", "unknown", "bridges")
    each("gpudirect", "gpudirect_acs_fix", [("word", "maybe"), ("list", [True])])
    case("gpudirect", "gpudirect_acs_persistent", "word", "later")
    case("gpudirect", "gpudirect_peermem", "unknown", "loaded")
    each("gpudirect", "gpudirect_peermem_module", [("option", "-r"), ("space", "nvidia peermem"), ("number", 5), ("path", "../x")])
    case("gpudirect", "gpudirect_dmabuf_probe", "word", "perhaps")
    case("gpudirect", "gpudirect_fail", "word", "no way")
    each("gpudirect", "gpudirect_reload_modules[0]", [("option", "-r"), ("space", "mlx5 ib")])
    case("gpudirect", "gpudirect_reload_modules[1]", "listed-twice", "mlx5_ib")
    return cases


CASES = _corpus()

_TOKEN = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def _steps(path: str) -> list:
    """'a[0].b' -> ['a', 0, 'b']."""
    steps = []
    for index, key in _TOKEN.findall(path):
        steps.append(int(index) if index else key)
    return steps


def settings_for(case: Case) -> dict:
    """BASE[case.role] with case.variable set to case.value (removed for MISSING; missing dicts are made, a list grows at its end)."""
    settings = copy.deepcopy(BASE[case.role])
    steps = _steps(case.variable)
    node = settings
    for step in steps[:-1]:
        node = node.setdefault(step, {}) if isinstance(node, dict) else node[step]
    last = steps[-1]
    if case.value is MISSING:
        del node[last]
    elif isinstance(node, list) and last == len(node):
        node.append(copy.deepcopy(case.value))
    else:
        node[last] = copy.deepcopy(case.value)
    return settings


def case_id(case: Case) -> str:
    return f"{case.role}-{case.variable}-{case.label}"
