#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_system
short_description: The RDMA subsystem's network-namespace mode and privileged Q_Key mode, now and at boot
version_added: 0.2.0
description:
  - Reads and sets the RDMA subsystem's system settings, as C(rdma system show) and C(rdma system set) do, over RDMA
    netlink (no process), the network-namespace mode and the privileged Q_Key mode. Also reads whether the kernel
    supports copy-on-fork for pinned memory.
  - In V(shared) network-namespace mode (the kernel's default) every network namespace sees every RDMA device. In
    V(exclusive) mode a device belongs to one namespace, the initial one unless it is moved (C(rdma dev set DEV netns
    NS)), and a container sees only the devices given to it; NVIDIA's rdma-cni and the SR-IOV network operator need
    this mode.
  - The kernel changes the network-namespace mode only while no network namespace other than the initial one exists
    (containers, C(ip netns), services with C(PrivateNetwork=)), otherwise it answers EBUSY. The module then fails with
    one line that says so and how many namespaces there are, or, with O(when_busy=reboot), persists the mode and
    reports RV(reboot_required).
  - The mode is persisted as ib_core's module option C(netns_mode) in C(/etc/modprobe.d/rdma-fabric-netns.conf); what
    the next load of ib_core gets is read back from C(modprobe -c), which also sees the other configuration files and
    the kernel command line. If your image loads ib_core from the initramfs, rebuild the initramfs after a change
    (C(update-initramfs -u), C(dracut -f)); the Debian lab images do not.
  - The privileged Q_Key mode (kernel 6.7 and later) has no module option; it is set now only and the kernel forgets it
    at boot.
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
      - Sets nothing and writes no file. A switch of the network-namespace mode is predicted to be refused when network
        namespaces other than the initial one exist, as the kernel would refuse it.
  diff_mode:
    support: full
  platform:
    platforms: linux
options:
  netns_mode:
    description:
      - The network-namespace mode of RDMA devices. Not managed when omitted.
    type: str
    choices: [shared, exclusive]
    version_added: 0.2.0
  privileged_qkey:
    description:
      - Whether unprivileged processes may use the privileged (controlled) Q_Key range. Kernel 6.7 and later; on an older
        kernel the module fails naming this option. Not kept across reboots. Not managed when omitted.
    type: bool
    version_added: 0.2.0
  persistent:
    description:
      - V(true) keeps O(netns_mode) for the next boot in C(/etc/modprobe.d/rdma-fabric-netns.conf); V(false) removes that
        file (the mode stays as it is until the next boot). Only with O(netns_mode).
    type: bool
    default: true
    version_added: 0.2.0
  when_busy:
    description:
      - What to do when the kernel refuses to switch the network-namespace mode because other network namespaces exist.
      - V(fail) fails with one line naming the number of namespaces, after changing nothing.
      - V(reboot) persists the mode (O(persistent) must be true) and returns RV(reboot_required=true); the mode takes
        effect at the next boot, or the next load of ib_core.
    type: str
    choices: [fail, reboot]
    default: fail
    version_added: 0.2.0
notes:
  - Needs ib_core loaded (any RDMA driver loads it) and CAP_NET_ADMIN to set. Run in the initial network namespace.
seealso:
  - module: rdma.fabric.rdma_link
  - name: rdma-system(8)
    description: The system settings of iproute2's rdma tool.
    link: https://man7.org/linux/man-pages/man8/rdma-system.8.html
"""

EXAMPLES = r"""
- name: Exclusive network-namespace mode, now and at boot (a Kubernetes node with rdma-cni)
  rdma.fabric.rdma_system:
    netns_mode: exclusive

- name: The same on a host whose containers are running - take effect at the next boot
  rdma.fabric.rdma_system:
    netns_mode: exclusive
    when_busy: reboot
  register: rdma_system

- name: Reboot when the mode waits for it
  ansible.builtin.reboot:
  when: rdma_system.reboot_required

- name: Read the settings (facts rdma_system)
  rdma.fabric.rdma_system:
"""

RETURN = r"""
system:
  description:
    - The settings after the change (predicted in check mode), by the names C(rdma system show) prints, V(null) where
      the kernel does not have the setting.
    - C(netns) is V(shared) or V(exclusive); C(copy-on-fork), C(privileged-qkey) and C(monitor) are booleans.
  returned: always
  type: dict
  sample: {netns: exclusive, copy-on-fork: true, privileged-qkey: false, monitor: null}
boot_netns_mode:
  description:
    - The network-namespace mode ib_core gets at its next load, from C(modprobe -c) after the change (predicted in check
      mode); V(null) when the configuration gives a value the kernel refuses or C(modprobe) is missing.
  returned: always
  type: str
  sample: exclusive
reboot_required:
  description: V(true) when the persisted mode differs from the running one (O(when_busy=reboot) after EBUSY).
  returned: always
  type: bool
  sample: false
namespaces:
  description: The network namespaces other than the initial one the module found, when it counted them (a busy switch).
  returned: when the network-namespace mode was to be switched
  type: int
  sample: 0
kernel:
  description: The running kernel's release, as C(uname -r) prints it (what the settings belong to).
  returned: always
  type: str
  sample: 7.3.4+bpo-amd64
  version_added: 0.2.0
persist_file:
  description: The persistence file.
  returned: always
  type: str
  sample: /etc/modprobe.d/rdma-fabric-netns.conf
before:
  description: The settings, the persistence file's content and the boot mode before the change.
  returned: always
  type: dict
  sample: {netns: shared, privileged-qkey: false, persist_file: null, boot_netns_mode: shared}
after:
  description: The same after the change (predicted in check mode).
  returned: always
  type: dict
  sample: {netns: exclusive, privileged-qkey: false, persist_file: "options ib_core netns_mode=0", boot_netns_mode: exclusive}
ansible_facts:
  description: The settings after the change as the fact C(rdma_system), with C(boot_netns_mode).
  returned: always
  type: dict
  contains:
    rdma_system:
      description: RV(system) and RV(boot_netns_mode) in one dictionary.
      type: dict
      returned: always
commands:
  description:
    - What the module ran (in check mode, would run) to change the host, each as a line a person could paste into a
      shell, in order; the same type in every module of the collection. The settings are set over netlink and shown as
      the C(rdma system set) lines that do the same; the persistence file shows in the diff.
  returned: always
  type: list
  elements: str
  sample: [rdma system set netns exclusive]
"""

import errno
import os

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _kit, _nldev, _rdma_system

OPENER = None  # the netlink socket's maker (tests replace it)
PROC = "/proc"
RUN_NETNS = "/run/netns"


def namespace_ids() -> tuple:
    """(the initial namespace's identity, every process's and bound namespace's), as readlink shows them."""
    initial, seen = "", []
    try:
        initial = os.readlink(os.path.join(PROC, "1", "ns", "net"))
    except OSError:
        pass
    try:
        pids = [name for name in os.listdir(PROC) if name.isdigit()]
    except OSError:
        pids = []
    for pid in pids:
        try:
            seen.append(os.readlink(os.path.join(PROC, pid, "ns", "net")))
        except OSError:
            continue
    try:
        bound = os.listdir(RUN_NETNS)
    except OSError:
        bound = []
    for name in bound:
        try:
            seen.append(f"net:[{os.stat(os.path.join(RUN_NETNS, name)).st_ino}]")
        except OSError:
            continue
    return initial, seen


def read_settings() -> dict:
    try:
        return _nldev.read_system(OPENER)
    except _nldev.NetlinkError as err:
        raise _kit.Failure(f"the kernel refused to show the RDMA system settings over netlink: {err}") from None
    except OSError as err:
        raise _kit.Failure(f"no RDMA netlink here ({err.strerror or err}): load ib_core (any RDMA driver does) and run in the "
                           "initial network namespace") from None


def boot_mode(kit):
    """What `modprobe -c` says ib_core gets at its next load (None without modprobe)."""
    binary = kit.module.get_bin_path("modprobe", opt_dirs=["/usr/sbin", "/sbin"])
    if not binary:
        return None
    rc, out, err = kit.query([binary, "-c"])
    if rc != 0:
        raise _kit.Failure(f"persistent: {binary} -c failed (rc={rc}): {_kit.first_line(err) or 'no message'}")
    return _rdma_system.boot_mode(out)


def main():
    module = _args.module(
        argument_spec=dict(
            netns_mode=dict(type="str", choices=list(_rdma_system.MODES)),
            privileged_qkey=dict(type="bool"),
            persistent=dict(type="bool", default=True),
            when_busy=dict(type="str", choices=["fail", "reboot"], default="fail"),
        ),
        supports_check_mode=True,
    )
    kit = _kit.Kit(module)
    params = module.params
    mode, qkey = params["netns_mode"], params["privileged_qkey"]
    with kit.failures():
        if params["when_busy"] == "reboot" and not params["persistent"]:
            raise ValueError("when_busy: 'reboot' needs persistent=true (the mode waits for the next boot in its file)")
        # plan: the kernel's settings, the file, the next boot
        current = read_settings()
        kernel = os.uname().release
        if qkey is not None and current["privileged-qkey"] is None:
            raise ValueError(f"privileged_qkey: this kernel ({kernel}) has no privileged Q_Key mode (kernel 6.7 and later)")
        path = _rdma_system.MODPROBE_FILE
        file_before = _kit.read_file(path, "persistent: ")
        boot_before = boot_mode(kit)
        file_after = file_before
        if mode is not None:
            file_after = _rdma_system.render(mode) if params["persistent"] else None

        switch = mode is not None and current["netns"] != mode
        result = {"persist_file": path, "reboot_required": False}
        busy = False
        if switch:
            initial, seen = namespace_ids()
            result["namespaces"] = _rdma_system.other_namespaces(initial, seen)
            busy = module.check_mode and result["namespaces"] > 0
        after = dict(current)

        # apply: the settings over netlink (recorded as the rdma tool's command lines), then the file
        if qkey is not None and current["privileged-qkey"] != qkey:
            kit.record(["rdma", "system", "set", "privileged-qkey", "on" if qkey else "off"])
            if not module.check_mode:
                _set(kit, "privileged-qkey", qkey, "privileged_qkey")
            after["privileged-qkey"] = qkey
        if switch:
            kit.record(["rdma", "system", "set", "netns", mode])
            if not module.check_mode:
                try:
                    _set(kit, "netns", mode == "shared", "netns_mode")
                except _Busy:
                    busy = True
            if busy:
                kit.commands.pop()
                if params["when_busy"] == "fail":
                    raise _kit.Failure(_rdma_system.busy_message(mode, result["namespaces"], kernel))
                result["reboot_required"] = True
            else:
                after["netns"] = mode
        if file_after != file_before:
            if module.check_mode:
                pass
            elif file_after is None:
                kit.remove_file(path, "persistent: ")
            else:
                kit.write_file(path, file_after, 0o644, "persistent: ")

        # read back: the kernel's settings and what the next boot gets
        if not module.check_mode:
            after = read_settings()
            if switch and not result["reboot_required"] and after["netns"] != mode:
                raise _kit.Failure(f"netns_mode: set to {mode} but the kernel reads back {after['netns']}")
            if qkey is not None and after["privileged-qkey"] != qkey:
                raise _kit.Failure(f"privileged_qkey: set to {qkey} but the kernel reads back {after['privileged-qkey']}")
            boot_after = boot_mode(kit)
        else:
            boot_after = _predicted_boot(boot_before, file_before, file_after, mode)
        if mode is not None and params["persistent"] and boot_after not in (None, mode):
            raise _kit.Failure(f"persistent: {path} sets netns_mode={mode}, but modprobe -c gives ib_core {boot_after} at its "
                               "next load (another file in /etc/modprobe.d or the kernel command line overrides it)")
        if result["reboot_required"] and after["netns"] == mode:
            result["reboot_required"] = False

        before_state = {"netns": current["netns"], "privileged-qkey": current["privileged-qkey"],
                        "persist_file": file_before, "boot_netns_mode": boot_before}
        after_state = {"netns": after["netns"], "privileged-qkey": after["privileged-qkey"],
                       "persist_file": file_after, "boot_netns_mode": boot_after}
        facts = dict(after, boot_netns_mode=boot_after)
        diff = [{"before": {k: v for k, v in before_state.items() if k != "persist_file"},
                 "after": {k: v for k, v in after_state.items() if k != "persist_file"}},
                _kit.text_diff(path, file_before, file_after)]
        kit.exit(before_state != after_state, system=after, boot_netns_mode=boot_after, before=before_state, after=after_state,
                 diff=diff, ansible_facts={"rdma_system": facts}, kernel=kernel, **result)


class _Busy(Exception):
    """The kernel answered EBUSY to a netns mode switch."""


def _set(kit, name: str, value: bool, option: str) -> None:
    try:
        _nldev.set_system(name, value, OPENER)
    except _nldev.NetlinkError as err:
        if name == "netns" and err.errno == errno.EBUSY:
            raise _Busy() from None
        hint = " (setting needs CAP_NET_ADMIN in the initial network namespace)" if err.errno in (errno.EPERM, errno.EACCES) else ""
        raise _kit.Failure(f"{option}: the kernel refused it: {err}{hint}") from None
    except OSError as err:
        raise _kit.Failure(f"{option}: RDMA netlink failed: {err.strerror or err}") from None
    kit.done.append(kit.commands[-1])


def _predicted_boot(boot_before, file_before, file_after, mode):
    """Check mode: the next boot's mode once the file is written or removed, when nothing else sets it."""
    if file_after == file_before:
        return boot_before
    if file_after is not None:
        return mode if boot_before is not None else None
    return None


if __name__ == "__main__":
    main()
