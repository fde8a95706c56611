#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: dcb_qos
short_description: Set host PFC, ETS, DSCP app entries and mlx5 ECN of a network interface for lossless RoCE
version_added: 0.1.0
description:
  - Reads the interface's IEEE DCB state with C(dcb -j pfc|ets|app show dev <netdev>) (iproute2 C(dcb)) and writes only
    what differs, with C(dcb pfc set), C(dcb ets set) and C(dcb app replace|del).
  - Manages ECN per priority and the CNP DSCP and priority through the mlx5 driver's files under
    C(/sys/class/net/<netdev>/ecn/) (C(roce_np/enable/<prio>), C(roce_rp/enable/<prio>), C(roce_np/cnp_dscp),
    C(roce_np/cnp_802p_prio)) where they exist; each value is one write, then read back.
  - Only the options that are given are managed. Reads everything back after a change and fails when the device does not
    show what was written.
  - A driver without DCB operations (virtio-net, veth, the loopback) answers C(Operation not supported). The module then
    fails with a one-line message that names the interface and its driver, or, with O(unsupported=skip), returns
    C(changed=false) and the reason in RV(skipped_reason) without touching anything.
  - The kernel does not keep DCB settings across reboots or driver reloads; run the module again (for example from the
    C(rdma.fabric.roce_qos) role) or use a DCBX agent.
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
      - Runs only the C(dcb ... show) commands and reads sysfs; RV(commands) lists what would run.
  diff_mode:
    support: full
  platform:
    platforms: linux
options:
  netdev:
    description:
      - The network interface, for example C(enp1s0f0np0).
    type: str
    required: true
    version_added: 0.1.0
  pfc:
    description:
      - The priorities (0-7) that get priority flow control; PFC is turned off on all others.
      - V([]) turns PFC off everywhere. Not managed when omitted.
    type: list
    elements: int
    version_added: 0.1.0
  ets:
    description:
      - Enhanced transmission selection. Each list has exactly 8 values, index 0 first. Parts that are omitted are left
        as they are.
    type: dict
    version_added: 0.1.0
    suboptions:
      prio_tc:
        description:
          - The traffic class (0-7) of each priority.
        type: list
        elements: int
        version_added: 0.1.0
      tc_tsa:
        description:
          - The transmission selection algorithm of each traffic class.
        type: list
        elements: str
        choices: [strict, ets, cbs, vendor]
        version_added: 0.1.0
      tc_bw:
        description:
          - The bandwidth share (percent) of each traffic class; the values sum to 100 (or are all 0 when no class
            uses C(ets)).
          - With O(ets.tc_tsa), the classes whose algorithm is C(ets) must sum to 100 on their own, as mlx5 requires
            (a share given to a C(strict) class does not count).
        type: list
        elements: int
        version_added: 0.1.0
  dscp_prio:
    description:
      - DSCP -> priority entries of the interface's DCB application table (C(dcb app ... dscp-prio)).
      - Listed DSCP values get exactly the given priority (C(dcb app replace)); other DSCP entries stay unless
        O(dscp_prio_exclusive=true).
      - On mlx5 the first DSCP entry switches the port's trust to DSCP, and removing the last switches it back to PCP.
      - Not managed when omitted.
    type: list
    elements: dict
    version_added: 0.1.0
    suboptions:
      dscp:
        description: The DSCP value, 0-63.
        type: int
        required: true
        version_added: 0.1.0
      priority:
        description: The priority, 0-7.
        type: int
        required: true
        version_added: 0.1.0
  dscp_prio_exclusive:
    description:
      - Remove DSCP entries whose DSCP is not listed in O(dscp_prio).
    type: bool
    default: false
    version_added: 0.1.0
  ecn:
    description:
      - ECN (DCQCN) settings of mlx5 devices, written to C(/sys/class/net/<netdev>/ecn/).
      - Managed where the files exist (mlx5); elsewhere this part is skipped and RV(ecn_supported) is V(false).
    type: dict
    version_added: 0.1.0
    suboptions:
      priorities:
        description:
          - The priorities with ECN on, both as notification point (C(roce_np)) and reaction point (C(roce_rp));
            ECN is turned off on the other priorities.
        type: list
        elements: int
        version_added: 0.1.0
      cnp_dscp:
        description: The DSCP of the congestion notification packets the device sends (C(roce_np/cnp_dscp)), 0-63.
        type: int
        version_added: 0.1.0
      cnp_priority:
        description: The priority (PCP) of the congestion notification packets (C(roce_np/cnp_802p_prio)), 0-7.
        type: int
        version_added: 0.1.0
  unsupported:
    description:
      - What to do when the driver has no DCB operations (C(dcb) answers C(Operation not supported)).
      - V(fail) fails with a one-line message naming the interface and its driver.
      - V(skip) changes nothing and returns C(changed=false), RV(dcb_supported=false) and RV(skipped_reason).
    type: str
    choices: [fail, skip]
    default: fail
    version_added: 0.1.0
requirements:
  - iproute2 with C(dcb) (5.11 or later).
notes:
  - The RDMA-CM default ToS of RoCE connections is set with M(rdma.fabric.roce_mode); the C(rdma.fabric.roce_qos) role
    combines both from one QoS intent shared with the C(rdma.fabric.switch_qos) role.
seealso:
  - module: rdma.fabric.roce_mode
  - module: rdma.fabric.tc_rule
  - plugin: rdma.fabric.qos_host_settings
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Lossless RoCE on priority 3, CNP on priority 6 (NVIDIA's defaults)
  rdma.fabric.dcb_qos:
    netdev: enp1s0f0np0
    pfc: [3]
    ets:
      prio_tc: [0, 0, 0, 3, 0, 0, 6, 0]
      tc_tsa: [ets, ets, ets, ets, ets, ets, strict, ets]
      tc_bw: [50, 0, 0, 50, 0, 0, 0, 0]
    dscp_prio:
      - {dscp: 26, priority: 3}
      - {dscp: 48, priority: 6}
    ecn:
      priorities: [3]
      cnp_dscp: 48
      cnp_priority: 6

- name: The same from the shared intent, skipping interfaces without DCB
  rdma.fabric.dcb_qos:
    netdev: "{{ item }}"
    pfc: "{{ (rdma_qos_intent | rdma.fabric.qos_host_settings).pfc }}"
    dscp_prio: "{{ (rdma_qos_intent | rdma.fabric.qos_host_settings).dscp_prio }}"
    unsupported: skip
  loop: [enp1s0f0np0, enp1s0f1np1]

- name: Read the DCB state only
  rdma.fabric.dcb_qos:
    netdev: enp1s0f0np0
  register: dcb
"""

RETURN = r"""
netdev:
  description: The interface.
  returned: always
  type: str
  sample: enp1s0f0np0
driver:
  description: The kernel driver of the interface (from C(/sys/class/net/<netdev>/device/driver)), or C(none) for virtual ones.
  returned: always
  type: str
  sample: mlx5_core
dcb_supported:
  description: Whether the driver answered the DCB queries.
  returned: always
  type: bool
  sample: true
skipped_reason:
  description: Why nothing was done, with O(unsupported=skip) on a driver without DCB.
  returned: when the driver has no DCB support and O(unsupported=skip)
  type: str
  sample: "netdev eth1 (driver virtio_net) has no DCB support: dcb pfc show: Attribute read: Operation not supported"
pfc:
  description: The priorities with PFC on, read back after the change (predicted in check mode).
  returned: when the driver supports DCB
  type: list
  elements: int
  sample: [3]
ets:
  description: The ETS table after the change, with keys C(prio_tc), C(tc_tsa) and C(tc_bw) (8 values each).
  returned: when the driver supports DCB
  type: dict
  sample: {prio_tc: [0, 0, 0, 3, 0, 0, 6, 0], tc_tsa: [ets, ets, ets, ets, ets, ets, strict, ets], tc_bw: [50, 0, 0, 50, 0, 0, 0, 0]}
dscp_prio:
  description: The DSCP -> priority entries of the application table after the change.
  returned: when the driver supports DCB
  type: list
  elements: dict
  sample: [{dscp: 26, priority: 3}, {dscp: 48, priority: 6}]
ecn_supported:
  description: Whether the interface has the mlx5 ECN files.
  returned: always
  type: bool
  sample: false
ecn:
  description:
    - The ECN state after the change, with keys C(np) and C(rp) (8 flags each, V(null) where unreadable), C(cnp_dscp)
      and C(cnp_priority). V(null) when the interface has no ECN files.
  returned: always
  type: dict
  sample: {np: [false, false, false, true, false, false, false, false], rp: [false, false, false, true, false, false, false, false],
           cnp_dscp: 48, cnp_priority: 6}
before:
  description:
    - The managed part of the state before the run, as the diff shows it, with the keys of the options given (C(pfc),
      C(ets), C(dscp_prio), C(ecn)) in the shapes of RV(pfc), RV(ets), RV(dscp_prio) and RV(ecn).
  returned: always
  type: dict
  sample: {pfc: [], dscp_prio: []}
after:
  description:
    - The managed part of the state after the run (read back; in check mode, predicted), with the keys of RV(before).
  returned: always
  type: dict
  sample: {pfc: [3], dscp_prio: [{dscp: 26, priority: 3}]}
commands:
  description:
    - The C(dcb) commands run (or, in check mode, that would run) and the sysfs writes, in order, each as a line that
      can be pasted into a shell; a sysfs write is C(echo VALUE > FILE).
    - Earlier versions named the tool C(dcb) without its path and wrote a sysfs write as C(write VALUE to FILE).
  returned: always
  type: list
  elements: str
  sample: ["/usr/sbin/dcb pfc set dev enp1s0f0np0 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off",
           "echo 1 > /sys/class/net/enp1s0f0np0/ecn/roce_np/enable/3"]
"""

import os

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _dcb, _kit, _sysfs, _validate

OBJECTS = ("pfc", "ets", "app")
PARSERS = {"pfc": _dcb.parse_pfc, "ets": _dcb.parse_ets, "app": _dcb.parse_app}
DCB_HINT = "install iproute2 5.11 or later, which provides dcb(8)"

ARGUMENT_SPEC = dict(
    netdev=dict(type="str", required=True),
    pfc=dict(type="list", elements="int"),
    ets=dict(
        type="dict",
        options=dict(
            prio_tc=dict(type="list", elements="int"),
            tc_tsa=dict(type="list", elements="str", choices=list(_dcb.TSA_NAMES)),
            tc_bw=dict(type="list", elements="int"),
        ),
    ),
    dscp_prio=dict(
        type="list",
        elements="dict",
        options=dict(dscp=dict(type="int", required=True), priority=dict(type="int", required=True)),
    ),
    dscp_prio_exclusive=dict(type="bool", default=False),
    ecn=dict(
        type="dict",
        options=dict(
            priorities=dict(type="list", elements="int"),
            cnp_dscp=dict(type="int"),
            cnp_priority=dict(type="int"),
        ),
    ),
    unsupported=dict(type="str", choices=["fail", "skip"], default="fail"),
)


def _driver(netdev):
    try:
        return os.path.basename(os.readlink(_sysfs.path("class", "net", netdev, "device", "driver")))
    except OSError:
        return "none"


def _read_dcb(kit, dcb, netdev):
    """{'pfc': parsed or None, ...} and {'obj': message} for the objects the driver refused."""
    state, refused = {}, {}
    for obj in OBJECTS:
        rc, out, err = kit.query([dcb] + _dcb.show_argv(obj, netdev))
        if rc != 0:
            message = _kit.first_line(err) or _kit.first_line(out) or f"rc={rc}"
            if _dcb.is_unsupported(err):
                state[obj] = None
                refused[obj] = message
                continue
            raise _kit.Failure(f"dcb {obj} show dev {netdev} failed (rc={rc}): {message}")
        try:
            state[obj] = PARSERS[obj](out)
        except ValueError as err_value:
            raise _kit.Failure(f"netdev {netdev}: {err_value}") from None
    return state, refused


def _read_ecn(netdev):
    base = _sysfs.path("class", "net", netdev)
    if not os.path.isdir(os.path.join(base, _dcb.ECN_DIR)):
        return None
    values = {key: _sysfs.read_attr(os.path.join(base, *parts)) for key, parts in _dcb.ecn_files().items()}
    return _dcb.parse_ecn(values)


def _report(state, ecn):
    result = {"ecn": ecn}
    if state.get("pfc") is not None:
        result["pfc"] = [prio for prio, flag in enumerate(state["pfc"]["prio_pfc"]) if flag]
    if state.get("ets") is not None:
        result["ets"] = {key: state["ets"][key] for key in ("prio_tc", "tc_tsa", "tc_bw")}
    if state.get("app") is not None:
        result["dscp_prio"] = [{"dscp": dscp, "priority": prio} for dscp, prio in state["app"]["dscp_prio"]]
    return result


def _managed(report, desired):
    """The part of a report that the task manages (for the diff)."""
    view = {}
    for key, report_key in (("pfc", "pfc"), ("ets", "ets"), ("dscp_prio", "dscp_prio"), ("ecn", "ecn")):
        if desired[key] is not None and report_key in report:
            view[key] = report[report_key]
    return view


def _refuse_or_skip(kit, unsupported, refused, desired, found):
    """Fail (unsupported=fail) or exit unchanged (skip) when the driver refuses a DCB object the task manages."""
    wanted_objects = {"pfc": desired["pfc"], "ets": desired["ets"], "app": desired["dscp_prio"]}
    blocking = [obj for obj in OBJECTS if obj in refused and wanted_objects[obj] is not None]
    if len(refused) == len(OBJECTS) and not blocking:
        blocking = list(OBJECTS)
    if not blocking:
        return
    reason = f"netdev {found['netdev']} (driver {found['driver']}) has no DCB support: dcb {blocking[0]} show: {refused[blocking[0]]}"
    if unsupported == "fail":
        kit.fail(f"{reason}; use a DCB-capable NIC or unsupported=skip", netdev=found["netdev"], driver=found["driver"], dcb_supported=False)
    kit.exit(False, dcb_supported=False, skipped_reason=reason, diff={"before": {}, "after": {}}, before={}, after={}, **found)


def _plan(netdev, state, ecn, desired, exclusive):
    """(dcb argv tails, ecn writes, predicted state, predicted ecn)."""
    argvs, after = [], dict(state)
    if desired["ets"] is not None:
        argv = _dcb.ets_argv(netdev, state["ets"], desired["ets"])
        if argv:
            argvs.append(argv)
            after["ets"] = dict(state["ets"], **desired["ets"])
    if desired["pfc"] is not None:
        argv = _dcb.pfc_argv(netdev, state["pfc"]["prio_pfc"], desired["pfc"])
        if argv:
            argvs.append(argv)
            after["pfc"] = dict(state["pfc"], prio_pfc=list(desired["pfc"]))
    if desired["dscp_prio"] is not None:
        app = _dcb.app_argvs(netdev, state["app"]["dscp_prio"], desired["dscp_prio"], exclusive)
        if app:
            argvs += app
            after["app"] = {"dscp_prio": _dcb.app_after(state["app"]["dscp_prio"], desired["dscp_prio"], exclusive)}
    writes, ecn_after = [], ecn
    if desired["ecn"] is not None and ecn is not None:
        writes = _dcb.ecn_plan(ecn, **desired["ecn"])
        ecn_after = _dcb.ecn_apply(ecn, writes)
    return argvs, writes, after, ecn_after


def main():
    module = _args.module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    kit = _kit.Kit(module)
    params = module.params
    netdev = params["netdev"]
    with kit.failures():
        _validate.netdev_name(netdev, "netdev")
        desired = _dcb.desired_state(pfc=params["pfc"], ets=params["ets"], dscp_prio=params["dscp_prio"], ecn=params["ecn"])
        dcb = kit.tool("dcb", DCB_HINT)
        if not os.path.isdir(_sysfs.path("class", "net", netdev)):
            raise _kit.Failure(f"netdev: no interface {netdev!r} in {_sysfs.path('class', 'net')}")

        # plan: the DCB state from dcb's show commands, the ECN files, what differs
        state, refused = _read_dcb(kit, dcb, netdev)
        ecn = _read_ecn(netdev)
        found = dict(netdev=netdev, driver=_driver(netdev), ecn_supported=ecn is not None)
        _refuse_or_skip(kit, params["unsupported"], refused, desired, found)
        before = _managed(_report(state, ecn), desired)
        argvs, writes, after, ecn_after = _plan(netdev, state, ecn, desired, params["dscp_prio_exclusive"])
        changed = bool(argvs or writes)

        _apply(kit, dcb, netdev, argvs, writes)  # check mode: recorded in commands, not run
        if module.check_mode or not changed:
            _exit(kit, changed, found, before, desired, _report(after, ecn_after))
        _exit(kit, changed, found, before, desired, _read_back(kit, dcb, netdev, after))


def _exit(kit, changed, found, before, desired, report):
    after = _managed(report, desired)
    kit.exit(changed, dcb_supported=True, diff={"before": before, "after": after}, before=before, after=after, **found, **report)


def _comparable(parsed, key):
    if parsed is None:
        return None
    if key == "pfc":
        return parsed["prio_pfc"]
    if key == "ets":
        return [parsed["prio_tc"], parsed["tc_tsa"], parsed["tc_bw"]]
    return parsed["dscp_prio"]


def _apply(kit, dcb, netdev, argvs, writes):
    """The dcb commands, then the ECN writes (each one write(2) and a read-back), through the kit."""
    for argv in argvs:
        kit.change([dcb] + argv, explain=_dcb_failed(argv))
    files = _dcb.ecn_files()
    for key, value in writes:
        try:
            kit.write_attr(_sysfs.path("class", "net", netdev, *files[key]), value)
        except _sysfs.AttrWriteError as err:
            raise _kit.Failure(str(err)) from None


def _dcb_failed(argv):
    """The one-line message for a failed dcb command: the command without the tool's path, and dcb's first line."""
    def explain(rc, out, err):
        message = _kit.first_line(err) or _kit.first_line(out) or "no message"
        return f"dcb {' '.join(argv)} failed (rc={rc}): {message}"
    return explain


def _read_back(kit, dcb, netdev, after):
    """The report read back after the change; a Failure when the device does not show what was written."""
    state, _refused = _read_dcb(kit, dcb, netdev)
    for key in ("ets", "pfc", "app"):
        if after.get(key) is not None and _comparable(state.get(key), key) != _comparable(after[key], key):
            raise _kit.Failure(f"netdev {netdev}: dcb accepted the change but {key} reads back {_comparable(state.get(key), key)!r}")
    return _report(state, _read_ecn(netdev))


if __name__ == "__main__":
    main()
