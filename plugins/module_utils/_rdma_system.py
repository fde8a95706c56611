# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RDMA subsystem's system settings (rdma_system): what is persisted, what the next boot gets, the plan.

Pure: the module reads the kernel over RDMA netlink (_nldev.read_system) and `modprobe -c`, and hands the
text and the settings to these functions.

- The network-namespace mode is ib_core's parameter netns_mode (a bool, 1 shared, the default): at runtime
  RDMA_NLDEV_CMD_SYS_SET changes it while no network namespace other than the initial one exists; at boot
  it is what modprobe passes when it loads ib_core. The collection persists it as one `options` line in
  MODPROBE_FILE; what the next load gets is what `modprobe -c` prints (every configuration directory and the
  kernel command line's ib_core.netns_mode=, the last value winning), so that is what is read back.
- privileged-qkey has no module parameter: the kernel forgets it at boot, and the module sets it only now.
"""

from __future__ import annotations

import re

MODPROBE_FILE = "/etc/modprobe.d/rdma-fabric-netns.conf"
MODES = ("shared", "exclusive")
HEADER = "# Managed by rdma.fabric.rdma_system: the RDMA subsystem's network-namespace mode when ib_core loads\n"
_OPTION = re.compile(r"(?:^|\s)netns_mode=(\S*)")


def render(mode: str) -> str:
    """The persistence file for a mode."""
    return f"{HEADER}options ib_core netns_mode={1 if mode == 'shared' else 0}\n"


def kstrtobool(text: str):
    """The kernel's reading of a bool parameter's value (lib/kstrtox.c): True, False, or None (refused)."""
    if not text:
        return None
    first, second = text[0].lower(), text[1:2].lower()
    if first in ("y", "1", "t"):
        return True
    if first in ("n", "0", "f"):
        return False
    if first == "o" and second == "n":
        return True
    if first == "o" and second == "f":
        return False
    return None


def boot_mode(modprobe_config: str):
    """The netns mode ib_core gets at its next load, from `modprobe -c`: 'shared' (also when nothing sets it),
    'exclusive', or None when the last value given is one the kernel refuses (it then keeps the default)."""
    value = None
    for line in modprobe_config.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0] == "options" and words[1] in ("ib_core", "ib-core"):
            for match in _OPTION.finditer(" ".join(words[2:])):
                value = match.group(1)
    if value is None:
        return "shared"
    parsed = kstrtobool(value)
    if parsed is None:
        return None
    return "shared" if parsed else "exclusive"


def other_namespaces(initial: str, seen: list) -> int:
    """How many network namespaces other than the initial one: seen holds the identities (net:[inode]) of every
    process's namespace and of each bound in /run/netns; initial is the initial namespace's."""
    return len({name for name in seen if name and name != initial})


def busy_message(mode: str, count: int, kernel: str) -> str:
    where = f"{count} other network namespace{'s' if count != 1 else ''}" if count else "another network namespace"
    return (f"netns_mode: the kernel ({kernel}) refuses to switch to {mode} while {where} exist{'s' if count <= 1 else ''} "
            f"(EBUSY); remove them (ip netns list, containers, services with PrivateNetwork=), or set when_busy=reboot "
            f"to persist the mode for the next boot")
