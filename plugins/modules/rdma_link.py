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
    the netdev appears again.
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
  - "The files are written atomically (temporary file in the same directory, then rename) with mode 0644, the unit
    first, then the config, then the rule. C(systemctl daemon-reload) runs when the unit changed, and
    C(udevadm control --reload) when the rule changed (udevd otherwise checks its rules only every few seconds, when
    events arrive, and a netdev added right after the change would miss the rule); trouble with either is a warning."
  - "Before it adds a link the module checks that the netdev exists in C(/sys/class/net), that no other link of the same
    type sits on it (the kernel answers EEXIST), and that the kernel can load the driver (C(/sys/module),
    C(modules.alias), C(modules.builtin)), so that check mode predicts these failures and a replacement never deletes
    the old link only to fail."
  - Requires iproute2 with C(rdma link add) (iproute2 5.x or later) and a kernel that creates links over RDMA netlink
    (Linux 5.1 or later for rxe, 5.3 or later for siw).
seealso:
  - module: rdma.fabric.gid_facts
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
commands:
  description: The rdma commands run, or that would run in check mode, in order.
  returned: always
  type: list
  elements: str
  sample:
    - /usr/bin/rdma link delete rxe0
    - /usr/bin/rdma link add rxe0 type rxe netdev lo
"""

import os
import platform
import tempfile

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _persist, _rdma_tool, _kit, _sysfs


def read_links(module, rdma: str) -> list:
    argv = _rdma_tool.link_show_argv(rdma)
    rc, out, err = _kit.run(module, argv)
    if rc != 0:
        module.fail_json(msg=_rdma_tool.explain_show_error(rc, out, err), changed=False)
    try:
        return _rdma_tool.parse_link_show(out)
    except ValueError as exc:
        module.fail_json(msg=str(exc), changed=False)


def read_file(path: str):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def write_file(module, path: str, content: str) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o755, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.chmod(tmp, 0o644)
    except OSError:
        os.unlink(tmp)
        raise
    module.atomic_move(tmp, path)
    os.chmod(path, 0o644)


def update_persistence(module, files: dict, done: list) -> None:
    """Write or remove the changed files; the unit first, the rule last (and removed first)."""
    order = ("unit", "config", "rule") if files["rule"]["after"] is not None else ("rule", "config", "unit")
    updated = []
    for kind in order:
        entry = files[kind]
        if entry["before"] == entry["after"]:
            continue
        try:
            if entry["after"] is not None:
                write_file(module, entry["path"], entry["after"])
            else:
                os.unlink(entry["path"])
        except OSError as exc:
            applied = done + [f"updated {files[name]['path']}" for name in updated]
            msg = f"persistent: cannot update {entry['path']}: {exc.strerror}"
            if applied:
                msg += f" (already done: {'; '.join(applied)})"
            module.fail_json(msg=msg, changed=bool(applied), commands=done)
        updated.append(kind)
        if kind == "unit":
            # systemd loads unit files at daemon-reload; udev would otherwise pull in a unit it does not know
            _kit.reload_or_warn(module, "systemctl", entry["path"])
        elif kind == "rule":
            # udevd otherwise checks its rules only every few seconds, on events: a netdev added at once would miss it
            _kit.reload_or_warn(module, "udevadm", entry["path"])


def check_add(module, links: list, types: dict, name: str, link_type: str, netdev: str) -> None:
    """Fail before any change when the kernel would refuse the add: no netdev, EEXIST, no driver."""
    if not os.path.exists(_sysfs.path("class", "net", netdev)):
        module.fail_json(msg=f"netdev: {netdev} does not exist (no /sys/class/net/{netdev})", changed=False)
    owner = _rdma_tool.conflicting(links, types, name, link_type, netdev)
    if owner:
        module.fail_json(msg=f"netdev: {netdev} already carries {link_type} device {owner}; delete it or use name={owner}",
                         changed=False)
    if _rdma_tool.driver_available(link_type, platform.release()) is False:
        module.fail_json(msg=f"type: the running kernel ({platform.release()}) has no {link_type} driver "
                             f"(module {_rdma_tool.DRIVER_MODULES[link_type]} is neither loaded, built in nor installed)",
                         changed=False)


def apply_actions(module, rdma: str, actions: list, name: str, link_type, netdev) -> list:
    """Run the planned rdma commands in order; a failure names its cause and what was already done."""
    done = []
    for action in actions:
        argv = _rdma_tool.action_argv(rdma, action)
        rc, out, err = _kit.run(module, argv)
        if rc != 0:
            owner = None
            if action[0] == "add" and "exists" in (err or "").lower():
                fresh = read_links(module, rdma)
                fresh_types = {link["name"]: _rdma_tool.link_type_of(link["name"]) for link in fresh}
                owner = _rdma_tool.conflicting(fresh, fresh_types, name, link_type, netdev)
            msg = _rdma_tool.explain_error(action, rc, out, err, owner)
            if done:
                msg += f" (already done: {'; '.join(done)})"
            module.fail_json(msg=msg, changed=bool(done), commands=done)
        done.append(" ".join(argv))
    return done


def link_view(link, link_type) -> dict:
    if not link:
        return {}
    view = dict(link)
    view["type"] = link_type
    view.pop("ifindex", None)
    return view


def main():
    module = _args.module(argument_spec=_rdma_tool.ARGUMENT_SPEC, supports_check_mode=True, **_rdma_tool.ARGUMENT_RULES)
    params = module.params
    name, link_type, netdev = params["name"], params["type"], params["netdev"]
    present = params["state"] == "present"
    try:
        _rdma_tool.validate_params(params)
    except ValueError as exc:
        module.fail_json(msg=str(exc), changed=False)

    rdma = module.get_bin_path("rdma")
    if not rdma:
        module.fail_json(msg="rdma: command not found; install iproute2 with 'rdma link' support (5.x or later)", changed=False)
    rule_path = _persist.rule_path(name)
    unit_path = _persist.unit_path()
    want_rule = present and params["persistent"]
    if want_rule:
        try:
            _persist.check_persistable(name, netdev, rdma)
        except ValueError as exc:
            module.fail_json(msg=str(exc), changed=False)
        for directory, what in ((os.path.dirname(rule_path), "udev"), (os.path.dirname(unit_path), "systemd")):
            if not os.path.isdir(directory):
                module.fail_json(msg=f"persistent: {directory} does not exist (is {what} installed?); "
                                     "use persistent=false to manage the link without persistence", changed=False)

    # Current state: the kernel's links, the type of each from sysfs, our rule.
    links = read_links(module, rdma)
    types = {link["name"]: _rdma_tool.link_type_of(link["name"]) for link in links}
    found = _rdma_tool.find_link(links, name)
    if found is not None and types.get(name) not in _rdma_tool.LINK_TYPES:
        module.fail_json(msg=f"name: {name} is an RDMA device that is not an rxe/siw link (a hardware device?); "
                             "rdma_link never replaces or deletes it", changed=False)
    current = {"name": name, "type": types[name], "netdev": found.get("netdev")} if found else None
    desired = {"name": name, "type": link_type, "netdev": netdev} if present else None
    actions = _rdma_tool.plan(current, desired)

    if any(action[0] == "add" for action in actions):
        check_add(module, links, types, name, link_type, netdev)

    # The rule and the config belong to this link; the template unit is shared, written, never removed.
    config_path = _persist.config_path(name)
    files = {kind: {"path": path, "before": read_file(path)} for kind, path in
             (("rule", rule_path), ("config", config_path), ("unit", unit_path))}
    files["rule"]["after"] = _persist.render_rule(name, link_type, netdev) if want_rule else None
    files["config"]["after"] = _persist.render_config(name, link_type, netdev) if want_rule else None
    files["unit"]["after"] = _persist.render_unit(rdma) if want_rule else files["unit"]["before"]
    changed = bool(actions) or any(entry["before"] != entry["after"] for entry in files.values())
    diff = {
        side: {"link": link or {},
               "persistence": {kind: {"path": entry["path"], "content": entry[side]} for kind, entry in files.items()}}
        for side, link in (("before", current), ("after", desired))
    }
    persistence = {"rule": rule_path, "config": config_path, "unit": unit_path, "present": want_rule}
    commands = [" ".join(_rdma_tool.action_argv(rdma, action)) for action in actions]

    if module.check_mode:
        predicted = link_view(found, types.get(name)) if not actions else (
            {"name": name, "type": link_type, "netdev": netdev, "port": None, "state": None,
             "physical_state": None, "netdev_index": None} if present else {})
        module.exit_json(changed=changed, link=predicted, commands=commands, diff=diff, persistence=persistence)

    done = apply_actions(module, rdma, actions, name, link_type, netdev)
    update_persistence(module, files, done)

    after = _rdma_tool.find_link(read_links(module, rdma), name) if present else None
    after_type = _rdma_tool.link_type_of(name) if after else None
    module.exit_json(changed=changed, link=link_view(after, after_type), commands=done, diff=diff, persistence=persistence)


if __name__ == "__main__":
    main()
