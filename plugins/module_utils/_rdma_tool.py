# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iproute2's rdma tool: argv, JSON parsing, error causes, and link planning.

Everything here is pure except the two small readers at the end
(link_type_of, driver_available), which read sysfs and /lib/modules files
and start no process.

Formats (iproute2 6.1, Debian 12's, as the lab prints them; recorded in
tests/unit/plugins/module_utils/test_rdma_tool.py):
- `rdma -j link show` prints a JSON list; each entry has ifindex, ifname
  ('rxe0'; some versions 'rxe0/1'), port, state, physical_state and, for
  ports bound to a netdev, netdev and netdev_index. No devices: '[]' or nothing.
- Errors on stderr: 'error: File exists' (EEXIST), 'error: No such device'
  (ENODEV), 'error: Invalid argument' (EINVAL, e.g. type siw without siw.ko),
  'Wrong device name - X' (delete of an unknown link), old iproute2 without
  'rdma link add': 'Unknown parameter'/'Unknown command'.
"""

from __future__ import annotations

import json
import os

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs, _validate

LINK_TYPES = ("rxe", "siw")
DRIVER_MODULES = {"rxe": "rdma_rxe", "siw": "siw"}
NODE_TYPES = {"rxe": "1: CA", "siw": "4: RNIC"}
SIW_NODE_DESC = "Software iWARP stack"
MODULES_ROOT = "/lib/modules"
NETNS_DIR = "/run/netns"  # ip netns add NAME binds the namespace to NETNS_DIR/NAME


# --- options of rdma.fabric.rdma_link ----------------------------------------------
# AnsibleModule(argument_spec=ARGUMENT_SPEC, **ARGUMENT_RULES); the soft_rdma role checks its links with them too.
ARGUMENT_SPEC = dict(
    name=dict(type="str", required=True),
    type=dict(type="str", choices=list(LINK_TYPES)),
    netdev=dict(type="str"),
    state=dict(type="str", default="present", choices=["present", "absent"]),
    persistent=dict(type="bool", default=True),
    allow_rename=dict(type="bool", default=False),
    netns=dict(type="str"),
)
ARGUMENT_RULES = dict(required_if=[("state", "present", ("type", "netdev"))])


def validate_params(params: dict) -> None:
    """Raise ValueError naming the first bad option."""
    _validate.rdma_device_name(params["name"], "name")
    if params.get("state", "present") == "present":
        # required_if only sees whether the key was given; a null (a template that yields None) gets here
        for option in ("type", "netdev"):
            if params.get(option) is None:
                raise ValueError(f"{option}: required when state is present, got null")
    if params["netdev"] is not None:
        _validate.netdev_name(params["netdev"], "netdev")
    if params.get("netns") is not None:
        _validate.netns_name(params["netns"], "netns")
        if params.get("state", "present") != "present":
            raise ValueError("netns: only with state=present (delete a moved link inside its namespace, or delete the "
                             "namespace: its netdev goes and the link with it)")
        if params.get("persistent", True):
            raise ValueError("netns: needs persistent=false (the udev rule would bring the link back in the initial "
                             "namespace at boot, not in the named one)")


# --- argv --------------------------------------------------------------------

def link_show_argv(rdma: str) -> list:
    return [rdma, "-j", "link", "show"]


def link_add_argv(rdma: str, name: str, link_type: str, netdev: str) -> list:
    return [rdma, "link", "add", name, "type", link_type, "netdev", netdev]


def link_delete_argv(rdma: str, name: str) -> list:
    return [rdma, "link", "delete", name]


def dev_set_netns_argv(rdma: str, name: str, netns: str) -> list:
    return [rdma, "dev", "set", name, "netns", netns]


def action_argv(rdma: str, action: tuple, ip: str = "ip") -> list:
    """argv for a plan() or plan_netns() action; ip: iproute2's ip, for an add inside a named namespace."""
    if action[0] == "add":
        return link_add_argv(rdma, *action[1:])
    if action[0] == "add_in":
        return [ip, "netns", "exec", action[4]] + link_add_argv(rdma, *action[1:4])
    if action[0] == "delete":
        return link_delete_argv(rdma, action[1])
    if action[0] == "move":
        return dev_set_netns_argv(rdma, *action[1:])
    raise ValueError(f"unknown action {action[0]!r}")


# --- parsing -------------------------------------------------------------------

def parse_link_show(text) -> list:
    """Parse `rdma -j link show` into a list of {name, port, state, physical_state, netdev, netdev_index, ifindex}.

    Raises ValueError with a one-line message on anything that is not that JSON.
    """
    text = (text or "").strip()
    if not text:
        return []
    try:
        data = json.loads(text)
    except ValueError as err:
        raise ValueError(f"rdma -j link show: output is not JSON ({err.__class__.__name__}: {str(err).splitlines()[0]})") from None
    if not isinstance(data, list):
        raise ValueError(f"rdma -j link show: expected a JSON list, got {type(data).__name__}")
    links = []
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("ifname"), str) or not entry["ifname"]:
            raise ValueError(f"rdma -j link show: entry without an ifname: {json.dumps(entry, sort_keys=True)[:120]}")
        name = entry["ifname"]
        port = entry.get("port")
        if port is None and "/" in name:
            name, _sep, port_text = name.rpartition("/")
            port = int(port_text) if port_text.isascii() and port_text.isdigit() else None
        elif "/" in name:
            name = name.rpartition("/")[0]
        if isinstance(port, bool) or (port is not None and not isinstance(port, int)):
            raise ValueError(f"rdma -j link show: {name}: port {port!r} is not an integer")
        links.append({
            "name": name,
            "port": port,
            "ifindex": entry.get("ifindex"),
            "state": entry.get("state"),
            "physical_state": entry.get("physical_state"),
            "netdev": entry.get("netdev"),
            "netdev_index": entry.get("netdev_index"),
        })
    return links


def find_link(links: list, name: str):
    """The first port entry of device `name`, or None."""
    for link in links:
        if link["name"] == name:
            return link
    return None


def type_from_sysfs(node_type, node_desc, has_parent_attr: bool, is_virtual: bool):
    """Decide what kind of RDMA device a sysfs entry is: 'rxe', 'siw' or 'other'.

    - rxe: node_type '1: CA' and the rxe-only 'parent' attribute (the netdev name);
    - siw: node_type '4: RNIC' and either no parent device (it lives under
      /sys/devices/virtual/infiniband, kernel >= 5.x) or siw's own node
      description 'Software iWARP stack';
    - anything else is hardware (or unknown) and never ours to delete.
    """
    node_type = (node_type or "").strip()
    if node_type == NODE_TYPES["rxe"] and has_parent_attr:
        return "rxe"
    if node_type == NODE_TYPES["siw"] and (is_virtual or (node_desc or "").strip() == SIW_NODE_DESC):
        return "siw"
    return "other"


def alias_provided(modules_alias: str, builtin: str, link_type: str) -> bool:
    """Whether modules.alias (text) maps 'rdma-link-<type>' or modules.builtin (text) lists the driver."""
    wanted = f"rdma-link-{link_type}"
    for line in (modules_alias or "").splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0] == "alias" and fields[1] == wanted:
            return True
    module = DRIVER_MODULES[link_type]
    for line in (builtin or "").splitlines():
        base = os.path.basename(line.strip())
        if base in (f"{module}.ko", f"{module.replace('_', '-')}.ko"):
            return True
    return False


# --- planning ------------------------------------------------------------------

def plan(current, desired) -> list:
    """Actions that take `current` to `desired`; both are {name, type, netdev} or None.

    Returns a list of ('delete', name) and ('add', name, type, netdev) in order.
    """
    if desired is None:
        return [("delete", current["name"])] if current else []
    if current and current["type"] == desired["type"] and current["netdev"] == desired["netdev"]:
        return []
    actions = []
    if current:
        actions.append(("delete", current["name"]))
    actions.append(("add", desired["name"], desired["type"], desired["netdev"]))
    return actions


def plan_netns(here: bool, there: bool, same: bool, actions: list, name: str, link_type: str, netdev: str, netns: str) -> tuple:
    """The actions that put link `name` into network namespace `netns` (exclusive netns mode), and where it is before.

    here: the module's own namespace lists the device; there: `netns` lists it (and this one does not); same: the
    module runs in `netns` itself; actions: plan()'s for the link as this namespace shows it (used only when same).
    In exclusive mode the kernel lists a device in one namespace only, and `rdma link add` run inside a namespace makes
    the device in the initial one (measured on 7.3), while it looks the netdev up in the namespace it runs in. So a
    link for `netns` is added from inside it (('add_in', name, type, netdev, netns): `ip netns exec`) and then moved
    there (('move', name, netns): `rdma dev set NAME netns NETNS`, from the module's namespace, where it appeared).
    A device this namespace lists is moved as it is: its netdev lives in another namespace and cannot be compared.
    Returns (actions, namespace before): `netns` when the link is there already, None otherwise.
    """
    if same:
        return list(actions), netns if here else None
    if here:
        return [("move", name, netns)], None
    if there:
        return [], netns
    return [("add_in", name, link_type, netdev, netns), ("move", name, netns)], None


def conflicting(links: list, types: dict, name: str, link_type: str, netdev: str):
    """Another link of the same type already on netdev (the kernel refuses a second one with EEXIST)."""
    for link in links:
        if link["name"] != name and link.get("netdev") == netdev and types.get(link["name"]) == link_type:
            return link["name"]
    return None


# --- error causes ----------------------------------------------------------------

def explain_show_error(rc: int, stdout: str, stderr: str) -> str:
    """One line for a failed `rdma -j link show`."""
    text = " ".join(((stderr or "") + " " + (stdout or "")).split())
    lower = text.lower()
    if "unknown object" in lower or "unknown parameter" in lower or "unknown command" in lower:
        return "rdma -j link show: this iproute2's rdma tool has no 'rdma link' (too old); install a newer iproute2 (5.x or later)"
    if "invalid option" in lower and ("'j'" in lower or "-j" in lower):
        return "rdma -j link show: this iproute2's rdma tool has no JSON output (-j) (too old); install a newer iproute2 (5.x or later)"
    return f"rdma -j link show failed (rc={rc}): {text or 'no message'}"


def explain_error(action: tuple, rc: int, stdout: str, stderr: str, owner=None) -> str:
    """One line naming the cause of a failed `rdma link add|delete`.

    action is a plan() tuple; owner is the device already on the netdev, when known.
    """
    text = " ".join(((stderr or "") + " " + (stdout or "")).split())
    lower = text.lower()
    if action[0] == "move":
        _verb, name, netns = action
        where = f"rdma dev set {name} netns {netns}"
        if "operation not supported" in lower:
            return (f"netns: the kernel refused to move {name} (EOPNOTSUPP from {where}): the RDMA subsystem is in "
                    "shared netns mode, or the driver cannot change namespace")
        if "no such file" in lower or "cannot open" in lower:
            return f"netns: no network namespace {netns} (/run/netns/{netns}; {where}: {text})"
        return f"{where} failed (rc={rc}): {text or 'no message'}"
    if action[0] == "add_in":
        action = ("add",) + tuple(action[1:4])
    if action[0] == "add":
        _verb, name, link_type, netdev = action
        where = f"rdma link add {name} type {link_type} netdev {netdev}"
    else:
        _verb, name = action
        where = f"rdma link delete {name}"
    if "unknown parameter" in lower or "unknown object" in lower or "unknown command" in lower:
        return f"{where}: this iproute2's rdma tool has no 'rdma link add/delete' (too old); install a newer iproute2 (5.x or later)"
    if action[0] == "add":
        if "file exists" in lower:
            if owner and owner != name:
                return f"netdev: {netdev} already carries {link_type} device {owner}; delete it or use name={owner}"
            return f"netdev: {netdev} already carries a {link_type} device, or name {name} is taken (EEXIST from {where})"
        if "no such device" in lower:
            return f"netdev: {netdev} does not exist (ENODEV from {where})"
        if "invalid argument" in lower:
            return (f"type: the kernel has no {link_type} driver (module {DRIVER_MODULES[link_type]}) or refused name {name!r} "
                    f"(EINVAL from {where})")
        if "operation not permitted" in lower:
            return f"netdev: {link_type} cannot attach to {netdev} (EPERM: a VLAN device or missing CAP_NET_ADMIN, from {where})"
        if "cannot allocate memory" in lower:
            return f"netdev: {link_type} cannot attach to {netdev} (ENOMEM from {where}; siw needs a netdev with a parent device or lo)"
    else:
        if "wrong device name" in lower:
            return f"name: no RDMA link named {name} ({where}: {text})"
        if "operation not supported" in lower or "invalid argument" in lower:
            return f"name: {name} cannot be deleted with rdma link delete: not a soft RDMA link ({where}: {text})"
    detail = text or "no message"
    return f"{where} failed (rc={rc}): {detail}"


# --- readers (sysfs and /lib/modules, no processes) ---------------------------------

def type_of_device_dir(device_dir: str):
    """What kind of device a /sys/class/infiniband/<name> directory is ('rxe', 'siw', 'other'), None when absent."""
    node_type = _sysfs.read_attr(os.path.join(device_dir, "node_type"))
    if node_type is None:
        return None
    has_parent = _sysfs.read_attr(os.path.join(device_dir, "parent")) is not None
    is_virtual = "/devices/virtual/" in os.path.realpath(device_dir).replace(os.sep, "/")
    node_desc = _sysfs.read_attr(os.path.join(device_dir, "node_desc"))
    return type_from_sysfs(node_type, node_desc, has_parent, is_virtual)


def link_type_of(name: str):
    """What kind of device /sys/class/infiniband/<name> is ('rxe', 'siw', 'other'), None when absent."""
    return type_of_device_dir(_sysfs.path("class", "infiniband", name))


def driver_available(link_type: str, release: str):
    """True when the driver is loaded, built in or can be autoloaded; False when it cannot; None when unknown."""
    if os.path.isdir(_sysfs.path("module", DRIVER_MODULES[link_type])):
        return True
    base = os.path.join(MODULES_ROOT, release)
    aliases = _sysfs.read_attr(os.path.join(base, "modules.alias"))
    builtin = _sysfs.read_attr(os.path.join(base, "modules.builtin"))
    if aliases is None and builtin is None:
        return None
    return alias_provided(aliases or "", builtin or "", link_type)
