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
writes:
  description: The commands written to the traffic_class file, in order (in check mode, those that would be).
  returned: always
  type: list
  elements: str
  sample: ["dst_ip=10.0.0.1,tclass=-1", "dst_ip=10.10.0.0/16,tclass=104"]
"""

import errno
import os

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _sysfs, _tclass

NO_TC = (
    "device: {device} has no {path} directory: traffic class rules and TTL come with NVIDIA's vendor mlx5 driver "
    "(MLNX_OFED or DOCA-OFED) only; the upstream mlx5_ib, rxe and siw have no such interface "
    "(for RDMA-CM traffic use rdma.fabric.roce_mode tos)"
)


def _attr_file(module, device, port, kind, name):
    """Path of tc/<port>/traffic_class or ttl/<port>/ttl, failing clearly when it is missing."""
    top = _sysfs.path("class", "infiniband", device, kind)
    if not os.path.isdir(top):
        module.fail_json(msg=NO_TC.format(device=device, path=top))
    filename = os.path.join(top, str(port), name)
    if not os.path.exists(filename):
        ports = ", ".join(_sysfs.list_dir(top)) or "none"
        module.fail_json(msg=f"port: {device} has no {kind}/{port}/{name} (ports: {ports})")
    return filename


def _read(module, filename, parser):
    text = _sysfs.read_attr(filename)
    if text is None:
        module.fail_json(msg=f"cannot read {filename}")
    try:
        return parser(text)
    except ValueError as err:
        module.fail_json(msg=f"{filename}: {err}")


def _apply(module, filename, writes):
    for number, text in enumerate(writes):
        try:
            _sysfs.write_attr(filename, text)
        except _sysfs.AttrWriteError as err:
            done = f" (after {number} of {len(writes)} writes)" if number else ""
            if err.errno == errno.ENOMEM:
                module.fail_json(msg=f"rules: the driver's table is full ({_tclass.MAX_RULES} rules) writing {text!r}{done}")
            module.fail_json(msg=f"rules: the driver refused {text!r}: {err.strerror}{done}")


def _view(table):
    return {"traffic_class": table.global_tclass, "rules": _tclass.rule_lines(table)}


def main():
    module = _args.module(argument_spec=_tclass.ARGUMENT_SPEC, supports_check_mode=True, **_tclass.ARGUMENT_RULES)
    try:
        wanted = _tclass.module_params(module.params)
    except ValueError as err:
        module.fail_json(msg=str(err))
    device, port = wanted["device"], wanted["port"]

    base = _sysfs.path("class", "infiniband")
    if not os.path.isdir(os.path.join(base, device)):
        module.fail_json(msg=f"device: no RDMA device {device!r} in {base} (found: {', '.join(_sysfs.list_dir(base)) or 'none'})")
    manage_tc = wanted["ttl"] is None or wanted["global_tclass"] is not None or wanted["rules"] or wanted["exclusive"]

    result = {"changed": False, "writes": []}
    before_view = {}
    after_view = {}
    if manage_tc:
        tc_file = _attr_file(module, device, port, "tc", "traffic_class")
        current = _read(module, tc_file, _tclass.parse_traffic_class)
        try:
            writes, after = _tclass.plan(current, wanted["global_tclass"], wanted["rules"], wanted["state"], wanted["exclusive"])
        except ValueError as err:
            module.fail_json(msg=str(err))
        if writes and not module.check_mode:
            _apply(module, tc_file, writes)
            back = _read(module, tc_file, _tclass.parse_traffic_class)
            if back != after:
                module.fail_json(
                    msg=f"{tc_file} reads back {_tclass.render_table(back)!r}, expected {_tclass.render_table(after)!r} after {writes!r}"
                )
        result.update(writes=writes, traffic_class=after.global_tclass, rules=_tclass.table_rules(after))
        result["changed"] = bool(writes)
        before_view = _view(current)
        after_view = _view(after)

    if wanted["ttl"] is not None:
        ttl_file = _attr_file(module, device, port, "ttl", "ttl")
        ttl_before = _read(module, ttl_file, _tclass.parse_ttl)
        if ttl_before != wanted["ttl"]:
            result["changed"] = True
            if not module.check_mode:
                try:
                    back = _sysfs.write_attr(ttl_file, str(wanted["ttl"]))
                except _sysfs.AttrWriteError as err:
                    module.fail_json(msg=f"ttl: {err}")
                if (back or "").strip() != str(wanted["ttl"]):
                    module.fail_json(msg=f"ttl: wrote {wanted['ttl']} to {ttl_file} but it reads back {back!r}")
        result["ttl"] = wanted["ttl"]
        before_view["ttl"] = ttl_before
        after_view["ttl"] = wanted["ttl"]

    module.exit_json(diff={"before": before_view, "after": after_view}, **result)


if __name__ == "__main__":
    main()
