# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/labctl's QEMU command lines (the second data NIC, LAB_DATA_NICS=2, and nothing new without it) and the key of a saved boot.

labctl reads its settings from the environment when it is imported, so each case imports it in a
child Python with the environment of that case and prints qemu_argv as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LABCTL = os.path.join(TOP, "lab", "labctl.py")
PROBE = (
    "import importlib.util, json, sys\n"
    "spec = importlib.util.spec_from_file_location('labctl', sys.argv[1])\n"
    "lab = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(lab)\n"
    "if sys.argv[2] == 'check':\n"
    "    try:\n"
    "        lab.check_settings()\n"
    "    except lab.LabError as err:\n"
    "        print(json.dumps(str(err)))\n"
    "    else:\n"
    "        print(json.dumps(None))\n"
    "elif sys.argv[2] == 'key':\n"
    "    print(json.dumps(lab.boot_key('/img')))\n"
    "else:\n"
    "    print(json.dumps([lab.qemu_argv(i, '/img') for i in range(1, lab.NVMS + 1)]))\n"
)


def labctl(tmp_path, what="argv", **env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LAB_")}
    clean.update({"LAB_DIR": str(tmp_path / "lab"), "LAB_PORT_BASE": "4000", "PATH": "/nonexistent"}, **env)
    proc = subprocess.run([sys.executable, "-c", PROBE, LABCTL, what], capture_output=True, text=True,
                          check=True, env=clean)
    return json.loads(proc.stdout)


# What every boot leaves out (labctl's BOOT_MASKED and BOOT_UNLOADED), written out here so that a change is deliberate.
TRIM = (" systemd.mask=getty@tty1.service systemd.mask=modprobe@drm.service systemd.mask=modprobe@efi_pstore.service"
        " systemd.mask=systemd-pstore.service systemd.mask=systemd-binfmt.service"
        " systemd.mask=proc-sys-fs-binfmt_misc.automount systemd.mask=ldconfig.service"
        " systemd.mask=systemd-journal-catalog-update.service systemd.mask=e2scrub_reap.service"
        " systemd.mask=nfs-blkmap.service"
        " modprobe.blacklist=kvm_amd,kvm,ccp,ahci,psmouse,serio_raw,pcspkr,i2c_i801,lpc_ich,iTCO_wdt,vmw_vsock_vmci_transport,vmw_vmci,qemu_fw_cfg,efi_pstore")


def before(tmp_path, index, trim=TRIM):
    """vmN's argv as labctl wrote it before LAB_DATA_NICS existed (two VMs, port base 4000), with the boot trim."""
    run = f"{tmp_path}/lab/vm{index}"
    peer = 5000 + (2 if index == 1 else 1)
    return [
        "qemu-system-x86_64", "-name", f"rdma-fabric-lab-vm{index}",
        "-nodefaults", "-display", "none", "-machine", "q35",
        "-accel", "tcg,thread=multi,tb-size=256", "-cpu", "qemu64", "-smp", "1", "-m", "512",
        "-kernel", "/img/vmlinuz", "-initrd", "/img/initrd.img",
        "-append", "root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet no_timer_check "
                   f"systemd.hostname=vm{index} lab.data_netdev=eth1 lab.data_ip=169.254.77.{index}/24" + trim,
        "-drive", f"file={run}/disk.qcow2,if=virtio,format=qcow2,cache=unsafe",
        "-netdev", f"user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:{3999 + index}-:22",
        "-device", f"virtio-net-pci,netdev=mgmt,mac=52:54:00:00:00:0{index}",
        "-netdev", f"socket,id=data,udp=127.0.0.1:{peer},localaddr=127.0.0.1:{5000 + index}",
        "-device", f"virtio-net-pci,netdev=data,mac=52:54:00:77:00:0{index}",
        "-device", "virtio-rng-pci", "-device", "vmgenid,guid=auto",
        "-serial", f"file:{run}/console.log", "-monitor", "none",
        "-qmp", f"unix:{run}/qmp.sock,server=on,wait=off",
        "-pidfile", f"{run}/qemu.pid", "-daemonize",
    ]


@pytest.mark.parametrize("setting", [{}, {"LAB_DATA_NICS": "1"}], ids=["unset", "one"])
def test_one_data_nic_leaves_the_argv_as_it_was(tmp_path, setting):
    assert labctl(tmp_path, LAB_VMS="2", **setting) == [before(tmp_path, 1), before(tmp_path, 2)]


def test_lab_boot_trim_0_boots_with_everything_the_image_has(tmp_path):
    assert labctl(tmp_path, LAB_VMS="2", LAB_BOOT_TRIM="0") == [before(tmp_path, 1, trim=""), before(tmp_path, 2, trim="")]


def test_lab_cpu_names_another_model_and_only_that_changes(tmp_path):
    argvs = labctl(tmp_path, LAB_VMS="2", LAB_CPU="max")
    for index, argv in enumerate(argvs, start=1):
        old = before(tmp_path, index)
        at = old.index("-cpu") + 1
        assert argv[at] == "max" and argv[:at] + argv[at + 1:] == old[:at] + old[at + 1:]


@pytest.mark.parametrize("setting", [{}, {"LAB_PCIE": "1"}, {"LAB_DOCKER": "1"}], ids=["plain", "pcie", "docker"])
def test_the_boot_trim_is_well_formed_and_fits_the_command_line(tmp_path, setting):
    for argv in labctl(tmp_path, LAB_VMS="2", **setting):
        words = argv[argv.index("-append") + 1].split(" ")
        masks = [word.split("=", 1)[1] for word in words if word.startswith("systemd.mask=")]
        assert masks and all(unit.endswith((".service", ".automount")) and "/" not in unit for unit in masks), masks
        assert len(masks) == len(set(masks))
        blacklist = [word for word in words if word.startswith("modprobe.blacklist=")]
        assert len(blacklist) == 1 and "kvm" in blacklist[0].split("=", 1)[1].split(",")
        # the kernel keeps 2,048 bytes of an x86 command line; what is longer is cut off
        assert len(argv[argv.index("-append") + 1]) < 2048


def test_second_data_nic_is_a_socket_pair_of_its_own_between_the_two_vms(tmp_path):
    argvs = labctl(tmp_path, LAB_VMS="2", LAB_DATA_NICS="2")
    ports = {}
    for index, argv in enumerate(argvs, start=1):
        old = before(tmp_path, index)
        at = old.index("virtio-rng-pci") - 1  # eth2 comes right after eth1, so that it is probed (named) after it
        assert argv[:at] + argv[at + 4:] == old
        netdev, device = argv[at + 1], argv[at + 3]
        assert argv[at] == "-netdev" and argv[at + 2] == "-device"
        assert device == f"virtio-net-pci,netdev=data2,mac=52:54:00:78:00:0{index}"
        assert netdev.startswith("socket,id=data2,udp=127.0.0.1:")
        peer, local = netdev.split("udp=127.0.0.1:")[1].split(",localaddr=127.0.0.1:")
        ports[index] = (int(local), int(peer))
    assert ports[1] == (ports[2][1], ports[2][0])  # each end sends to the other's socket
    taken = {3999 + i for i in (1, 2)} | {5000, 5001, 5002} | {5501, 5502}  # ssh, hub, eth1's pair, a lone VM's peer
    assert not taken & {ports[1][0], ports[2][0]}


@pytest.mark.parametrize("env, words", [
    ({"LAB_VMS": "2", "LAB_DATA_NICS": "2"}, None),
    ({"LAB_VMS": "3", "LAB_DATA_NICS": "2"}, "needs LAB_VMS=2"),
    ({"LAB_VMS": "1", "LAB_DATA_NICS": "2"}, "needs LAB_VMS=2"),
    ({"LAB_VMS": "2", "LAB_DATA_NICS": "3"}, "LAB_DATA_NICS: '3' is not supported"),
    ({"LAB_VMS": "2", "LAB_DATA_NICS": "two"}, "LAB_DATA_NICS: 'two' is not supported"),
    ({"LAB_VMS": "2", "LAB_DATA_NICS": "2", "LAB_PCIE": "1"}, "cannot be combined with LAB_PCIE=1"),
])
def test_settings_that_do_not_fit_fail_in_one_line(tmp_path, env, words):
    message = labctl(tmp_path, "check", **env)
    if words is None:
        assert message is None
    else:
        assert words in message and "\n" not in message


def test_a_saved_boot_is_keyed_by_the_setup_not_by_the_lab_directory(tmp_path):
    """boot_key: the same setup in another lab directory resumes the same saved boot; any other setup does not."""
    base = labctl(tmp_path, "key", LAB_VMS="2")
    assert base == labctl(tmp_path, "key", LAB_VMS="2", LAB_DIR=str(tmp_path / "elsewhere"))
    others = [labctl(tmp_path, "key", LAB_VMS="2", **setting) for setting in (
        {"LAB_DATA_NICS": "2"}, {"LAB_PCIE": "1"}, {"LAB_DOCKER": "1"}, {"LAB_BOOT_TRIM": "0"}, {"LAB_CPU": "max"},
        {"LAB_PORT_BASE": "4100"})] + [labctl(tmp_path, "key", LAB_VMS="1")]
    assert base not in others and len(set(others)) == len(others), others
