#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: ipoib_connection
short_description: Manage IPoIB connection profiles (and P_Key children) in NetworkManager
version_added: 0.1.0
description:
  - Creates, changes, deletes, activates and deactivates NetworkManager profiles of type C(infiniband) through C(nmcli).
  - Reads the profile with C(nmcli -t), compares it property by property with the options given, and
    changes only the properties that differ, in one C(nmcli connection modify). Options that are not given
    are left as the profile has them.
  - P_Key child interfaces are profiles with O(parent) and O(pkey). P_Keys are normalised with the
    full-membership bit, so V(0x0002), V(2), V(0x8002) and V(32770) are one partition, written as
    C(0x8002), and NetworkManager names the interface C(<parent>.8002).
  - Every option is validated before anything is changed, including the MTU against the transport mode
    (NetworkManager itself silently stores 70000 as 65520).
  - Profiles are addressed by UUID once found by name, so names containing C(:) or C(\) work.
author:
  - rdma.fabric contributors (@rdma-fabric)
options:
  name:
    description:
      - The connection profile's name (C(connection.id)).
      - 1-255 characters, no newline or other control characters (C0, DEL and C1, U+0080-U+009F), not starting with C(-) or
        white space.
      - When several profiles share the name, the module refuses to change them (V(absent) deletes them all).
    type: str
    required: true
    version_added: 0.1.0
  ifname:
    description:
      - The interface the profile binds to (C(connection.interface-name)), for example V(ib0).
      - For a P_Key child it must be C(<parent>.<pkey>) (for example V(ib0.8002)) or be left out;
        NetworkManager refuses any other name.
    type: str
    version_added: 0.1.0
  parent:
    description:
      - The parent interface of a P_Key child (C(infiniband.parent)), an interface name such as V(ib0).
      - Requires O(pkey).
    type: str
    version_added: 0.1.0
  pkey:
    description:
      - The partition key of a child interface (C(infiniband.p-key)), as hex (V(0x8002)) or decimal (V(32770)); V(10)
        is decimal (0x000a), as in the subnet_manager role. Digit text with a leading zero (V(010)) is refused as
        ambiguous (OpenSM would read it as octal); surrounding white space is refused.
      - V(0x0000) and V(0x8000) and values above V(0xffff) are refused. The full-membership bit V(0x8000) is
        always set, as the kernel does.
      - Requires O(parent).
    type: str
    version_added: 0.1.0
  transport_mode:
    description:
      - IPoIB transport mode (C(infiniband.transport-mode)).
      - A new profile without it gets V(datagram), NetworkManager's default.
      - ConnectX-4 and later (Enhanced IPoIB) support datagram only.
    type: str
    choices: [datagram, connected]
    version_added: 0.1.0
  mtu:
    description:
      - The MTU (C(infiniband.mtu)); V(0) means automatic.
      - At most V(4092) in datagram mode and V(65520) in connected mode, checked against O(transport_mode),
        or the profile's mode when O(transport_mode) is not given.
    type: int
    version_added: 0.1.0
  ipv4:
    description:
      - IPv4 settings. Only the keys given are managed.
    type: dict
    version_added: 0.1.0
    suboptions:
      method:
        description:
          - C(ipv4.method). V(manual) needs O(ipv4.addresses). V(disabled) and V(link-local) clear addresses,
            gateway and DNS servers that are not given.
        type: str
        choices: [auto, manual, link-local, shared, disabled]
        version_added: 0.1.0
      addresses:
        description:
          - Addresses with prefix length (CIDR), for example V(192.0.2.10/24); a bare address means V(/32).
          - One address per item, prefix length 1-32 (NetworkManager refuses V(/0)); C(,), C(;) and white space inside an item
            are refused, since they are NetworkManager's list syntax.
          - The order is kept; the first is the primary address. An empty list removes them all.
        type: list
        elements: str
        version_added: 0.1.0
      gateway:
        description: The default gateway; needs an address. An empty string removes it.
        type: str
        version_added: 0.1.0
      dns:
        description: DNS servers, in order. An empty list removes them all.
        type: list
        elements: str
        version_added: 0.1.0
  ipv6:
    description:
      - IPv6 settings. Only the keys given are managed.
    type: dict
    version_added: 0.1.0
    suboptions:
      method:
        description:
          - C(ipv6.method). V(manual) needs O(ipv6.addresses). V(disabled) and V(ignore) clear addresses,
            gateway and DNS servers that are not given.
        type: str
        choices: [auto, dhcp, manual, link-local, ignore, shared, disabled]
        version_added: 0.1.0
      addresses:
        description:
          - Addresses with prefix length, for example V(2001:db8::10/64); a bare address means V(/128).
          - One address per item, prefix length 1-128; an IPv6 zone index (V(fe80::1%ib0)) is refused here, in O(ipv6.gateway)
            and in O(ipv6.dns), as NetworkManager takes none.
        type: list
        elements: str
        version_added: 0.1.0
      gateway:
        description: The default gateway; needs an address. An empty string removes it.
        type: str
        version_added: 0.1.0
      dns:
        description: DNS servers, in order. An empty list removes them all.
        type: list
        elements: str
        version_added: 0.1.0
  autoconnect:
    description: Whether NetworkManager activates the profile by itself (C(connection.autoconnect)).
    type: bool
    version_added: 0.1.0
  state:
    description:
      - V(present) makes the profile exist with the options given.
      - V(absent) deletes every profile with this name (P_Key children included).
      - V(up) is V(present) and then activates the profile when it is not active. Without a matching
        InfiniBand device the activation fails with NetworkManager's message and the profile stays saved.
      - V(down) is V(present) and then deactivates the profile when it is active.
    type: str
    choices: [present, absent, up, down]
    default: present
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
  platform:
    platforms: linux
requirements:
  - NetworkManager with C(nmcli), running.
notes:
  - NetworkManager must be running; the module says so when C(nmcli) answers that it is not (rc 8), and
    when C(nmcli) is not installed.
seealso:
  - name: nm-settings-nmcli(5)
    description: The infiniband, ipv4 and ipv6 properties.
    link: https://networkmanager.dev/docs/api/latest/nm-settings-nmcli.html
"""

EXAMPLES = r"""
- name: IPoIB on ib0 in connected mode with the largest MTU
  rdma.fabric.ipoib_connection:
    name: ib0
    ifname: ib0
    transport_mode: connected
    mtu: 65520
    ipv4:
      method: manual
      addresses: [192.0.2.10/24]

- name: A P_Key child of ib0 (interface ib0.8002)
  rdma.fabric.ipoib_connection:
    name: ib0.8002
    parent: ib0
    pkey: "0x0002"
    ipv4:
      method: manual
      addresses: [198.51.100.10/24]
    state: up

- name: Remove the child profile
  rdma.fabric.ipoib_connection:
    name: ib0.8002
    state: absent
"""

RETURN = r"""
connection:
  description:
    - The profile after the run (in check mode, what it would be); empty after V(absent).
  returned: always
  type: dict
  contains:
    name:
      description: The profile name.
      type: str
      sample: ib0.8002
    uuid:
      description: The profile UUID; null in check mode for a profile that would be created.
      type: str
      sample: 4b2336f8-ef9a-46f8-a658-49eb1cdecdd1
    device:
      description: The interface the profile binds to (the child name for a P_Key child), or null for any.
      type: str
      sample: ib0.8002
    active:
      description: Whether the profile is active.
      type: bool
      sample: false
    properties:
      description: The managed NetworkManager properties, normalised (P_Key as C(0x8002), MTU C(0) for auto).
      type: dict
      sample: {"infiniband.transport-mode": "datagram", "infiniband.mtu": "4092", "infiniband.p-key": "0x8002"}
changes:
  description: The properties that differ, with their values before and after.
  returned: always
  type: list
  elements: dict
  sample: [{"property": "infiniband.mtu", "before": "65520", "after": "4092"}]
before:
  description:
    - The managed properties before the run, as the diff shows them (normalised values, keyed by property).
    - V(null) when the profile did not exist. With O(state=absent), the deleted profiles' properties keyed by UUID.
  returned: always
  type: dict
  sample: {"infiniband.transport-mode": "connected", "infiniband.mtu": "65520"}
after:
  description:
    - The managed properties after the run (in check mode, what they would be), keyed by property; V({}) after
      O(state=absent).
  returned: always
  type: dict
  sample: {"infiniband.transport-mode": "connected", "infiniband.mtu": "4092"}
commands:
  description:
    - The nmcli commands that changed something (or would, in check mode), in order, each as a line a shell would split
      back into the same words.
    - Earlier versions gave each command as a list of words (see the changelog's breaking changes).
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/nmcli connection modify uuid 4b2336f8-ef9a-46f8-a658-49eb1cdecdd1 infiniband.mtu 4092"]
"""

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _ipoib, _kit, _nmcli

NMCLI_HINT = "install NetworkManager (network-manager on Debian/Ubuntu, NetworkManager on RHEL/Fedora)"


class Nmcli:
    """The nmcli calls of this module, through the kit; a failure is one line naming the step."""

    def __init__(self, kit, binary):
        self.kit = kit
        self.binary = binary

    def _read(self, argv, step, parse):
        rc, out, err = self.kit.query(argv)
        if rc != 0:
            raise _kit.Failure(_nmcli.error_message(step, rc, out, err))
        return parse(out)

    def profiles(self):
        return self._read(_nmcli.list_argv(self.binary), "listing connections", _nmcli.parse_list)

    def read(self, uuid):
        """The profile's managed properties, normalised."""
        detail = self._read(_nmcli.show_argv(self.binary, uuid, _ipoib.READ_PROPERTIES), f"reading connection {uuid}", _nmcli.parse_detail)
        return _ipoib.current_properties(detail)

    def change(self, argv, step):
        """A command that changes the profile: recorded in commands, skipped in check mode."""
        return self.kit.change(argv, explain=lambda rc, out, err: _nmcli.error_message(step, rc, out, err))


def main():
    module = _args.module(argument_spec=_ipoib.ARGUMENT_SPEC, numbers=("pkey",), supports_check_mode=True, **_ipoib.ARGUMENT_RULES)
    kit = _kit.Kit(module)
    name, state = module.params["name"], module.params["state"]
    with kit.failures():
        # parse and validate: every option, for every state
        _ipoib.connection_name(name)
        desired = _ipoib.desired_properties(module.params)
        nmcli = Nmcli(kit, kit.tool("nmcli", NMCLI_HINT))
        # plan: reads only
        matches = _nmcli.find_by_name(nmcli.profiles(), name)
        if state == "absent":
            absent(kit, nmcli, name, matches)
        row = _the_profile(name, matches)
        current = nmcli.read(row["UUID"]) if row else None
        writes = _ipoib.reconcile(current, desired)
        active = bool(row) and row.get("STATE") in ("activated", "activating")
        # apply: kit.change records each command and, in check mode, runs none
        uuid = _save(nmcli, name, row, writes)
        active = _activate(nmcli, name, uuid, state, active)
        predicted = dict(current or {}, **writes)
        if module.check_mode or uuid is None:
            kit.exit(bool(kit.commands), **_result(name, uuid, active, current, desired, writes, predicted))
        # read back
        properties = nmcli.read(uuid)
    kit.exit(bool(kit.commands), **_result(name, uuid, active, current, desired, writes, properties))


def _the_profile(name, matches):
    """The one infiniband profile with the name, or None; a Failure for duplicates or another type."""
    if len(matches) > 1:
        uuids = ", ".join(row["UUID"] for row in matches)
        raise _kit.Failure(f"name: {len(matches)} profiles are named {name!r} ({uuids}); delete the duplicates or use state=absent")
    if matches and matches[0]["TYPE"] != "infiniband":
        raise _kit.Failure(f"name: profile {name!r} exists with type {matches[0]['TYPE']}, not infiniband; refusing to change it")
    return matches[0] if matches else None


def _save(nmcli, name, row, writes):
    """Create the profile or modify what differs; its UUID (None for a profile created in check mode)."""
    if row is None:
        out = nmcli.change(_nmcli.add_argv(nmcli.binary, "infiniband", name, _ipoib.ordered(writes)), f"creating connection {name!r}")
        if nmcli.kit.module.check_mode:
            return None
        return _nmcli.added_uuid(out) or _uuid_by_name(nmcli, name)
    if writes:
        nmcli.change(_nmcli.modify_argv(nmcli.binary, row["UUID"], _ipoib.ordered(writes)), f"modifying connection {name!r}")
    return row["UUID"]


def _activate(nmcli, name, uuid, state, active):
    """Activate (state=up) or deactivate (state=down) when needed; whether the profile is active after."""
    if state == "up" and not active:
        step = f"activating connection {name!r} (the profile is saved)"
        nmcli.change(_nmcli.up_argv(nmcli.binary, uuid or "<new>"), step)  # <new>: created in check mode, not run
        return True
    if state == "down" and active:
        nmcli.change(_nmcli.down_argv(nmcli.binary, uuid), f"deactivating connection {name!r}")
        return False
    return active


def _result(name, uuid, active, current, desired, writes, properties):
    """diff, before, after, changes and connection of a present/up/down run."""
    before = None
    if current is not None:
        before = {prop: current.get(prop) for prop in list(desired) + list(writes)}
    after = dict(before or {}, **writes)
    return dict(
        diff={"before": _shown(before), "after": _shown(after)},
        before=before,
        after=after,
        changes=[{"property": prop, "before": (current or {}).get(prop), "after": value} for prop, value in _ipoib.ordered(writes)],
        connection=dict(name=name, uuid=uuid, device=_ipoib.device_name(properties), active=active, properties=properties),
    )


def _shown(properties):
    """Diff text: one 'property: value' line per managed property; empty when the profile does not exist."""
    return "".join(f"{prop}: {value}\n" for prop, value in _ipoib.ordered(properties or {}))


def _uuid_by_name(nmcli, name):
    matches = _nmcli.find_by_name(nmcli.profiles(), name)
    return matches[0]["UUID"] if matches else None


def absent(kit, nmcli, name, matches):
    """Delete every infiniband profile named name; refuse when one of another type has the name."""
    for row in matches:
        if row["TYPE"] != "infiniband":
            raise _kit.Failure(f"name: profile {name!r} ({row['UUID']}) has type {row['TYPE']}, not infiniband; refusing to delete it")
    before = {row["UUID"]: nmcli.read(row["UUID"]) for row in matches}
    for uuid in before:
        nmcli.change(_nmcli.delete_argv(nmcli.binary, uuid), f"deleting connection {name!r} ({uuid})")
    text = "".join(f"# {name} ({uuid})\n" + _shown(props) for uuid, props in before.items())
    kit.exit(bool(matches), diff={"before": text, "after": ""}, before=before, after={}, changes=[], connection={})


if __name__ == "__main__":
    main()
