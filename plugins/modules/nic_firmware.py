#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: nic_firmware
short_description: NVIDIA ConnectX non-volatile firmware settings (mstconfig or mlxconfig), with default, current and next boot
version_added: 0.2.0
description:
  - Sets a ConnectX card's non-volatile firmware configuration (SR-IOV, link type, ATS, congestion control and any other
    key the card prints) with mstflint's C(mstconfig) or NVIDIA MFT's C(mlxconfig), whichever is installed.
  - Reads the card with the tool's extended query (C(-e query)), which prints each key's default, current and next-boot
    value, and gives each wanted key one of three states. C(in_sync) - current and next boot hold the value. C(reboot_pending)
    - next boot holds it and current does not; the key is never set again (setting a pending value again is what caused
    boot loops in NVIDIA's operators). C(needs_set) - next boot does not hold it; only these keys are set, in one
    C(set) command, and read back.
  - The new values take effect at the next reboot or firmware reset; RV(reboot_required) says whether one is needed.
  - Refuses, in one line naming the key, the value and what is allowed, before anything is set - an unknown key, a value
    out of range, a key the card does not print, a read-only key, a key hidden until C(ADVANCED_PCI_SETTINGS) is true,
    a key of the dangerous list not named in O(allow), and a BlueField card in DPU mode (configured from its Arm side).
  - "Verified here without a ConnectX: against the extended query dumps of ConnectX-4 Lx, ConnectX-5, ConnectX-6 Lx,
    ConnectX-7 and BlueField published in NVIDIA's operators' tests and issues, and against a stateful stand-in for the
    tool. Never run on a real card."
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
      - Queries the card and sets nothing; RV(after) is the configuration the set would leave.
  diff_mode:
    support: full
  platform:
    platforms: linux
options:
  device:
    description:
      - The card, as a PCI address (C(0000:03:00.0) or C(03:00.0)) or an MFT device (C(/dev/mst/mt4119_pciconf0)).
    type: str
    required: true
    version_added: 0.2.0
  settings:
    description:
      - The first-class keys and their values, checked by their own rules. Booleans take V(true)/V(false), V(True),
        V(1)/V(0); link types take V(IB)/V(1), V(ETH)/V(2), V(VPI)/V(3).
      - C(SRIOV_EN), C(ATS_ENABLED), C(ADVANCED_PCI_SETTINGS) (booleans); C(NUM_OF_VFS) (0-127);
        C(LINK_TYPE_P1), C(LINK_TYPE_P2); C(ROCE_CC_PRIO_MASK_P1), C(ROCE_CC_PRIO_MASK_P2) (0-255);
        C(CNP_DSCP_P1), C(CNP_DSCP_P2) (0-63); C(CNP_802P_PRIO_P1), C(CNP_802P_PRIO_P2) (0-7).
    type: dict
    default: {}
    version_added: 0.2.0
  raw_settings:
    description:
      - Any other key the card prints, with a number or the word the tool prints for it (C(ENABLED), C(_256KB)).
        An array element is C(NAME[i]).
    type: dict
    default: {}
    version_added: 0.2.0
  allow:
    description:
      - Keys of the dangerous list that O(raw_settings) may set, for example C(PCI_WR_ORDERING) (forcing it broke NCCL
        collectives) or C(NUM_OF_PF).
    type: list
    elements: str
    default: []
    version_added: 0.2.0
  tool:
    description:
      - The tool. V(auto) takes C(mstconfig) (Debian's and RHEL's C(mstflint) package) and else C(mlxconfig) (MFT).
    type: str
    choices: [auto, mstconfig, mlxconfig]
    default: auto
    version_added: 0.2.0
notes:
  - A firmware reset (C(mlxfwreset)) or a reboot moves the next-boot values into current; the rdma.fabric.nic_firmware
    role reboots only the hosts whose cards need it.
seealso:
  - name: NVIDIA mlxconfig
    description: The MFT tool and its parameters.
    link: https://docs.nvidia.com/networking/display/mftv4330/using+mlxconfig
"""

EXAMPLES = r"""
- name: SR-IOV with 8 VFs, Ethernet on both ports, ATS for GPUDirect in VMs
  rdma.fabric.nic_firmware:
    device: "0000:03:00.0"
    settings:
      SRIOV_EN: true
      NUM_OF_VFS: 8
      LINK_TYPE_P1: ETH
      LINK_TYPE_P2: ETH
      ATS_ENABLED: true
  register: firmware

- name: Reboot when the card needs it
  ansible.builtin.reboot:
  when: firmware.reboot_required
"""

RETURN = r"""
reboot_required:
  description: Whether a reboot or firmware reset is needed for the wanted values to be current (a key was set, or was pending).
  returned: success
  type: bool
  sample: true
pending:
  description: The keys whose next-boot value is the wanted one while the current value is not (never set again).
  returned: success
  type: list
  elements: str
  sample: [NUM_OF_VFS]
key_states:
  description: Per wanted key its state (V(in_sync), V(reboot_pending), V(needs_set)) and the values, as the tool prints them.
  returned: success
  type: dict
  sample: {NUM_OF_VFS: {state: reboot_pending, want: "8", default: "0", current: "0", next: "8"}}
before:
  description: Per wanted key the default, current and next-boot values before the run.
  returned: success
  type: dict
  sample: {SRIOV_EN: {default: "False(0)", current: "False(0)", next: "False(0)"}}
after:
  description: The same after the run (in check mode, what the set would leave).
  returned: success
  type: dict
  sample: {SRIOV_EN: {default: "False(0)", current: "False(0)", next: "True(1)"}}
device_info:
  description: What the query says of the card.
  returned: success
  type: dict
  sample: {type: ConnectX6LX, name: MCX631102AN-ADA_Ax, description: "ConnectX-6 Lx EN adapter card", path: "0000:03:00.0"}
commands:
  description: The commands that changed the card (in check mode, that would have).
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/mstconfig -d 0000:03:00.0 -y set SRIOV_EN=1 NUM_OF_VFS=8"]
"""

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _kit, _mlxconfig

ARGUMENT_SPEC = {
    "device": {"type": "str", "required": True},
    "settings": {"type": "dict", "default": {}},
    "raw_settings": {"type": "dict", "default": {}},
    "allow": {"type": "list", "elements": "str", "default": []},
    "tool": {"type": "str", "choices": ["auto", "mstconfig", "mlxconfig"], "default": "auto"},
}
HINT = "install mstflint (Debian, RHEL: the mstflint package) or NVIDIA MFT (mlxconfig)"


def find_tool(kit, tool: str) -> str:
    if tool != "auto":
        return kit.tool(tool, HINT)
    path = kit.module.get_bin_path("mstconfig") or kit.module.get_bin_path("mlxconfig")
    if not path:
        raise _kit.Failure(f"tool: neither mstconfig nor mlxconfig found; {HINT}")
    return path


def query(kit, binary: str, dev: str, names=()) -> dict:
    """The card's extended query, parsed; a card the tool cannot open is a one-line failure."""
    rc, out, err = kit.query([binary] + _mlxconfig.query_argv(dev, names))
    if _mlxconfig.no_device(out + err):
        raise _kit.Failure(f"device: {binary} cannot open {dev}: {_kit.first_line(out + err)} (rc={rc})")
    if rc != 0:
        raise _kit.Failure(f"{binary} query of {dev} failed (rc={rc}): {_kit.first_line(err or out) or 'no message'}")
    return _mlxconfig.parse(out)


def read(kit, binary: str, dev: str, raw: dict) -> dict:
    """The query, with the arrays that raw_settings names expanded (a plain query prints them as Array[0..N])."""
    parsed = query(kit, binary, dev)
    bases = {key.split("[", 1)[0] for key in raw if isinstance(key, str) and "[" in key}
    wanted = [name for name in _mlxconfig.array_queries(parsed) if name.split("[", 1)[0] in bases]
    if wanted:
        expanded = query(kit, binary, dev, wanted)
        parsed["params"].update(expanded["params"])
    return parsed


def shown(entry: dict) -> dict:
    return {column: _mlxconfig.render_value(entry[column]) if entry.get(column) is not None else None for column in _mlxconfig.COLUMNS}


def track(parsed: dict, planned: dict) -> _kit.Changes:
    """Per wanted key its three values, before and after the set (next holds the wanted value after it)."""
    changes = _kit.Changes()
    for key, item in planned["keys"].items():
        before = shown(parsed["params"][key])
        entry = parsed["params"][key]
        after = dict(before, next=_mlxconfig.printed(item["want"], entry)) if item["state"] == _mlxconfig.NEEDS_SET else before
        changes.add(key, before, after)
    return changes


def check_back(parsed: dict, planned: dict) -> None:
    """After the set, every key set must show its value as next boot."""
    wrong = [f"{key} next boot reads {_mlxconfig.render_value(parsed['params'][key]['next'])}, "
             f"expected {_mlxconfig.render_value(item['want'])}"
             for key, item in planned["keys"].items()
             if item["state"] == _mlxconfig.NEEDS_SET and not _mlxconfig.matches(item["want"], parsed["params"][key]["next"])]
    if wrong:
        raise _kit.Failure("set did not take: " + "; ".join(wrong))


def main():
    module = _args.module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    kit = _kit.Kit(module)
    with kit.failures():
        params = module.params
        dev = _mlxconfig.device(params["device"])
        # all that can be refused without the card (first-class keys and values, raw keys' form, dangerous keys
        # not allowed), before the tool is looked for or run; what needs the card's query is refused after it
        _mlxconfig.check_static(params["settings"], params["raw_settings"], params["allow"])
        binary = find_tool(kit, params["tool"])

        # plan: one query, three states; nothing is set yet
        parsed = read(kit, binary, dev, params["raw_settings"])
        planned = _mlxconfig.plan(params["settings"], parsed, raw=params["raw_settings"], allow=frozenset(params["allow"]))
        changes = track(parsed, planned)
        states = {key: dict(shown(parsed["params"][key]), state=item["state"], want=_mlxconfig.printed(item["want"], parsed["params"][key]))
                  for key, item in planned["keys"].items()}
        result = {"reboot_required": planned["reboot_required"], "pending": planned["pending"], "device_info": parsed["device"],
                  "key_states": states,
                  "before": changes.before, "after": changes.after, "diff": changes.diff()}

        if planned["set"]:  # check mode: recorded in commands, not run
            kit.change([binary] + _mlxconfig.set_argv(dev, planned["set"]))
        if module.check_mode or not planned["set"]:
            kit.exit(bool(planned["set"]), **result)
        check_back(read(kit, binary, dev, params["raw_settings"]), planned)
        kit.exit(True, **result)


if __name__ == "__main__":
    main()
