# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every input of every role, checked before the role changes anything.

errors(role, settings) takes all of a role's variables and returns one line per
problem, each starting with the variable's path (``soft_rdma_links[1].netdev:
'-x' ...``); an empty list means the role may run. The rules are the modules'
own: an entry that a role hands to a module goes through that module's
argument spec (ARGUMENT_SPEC and ARGUMENT_RULES, which the module gives
AnsibleModule) and the pure validator the module calls, with the values the
role fills in for missing keys. Only what a module never sees is checked here:
file and command paths, kernel module and package names, and the rules across
entries (a link name listed twice, two rxe links on one netdev).

Pure code: no I/O. The rdma.fabric.role_input_errors filter wraps errors().
"""

from __future__ import annotations

import re

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError

from ansible_collections.rdma.fabric.plugins.module_utils import (
    _args,
    _counters,
    _ipoib,
    _limits,
    _mlxconfig,
    _persist,
    _rdma_cgroup,
    _rdma_tool,
    _roce,
    _tclass,
    _validate,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils import (
    _fabric_check,
    _gpudirect_gate,
    _ib_diags,
    _nfs_rdma,
    _opensm_partitions,
    _qos_intent,
    _topology,
)

ROLE_VARIABLES = {
    "soft_rdma": ("soft_rdma_kernel_modules", "soft_rdma_links", "soft_rdma_exclusive", "soft_rdma_roce"),
    "rdma_core": (
        "rdma_core_install_packages",
        "rdma_core_extra_packages",
        "rdma_core_group",
        "rdma_core_memlock_domain",
        "rdma_core_memlock_value",
        "rdma_core_memlock_systemd",
    ),
    "ipoib": ("ipoib_connections", "ipoib_install_networkmanager"),
    "nic_firmware": (
        "nic_firmware_devices",
        "nic_firmware_tool",
        "nic_firmware_reboot",
        "nic_firmware_reboot_batch",
        "nic_firmware_reboot_timeout",
        "nic_firmware_rdma_devices",
        "nic_firmware_reboot_test_command",
    ),
    "topology": (
        "topology_source",
        "topology_ib_rails",
        "topology_ibnetdiscover",
        "topology_lldp_neighbors",
        "topology_lldp_interfaces",
        "topology_lldp_rails",
        "topology_lldp_switches",
        "topology_hosts",
        "topology_guid_map",
        "topology_switch_names",
        "topology_groups",
        "topology_group_prefix",
        "topology_slurm_hosts",
        "topology_slurm_dir",
        "topology_slurm_form",
        "topology_slurm_rail",
        "topology_slurm_yaml_rails",
        "topology_slurm_node_names",
        "topology_slurm_nodes",
        "topology_slurm_block_sizes",
        "topology_slurm_reconfigure",
    ),
    "roce_qos": (
        "rdma_qos_intent",
        "roce_qos_interfaces",
        "roce_qos_unsupported",
        "roce_qos_roce_mode",
        "roce_qos_persistent",
        "roce_qos_dscp_prio_exclusive",
        "roce_qos_tc_rules",
        "roce_qos_dcb_dir",
    ),
    "switch_qos": (
        "rdma_qos_intent",
        "switch_qos_platform",
        "switch_qos_asic",
        "switch_qos_state",
        "switch_qos_traffic_conf",
        "switch_qos_features_conf",
        "switch_qos_syntax_check",
        "switch_qos_consistency_check",
        "switch_qos_spectrum_reload",
        "switch_qos_nv",
        "switch_qos_apply",
        "switch_qos_backup",
    ),
    "fabric_check": (
        "fabric_check_ip",
        "fabric_check_topology",
        "fabric_check_pairs",
        "fabric_check_max_pairs",
        "fabric_check_outlier_fraction",
        "fabric_check_tests",
        "fabric_check_timeout",
        "fabric_check_pingpong_iters",
        "fabric_check_write_bw_seconds",
        "fabric_check_report_dir",
        "fabric_check_report_only",
        "fabric_check_roce",
        "fabric_check_ib",
        "fabric_check_ib_rate",
        "fabric_check_ib_ipoib",
        "fabric_check_ib_sm_hosts",
        "fabric_check_ib_ping_count",
        "fabric_check_ib_error_threshold",
        "fabric_check_ib_error_thresholds",
        "fabric_check_ping_count",
        "fabric_check_iperf3_seconds",
        "fabric_check_iperf3_port",
        "fabric_check_counters",
        "fabric_check_counter_threshold",
        "fabric_check_counter_thresholds",
        "fabric_check_mtu",
        "fabric_check_bonds",
        "fabric_check_bond_slaves",
    ),
    "nfs_rdma": (
        "nfs_rdma_server",
        "nfs_rdma_exports",
        "nfs_rdma_port",
        "nfs_rdma_threads",
        "nfs_rdma_mounts",
        "nfs_rdma_links",
        "nfs_rdma_install",
        "nfs_rdma_state",
    ),
    "container_host": (
        "container_host_netns_mode",
        "container_host_netns_when_busy",
        "container_host_reboot",
        "container_host_reboot_timeout",
        "container_host_reboot_test_command",
        "container_host_cgroup_limits",
        "container_host_runtime_services",
        "container_host_memlock",
        "container_host_restart_services",
        "container_host_check",
        "container_host_check_image",
        "container_host_check_run_options",
    ),
    "gpudirect": (
        "gpudirect_devices",
        "gpudirect_require",
        "gpudirect_acs_scope",
        "gpudirect_acs_fix",
        "gpudirect_acs_persistent",
        "gpudirect_peermem",
        "gpudirect_peermem_module",
        "gpudirect_dmabuf_probe",
        "gpudirect_fail",
        "gpudirect_reload_modules",
    ),
    "subnet_manager": (
        "subnet_manager_partitions",
        "subnet_manager_options",
        "subnet_manager_ports",
        "subnet_manager_install",
        "subnet_manager_manage_service",
        "subnet_manager_config_dir",
        "subnet_manager_validate",
    ),
}

# The keys of an entry that a role hands on to a module, and what it puts in for a missing one
# (the `| default(...)` of the role's task; `| default(omit)` is no entry here).
LINK_KEYS = ("name", "type", "netdev", "persistent", "allow_rename")
LINK_DEFAULTS = {"type": "rxe", "persistent": True, "allow_rename": False}
ROCE_KEYS = ("device", "port", "mode", "tos", "dscp", "persistent", "follow_rename")
ROCE_DEFAULTS = {"port": 1, "persistent": True, "follow_rename": False}
INTERFACE_KEYS = ("netdev", "device", "port")
TC_KEYS = ("device", "port", "traffic_class", "dscp", "rules", "ttl", "state", "exclusive")
TC_DEFAULTS = {"port": 1, "state": "present"}
IPOIB_KEYS = tuple(_ipoib.ARGUMENT_SPEC)
IPOIB_DEFAULTS = {"state": "present"}

# What each module gives AnsibleModule through _args.module(): its argument spec, its rules, and the string
# options that take a YAML number as its decimal text (every other string option refuses numbers and booleans).
LINK_MODULE = (_rdma_tool.ARGUMENT_SPEC, _rdma_tool.ARGUMENT_RULES, ())  # rdma_link
ROCE_MODULE = (_roce.ARGUMENT_SPEC, _roce.ARGUMENT_RULES, ())  # roce_mode
TC_MODULE = (_tclass.ARGUMENT_SPEC, _tclass.ARGUMENT_RULES, ())  # tc_rule
IPOIB_MODULE = (_ipoib.ARGUMENT_SPEC, _ipoib.ARGUMENT_RULES, ("pkey",))  # ipoib_connection

FABRIC_TESTS = _fabric_check.TESTS
# fabric_check_max_pairs: a cap on the pairs of one round (0: none)
PAIRS_MAX = 65535
# the ports perftest (ibv_rc_pingpong, ib_write_bw) listens on by default: iperf3 must not take them
PERFTEST_PORT = 18515
FABRIC_TIMEOUT_MAX = 86400
IB_RATE_MAX = 10000  # Gb/s; an XDR 12x port runs at 2,400
IB_COUNTER_MAX = 2**64 - 1
INT_MAX = 2**31 - 1

_INVALID = object()


one_line = _validate.one_line  # every message on one printable line, as the modules print theirs


class _Errors:
    """The collected messages; check() runs a validator and records its ValueError."""

    def __init__(self):
        self.messages = []

    def add(self, message: str, prefix: str = "") -> None:
        self.messages.append(one_line(f"{prefix}.{message}" if prefix else message))

    def check(self, func, *args, prefix: str = ""):
        """func(*args), or _INVALID after recording its error (prefixed with the entry's path)."""
        try:
            return func(*args)
        except ValueError as err:
            self.add(str(err), prefix)
            return _INVALID


def _items(errors: _Errors, value, option: str) -> list:
    """(index, entry) pairs of a list variable; [] after an error."""
    if not isinstance(value, list):
        errors.add(f"{option}: {value!r} is not a list")
        return []
    return list(enumerate(value))


def _known_keys(errors: _Errors, entry, path: str, keys: tuple) -> bool:
    """Whether entry is a dictionary of keys the role hands on (an error is recorded when not)."""
    if not isinstance(entry, dict):
        errors.add(f"{path}: {entry!r} is not a dictionary; allowed: a dictionary with {', '.join(keys)}")
        return False
    unknown = [key for key in entry if key not in keys]
    if unknown:
        errors.add(f"{path}.{unknown[0]}: unknown option; allowed: {', '.join(keys)}")
        return False
    return True


def _module_entry(errors: _Errors, entry, path: str, module_spec: tuple, keys: tuple, defaults=None, fixed=None):
    """The options a role hands to a module for one entry, checked by the module's argument spec.

    module_spec is (ARGUMENT_SPEC, ARGUMENT_RULES, numbers), as the module gives them to _args.module();
    keys are the entry's keys the role hands on, defaults what the role puts in for a missing one (and for
    a key it never takes from the entry), fixed what the role always sets. The raw values go through the
    module's own first check (_args.problem: a YAML number or boolean for a string option, a number
    ansible-core cannot convert) before ansible-core's conversion, as in the module.
    Returns the options as the module would see them, or None after an error.
    """
    if not _known_keys(errors, entry, path, keys):
        return None
    params = dict(defaults or {})
    params.update(entry)
    params.update(fixed or {})
    spec, rules, numbers = module_spec
    raw = _args.problem(spec, params, numbers)
    if raw:
        named = raw.split(":", 1)[0].split(".", 1)[0].split("[", 1)[0] in spec
        errors.add(f"{path}.{raw}" if named else f"{path}: {raw}")
        return None
    result = ArgumentSpecValidator(spec, **rules).validate(params)
    if result.error_messages:
        first = result.errors.errors[0]
        errors.add(f"{path}: {'unsupported parameters: ' if isinstance(first, UnsupportedError) else ''}{first.error_message}")
        return None
    return result.validated_parameters


def _text(errors: _Errors, settings: dict, option: str):
    """A string variable that a task hands on as it is: a YAML number or boolean stays one (the module refuses it)."""
    found = _args.problem({option: {"type": "str"}}, {option: settings[option]})
    if found:
        errors.add(found)
        return _INVALID
    return settings[option]


def _boolean(errors: _Errors, settings: dict, option: str):
    return errors.check(_validate.boolean, settings[option], option)


def _module_entries(errors: _Errors, settings: dict, option: str, module_spec: tuple, keys: tuple, validate, defaults=None) -> list:
    """(index, options) of each entry of a list variable that passes the module's argument spec and validate()."""
    passed = []
    for index, entry in _items(errors, settings[option], option):
        path = f"{option}[{index}]"
        params = _module_entry(errors, entry, path, module_spec, keys, defaults)
        if params is not None and errors.check(validate, params, prefix=path) is not _INVALID:
            passed.append((index, params))
    return passed


def _listed_once(errors: _Errors, seen: dict, key, index: int, path: str, shown: str, allowed: str) -> bool:
    """False, with an error at path, when an earlier entry of the list (seen: key -> index) had key."""
    other = seen.setdefault(key, index)
    if other == index:
        return True
    errors.add(f"{path}: {shown} is listed twice (also {path.split('[')[0]}[{other}]); allowed: {allowed}")
    return False


# --- soft_rdma -------------------------------------------------------------------------------

def _link(params: dict) -> None:
    """What rdma.fabric.rdma_link checks before it looks at the host."""
    _rdma_tool.validate_params(params)
    if params["persistent"]:
        _persist.check_persistable_names(params["name"], params["netdev"])


def _soft_rdma(errors: _Errors, settings: dict) -> None:
    for index, name in _items(errors, settings["soft_rdma_kernel_modules"], "soft_rdma_kernel_modules"):
        errors.check(_validate.kernel_module_name, name, f"soft_rdma_kernel_modules[{index}]")
    names, carriers = {}, {}
    links = _module_entries(errors, settings, "soft_rdma_links", LINK_MODULE, LINK_KEYS,
                            _link, dict(LINK_DEFAULTS, state="present"))
    for index, params in links:
        path = f"soft_rdma_links[{index}]"
        if _listed_once(errors, names, params["name"], index, f"{path}.name", repr(params["name"]), "each link once"):
            _listed_once(errors, carriers, (params["type"], params["netdev"]), index, f"{path}.netdev",
                         f"{params['type']} link on {params['netdev']!r}", f"one {params['type']} link per netdev")
    _boolean(errors, settings, "soft_rdma_exclusive")
    ports = {}
    roce = _module_entries(errors, settings, "soft_rdma_roce", ROCE_MODULE, ROCE_KEYS,
                           _roce.validate_params, ROCE_DEFAULTS)
    for index, params in roce:
        _listed_once(errors, ports, (params["device"], int(params["port"])), index, f"soft_rdma_roce[{index}].port",
                     f"port {params['port']} of {params['device']!r}", "each device and port once")


# --- rdma_core -------------------------------------------------------------------------------

def _rdma_core(errors: _Errors, settings: dict) -> None:
    _boolean(errors, settings, "rdma_core_install_packages")
    for index, name in _items(errors, settings["rdma_core_extra_packages"], "rdma_core_extra_packages"):
        errors.check(_validate.package_name, name, f"rdma_core_extra_packages[{index}]")
    for option, validate in (("rdma_core_group", _limits.validate_group), ("rdma_core_memlock_domain", _limits.validate_domain)):
        value = _text(errors, settings, option)
        if value is not _INVALID:
            errors.check(validate, value, option)
    value = settings["rdma_core_memlock_value"]
    errors.check(_limits.validate_value, value if isinstance(value, str) else str(value), "rdma_core_memlock_value")  # role: | string
    _boolean(errors, settings, "rdma_core_memlock_systemd")


# --- ipoib -----------------------------------------------------------------------------------

def _ipoib_role(errors: _Errors, settings: dict) -> None:
    names = {}
    connections = _module_entries(errors, settings, "ipoib_connections", IPOIB_MODULE, IPOIB_KEYS,
                                  _ipoib.desired_properties, IPOIB_DEFAULTS)
    for index, params in connections:
        _listed_once(errors, names, params["name"], index, f"ipoib_connections[{index}].name", repr(params["name"]), "each connection once")
    # up: activated by the role; present: NetworkManager activates it itself unless autoconnect is false
    _one_profile_per_interface(errors, "ipoib_connections", connections,
                               lambda params: params["state"] == "up" or (params["state"] == "present" and params["autoconnect"] is not False))
    _boolean(errors, settings, "ipoib_install_networkmanager")


def _one_profile_per_interface(errors: _Errors, option: str, connections: list, up) -> None:
    """NetworkManager keeps one active profile per interface: activating a second one takes the first down.

    Two entries that must be up (up(params) is true) on one interface can never both hold,
    and a role that applies them is never idempotent.
    """
    bound = {}
    for index, params in connections:
        if not up(params):
            continue
        interface = _ipoib.device_name(_ipoib.desired_properties(params))
        if interface is None:
            continue
        other = bound.setdefault(interface, index)
        if other != index:
            errors.add(f"{option}[{index}]: profile {params['name']!r} and {option}[{other}] are both to be up on interface {interface!r}, "
                       "where NetworkManager keeps one active profile; allowed: one such profile per interface")


# --- roce_qos --------------------------------------------------------------------------------

def _interface(errors: _Errors, entry, path: str, mode, persistent):
    """One roce_qos_interfaces entry: the netdev as dcb_qos checks it, the device and port as roce_mode does."""
    if not _known_keys(errors, entry, path, INTERFACE_KEYS):
        return None
    if errors.check(_validate.netdev_name, entry.get("netdev"), "netdev", prefix=path) is _INVALID:
        return None
    if persistent is True and errors.check(_roce.persistable_name, entry["netdev"], "netdev", "interface name",
                                           "roce_qos_persistent: false", prefix=path) is _INVALID:
        return None
    if "device" not in entry:
        port = errors.check(_validate.port_number, entry.get("port", 1), "port", prefix=path)
        return None if port is _INVALID else (entry["netdev"], None, port)
    fixed = {"persistent": persistent if persistent is not _INVALID else False}
    if mode not in (_INVALID, ""):
        fixed["mode"] = mode
    params = _module_entry(errors, {key: entry[key] for key in ("device", "port") if key in entry}, path,
                           ROCE_MODULE, ("device", "port"), {"port": 1}, fixed)
    if params is None:
        return None
    checked = errors.check(_roce.validate_params, params, prefix=path)
    return None if checked is _INVALID else (entry["netdev"], checked["device"], checked["port"])


def _roce_qos(errors: _Errors, settings: dict) -> None:
    errors.check(_qos_intent.normalize, settings["rdma_qos_intent"], "rdma_qos_intent")
    errors.check(_validate.choice, settings["roce_qos_unsupported"], ("fail", "skip"), "roce_qos_unsupported")
    mode = errors.check(_validate.choice, settings["roce_qos_roce_mode"], ("v1", "v2", ""), "roce_qos_roce_mode")
    persistent = _boolean(errors, settings, "roce_qos_persistent")
    _boolean(errors, settings, "roce_qos_dscp_prio_exclusive")
    netdevs, ports = {}, {}
    for index, entry in _items(errors, settings["roce_qos_interfaces"], "roce_qos_interfaces"):
        path = f"roce_qos_interfaces[{index}]"
        found = _interface(errors, entry, path, mode, persistent)
        if found is None:
            continue
        netdev, device, port = found
        if _listed_once(errors, netdevs, netdev, index, f"{path}.netdev", repr(netdev), "each netdev once") and device is not None:
            _listed_once(errors, ports, (device, port), index, f"{path}.device", f"port {port} of {device!r}", "each device and port once")
    tc_rules = _module_entries(errors, settings, "roce_qos_tc_rules", TC_MODULE, TC_KEYS, _tclass.module_params, TC_DEFAULTS)
    _tc_rules_agree(errors, [(index, _tclass.module_params(params)) for index, params in tc_rules])
    errors.check(_validate.safe_path, settings["roce_qos_dcb_dir"], "roce_qos_dcb_dir")


def _tc_rules_agree(errors: _Errors, entries: list) -> None:
    """Entries of roce_qos_tc_rules for one device port must not undo each other.

    A port has one global traffic class and one TTL, and a rule is one per address key (the driver
    overwrites it): two entries that set them to different values, or an exclusive entry next to
    another (it removes the other's rules), leave the port changed on every run.
    """
    by_port = {}
    for index, checked in entries:
        by_port.setdefault((checked["device"], checked["port"]), []).append((index, checked))
    for (device, port), listed in by_port.items():
        where = f"port {port} of {device!r}"
        if len(listed) > 1 and any(checked["exclusive"] for _index, checked in listed):
            errors.add(f"roce_qos_tc_rules[{listed[1][0]}]: a second entry for {where} (also roce_qos_tc_rules[{listed[0][0]}]) "
                       "where one is exclusive, which removes the other's rules on every run; allowed: one entry per port with exclusive: true")
            continue
        seen = {}
        for index, checked in listed:
            values = {"global traffic class": checked["global_tclass"], "TTL": checked["ttl"]}
            for rule in checked["rules"]:
                shown = ",".join(f"{name}={value}" for name, value in (("src", rule.src), ("dst", rule.dst)) if value)
                values[f"rule {shown}"] = "absent" if checked["state"] == "absent" else f"tclass {rule.tclass} (dst /{rule.dst_len})"
            for label, value in values.items():
                if value is None:
                    continue
                other, before = seen.setdefault(label, (index, value))
                if other != index and before != value:
                    errors.add(f"roce_qos_tc_rules[{index}]: sets the {label} of {where} to {value}, roce_qos_tc_rules[{other}] to {before}; "
                               "the port holds one, so every run changes it; allowed: one value per port")


# --- switch_qos ------------------------------------------------------------------------------

def _switch_qos(errors: _Errors, settings: dict) -> None:
    errors.check(_qos_intent.normalize, settings["rdma_qos_intent"], "rdma_qos_intent")
    for option, choices in (("switch_qos_platform", ("auto", "traffic_conf", "qos_features", "nvue")),
                            ("switch_qos_asic", ("auto", "broadcom", "spectrum")),
                            ("switch_qos_state", ("present", "absent"))):
        errors.check(_validate.choice, settings[option], choices, option)
    for option in ("switch_qos_traffic_conf", "switch_qos_features_conf", "switch_qos_spectrum_reload"):
        errors.check(_validate.file_path, settings[option], option, True)
    # the checker goes into copy's validate string, '<checker> --datapath-syntax-check -t %s'
    errors.check(_validate.safe_path, settings["switch_qos_consistency_check"], "switch_qos_consistency_check")
    errors.check(_validate.command, settings["switch_qos_nv"], "switch_qos_nv")
    for option in ("switch_qos_syntax_check", "switch_qos_apply", "switch_qos_backup"):
        _boolean(errors, settings, option)


# --- fabric_check ----------------------------------------------------------------------------

def _fabric_check(errors: _Errors, settings: dict) -> None:
    roce = _boolean(errors, settings, "fabric_check_roce")
    if roce is not False or settings["fabric_check_ip"] != "":
        errors.check(_validate.ipv4_address, settings["fabric_check_ip"], "fabric_check_ip")
    _fabric_check_ib(errors, settings)
    errors.check(_validate.choice, settings["fabric_check_topology"], ("auto", "all", "ring"), "fabric_check_topology")
    _fabric_check_pairs(errors, settings["fabric_check_pairs"])
    errors.check(_validate.int_in_range, settings["fabric_check_max_pairs"], 0, PAIRS_MAX, "fabric_check_max_pairs")
    fraction = settings["fabric_check_outlier_fraction"]
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        errors.add(f"fabric_check_outlier_fraction: {fraction!r} is not allowed; allowed: a number above 0 and at most 1 (0.5: half the median)")
    tests = _items(errors, settings["fabric_check_tests"], "fabric_check_tests")
    if isinstance(settings["fabric_check_tests"], list) and not tests:
        errors.add(f"fabric_check_tests: [] runs no traffic; allowed: one or more of {', '.join(FABRIC_TESTS)}")
    listed = {}
    for index, test in tests:
        if errors.check(_validate.choice, test, FABRIC_TESTS, f"fabric_check_tests[{index}]") is not _INVALID:
            _listed_once(errors, listed, test, index, f"fabric_check_tests[{index}]", repr(test), "each test once")
    # the counts, durations and the port go into argvs as they are given ("{{ fabric_check_timeout }}"): checked as that text
    timeout = errors.check(_validate.int_in_range, settings["fabric_check_timeout"], 1, FABRIC_TIMEOUT_MAX, "fabric_check_timeout")
    errors.check(_validate.int_in_range, settings["fabric_check_pingpong_iters"], 1, INT_MAX, "fabric_check_pingpong_iters")
    _below_timeout(errors, settings, "fabric_check_write_bw_seconds", 1, timeout, "ib_write_bw")
    errors.check(_validate.file_path, settings["fabric_check_report_dir"], "fabric_check_report_dir")
    _boolean(errors, settings, "fabric_check_report_only")
    _fabric_check_ip_tests(errors, settings, timeout)
    _fabric_check_counters(errors, settings)
    _below_timeout(errors, settings, "fabric_check_ib_ping_count", 0, timeout, "ibping (about a second per packet)")
    _boolean(errors, settings, "fabric_check_mtu")
    _boolean(errors, settings, "fabric_check_bonds")
    _fabric_check_bond_slaves(errors, settings["fabric_check_bond_slaves"])


def _fabric_check_bond_slaves(errors: _Errors, value) -> None:
    """A slave count for every bond, or {bond: count} with bonds named as netdevs; {} for none."""
    option = "fabric_check_bond_slaves"
    allowed = "an integer of 1 or more"
    if not isinstance(value, dict):
        try:
            _validate.int_in_range(value, 1, INT_MAX, option)
        except ValueError:
            errors.add(f"{option}: {value!r} is not allowed; allowed: {allowed} for every bond, {{bond: count}} per bond, "
                       "or {} (only a bond without slaves fails)")
        return
    for bond, count in value.items():
        path = f"{option}.{bond}"
        if errors.check(_validate.netdev_name, bond, path) is _INVALID:
            continue
        try:
            _validate.int_in_range(count, 1, INT_MAX, path)
        except ValueError:
            errors.add(f"{path}: {count!r} is not a slave count; allowed: {allowed}")


def _fabric_check_pairs(errors: _Errors, pairs) -> None:
    """Explicit pairs: [client, server] of two different host names, each unordered pair once (the role checks the names
    against the play's hosts, which this check does not know)."""
    seen: dict = {}
    for index, pair in _items(errors, pairs, "fabric_check_pairs"):
        path = f"fabric_check_pairs[{index}]"
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(host, str) and host.strip() == host and host for host in pair)):
            errors.add(f"{path}: {pair!r} is not a pair; allowed: [client, server], two inventory host names")
        elif pair[0] == pair[1]:
            errors.add(f"{path}: {pair!r} pairs {pair[0]!r} with itself; allowed: two different hosts")
        else:
            _listed_once(errors, seen, frozenset(pair), index, path, repr(pair), "each pair once, in either direction")


def _below_timeout(errors: _Errors, settings: dict, option: str, low: int, timeout, bounds: str) -> None:
    """A duration or count of low.. that must stay below fabric_check_timeout, which bounds the command it feeds."""
    value = errors.check(_validate.int_in_range, settings[option], low, FABRIC_TIMEOUT_MAX, option)
    if timeout is not _INVALID and value is not _INVALID and value >= timeout:
        allowed = f"{low}-{timeout - 1}" if timeout > 1 else f"{'none' if low else '0'} while fabric_check_timeout is 1"
        errors.add(f"{option}: {value} is not below fabric_check_timeout ({timeout}), which bounds {bounds}; allowed: {allowed}")


def _fabric_check_ip_tests(errors: _Errors, settings: dict, timeout) -> None:
    """ping and iperf3 between the pair's addresses: both bounded by fabric_check_timeout."""
    bound = timeout if timeout is not _INVALID else None
    count = errors.check(_validate.int_in_range, settings["fabric_check_ping_count"], 1, FABRIC_TIMEOUT_MAX, "fabric_check_ping_count")
    # ping sends one request every 0.2 s and waits up to 2 s for the last reply
    if bound is not None and count is not _INVALID and count * 0.2 + 2 > bound:
        most = int(round((bound - 2) / 0.2, 6))
        allowed = f"1-{most}" if most >= 1 else f"none while fabric_check_timeout is {bound} (3 or more fits one packet)"
        errors.add(f"fabric_check_ping_count: {count} packets (0.2 s apart, 2 s for the last reply) do not fit fabric_check_timeout "
                   f"({bound} s), which bounds ping; allowed: {allowed}")
    _below_timeout(errors, settings, "fabric_check_iperf3_seconds", 1, timeout, "iperf3")
    port = errors.check(_validate.int_in_range, settings["fabric_check_iperf3_port"], 1, 65535, "fabric_check_iperf3_port")
    if port == PERFTEST_PORT:
        errors.add(f"fabric_check_iperf3_port: {port} is the port ibv_rc_pingpong and ib_write_bw listen on; "
                   "allowed: another port of 1-65535 (iperf3's own is 5201)")


def _fabric_check_counters(errors: _Errors, settings: dict) -> None:
    _boolean(errors, settings, "fabric_check_counters")
    errors.check(_validate.int_in_range, settings["fabric_check_counter_threshold"], 0, IB_COUNTER_MAX, "fabric_check_counter_threshold")
    meanings = [meaning for meaning in _counters.COMMON if meaning in _counters.ERROR_MEANINGS]
    _thresholds(errors, settings, "fabric_check_counter_thresholds", meanings, "error counter", "not an error counter's common name")


def _thresholds(errors: _Errors, settings: dict, option: str, names, kind: str, unknown: str) -> None:
    """A {counter: threshold} dictionary: each key one of names, each threshold 0..IB_COUNTER_MAX."""
    thresholds = settings[option]
    if not isinstance(thresholds, dict):
        errors.add(f"{option}: {thresholds!r} is not a dictionary; allowed: {{{kind}: threshold}} for the {kind}s {', '.join(names)}")
        return
    for name, value in thresholds.items():
        path = f"{option}.{name}"
        if name not in names:
            errors.add(f"{path}: {unknown}; allowed: {', '.join(names)}")
        else:
            errors.check(_validate.int_in_range, value, 0, IB_COUNTER_MAX, path)


def _fabric_check_ib(errors: _Errors, settings: dict) -> None:
    mode = settings["fabric_check_ib"]
    if mode != "auto":
        try:
            _validate.boolean(mode, "fabric_check_ib")
        except ValueError:
            errors.add(f"fabric_check_ib: {mode!r} is not allowed; allowed: auto, true or false")
    rate = settings["fabric_check_ib_rate"]
    try:
        number = None if isinstance(rate, bool) else float(rate)
    except (TypeError, ValueError):
        number = None
    if number is None or not 0 <= number <= IB_RATE_MAX:
        errors.add(f"fabric_check_ib_rate: {rate!r} is not a rate; allowed: 0 (the fastest Active port of the play) "
                   f"or a rate in Gb/s up to {IB_RATE_MAX}, as ibstat prints it (e.g. 100, 200)")
    names = {}
    connections = _module_entries(errors, settings, "fabric_check_ib_ipoib", IPOIB_MODULE, IPOIB_KEYS,
                                  _ipoib.desired_properties, IPOIB_DEFAULTS)
    for index, params in connections:
        _listed_once(errors, names, params["name"], index, f"fabric_check_ib_ipoib[{index}].name", repr(params["name"]), "each connection once")
    # the check expects every entry but the absent ones up on its interface
    _one_profile_per_interface(errors, "fabric_check_ib_ipoib", connections, lambda params: params["state"] != "absent")
    hosts = {}
    for index, host in _items(errors, settings["fabric_check_ib_sm_hosts"], "fabric_check_ib_sm_hosts"):
        path = f"fabric_check_ib_sm_hosts[{index}]"
        if not isinstance(host, str) or not host.strip() or not host.isprintable():
            errors.add(f"{path}: {host!r} is not an inventory host name")
        else:
            _listed_once(errors, hosts, host, index, path, repr(host), "each host once")
    errors.check(_validate.int_in_range, settings["fabric_check_ib_error_threshold"], 0, IB_COUNTER_MAX, "fabric_check_ib_error_threshold")
    _thresholds(errors, settings, "fabric_check_ib_error_thresholds", _ib_diags.ERROR_COUNTERS, "counter", "not an error counter")


# --- nfs_rdma ----------------------------------------------------------------------------------------------

def _nfs_rdma_role(errors: _Errors, settings: dict) -> None:
    """Each variable on its own (the first problem of each), so one run names every bad variable."""
    defaults = {"nfs_rdma_exports": [], "nfs_rdma_mounts": [], "nfs_rdma_links": []}
    for name in settings:
        errors.check(_nfs_rdma.settings, dict(defaults, **{name: settings[name]}))
    for problem in _nfs_rdma.contradictions(settings):
        errors.add(problem)


# --- subnet_manager --------------------------------------------------------------------------

def _subnet_manager(errors: _Errors, settings: dict) -> None:
    options = errors.check(_opensm_partitions.normalize_options, settings["subnet_manager_options"], "subnet_manager_options")
    allow_both = options is not _INVALID and options.get("allow_both_pkeys") == "TRUE"
    qos = options is not _INVALID and options.get("qos") == "TRUE"
    errors.check(_opensm_partitions.normalize_partitions, settings["subnet_manager_partitions"], "subnet_manager_partitions", allow_both, qos)
    guids = {}
    for index, guid in _items(errors, settings["subnet_manager_ports"], "subnet_manager_ports"):
        path = f"subnet_manager_ports[{index}]"
        checked = errors.check(_opensm_partitions.option_value, "guid", guid, path)
        if checked is not _INVALID:
            _listed_once(errors, guids, checked, index, path, checked, "each port GUID once")
    for option in ("subnet_manager_install", "subnet_manager_validate"):
        _boolean(errors, settings, option)
    manage = _boolean(errors, settings, "subnet_manager_manage_service")
    config_dir = settings["subnet_manager_config_dir"]
    if config_dir != "" and errors.check(_validate.safe_path, config_dir, "subnet_manager_config_dir") is not _INVALID and manage is True:
        errors.add(f"subnet_manager_config_dir: {config_dir!r} would not be read: the OpenSM service reads only its own directory "
                   "(/etc/opensm, /etc/rdma on RHEL); allowed: '' while subnet_manager_manage_service is true")


# --- topology ----------------------------------------------------------------------------------------------

_GROUP_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_RAIL = "rail name"


def _host(value, path: str) -> str:
    if not isinstance(value, str) or not value.strip() or not value.isprintable() or value != value.strip():
        raise ValueError(f"{path}: {value!r} is not an inventory host name")
    return value


def _slurm_word(value, path: str, what: str = _RAIL) -> str:
    """A name that goes into Slurm's files (rail, switch, node): one word there."""
    if not isinstance(value, str) or not _topology.SLURM_NAME.match(value):
        raise ValueError(f"{path}: {value!r} is not a {what}; allowed: 1-64 letters, digits, '_', '.' and '-', starting with a "
                         "letter or digit (Slurm reads ',', '[', '=' and spaces as syntax)")
    return value


def _guid_key(value, path: str) -> str:
    try:
        return _ib_diags.guid(value)
    except (ValueError, TypeError, AttributeError):
        raise ValueError(f"{path}: {value!r} is not a GUID; allowed: 0x and 1-16 hex digits, a node or port GUID") from None


def _hosts(errors: _Errors, settings: dict, option: str) -> list:
    found, seen = [], {}
    for index, host in _items(errors, settings[option], option):
        path = f"{option}[{index}]"
        if errors.check(_host, host, path) is not _INVALID and _listed_once(errors, seen, host, index, path, repr(host), "each host once"):
            found.append(host)
    return found


def _keyed(errors: _Errors, settings: dict, option: str, check_key, check_value, shown: str) -> dict:
    """A dictionary variable, each key and value checked, errors at option['key']."""
    value = settings[option]
    if not isinstance(value, dict):
        errors.add(f"{option}: {value!r} is not a dictionary; allowed: {shown}")
        return {}
    for key, item in value.items():
        path = f"{option}[{key!r}]"
        if errors.check(check_key, key, path) is not _INVALID:
            errors.check(check_value, item, path)
    return value


def _text_output(value, path: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{path}: {type(value).__name__} is not the text the tool printed")
    return value


def _ib_rails(errors: _Errors, settings: dict) -> set:
    rails, seen = set(), {}
    keys = ("name", "host", "ca", "port")
    for index, entry in _items(errors, settings["topology_ib_rails"], "topology_ib_rails"):
        path = f"topology_ib_rails[{index}]"
        if not _known_keys(errors, entry, path, keys):
            continue
        missing = [key for key in keys if key not in entry]
        if missing:
            errors.add(f"{path}.{missing[0]}: required; allowed: a rail name, the inventory host, the CA and the port ibnetdiscover runs from")
            continue
        name = errors.check(_slurm_word, entry["name"], f"{path}.name")
        errors.check(_host, entry["host"], f"{path}.host")
        errors.check(_validate.rdma_device_name, entry["ca"], f"{path}.ca")
        # the task hands the port on as text (item.port | string): that text is what is checked
        port = entry["port"]
        errors.check(_validate.port_number, str(port) if isinstance(port, int) and not isinstance(port, bool) else port, f"{path}.port")
        if name is not _INVALID and _listed_once(errors, seen, name, index, f"{path}.name", repr(name), "each rail once"):
            rails.add(name)
    return rails


def _topology_role(errors: _Errors, settings: dict) -> None:
    source = errors.check(_validate.choice, settings["topology_source"], ("ibnetdiscover", "lldp"), "topology_source")
    rails = _ib_rails(errors, settings)
    given = _keyed(errors, settings, "topology_ibnetdiscover", _slurm_word, _text_output, "{rail: ibnetdiscover text}")
    rails |= {key for key in given if isinstance(key, str)}
    _keyed(errors, settings, "topology_lldp_neighbors", _host, _text_output, "{host: lldpcli json0 text}")
    errors.check(_validate.name_list, settings["topology_lldp_interfaces"], "topology_lldp_interfaces", _validate.netdev_name)
    _keyed(errors, settings, "topology_lldp_rails", _validate.netdev_name, _slurm_word, "{interface: rail name}")
    _keyed(errors, settings, "topology_lldp_switches", lambda key, path: _slurm_word(key, path, "switch name"), _text_output,
           "{switch: lldpcli json0 text}")
    _hosts(errors, settings, "topology_hosts")
    _keyed(errors, settings, "topology_guid_map", _guid_key, _host, "{GUID: inventory host}")
    _keyed(errors, settings, "topology_switch_names", lambda key, path: key, lambda value, path: _slurm_word(value, path, "switch name"),
           "{GUID or chassis id: switch name}")
    for option in ("topology_groups", "topology_slurm_reconfigure"):
        _boolean(errors, settings, option)
    prefix = settings["topology_group_prefix"]
    if not isinstance(prefix, str) or not _GROUP_PREFIX.fullmatch(prefix):
        errors.add(f"topology_group_prefix: {prefix!r} is not allowed; allowed: 1-64 letters, digits and '_', not starting with a digit")
    _hosts(errors, settings, "topology_slurm_hosts")
    errors.check(_validate.file_path, settings["topology_slurm_dir"], "topology_slurm_dir", True)
    form = errors.check(_validate.choice, settings["topology_slurm_form"], _topology.FORMS, "topology_slurm_form")
    rail = settings["topology_slurm_rail"]
    if rail != "" and errors.check(_slurm_word, rail, "topology_slurm_rail") is not _INVALID and source == "ibnetdiscover" \
            and rails and rail not in rails:
        errors.add(f"topology_slurm_rail: {rail!r} is not one of the rails; allowed: '' (the first) or one of {', '.join(sorted(rails))}")
    for index, name in _items(errors, settings["topology_slurm_yaml_rails"], "topology_slurm_yaml_rails"):
        errors.check(_slurm_word, name, f"topology_slurm_yaml_rails[{index}]")
    _keyed(errors, settings, "topology_slurm_node_names", _host, lambda value, path: _slurm_word(value, path, "Slurm node name"),
           "{inventory host: Slurm node name}")
    _hosts(errors, settings, "topology_slurm_nodes")
    sizes = settings["topology_slurm_block_sizes"]
    if errors.check(_topology.check_block_sizes, sizes) is _INVALID:
        errors.messages[-1] = "topology_slurm_" + errors.messages[-1]
    elif sizes and form not in ("block", "yaml", _INVALID):
        errors.add(f"topology_slurm_block_sizes: {sizes} would not be read; allowed: [] while topology_slurm_form is {form}")
    if source == "ibnetdiscover" and not settings["topology_ib_rails"] and not settings["topology_ibnetdiscover"]:
        errors.add("topology_ib_rails: [] and topology_ibnetdiscover: {} leave nothing to read; allowed: a rail to discover or "
                   "what ibnetdiscover printed")


# --- nic_firmware ------------------------------------------------------------------------------------------

def _nic_firmware(errors: _Errors, settings: dict) -> None:
    """What the module refuses without the card's query, per device; the reboot's batch and timeout as throttle and reboot take them."""
    seen = {}
    for index, entry in _items(errors, settings["nic_firmware_devices"], "nic_firmware_devices"):
        path = f"nic_firmware_devices[{index}]"
        if not _known_keys(errors, entry, path, ("device", "settings", "raw_settings", "allow")):
            continue
        if "device" not in entry:
            errors.add(f"{path}.device: required; allowed: a PCI address (0000:03:00.0) or /dev/mst/<name>")
            continue
        device = errors.check(_mlxconfig.device, entry["device"], f"{path}.device")
        if device is not _INVALID:
            _listed_once(errors, seen, device, index, f"{path}.device", repr(device), "each card once")
        errors.check(_mlxconfig.check_static, entry.get("settings", {}), entry.get("raw_settings", {}), entry.get("allow", []),
                     f"{path}.settings", f"{path}.raw_settings")
    errors.check(_validate.choice, settings["nic_firmware_tool"], ("auto", "mstconfig", "mlxconfig"), "nic_firmware_tool")
    _boolean(errors, settings, "nic_firmware_reboot")
    errors.check(_validate.int_in_range, settings["nic_firmware_reboot_batch"], 1, 10000, "nic_firmware_reboot_batch")
    errors.check(_validate.int_in_range, settings["nic_firmware_reboot_timeout"], 60, 7200, "nic_firmware_reboot_timeout")
    errors.check(_validate.name_list, settings["nic_firmware_rdma_devices"], "nic_firmware_rdma_devices", _validate.rdma_device_name)
    _text(errors, settings, "nic_firmware_reboot_test_command")


# --- container_host ----------------------------------------------------------------------------------------

CGROUP_LIMIT_KEYS = ("unit", "device", "hca_handle", "hca_object")
# an image reference as docker and podman take it (argv, never a shell); no leading '-', which they would read as an option
_IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}")


def _container_host(errors: _Errors, settings: dict) -> None:
    """The netns mode and its busy policy as rdma_system takes them; each cgroup limit as rdma_cgroup checks it (persistent,
    so a service or a slice); the runtimes' services and the memlock value in the form they are written."""
    errors.check(_validate.choice, settings["container_host_netns_mode"], ("shared", "exclusive"), "container_host_netns_mode")
    errors.check(_validate.choice, settings["container_host_netns_when_busy"], ("fail", "reboot"), "container_host_netns_when_busy")
    _boolean(errors, settings, "container_host_reboot")
    errors.check(_validate.int_in_range, settings["container_host_reboot_timeout"], 60, 7200, "container_host_reboot_timeout")
    _text(errors, settings, "container_host_reboot_test_command")
    seen = {}
    for index, entry in _items(errors, settings["container_host_cgroup_limits"], "container_host_cgroup_limits"):
        path = f"container_host_cgroup_limits[{index}]"
        if not _known_keys(errors, entry, path, CGROUP_LIMIT_KEYS):
            continue
        missing = [key for key in ("unit", "device") if key not in entry]
        if missing:
            errors.add(f"{path}.{missing[0]}: required; allowed: " + ("a service or a slice, such as containerd.service or "
                                                                      "kubepods.slice" if missing[0] == "unit" else "an RDMA device"))
            continue
        unit = errors.check(_rdma_cgroup.unit_name, entry["unit"], f"{path}.unit")
        if unit is not _INVALID and not unit.endswith((".service", ".slice")):
            errors.add(f"{path}.unit: {unit!r} is a scope, which its maker creates again, so its limits cannot be kept; allowed: "
                       "a service or a slice")
            unit = _INVALID
        device = errors.check(_rdma_cgroup.device, entry["device"], f"{path}.device")
        for key in ("hca_handle", "hca_object"):
            errors.check(_rdma_cgroup.limit, entry.get(key, "max"), f"{path}.{key}")
        if _INVALID not in (unit, device):
            _listed_once(errors, seen, (unit, device), index, path, f"{device!r} of {unit!r}", "each device of a unit once")
    services = settings["container_host_runtime_services"]
    if services != "auto":
        names = {}
        for index, name in _items(errors, services, "container_host_runtime_services"):
            path = f"container_host_runtime_services[{index}]"
            name = errors.check(_rdma_cgroup.unit_name, name, path)
            if name is not _INVALID and not name.endswith(".service"):
                errors.add(f"{path}: {name!r} is not a service; allowed: a service such as containerd.service")
            elif name is not _INVALID:
                _listed_once(errors, names, name, index, path, repr(name), "each service once")
    value = settings["container_host_memlock"]
    errors.check(_limits.validate_value, value if isinstance(value, str) else str(value), "container_host_memlock")  # role: | string
    _boolean(errors, settings, "container_host_restart_services")
    _boolean(errors, settings, "container_host_check")
    image = _text(errors, settings, "container_host_check_image")
    if image is not _INVALID and image and not _IMAGE.fullmatch(image):
        errors.add(f"container_host_check_image: {image!r} is not an image reference; allowed: '' (no container check) or a "
                   "name such as debian:bookworm (letters, digits, '.', '_', '/', ':', '@', '-'; not starting with '-')")
    for index, option in _items(errors, settings["container_host_check_run_options"], "container_host_check_run_options"):
        path = f"container_host_check_run_options[{index}]"
        text = _text(errors, {path: option}, path)
        if text is not _INVALID and (not text or len(text) > 255 or any(ord(char) < 32 or ord(char) == 127 for char in text)):
            errors.add(f"{path}: {text!r} is not an argument; allowed: text of 1-255 characters without control characters")


def _names_once(errors: _Errors, value, option: str, validate, allowed: str) -> None:
    """A list of names, each valid as validate() takes it and listed once."""
    seen = {}
    for index, name in _items(errors, value, option):
        path = f"{option}[{index}]"
        name = errors.check(validate, name, path)
        if name is not _INVALID:
            _listed_once(errors, seen, name, index, path, repr(name), allowed)


def _gpudirect(errors: _Errors, settings: dict) -> None:
    """The devices as gpudirect_facts takes them, the gate's choices, the peer-memory module and the drivers to reload
    (tasks_from: reload) as modprobe and modules-load.d take their names."""
    _names_once(errors, settings["gpudirect_devices"], "gpudirect_devices", _validate.rdma_device_name, "each device once")
    errors.check(_validate.choice, settings["gpudirect_require"], _gpudirect_gate.REQUIRE, "gpudirect_require")
    errors.check(_validate.choice, settings["gpudirect_acs_scope"], _gpudirect_gate.ACS_SCOPES, "gpudirect_acs_scope")
    errors.check(_validate.choice, settings["gpudirect_peermem"], ("unmanaged", "present", "absent"), "gpudirect_peermem")
    errors.check(_validate.kernel_module_name, settings["gpudirect_peermem_module"], "gpudirect_peermem_module")
    for option in ("gpudirect_acs_fix", "gpudirect_acs_persistent", "gpudirect_dmabuf_probe", "gpudirect_fail"):
        _boolean(errors, settings, option)
    _names_once(errors, settings["gpudirect_reload_modules"], "gpudirect_reload_modules", _validate.kernel_module_name,
                "each module once")


CHECKS = {
    "soft_rdma": _soft_rdma,
    "rdma_core": _rdma_core,
    "ipoib": _ipoib_role,
    "roce_qos": _roce_qos,
    "switch_qos": _switch_qos,
    "fabric_check": _fabric_check,
    "subnet_manager": _subnet_manager,
    "gpudirect": _gpudirect,
    "nfs_rdma": _nfs_rdma_role,
    "topology": _topology_role,
    "nic_firmware": _nic_firmware,
    "container_host": _container_host,
}


def errors(role: str, settings) -> list:
    """One line per problem with the role's variables (all of them, in settings); [] when the role may run.

    A role name that is not one of this collection's, or settings that are not
    exactly the role's variables, is a mistake in the caller: ValueError.
    """
    if role not in CHECKS:
        raise ValueError(f"role: {role!r} is not a role with inputs to check; allowed: {', '.join(CHECKS)}")
    expected = ROLE_VARIABLES[role]
    if not isinstance(settings, dict):
        raise ValueError(f"_input: {settings!r} is not a dictionary of the variables of {role}")
    missing = [name for name in expected if name not in settings]
    unknown = [name for name in settings if name not in expected]
    if missing or unknown:
        raise ValueError(f"_input: give exactly the variables of {role} ({', '.join(expected)}); "
                         f"missing: {', '.join(missing) or 'none'}; unknown: {', '.join(map(str, unknown)) or 'none'}")
    found = _Errors()
    CHECKS[role](found, settings)
    return found.messages
