#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: tc_rule
short_description: Manage mlx5 traffic class rules and TTL (NVIDIA OFED/DOCA driver)
version_added: 0.1.0
description:
  - Manages the traffic class (ToS) that NVIDIA's mlx5 driver forces on RoCE traffic of a device port, through
    C(/sys/class/infiniband/<device>/tc/<port>/traffic_class) and C(/sys/class/infiniband/<device>/ttl/<port>/ttl).
  - The global traffic class applies to every RoCE connection of the port and overrides all rules. Rules match RoCE v2
    traffic by source and/or destination address (IPv4 destination with a mask, or IPv6 without one); the longest
    destination mask wins.
  - Reads the file back, parses it and writes only the difference, one command per write (at most 100 bytes each).
    A rule is identified by its addresses; writing a rule with the same addresses but another destination mask or
    traffic class replaces the old one, as the driver does.
  - These files exist only with NVIDIA's vendor mlx5 driver (MLNX_OFED or DOCA-OFED). The upstream kernel's mlx5_ib,
    soft-RoCE (rxe) and soft-iWARP (siw) have no C(tc/) directory; the module then fails and says so.
author:
  - rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.attributes.actiongroup
  - rdma.fabric.attributes.platform
attributes:
  check_mode:
    support: full
    details:
      - Writes nothing; the returned values and diff are the driver's table as the writes would leave it.
  diff_mode:
    support: full
  platform:
    platforms: linux
options:
  device:
    description:
      - The RDMA device, as in C(/sys/class/infiniband/), for example C(mlx5_0).
    type: str
    required: true
    version_added: 0.1.0
  port:
    description:
      - The port number of the device.
    type: int
    default: 1
    version_added: 0.1.0
  traffic_class:
    description:
      - The global traffic class (ToS byte, 0-255) of the port, which overrides every rule. V(-1) removes it.
      - Left alone when omitted. Mutually exclusive with O(dscp).
      - With O(state=absent) only V(-1) is allowed.
    type: int
    version_added: 0.1.0
  dscp:
    description:
      - The global traffic class given as DSCP (0-63), written as C(dscp << 2).
      - Mutually exclusive with O(traffic_class). Not allowed with O(state=absent).
    type: int
    version_added: 0.1.0
  rules:
    description:
      - Per-destination/source rules, at most 40 (the driver's limit).
      - With O(state=present) each rule is added, or updated when a rule with the same addresses exists.
      - With O(state=absent) the rules with these addresses are removed; their O(rules[].tclass) and O(rules[].dscp)
        are not needed and are ignored.
      - Two rules with the same addresses are refused.
    type: list
    elements: dict
    default: []
    version_added: 0.1.0
    suboptions:
      src_ip:
        description:
          - Source address, IPv4 or IPv6, without a mask (the driver ignores a source mask).
          - IPv4-mapped IPv6 addresses are refused; the driver matches IPv4 traffic with IPv4 rules.
        type: str
        version_added: 0.1.0
      dst_ip:
        description:
          - Destination address, IPv4 with an optional mask length C(/1) to C(/32) (none means C(/32)), or IPv6 without
            a mask.
          - A rule needs O(rules[].src_ip), O(rules[].dst_ip) or both, of the same address family.
        type: str
        version_added: 0.1.0
      tclass:
        description:
          - The traffic class (ToS byte, 0-255) for matching traffic. Mutually exclusive with O(rules[].dscp).
        type: int
        version_added: 0.1.0
      dscp:
        description:
          - The traffic class given as DSCP (0-63), written as C(dscp << 2). Mutually exclusive with O(rules[].tclass).
        type: int
        version_added: 0.1.0
  ttl:
    description:
      - The IP TTL / hop limit (0-255) the driver sets on RoCE v2 packets of the port; V(0) means "do not override".
      - Left alone when omitted. Needs the C(ttl/) directory of the vendor driver.
    type: int
    version_added: 0.1.0
  state:
    description:
      - V(present) adds or updates O(rules); V(absent) removes them.
    type: str
    choices: [present, absent]
    default: present
    version_added: 0.1.0
  exclusive:
    description:
      - With V(true) and O(state=present), rules that are not in O(rules) are removed, so that the table holds exactly
        O(rules). O(rules=[]) with V(true) removes every rule. Not allowed with O(state=absent).
      - The global traffic class is managed only through O(traffic_class) or O(dscp), never by this option.
    type: bool
    default: false
    version_added: 0.1.0
notes:
  - The values do not survive a reboot or a driver reload; run the module at boot or from your provisioning.
  - Verified against a recorded mlx5 sysfs tree and a model of the driver's write semantics; on soft devices only the
    "no tc/ directory" error can be exercised.
seealso:
  - module: rdma.fabric.roce_mode
  - plugin: rdma.fabric.dscp_to_tos
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Force DSCP 26 with ECT(0) on every RoCE connection of mlx5_0
  rdma.fabric.tc_rule:
    device: mlx5_0
    traffic_class: 106

- name: Per-destination classes instead of a global one, and nothing else
  rdma.fabric.tc_rule:
    device: mlx5_0
    traffic_class: -1
    rules:
      - dst_ip: 10.10.0.0/16
        dscp: 26
      - src_ip: 10.10.1.5
        dst_ip: 10.20.0.0/16
        tclass: 106
      - dst_ip: fd00:10::1
        dscp: 46
    exclusive: true

- name: Remove one rule
  rdma.fabric.tc_rule:
    device: mlx5_0
    rules:
      - dst_ip: 10.10.0.0
    state: absent

- name: Hop limit 64 on RoCE v2 packets of port 1
  rdma.fabric.tc_rule:
    device: mlx5_0
    ttl: 64
"""

RETURN = r"""
traffic_class:
  description: The global traffic class after the change (predicted in check mode); V(null) when none is set.
  returned: when the traffic_class file was read
  type: int
  sample: 106
rules:
  description: The rules after the change (predicted in check mode), longest destination mask first.
  returned: when the traffic_class file was read
  type: list
  elements: dict
  contains:
    src_ip:
      description: Source address, or V(null).
      type: str
    dst_ip:
      description: Destination address (IPv4 with C(/len)), or V(null).
      type: str
    tclass:
      description: Traffic class.
      type: int
    dscp:
      description: DSCP part of the traffic class.
      type: int
  sample: [{src_ip: 10.10.1.5, dst_ip: 10.20.0.0/16, tclass: 106, dscp: 26}]
ttl:
  description: The TTL after the change (predicted in check mode).
  returned: when O(ttl) is given
  type: int
  sample: 64
commands:
  description:
    - The writes to the traffic_class and ttl files, in order (in check mode, those that would be), each as a line a
      person could paste into a root shell (C(echo COMMAND > FILE); the module writes each command with one write).
    - On a failure, the writes that were made before it.
  returned: always
  type: list
  elements: str
  sample:
    - echo dst_ip=10.0.0.1,tclass=-1 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class
    - echo dst_ip=10.10.0.0/16,tclass=104 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class
    - echo 64 > /sys/class/infiniband/mlx5_0/ttl/1/ttl
before:
  description:
    - The port's values before the run, as the diff shows them.
    - C(traffic_class) and C(rules) (the rule lines as the driver shows them) when the traffic_class file was read,
      C(ttl) when O(ttl) is given.
  returned: success
  type: dict
  sample: {traffic_class: null, rules: ["dst_ip=10.10.0.0/16,tclass=104"], ttl: 0}
after:
  description: The port's values after the run (predicted in check mode), in the form of RV(before).
  returned: success
  type: dict
  sample: {traffic_class: 106, rules: ["dst_ip=10.10.0.0/16,tclass=104"], ttl: 64}
writes:
  description:
    - The commands written to the traffic_class file, in order (in check mode, those that would be).
    - Deprecated, to be removed in the next release; use RV(commands).
  returned: always
  type: list
  elements: str
  sample: ["dst_ip=10.0.0.1,tclass=-1", "dst_ip=10.10.0.0/16,tclass=104"]
"""

import errno
import os
from collections import namedtuple

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _kit, _sysfs, _tclass

NO_TC = (
    "device: {device} has no {path} directory: traffic class rules and TTL come with NVIDIA's vendor mlx5 driver "
    "(MLNX_OFED or DOCA-OFED) only; the upstream mlx5_ib, rxe and siw have no such interface "
    "(for RDMA-CM traffic use rdma.fabric.roce_mode tos)"
)

# The plan for tc/<port>/traffic_class: the file, the table now, the commands to write, the table they leave.
TcPlan = namedtuple("TcPlan", "file current writes after")


def check_device(device: str) -> None:
    base = _sysfs.path("class", "infiniband")
    if not os.path.isdir(os.path.join(base, device)):
        raise _kit.Failure(f"device: no RDMA device {device!r} in {base} (found: {', '.join(_sysfs.list_dir(base)) or 'none'})")


def attr_file(device, port, kind, name) -> str:
    """Path of tc/<port>/traffic_class or ttl/<port>/ttl, failing clearly when it is missing."""
    top = _sysfs.path("class", "infiniband", device, kind)
    if not os.path.isdir(top):
        raise _kit.Failure(NO_TC.format(device=device, path=top))
    filename = os.path.join(top, str(port), name)
    if not os.path.exists(filename):
        ports = ", ".join(_sysfs.list_dir(top)) or "none"
        raise _kit.Failure(f"port: {device} has no {kind}/{port}/{name} (ports: {ports})")
    return filename


def read(filename, parser):
    text = _sysfs.read_attr(filename)
    if text is None:
        raise _kit.Failure(f"cannot read {filename}")
    try:
        return parser(text)
    except ValueError as err:
        raise _kit.Failure(f"{filename}: {err}") from None


def manages_tc(wanted: dict) -> bool:
    """The traffic_class file is read unless only the ttl is given."""
    return wanted["ttl"] is None or wanted["global_tclass"] is not None or bool(wanted["rules"]) or wanted["exclusive"]


def plan_tc(wanted: dict) -> TcPlan:
    """Read tc/<port>/traffic_class and work out the writes; reads only."""
    tc_file = attr_file(wanted["device"], wanted["port"], "tc", "traffic_class")
    current = read(tc_file, _tclass.parse_traffic_class)
    writes, after = _tclass.plan(current, wanted["global_tclass"], wanted["rules"], wanted["state"], wanted["exclusive"])
    return TcPlan(tc_file, current, writes, after)


def write_tc(kit, tc: TcPlan) -> None:
    """Each planned command with its own write; a refusal names the command (and, through the kit, what was done)."""
    for text in tc.writes:
        try:
            kit.write_attr(tc.file, text, check=lambda back: None)  # read back as the whole table below
        except _sysfs.AttrWriteError as err:
            if err.errno == errno.ENOMEM:
                raise _kit.Failure(f"rules: the driver's table is full ({_tclass.MAX_RULES} rules) writing {text!r}") from None
            raise _kit.Failure(f"rules: the driver refused {text!r}: {err.strerror}") from None


def read_back_tc(tc: TcPlan) -> None:
    """Re-read and parse the driver's table after the writes: it must be the planned one."""
    if not tc.writes:
        return
    back = read(tc.file, _tclass.parse_traffic_class)
    if back != tc.after:
        raise _kit.Failure(f"{tc.file} reads back {_tclass.render_table(back)!r}, "
                           f"expected {_tclass.render_table(tc.after)!r} after {tc.writes!r}")


def write_ttl(kit, ttl_file: str, before: int, value: int) -> None:
    def check(back):
        if (back or "").strip() != str(value):
            raise _kit.Failure(f"ttl: wrote {value} to {ttl_file} but it reads back {back!r}")

    if before != value:
        try:
            kit.write_attr(ttl_file, value, check=check)
        except _sysfs.AttrWriteError as err:
            raise _kit.Failure(f"ttl: {err}") from None


def track(tc: TcPlan, ttl_before, ttl) -> _kit.Changes:
    """The traffic class, the rules (as the driver shows them) and the ttl, before and after."""
    changes = _kit.Changes()
    if tc:
        changes.add("traffic_class", tc.current.global_tclass, tc.after.global_tclass)
        changes.add("rules", _tclass.rule_lines(tc.current), _tclass.rule_lines(tc.after))
    if ttl is not None:
        changes.add("ttl", ttl_before, ttl)
    return changes


def report(tc: TcPlan, ttl, changes: _kit.Changes) -> dict:
    """The result besides changed and commands; writes stays one release (deprecated for commands)."""
    result = {"diff": changes.diff(), "before": changes.before, "after": changes.after, "writes": tc.writes if tc else []}
    if tc:
        result.update(traffic_class=tc.after.global_tclass, rules=_tclass.table_rules(tc.after))
    if ttl is not None:
        result["ttl"] = ttl
    return result


def main():
    module = _args.module(argument_spec=_tclass.ARGUMENT_SPEC, supports_check_mode=True, **_tclass.ARGUMENT_RULES)
    kit = _kit.Kit(module)
    with kit.failures():
        wanted = _tclass.module_params(module.params)
        device, port, ttl = wanted["device"], wanted["port"], wanted["ttl"]
        check_device(device)

        # plan: read the files, work out the writes; nothing is written yet
        tc = plan_tc(wanted) if manages_tc(wanted) else None
        ttl_file = attr_file(device, port, "ttl", "ttl") if ttl is not None else None
        ttl_before = read(ttl_file, _tclass.parse_ttl) if ttl_file else None
        changes = track(tc, ttl_before, ttl)
        result = report(tc, ttl, changes)

        if tc:
            write_tc(kit, tc)  # check mode: recorded in commands, nothing written
        if ttl_file:
            write_ttl(kit, ttl_file, ttl_before, ttl)
        if module.check_mode:
            kit.exit(bool(kit.commands), **result)
        if tc:
            read_back_tc(tc)
        kit.exit(bool(kit.commands), **result)


if __name__ == "__main__":
    main()
