#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_link
short_description: Create, replace and delete soft RDMA links (rxe, siw) and keep them across reboots
version_added: 0.1.0
description:
  - Manages a soft RoCE (C(rxe)) or soft iWARP (C(siw)) link with iproute2's C(rdma link add) and C(rdma link delete).
  - Reads the links with C(rdma -j link show) and changes only what differs. A link with the same name but another
    type or netdev is deleted and created again.
  - With O(persistent=true) a udev rule has systemd start a oneshot unit that brings the link back at boot and whenever
    the netdev appears again. A unit that starts C(rdma-fabric-link@NAME.service) before the netdev exists (a
    C(Wants=) of it, such as the mount units of the P(rdma.fabric.nfs_rdma#role) role) waits up to 90 seconds for the
    netdev, so that what comes after the unit finds the link.
  - Every option is validated, and the netdev, the driver and conflicting links are checked, before anything is changed.
author:
  - rdma.fabric contributors (@rdma-fabric)
options:
  name:
    description:
      - Name of the RDMA device, for example V(rxe0) or V(siw0).
      - 1-63 bytes, no V(/), V(%), whitespace or leading V(-).
    type: str
    required: true
    version_added: 0.1.0
  type:
    description:
      - The soft RDMA driver. Required with O(state=present).
    type: str
    choices: [rxe, siw]
    version_added: 0.1.0
  netdev:
    description:
      - The network interface the link attaches to, for example V(eth1). Required with O(state=present).
      - rxe also attaches to V(lo), dummy and veth devices; a netdev carries at most one link of each type.
    type: str
    version_added: 0.1.0
  state:
    description:
      - V(present) creates the link (or replaces it when its type or netdev differs); V(absent) deletes it
        and its persistence.
    type: str
    choices: [present, absent]
    default: present
    version_added: 0.1.0
  persistent:
    description:
      - Keep the link across reboots and netdev re-creation with the udev rule
        C(/etc/udev/rules.d/90-rdma-fabric-<name>.rules), the config C(/etc/rdma-fabric/links/<name>.conf) and the
        systemd template unit C(/etc/systemd/system/rdma-fabric-link@.service) that all links share.
      - V(false) removes that link's rule and config when they exist (the shared unit stays); the link itself then
        lasts until the next reboot or driver reload.
      - With V(true), O(name) must consist of letters, digits and V(_), V(.), V(@), V(-) (it becomes a systemd unit
        instance name), and O(netdev) of those and V(+), because udev cannot quote anything else.
    type: bool
    default: true
    version_added: 0.1.0
  allow_rename:
    description:
      - Create the link even when udev's RDMA naming rules (rdma-core's C(rdma_rename)) would rename it right after
        it is created, see the notes and RV(naming).
      - With V(false) the module refuses, before it changes anything, to create a link that the naming policy in
        force would rename on this kernel, and names the policy and the rules file.
      - A renamed link is not found under O(name) by later runs, M(rdma.fabric.roce_mode) or RDMA-CM's configfs
        group, so V(true) is for hosts where something else follows the new name.
    type: bool
    default: false
  netns:
    description:
      - The named network namespace (C(ip netns add NAME), the file C(/run/netns/NAME)) the device must live in, for
        example a container's. Run the module in the initial namespace (the container host); O(netdev) is then the
        namespace's netdev.
      - A link that no namespace lists yet is added from inside the named namespace (C(ip netns exec NAME rdma link
        add ...)), where its netdev is; in exclusive mode the kernel makes the device in the initial namespace (measured
        on Linux 7.3), and the module then moves it with C(rdma dev set <name> netns <netns>). A device of that name
        that the module's own namespace lists is moved as it is (its netdev lives in the other namespace, so it is not
        compared).
      - Whether the device already lives there is read over RDMA netlink from a socket made inside that namespace (no
        process); a device that only the named namespace lists is taken as it is, and nothing changes. Run in that
        namespace itself, the module moves nothing.
      - Needs the RDMA subsystem's V(exclusive) netns mode (M(rdma.fabric.rdma_system)); in V(shared) mode every
        namespace lists every device and none can move, and the module fails with one line naming the mode.
      - Only with O(state=present) and O(persistent=false), since the move does not survive a reboot. Deleting the namespace
        deletes its netdev, and rxe deletes the device with it.
    type: str
    version_added: 0.2.0
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.attributes.actiongroup
  - rdma.fabric.attributes.platform
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: The diff shows the link (name, type, netdev) and the text of the udev rule, the config and the unit
      before and after.
  platform:
    platforms: linux
notes:
  - "Type detection: C(rdma -j link show) does not name the driver, and the device name proves nothing. The module reads
    C(/sys/class/infiniband/<name>): rxe is node_type C(1: CA) with the rxe-only C(parent) attribute; siw is node_type
    C(4: RNIC) with no parent device (it lives under C(/sys/devices/virtual/infiniband)) or siw's node description
    C(Software iWARP stack). Any other device (hardware HCA) is refused, never deleted."
  - "Persistence: rdma-core ships no way to keep rxe/siw links. A udev rule on the netdev's C(add) event covers boot
    (udev's coldplug trigger), driver reloads and netdevs that are created again, such as dummy or veth devices. The
    rule only tags the netdev for systemd (C(TAG+=\"systemd\")) and adds C(rdma-fabric-link@<name>.service) to its
    C(SYSTEMD_WANTS), so systemd starts that unit each time the netdev appears. The oneshot unit reads C(RDMA_LINK_TYPE)
    and C(RDMA_LINK_NETDEV) from C(/etc/rdma-fabric/links/<name>.conf) (C(EnvironmentFile=)) and runs
    C(rdma link add <name> type <type> netdev <netdev>) with no shell. C(ConditionPathExists=!/sys/class/infiniband/<name>)
    skips the start when the device already exists, so an existing link is not an error; C(RemainAfterExit=no) lets
    the next C(add) start it again, and it is ordered before C(network-online.target), never after it. The kernel loads
    the driver itself (C(request_module(\"rdma-link-<type>\")))."
  - "Why not C(RUN+=) in the rule: a program run by udev runs in C(systemd-udevd.service)'s cgroup, which has
    C(IPAddressDeny=any) on Debian bookworm. rxe gives each queue pair a kernel UDP socket charged to the creator's
    cgroup, and QP1 (which carries the RDMA-CM MADs) is created with the device, so every QP1 send fails with EPERM:
    RDMA-CM connections to the host hang (C(rping) is rejected), the rxe tasklet spins and reboot hangs, while
    C(ibv_rc_pingpong) still works. The unit has no IP sandbox. A rule written by an earlier version (same path, with
    C(RUN+=)) is replaced on the next run."
  - "The files are written atomically (temporary file in the same directory, flushed to disk, then renamed) with mode
    0644, the unit first, then the config, then the rule. C(systemctl daemon-reload) runs when the unit changed, and
    C(udevadm control --reload) when the rule changed (udevd otherwise checks its rules only every few seconds, when
    events arrive, and a netdev added right after the change would miss the rule); trouble with either is a warning."
  - "Before it adds a link the module checks that the netdev exists in C(/sys/class/net), that no other link of the same
    type sits on it (the kernel answers EEXIST), and that the kernel can load the driver (C(/sys/module),
    C(modules.alias), C(modules.builtin)), so that check mode predicts these failures and a replacement never deletes
    the old link only to fail."
  - "Naming guard: rdma-core's udev rule C(60-rdma-persistent-naming.rules) runs C(rdma_rename %k <policy>) for every
    new RDMA device. Its default, C(NAME_FALLBACK), names devices by their onboard index or PCI address and leaves rxe
    and siw alone (they have no parent device), as do C(NAME_KERNEL) and C(NAME_PCI). C(NAME_GUID) renames them to
    C(<protocol>x<node GUID>) (on Debian 12 an rxe link created as C(rxet) became C(rocex3cdd3afffe6f64c9); an rxe's
    node GUID is the EUI-64 of its netdev's MAC), and C(NAME_FIXED) to the name the rule gives. Linux 6.11 and later
    mark the names of rxe and siw devices as chosen by the user, and C(rdma_rename) of rdma-core 53 and later then
    leaves them alone (Debian 13); Debian 12 (Linux 6.1, rdma-core 44) has neither. The module reads the rules as udev
    does (C(/etc/udev/rules.d), C(/run/udev/rules.d), C(/usr/local/lib/udev/rules.d), C(/usr/lib/udev/rules.d) and
    C(/lib/udev/rules.d), a file replacing one of the same name in a later directory, a symlink to C(/dev/null)
    disabling it), tells the rdma-core version from the C(rdma_rename) binary and asks the kernel over RDMA netlink
    whether it marks user-assigned names (by its version when no RDMA device exists yet). It starts no process for
    this."
  - Requires iproute2 with C(rdma link add) (iproute2 5.x or later) and a kernel that creates links over RDMA netlink
    (Linux 5.1 or later for rxe, 5.3 or later for siw).
seealso:
  - module: rdma.fabric.gid_facts
  - module: rdma.fabric.roce_mode
"""

EXAMPLES = r"""
- name: Soft RoCE on the data NIC, back after every reboot
  rdma.fabric.rdma_link:
    name: rxe0
    type: rxe
    netdev: eth1

- name: Soft iWARP on the same NIC, for this boot only
  rdma.fabric.rdma_link:
    name: siw0
    type: siw
    netdev: eth1
    persistent: false

- name: Soft RoCE for a container's namespace (exclusive netns mode), moved into it
  rdma.fabric.rdma_link:
    name: rxe1
    type: rxe
    netdev: eth1
    persistent: false
    netns: job1

- name: Remove the link, its udev rule and its config
  rdma.fabric.rdma_link:
    name: rxe0
    state: absent
"""

RETURN = r"""
link:
  description:
    - The link as the kernel reports it after the run (C(rdma -j link show) plus the type from sysfs);
      empty when the link is absent.
    - In check mode, when a change is pending, only O(name), O(type) and O(netdev) are predicted and the port
      fields are null.
    - With O(netns) it also has C(netns); when the link lives in another namespace than the module's, only O(name),
      O(type), O(netdev) and C(netns) are given and the port fields are null.
  returned: always
  type: dict
  contains:
    name:
      description: The RDMA device name.
      type: str
      sample: rxe0
    type:
      description: V(rxe) or V(siw).
      type: str
      sample: rxe
    netdev:
      description: The netdev the link is bound to.
      type: str
      sample: eth1
    port:
      description: The port number.
      type: int
      sample: 1
    state:
      description: The port state as rdma reports it.
      type: str
      sample: ACTIVE
    physical_state:
      description: The physical port state as rdma reports it.
      type: str
      sample: LINK_UP
    netdev_index:
      description: The ifindex of the netdev.
      type: int
      sample: 3
    netns:
      description: The network namespace the link lives in (O(netns)).
      type: str
      returned: with O(netns)
      sample: node01
      version_added: 0.2.0
  sample:
    name: rxe0
    type: rxe
    netdev: eth1
    port: 1
    state: ACTIVE
    physical_state: LINK_UP
    netdev_index: 3
persistence:
  description: The files that keep the link, and whether the link's rule and config exist after the run.
  returned: always
  type: dict
  contains:
    rule:
      description: The udev rule's path.
      type: str
      sample: /etc/udev/rules.d/90-rdma-fabric-rxe0.rules
    config:
      description: The link's config, read by the unit.
      type: str
      sample: /etc/rdma-fabric/links/rxe0.conf
    unit:
      description: The systemd template unit all links share; it is never removed.
      type: str
      sample: /etc/systemd/system/rdma-fabric-link@.service
    present:
      description: Whether the rule and the config exist after the run (or would, in check mode).
      type: bool
      sample: true
naming:
  description:
    - What udev's RDMA naming rules do to a new link named O(name), read from the rules files, the C(rdma_rename)
      binary and the kernel (see the notes). Reported also when no link is created.
  returned: always
  type: dict
  version_added: 0.2.0
  contains:
    policy:
      description: The policy of the first C(rdma_rename) rule udev runs (what a new device meets first); null when no
        rules file runs C(rdma_rename).
      type: str
      sample: NAME_FALLBACK
    file:
      description: The rules file of that rule.
      type: str
      sample: /usr/lib/udev/rules.d/60-rdma-persistent-naming.rules
    line:
      description: The line of that rule in the file.
      type: int
      sample: 29
    rules:
      description: Every C(rdma_rename) rule in the order udev runs them (C(PROGRAM) rules by file name, then C(RUN)
        rules), each with C(file), C(line), C(policy), C(fixed_name) and C(key) (V(PROGRAM) or V(RUN)).
      type: list
      elements: dict
    masked:
      description: Rules files disabled by a symlink to C(/dev/null) of the same name in an earlier directory.
      type: list
      elements: str
    renamed_by:
      description: The rule that would rename the link (the first that renames, in the form of RV(naming.rules)),
        as if the kernel did not mark user-assigned names; null when no rule renames it.
      type: dict
    renamed_to:
      description: The name that rule would give, when it can be told beforehand (C(NAME_FIXED), C(NAME_GUID) for rxe).
      type: str
      sample: rocex3cdd3afffe6f64c9
    certain:
      description: False when that rule's match keys (C(ENV), C(DRIVERS), other C(ATTR) keys) cannot be decided before the
        device exists, so it only may rename the link.
      type: bool
    rename_skips_user_names:
      description: Whether that rule's C(rdma_rename) leaves user-assigned names alone (rdma-core 53 and later); null
        when no rule renames the link or the binary was not found.
      type: bool
    kernel_marks_user_names:
      description: Whether the kernel marks rxe and siw names as the user's (Linux 6.11 and later); asked only when a
        rule would rename the link and its C(rdma_rename) honours the mark, else null.
      type: bool
    kernel_marks_from:
      description: Where that came from, V(RDMA netlink) or V(kernel version <release>).
      type: str
    user_names_kept:
      description: True when both the kernel and C(rdma_rename) keep user-assigned names, false when either does not,
        null when that was not asked.
      type: bool
    keeps_name:
      description: Whether a link created under O(name) keeps it.
      type: bool
  sample:
    policy: NAME_FALLBACK
    file: /usr/lib/udev/rules.d/60-rdma-persistent-naming.rules
    line: 29
    rules:
      - {file: /usr/lib/udev/rules.d/60-rdma-persistent-naming.rules, line: 29, policy: NAME_FALLBACK, fixed_name: null,
         key: PROGRAM}
    masked: []
    renamed_by: null
    renamed_to: null
    certain: true
    rename_skips_user_names: null
    kernel_marks_user_names: null
    kernel_marks_from: null
    user_names_kept: null
    keeps_name: true
commands:
  description:
    - The rdma commands run, or that would run in check mode, in order, each a line a shell splits back into the
      same words (quoted where needed).
    - On a failure, the commands that ran before it.
  returned: always
  type: list
  elements: str
  sample:
    - /usr/bin/rdma link delete rxe0
    - /usr/bin/rdma link add rxe0 type rxe netdev lo
before:
  description:
    - The link and its files before the run, as the diff shows them.
    - RV(before.link) is V({}) when there was no link; each of C(rule), C(config) and C(unit) in
      RV(before.persistence) has the file's C(path) and C(content) (V(null) when the file did not exist).
  returned: success
  type: dict
  contains:
    link:
      description: The link's O(name), O(type) and O(netdev), or V({}); with O(netns) also C(netns), V(null) when
        the link was in the module's own namespace.
      type: dict
    persistence:
      description: The rule, the config and the unit, each as C(path) and C(content).
      type: dict
  sample:
    link: {}
    persistence:
      rule: {path: /etc/udev/rules.d/90-rdma-fabric-rxe0.rules, content: null}
      config: {path: /etc/rdma-fabric/links/rxe0.conf, content: null}
      unit: {path: /etc/systemd/system/rdma-fabric-link@.service, content: null}
after:
  description:
    - The link and its files as the run leaves them (in check mode, would leave them), in the form of RV(before).
  returned: success
  type: dict
  contains:
    link:
      description: The link's O(name), O(type) and O(netdev), or V({}) with O(state=absent).
      type: dict
    persistence:
      description: The rule, the config and the unit, each as C(path) and C(content).
      type: dict
  sample:
    link: {name: rxe0, type: rxe, netdev: eth1}
    persistence:
      rule: {path: /etc/udev/rules.d/90-rdma-fabric-rxe0.rules, content: "# Managed by rdma.fabric.rdma_link ..."}
      config: {path: /etc/rdma-fabric/links/rxe0.conf, content: "RDMA_LINK_TYPE=rxe ..."}
      unit: {path: /etc/systemd/system/rdma-fabric-link@.service, content: "[Unit] ..."}
"""

import os
import platform

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _naming, _nldev, _persist, _rdma_tool, _kit, _sysfs

RDMA_HINT = "install iproute2 with 'rdma link' support (5.x or later)"
PORT_FIELDS = ("port", "state", "physical_state", "netdev_index")
OPENER = None  # the netlink socket's maker in the module's own namespace (tests replace it)
NAMESPACE_OPENER = _nldev.in_namespace  # path -> the maker of a socket in that namespace (tests replace it)


def read_links(kit, rdma: str) -> list:
    """The kernel's links (rdma -j link show); a Failure naming the cause when rdma cannot show them."""
    rc, out, err = kit.query(_rdma_tool.link_show_argv(rdma))
    if rc != 0:
        raise _kit.Failure(_rdma_tool.explain_show_error(rc, out, err))
    return _rdma_tool.parse_link_show(out)


def link_types(links: list) -> dict:
    return {link["name"]: _rdma_tool.link_type_of(link["name"]) for link in links}


def check_directories(*paths: str) -> None:
    for directory, what in zip((os.path.dirname(path) for path in paths), ("udev", "systemd")):
        if not os.path.isdir(directory):
            raise _kit.Failure(f"persistent: {directory} does not exist (is {what} installed?); "
                               "use persistent=false to manage the link without persistence")


def current_link(found, types: dict, name: str):
    """{name, type, netdev} of the link as it is, None when there is none; a hardware device is refused."""
    if found is None:
        return None
    if types.get(name) not in _rdma_tool.LINK_TYPES:
        raise _kit.Failure(f"name: {name} is an RDMA device that is not an rxe/siw link (a hardware device?); "
                           "rdma_link never replaces or deletes it")
    return {"name": name, "type": types[name], "netdev": found.get("netdev")}


def check_add(links: list, types: dict, name: str, link_type: str, netdev: str) -> None:
    """Fail before any change when the kernel would refuse the add: no netdev, EEXIST, no driver."""
    if not os.path.exists(_sysfs.path("class", "net", netdev)):
        raise _kit.Failure(f"netdev: {netdev} does not exist (no /sys/class/net/{netdev})")
    owner = _rdma_tool.conflicting(links, types, name, link_type, netdev)
    if owner:
        raise _kit.Failure(f"netdev: {netdev} already carries {link_type} device {owner}; delete it or use name={owner}")
    check_driver(link_type)


def check_driver(link_type: str) -> None:
    if _rdma_tool.driver_available(link_type, platform.release()) is False:
        raise _kit.Failure(f"type: the running kernel ({platform.release()}) has no {link_type} driver "
                           f"(module {_rdma_tool.DRIVER_MODULES[link_type]} is neither loaded, built in nor installed)")


def plan_files(name: str, link_type, netdev, rdma: str, wanted: bool) -> dict:
    """The rule and the config belong to this link; the template unit is shared, written, never removed."""
    files = {kind: {"path": path, "before": _kit.read_file(path)} for kind, path in
             (("rule", _persist.rule_path(name)), ("config", _persist.config_path(name)), ("unit", _persist.unit_path()))}
    files["rule"]["after"] = _persist.render_rule(name, link_type, netdev) if wanted else None
    files["config"]["after"] = _persist.render_config(name, link_type, netdev) if wanted else None
    files["unit"]["after"] = _persist.render_unit(rdma) if wanted else files["unit"]["before"]
    return files


def track(current, desired, files: dict):
    """The link and the files before and after, as the diff, before and after show them."""
    changes = _kit.Changes()
    changes.add("link", current or {}, desired or {})
    changes.add("persistence", *({kind: {"path": entry["path"], "content": entry[side]} for kind, entry in files.items()}
                                 for side in ("before", "after")))
    return changes


def apply_links(kit, rdma: str, actions: list, name: str, link_type, netdev, ip="ip") -> None:
    """Run the planned rdma commands in order (in check mode the kit records them and runs nothing)."""
    for action in actions:
        def explain(rc, out, err, action=action):
            owner = None
            if action[0] == "add" and "exists" in (err or "").lower():
                fresh = read_links(kit, rdma)
                owner = _rdma_tool.conflicting(fresh, link_types(fresh), name, link_type, netdev)
            return _rdma_tool.explain_error(action, rc, out, err, owner)

        kit.change(_rdma_tool.action_argv(rdma, action, ip), explain=explain)


def update_persistence(kit, files: dict) -> None:
    """Write or remove the changed files; the unit first, the rule last (and removed first)."""
    order = ("unit", "config", "rule") if files["rule"]["after"] is not None else ("rule", "config", "unit")
    for kind in order:
        entry = files[kind]
        if entry["before"] == entry["after"]:
            continue
        if entry["after"] is None:
            kit.remove_file(entry["path"], what="persistent: ")
        else:
            # the documented mode, also over a file that had another one
            kit.write_file(entry["path"], entry["after"], mode=0o644, what="persistent: ", keep_mode=False)
        if kind == "unit":
            # systemd loads unit files at daemon-reload; udev would otherwise pull in a unit it does not know
            kit.reload_or_warn("systemctl", entry["path"])
        elif kind == "rule":
            # udevd otherwise checks its rules only every few seconds, on events: a netdev added at once would miss it
            kit.reload_or_warn("udevadm", entry["path"])


def netns_mode() -> str:
    """The RDMA subsystem's netns mode over netlink (as rdma system show); a Failure when it cannot be read."""
    try:
        mode = _nldev.read_system(OPENER)["netns"]
    except (OSError, _nldev.NetlinkError) as err:
        raise _kit.Failure(f"netns: cannot read the RDMA subsystem's netns mode over netlink ({err})") from None
    if mode is None:
        raise _kit.Failure(f"netns: this kernel ({platform.release()}) has no RDMA netns modes (Linux 5.2 or later)")
    return mode


def names_in(path: str) -> list:
    """The RDMA devices the namespace at path lists (a netlink socket made inside it, no process)."""
    try:
        return _nldev.device_names(NAMESPACE_OPENER(path))
    except (OSError, _nldev.NetlinkError) as err:
        raise _kit.Failure(f"netns: cannot list the RDMA devices of {path} ({err})") from None


def place(found, actions: list, params: dict) -> tuple:
    """(actions, namespace before, whether the module runs in the namespace) for a link that must live in
    params['netns']: see _rdma_tool.plan_netns."""
    name, netns = params["name"], params["netns"]
    mode = netns_mode()
    if mode != "exclusive":
        raise _kit.Failure(f"netns: the RDMA subsystem is in {mode} netns mode (kernel {platform.release()}), where every "
                           "namespace lists every device and none can move; set netns_mode=exclusive with "
                           "rdma.fabric.rdma_system first")
    path = os.path.join(_rdma_tool.NETNS_DIR, netns)
    try:
        same = _nldev.same_namespace(path)
    except OSError as err:
        raise _kit.Failure(f"netns: no network namespace {netns} ({path}: {err.strerror or err}; ip netns add makes one)") from None
    there = found is None and not same and name in names_in(path)
    return _rdma_tool.plan_netns(found is not None, there, same, actions, name, params["type"], params["netdev"],
                                 netns) + (same,)


def link_view(link, link_type) -> dict:
    if not link:
        return {}
    view = dict(link)
    view["type"] = link_type
    view.pop("ifindex", None)
    return view


def predicted_link(found, found_type, actions: list, desired) -> dict:
    """The link check mode reports: as it is when nothing changes, else the desired one without port fields."""
    if not actions:
        return link_view(found, found_type)
    return dict(desired, **dict.fromkeys(PORT_FIELDS)) if desired else {}


def read_back(kit, rdma: str, name: str, present: bool) -> dict:
    found = _rdma_tool.find_link(read_links(kit, rdma), name) if present else None
    return link_view(found, _rdma_tool.link_type_of(name) if found else None)


def main():
    module = _args.module(argument_spec=_rdma_tool.ARGUMENT_SPEC, supports_check_mode=True, **_rdma_tool.ARGUMENT_RULES)
    kit = _kit.Kit(module)
    params = module.params
    name, link_type, netdev = params["name"], params["type"], params["netdev"]
    present = params["state"] == "present"
    wanted_rule = present and params["persistent"]
    with kit.failures():
        _rdma_tool.validate_params(params)
        if wanted_rule:  # the names first, before the tool is looked for; the tool's path once it is known
            _persist.check_persistable_names(name, netdev)
        rdma = kit.tool("rdma", RDMA_HINT)
        if wanted_rule:
            _persist.check_persistable(name, netdev, rdma)
            check_directories(_persist.rule_path(name), _persist.unit_path())

        # plan: the kernel's links, the type of each from sysfs, the files
        links = read_links(kit, rdma)
        types = link_types(links)
        found = _rdma_tool.find_link(links, name)
        current = current_link(found, types, name)
        desired = {"name": name, "type": link_type, "netdev": netdev} if present else None
        actions = _rdma_tool.plan(current, desired)
        netns, elsewhere, ip = params["netns"], False, "ip"
        if netns is not None:
            actions, netns_before, same = place(found, actions, params)
            elsewhere = not same  # after the run the link lives in another namespace than the module's
            if not same and (current or netns_before == netns):
                # its netdev lives in the named namespace, not seen from here: the link is taken as it is
                current = dict(desired, type=(current or desired)["type"])
            current = dict(current, netns=netns_before) if current else None
            desired = dict(desired, netns=netns)
        adding = any(action[0] == "add" for action in actions)
        adding_in = any(action[0] == "add_in" for action in actions)
        if adding:
            check_add(links, types, name, link_type, netdev)
        if adding_in:  # its netdev is the namespace's: the driver alone is checked here
            check_driver(link_type)
            ip = kit.tool("ip", "install iproute2")
        # udev runs in the initial namespace and renames a new device wherever it was added; a netdev of the named
        # namespace is not seen from here, so its MAC (the NAME_GUID name) is not predicted
        naming, renamed = _naming.link_naming(name, link_type or "rxe", None if adding_in else netdev,
                                              release=platform.release())
        if (adding or adding_in) and renamed and not params["allow_rename"]:
            raise _kit.Failure(renamed)
        files = plan_files(name, link_type, netdev, rdma, wanted_rule)
        changes = track(current, desired, files)
        report = {"naming": naming, "diff": changes.diff(), "before": changes.before, "after": changes.after,
                  "persistence": {"rule": files["rule"]["path"], "config": files["config"]["path"],
                                  "unit": files["unit"]["path"], "present": wanted_rule}}

        apply_links(kit, rdma, actions, name, link_type, netdev, ip)  # check mode: recorded in commands, not run
        if not module.check_mode:
            update_persistence(kit, files)
        if elsewhere:
            # this namespace no longer lists the link (exclusive mode): the named one must, and the port is not seen from here
            if not module.check_mode and name not in names_in(os.path.join(_rdma_tool.NETNS_DIR, netns)):
                raise _kit.Failure(f"netns: {name} was moved to {netns}, but that namespace does not list it")
            kit.exit(changes.changed, link=dict(desired, **dict.fromkeys(PORT_FIELDS)), **report)
        if module.check_mode:
            kit.exit(changes.changed, link=predicted_link(found, types.get(name), actions, desired), **report)
        link = read_back(kit, rdma, name, present)
        kit.exit(changes.changed, link=dict(link, netns=netns) if netns is not None and link else link, **report)


if __name__ == "__main__":
    main()
