# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RoCE on or off per PCI function: the sysfs file roce_enable and devlink's generic parameter enable_roce.

Where each format was read (public sources found with the code search, cited so that a change can be checked):

- /sys/bus/pci/devices/<function>/roce_enable is made by the mlx5_core of MLNX_OFED and DOCA-OFED (its
  drivers/net/ethernet/mellanox/mlx5/core/main.c, mlx5_roce_enable_show_enabled and mlx5_roce_enable_set_enabled, in
  every release from 4.6 to 25.10 as the knneth/mlnx-ofa_kernel mirror keeps them). It reads "0\\n" or "1\\n"
  (sprintf "%d\\n"); a write goes through kstrtobool (so "0" and "1"; anything else is EINVAL), and enabling a
  function without the RoCE capability is EOPNOTSUPP. From 4.6 to 5.3 a write also reloaded the function's IB
  interface; from 5.4 on it only sets devlink's enable_roce (driverinit), which the driver applies when it
  initialises the function again (devlink dev reload, a driver reload, a reboot). The in-tree mlx5_core has no such
  file: it reads enable_roce from devlink when it initialises (mlx5_is_roce_on()).
- devlink -j dev param show pci/<function> name enable_roce: iproute2's devlink/devlink.c (pr_out_param,
  pr_out_param_value; the same shape in v5.0.0, v6.1.0 and v7.0) prints
  {"param": {"pci/0000:08:00.0": [{"name": "enable_roce", "type": "generic",
  "values": [{"cmode": "driverinit", "value": true}]}]}}; a boolean parameter's value is a JSON true or false
  (false when the kernel sends no flag), and since iproute2 7.0 a "default" key may follow the value. mlx5 registers
  enable_roce with cmode driverinit (Documentation/networking/devlink/mlx5.rst), Intel's ice with cmode runtime
  (ice.rst: takes effect at once, mutually exclusive with enable_iwarp).

The parsers are pure; read_function() and the resolvers read sysfs only. The module runs devlink itself.
"""

from __future__ import annotations

import json
import os

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs, _validate

SYSFS_FILE = "roce_enable"
PARAM = "enable_roce"
CMODES = ("driverinit", "runtime")  # the ones enable_roce has; a driverinit value takes effect at the next reload
METHODS = ("auto", "sysfs", "devlink")
DEVLINK_HINT = "devlink is part of iproute2 (Debian: iproute2, RHEL: iproute)"

# AnsibleModule(argument_spec=ARGUMENT_SPEC, **ARGUMENT_RULES) in rdma.fabric.roce_enable.
ARGUMENT_SPEC = dict(
    pci=dict(type="str"),
    device=dict(type="str"),
    netdev=dict(type="str"),
    enabled=dict(type="bool", required=True),
    method=dict(type="str", choices=list(METHODS), default="auto"),
    reload=dict(type="bool", default=False),
)
ARGUMENT_RULES = dict(required_one_of=[("pci", "device", "netdev")], mutually_exclusive=[("pci", "device", "netdev")])


# --- pure -----------------------------------------------------------------------------------------------------

def parse_sysfs(text):
    """roce_enable's content: '1\\n' -> True, '0\\n' -> False; unreadable (None) or anything else -> None."""
    if text is None:
        return None
    return {"1": True, "0": False}.get(text.strip())


def sysfs_text(enabled: bool) -> str:
    """What the module writes: '1' or '0' (kstrtobool takes both)."""
    return "1" if enabled else "0"


def handle(pci: str) -> str:
    """The devlink handle of a PCI function: 'pci/0000:08:00.0'."""
    return f"pci/{pci}"


def parse_param_show(text, dev_handle: str, name: str = PARAM) -> dict:
    """The parameter from `devlink -j dev param show <handle> name <name>`.

    Returns {'type': 'generic' or 'driver-specific', 'cmode': the cmode the value is set in ('driverinit' when the
    driver has it, else 'runtime'), 'value': bool, 'default': bool or None, 'cmodes': {cmode: value}}.
    Raises ValueError with one line saying what the output lacks.
    """
    try:
        data = json.loads(text or "")
    except ValueError:
        raise ValueError(f"devlink printed no JSON for {dev_handle} {name}: {_validate.one_line((text or '').strip()[:120])!r}") from None
    params = data.get("param") if isinstance(data, dict) else None
    if not isinstance(params, dict):
        raise ValueError(f"devlink's JSON for {dev_handle} has no 'param' object")
    entries = params.get(dev_handle)
    if not isinstance(entries, list):
        shown = ", ".join(sorted(str(key) for key in params)) or "none"
        raise ValueError(f"devlink's JSON has no parameters for {dev_handle} (handles: {shown})")
    found = [entry for entry in entries if isinstance(entry, dict) and entry.get("name") == name]
    if not found:
        raise ValueError(f"devlink lists no {name} parameter for {dev_handle}")
    entry = found[0]
    cmodes, defaults = {}, {}
    for value in entry.get("values") or []:
        if not isinstance(value, dict) or value.get("cmode") not in CMODES:
            continue
        if not isinstance(value.get("value"), bool):
            raise ValueError(f"devlink shows {name} of {dev_handle} in cmode {value.get('cmode')} as "
                             f"{value.get('value')!r}, not true or false")
        cmodes[value["cmode"]] = value["value"]
        if isinstance(value.get("default"), bool):
            defaults[value["cmode"]] = value["default"]
    if not cmodes:
        raise ValueError(f"devlink shows no {' or '.join(CMODES)} value of {name} for {dev_handle}")
    cmode = next(mode for mode in CMODES if mode in cmodes)
    return {"type": entry.get("type"), "cmode": cmode, "value": cmodes[cmode], "default": defaults.get(cmode),
            "cmodes": cmodes}


def show_argv(devlink: str, pci: str) -> list:
    return [devlink, "-j", "dev", "param", "show", handle(pci), "name", PARAM]


def set_argv(devlink: str, pci: str, enabled: bool, cmode: str) -> list:
    return [devlink, "dev", "param", "set", handle(pci), "name", PARAM, "value", "true" if enabled else "false", "cmode", cmode]


def reload_argv(devlink: str, pci: str) -> list:
    return [devlink, "dev", "reload", handle(pci)]


def validate_params(params: dict) -> dict:
    """Every option checked before the host is read: {'by': option, 'name': its value, 'enabled', 'method', 'reload'}."""
    if params.get("pci") is not None:
        by, name = "pci", _sysfs.bdf(params["pci"], "pci")
    elif params.get("device") is not None:
        by, name = "device", _validate.rdma_device_name(params["device"], "device")
    elif params.get("netdev") is not None:
        by, name = "netdev", _validate.netdev_name(params["netdev"], "netdev")
    else:
        raise ValueError("pci: one of pci, device or netdev is required; allowed: a PCI function (0000:08:00.0), an "
                         "RDMA device (mlx5_0) or a netdev (enp8s0f0np0)")
    enabled = _validate.boolean(params.get("enabled"), "enabled")
    method = _validate.choice(params.get("method") or "auto", METHODS, "method")
    return {"by": by, "name": name, "enabled": enabled, "method": method, "reload": bool(params.get("reload"))}


# --- sysfs reads (no process) -----------------------------------------------------------------------------------

def function_dir(pci: str) -> str:
    return _sysfs.path("bus", "pci", "devices", pci)


def sysfs_path(pci: str) -> str:
    """/sys/bus/pci/devices/<function>/roce_enable."""
    return os.path.join(function_dir(pci), SYSFS_FILE)


def read_function(pci):
    """The function's roce_enable from sysfs: True, False, or None (no such file, unreadable, or no function)."""
    if not pci:
        return None
    return parse_sysfs(_sysfs.read_attr(sysfs_path(pci)))


def driver_of(pci: str):
    """The kernel driver bound to the function (mlx5_core), or None."""
    link = os.path.join(function_dir(pci), "driver")
    return os.path.basename(os.path.realpath(link)) if os.path.islink(link) else None


def resolve(by: str, name: str) -> str:
    """The PCI function behind a PCI function name, an RDMA device or a netdev; ValueError naming the option."""
    if by == "pci":
        if not os.path.isdir(function_dir(name)):
            raise ValueError(f"pci: no PCI function {name} in {_sysfs.path('bus', 'pci', 'devices')}")
        return name
    if by == "device":
        base = _sysfs.path("class", "infiniband", name)
        what = "an RDMA device without a PCI function (a soft device such as rxe or siw)"
        missing = f"device: no RDMA device named {name!r} in {_sysfs.path('class', 'infiniband')}"
    else:
        base = _sysfs.path("class", "net", name)
        what = "a netdev without a PCI function (a bond, VLAN, bridge or other virtual netdev: name one of its ports)"
        missing = f"netdev: no netdev named {name!r} in {_sysfs.path('class', 'net')}"
    if not os.path.isdir(base):
        raise ValueError(missing)
    link = os.path.join(base, "device")
    pci = _sysfs.pci_function(os.path.realpath(link)) if os.path.exists(link) else None
    if not pci:
        raise ValueError(f"{by}: {name} is {what}; RoCE is enabled per PCI function of a NIC")
    return pci
