# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rdma.fabric lab: Debian VMs with a real RDMA kernel, under QEMU.

    lab/labctl image              build the image unless the cached one matches the recipe
    lab/labctl up                 build if needed, boot the VMs, wait for SSH, write the inventory
    lab/labctl down               stop the VMs this lab started (by PID)
    lab/labctl status             say what runs and what answers
    lab/labctl ssh VM [CMD...]    open a shell (or run CMD) on a VM

Environment:
    LAB_DIR        run directory (default: <repo>/.lab); inventory at $LAB_DIR/inventory.yml
    LAB_VMS        number of VMs (default 2)
    LAB_PORT_BASE  SSH of vmN is forwarded from 127.0.0.1:(base+N-1); data UDP ports
                   are base+1000+N (default 2222)
    LAB_CACHE      image cache (default ~/.cache/rdma-fabric-lab)
    LAB_SUITE      the Debian suite of the image: bookworm (Debian 12, the default),
                   trixie (Debian 13) or trixie-backports (Debian 13 with the 7.x kernel of
                   trixie-backports: the scale lab's); each suite's image is cached on its own
    LAB_RECIPE     the image recipe: a directory with build-image.sh and image/
                   (default: lab/; the first-run test uses a small stand-in)
    LAB_BOOT_TIMEOUT  seconds to wait for SSH (default 600)
    LAB_HOSTS_PER_VM  N: the scale lab. Each VM also runs N RDMA hosts (node01, node02, ...):
                   namespaces around an sshd of their own (network, mount, UTS), with
                   their own /etc, /var, /root, /run and /tmp and a veth eth1 with
                   169.254.77.(100+n) in the data network, reached through their VM
                   (ProxyCommand); lab/hosts.sh. The inventory then lists these hosts in
                   rdma_hosts, and the VMs in lab_vms. Needs a kernel whose rxe works inside
                   a network namespace: LAB_SUITE=trixie-backports (default 0: the VMs are
                   the hosts)
    LAB_DOCKER     1: each VM also runs the Docker engine, has the lab's container
                   image (rdma-fabric-lab:SUITE, imported from the image's
                   container.tar) and the engine's socket forwarded over SSH to
                   $LAB_DIR/docker-vmN.sock (the containers scenario; default 0)
    LAB_PCIE       1: each VM gets an emulated Intel IOMMU (intel_iommu=on iommu=pt) and its data
                   NIC sits behind a PCIe root port (rp1, with ACS) with ATS on, so that GPUDirect
                   RDMA checks find real ACS/ATS registers and IOMMU groups; the management NIC
                   stays on the root bus, eth0 and eth1 keep their names (default 0: no IOMMU, both
                   NICs on the root bus)
    LAB_DATA_NICS  2: each VM also gets a second data NIC, eth2 (MAC 52:54:00:78:00:0N), joined to the
                   other VM's eth2 by a second UDP socket pair on 127.0.0.1 (ports base+1200+N);
                   lab-net leaves it without an address (the bond test, tests/lab/bond.yml, puts
                   eth1 and eth2 in bond0). Two VMs only, and not with LAB_PCIE (default 1)
    LAB_BOOT_TRIM  0: boot with every unit and module the image has, for comparison or to rule the trim
                   out (default 1: BOOT_MASKED runtime-masked, BOOT_UNLOADED not auto-loaded)
    LAB_RESUME     0: always boot the VMs from their kernel (default 1: the first lab of a setup is
                   saved in the image cache once it is up, and later labs of the same setup resume
                   it instead of booting again; see save_boot())
    LAB_CPU        the emulated CPU model (default qemu64; see CPU_MODEL)

Standard output carries only what callers consume: the image directory (image),
the inventory path (up), the status lines (status), the remote command's output
(ssh). Everything else, the progress lines and the output of every child process
(mmdebstrap, mkfs, qemu-img, ssh, ...), goes to standard error: main() points file
descriptor 1 at standard error before any step runs and keeps the real one for
result() alone, so no child can write to it.

Networking stays on loopback: the management NIC is QEMU user networking with
restrict=on and SSH forwarded from 127.0.0.1 only; the data NICs are joined by
UDP sockets bound to 127.0.0.1 (directly for two VMs, through a small repeater
hub on 127.0.0.1 for more).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAB_SRC = os.path.join(TOP, "lab")
RECIPE = os.path.abspath(os.environ.get("LAB_RECIPE") or LAB_SRC)
LAB_DIR = os.path.abspath(os.environ.get("LAB_DIR", os.path.join(TOP, ".lab")))
# A running lab remembers its size and ports (lab.json), so that status, ssh and
# down reach its own VMs even when LAB_VMS / LAB_PORT_BASE are not set again.
_SAVED = {}
try:
    with open(os.path.join(LAB_DIR, "lab.json"), encoding="utf-8") as _handle:
        _SAVED = json.load(_handle)
except (OSError, ValueError):
    pass
NVMS = int(os.environ.get("LAB_VMS") or _SAVED.get("vms", 2))
PORT_BASE = int(os.environ.get("LAB_PORT_BASE") or _SAVED.get("port_base", 2222))
CACHE = os.path.expanduser(os.environ.get("LAB_CACHE", "~/.cache/rdma-fabric-lab"))
BOOT_TIMEOUT = int(os.environ.get("LAB_BOOT_TIMEOUT", "600"))
HOSTS_PER_VM = int(os.environ.get("LAB_HOSTS_PER_VM") or _SAVED.get("hosts_per_vm", 0))
DOCKER = (os.environ.get("LAB_DOCKER") or str(_SAVED.get("docker", 0))) == "1"
PCIE = (os.environ.get("LAB_PCIE") or str(_SAVED.get("pcie", 0))) == "1"
BOOT_TRIMMED = os.environ.get("LAB_BOOT_TRIM", "1") != "0"
RESUME = os.environ.get("LAB_RESUME", "1") != "0"
_DATA_NICS = str(os.environ.get("LAB_DATA_NICS") or _SAVED.get("data_nics", 1))
DATA_NICS = int(_DATA_NICS) if _DATA_NICS in ("1", "2") else 0  # 0: not supported, check_settings() says so
SUITES = ("bookworm", "trixie", "trixie-backports")
SUITE = os.environ.get("LAB_SUITE") or "bookworm"
CONTAINER_IMAGE = f"rdma-fabric-lab:{SUITE}"
DATA_NET = "169.254.77"
DATA_PREFIX = 24
DATA_NETDEV = "eth1"


class LabError(Exception):
    """A lab step failed; the message names the step."""


def say(msg: str) -> None:
    print(f"[lab] {msg}", file=sys.stderr, flush=True)


# The real standard output, kept by main() once fd 1 points at standard error.
_RESULT = sys.stdout


def record(kind: str, name: str, seconds: float, **extra) -> None:
    """One line of make test's timing record (RDMA_FABRIC_TIMING, when set; tools/timing-table)."""
    path = os.environ.get("RDMA_FABRIC_TIMING")
    if not path:
        return
    row = {"kind": kind, "name": name, "seconds": round(seconds, 1), "end": round(time.time(), 1),
           "lab": os.path.basename(LAB_DIR)}
    row.update(extra)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def result(line: str) -> None:
    """Write one line of what the caller consumes: the only writer to standard output."""
    _RESULT.write(line + "\n")
    _RESULT.flush()


def keep_stdout_for_results() -> None:
    """Point fd 1 at standard error for this process and every child; keep the real one for result()."""
    global _RESULT  # pylint: disable=global-statement
    sys.stdout.flush()
    _RESULT = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr


# --- image -----------------------------------------------------------------

def recipe_hash() -> str:
    digest = hashlib.sha256(f"suite={SUITE}\n".encode())
    files = [os.path.join(RECIPE, "build-image.sh")]
    for root, _dirs, names in os.walk(os.path.join(RECIPE, "image")):
        files.extend(os.path.join(root, n) for n in names)
    for name in sorted(files):
        digest.update(os.path.relpath(name, RECIPE).encode())
        with open(name, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()[:16]


def image_dir() -> str:
    return os.path.join(CACHE, f"{SUITE}-{recipe_hash()}")


def superseded(name: str) -> bool:
    """An older recipe's image of this suite; a bare hash is a bookworm image from before suites had a name."""
    return (re.fullmatch(rf"{re.escape(SUITE)}-[0-9a-f]{{16}}", name) is not None
            or (SUITE == "bookworm" and re.fullmatch(r"[0-9a-f]{16}", name) is not None))


def ensure_image() -> str:
    """Return the cached image directory, building it once per recipe."""
    target = image_dir()
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(target, "complete")):
            return target
        tmp = target + ".partial"
        shutil.rmtree(tmp, ignore_errors=True)
        say(f"building the image (recipe {os.path.basename(target)}) into {CACHE}")
        start = time.monotonic()
        script = os.path.join(RECIPE, "build-image.sh")
        proc = subprocess.run(["bash", script, tmp, SUITE], check=False)
        if proc.returncode != 0:
            raise LabError(f"image build failed ({os.path.relpath(script, TOP)} exited {proc.returncode}); "
                           "see the messages above")
        with open(os.path.join(tmp, "complete"), "w", encoding="utf-8") as done:
            done.write(f"{time.monotonic() - start:.0f}\n")
        os.rename(tmp, target)
        say(f"image built in {time.monotonic() - start:.0f}s")
        record("lab", "image build", time.monotonic() - start, recipe=os.path.basename(target))
        # Older recipes' images of this suite are of no further use; the other suite's stay.
        for name in os.listdir(CACHE):
            old = os.path.join(CACHE, name)
            if name != os.path.basename(target) and superseded(name) and os.path.isdir(old):
                shutil.rmtree(old, ignore_errors=True)
    return target


# --- VMs -------------------------------------------------------------------

def vm_names() -> list:
    return [f"vm{i}" for i in range(1, NVMS + 1)]


def ssh_port(index: int) -> int:
    return PORT_BASE + index - 1


def udp_port(index: int) -> int:
    return PORT_BASE + 1000 + index


def hub_port() -> int:
    return PORT_BASE + 1000


def udp_port2(index: int) -> int:
    """vmN's end of the second data link (LAB_DATA_NICS=2): clear of udp_port, hub_port and a lone VM's peer (+1500)."""
    return PORT_BASE + 1200 + index


def second_nic_argv(index: int) -> list:
    """LAB_DATA_NICS=2: eth2, on a socket pair of its own to the other VM (else nothing)."""
    if DATA_NICS < 2:
        return []
    peer = udp_port2(2 if index == 1 else 1)
    return ["-netdev", f"socket,id=data2,udp=127.0.0.1:{peer},localaddr=127.0.0.1:{udp_port2(index)}",
            "-device", f"virtio-net-pci,netdev=data2,mac=52:54:00:78:00:{index:02x}"]


def check_settings() -> None:
    """One line naming the setting that cannot be combined, before anything starts."""
    if DATA_NICS not in (1, 2):
        raise LabError(f"LAB_DATA_NICS: '{_DATA_NICS}' is not supported; allowed: 1, 2")
    if DATA_NICS == 2 and NVMS != 2:
        raise LabError(f"LAB_DATA_NICS=2 needs LAB_VMS=2 (a second socket pair between vm1 and vm2), not {NVMS}")
    if DATA_NICS == 2 and PCIE:
        raise LabError("LAB_DATA_NICS=2 cannot be combined with LAB_PCIE=1 (eth2 on the root bus would be named before eth1)")


def data_ip(index: int) -> str:
    return f"{DATA_NET}.{index}"


def pid_alive(pidfile: str):
    """Return the PID in pidfile when that process is ours and alive, else None."""
    try:
        with open(pidfile, encoding="utf-8") as handle:
            pid = int(handle.read().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            cmdline = handle.read()
    except (OSError, ValueError):
        return None
    return pid if LAB_DIR.encode() in cmdline else None


def memory_mib() -> int:
    """A VM's memory: 512 MiB, 1 GiB with Docker, and 64 MiB more per scale host (its sshd, and the Python of its tasks)."""
    return (1024 if DOCKER else 512) + 64 * HOSTS_PER_VM


def host_index(vm: int, slot: int) -> int:
    """The number n of the scale host in a VM's slot (0-based): node<n>, 169.254.77.(100+n)."""
    return (vm - 1) * HOSTS_PER_VM + slot + 1


def pcie_argv(index: int, data_nic: str) -> tuple:
    """LAB_PCIE=1: the IOMMU, and the data NIC behind a root port with ATS (else the NIC as it is).

    Returns the arguments that go before every PCI device, and the data NIC's own.
    The IOMMU comes before every PCI device, as QEMU's VT-d notes ask (7.2 also starts with it after
    them, older QEMU refused).
    intremap=off because interrupt remapping is of no use to these checks (and needs a split
    irqchip under KVM); device-iotlb=on makes the IOMMU advertise device TLBs, without which
    the guest would never enable the NIC's ATS. Even so, with iommu=pt (identity domains) Linux 6.1
    and 6.12 leave the NIC's ATS control at 0; with iommu=nopt (DMA-FQ domains) 6.1 set its enable
    bit, 0x8000. The root port's ACS control reads 0x001d either way (0x0000 without the IOMMU).
    The root port is auto-placed on pcie.0 after the management NIC; Linux enumerates the root bus
    before the bus behind the port, so the management NIC is still probed first and named eth0,
    the data NIC eth1.
    """
    if not PCIE:
        return [], ["-device", data_nic]
    return (["-device", "intel-iommu,intremap=off,device-iotlb=on"],
            ["-device", f"pcie-root-port,id=rp1,bus=pcie.0,chassis={index},slot=1",
             "-device", f"{data_nic},bus=rp1,ats=on"])


# The emulated CPU: qemu64 (x86-64 baseline, which Debian 12 and 13 build for), not max. Under TCG every feature
# max adds is one more thing to emulate: 5-level paging, PKU and the AVX state in every context switch, AVX2 string
# and hash routines in glibc and coreutils. One-VM labs of each model started at the same moment and given the same
# work at the same moment (benchmarks/README.md, 2026-12-02): qemu64 booted with 12-18 % less guest CPU (trixie 71-77
# against 86-87 CPU-s, bookworm 51 against 61), an ansible ping cost 8-14 % less, 200 fork-execs 5-15 % less.
# LAB_CPU names another model (for such comparisons).
CPU_MODEL = os.environ.get("LAB_CPU") or "qemu64"


# What every boot leaves out: work for hardware and services the lab does not have. Under TCG a boot costs
# 45-80 CPU-seconds and make test boots 13 times; two VMs booted side by side, one with this and one without
# (LAB_BOOT_TRIM=0), reached "running" with 5.4-7.5 CPU-s less on trixie and 2.7-5.1 less on bookworm
# (benchmarks/README.md, 2026-12-02).
# The masks are runtime masks (the image is unchanged); modprobe.blacklist stops only udev's automatic loads
# by alias, and `modprobe kvm` by name still works.
BOOT_MASKED = (
    "getty@tty1.service",                 # no display (-display none, -nodefaults); the serial getty stays
    "modprobe@drm.service",               # no graphics device
    "modprobe@efi_pstore.service", "systemd-pstore.service",  # SeaBIOS and -kernel: no EFI variables
    "systemd-binfmt.service", "proc-sys-fs-binfmt_misc.automount",  # no foreign binary formats
    "ldconfig.service", "systemd-journal-catalog-update.service",  # first boot of a copy only: the image
    # build's dpkg triggers made the linker cache and the catalog already
    "e2scrub_reap.service",               # no LVM snapshots to reap
    "nfs-blkmap.service",                 # pNFS block layouts; the NFS tests use RDMA, not block layouts
)
BOOT_UNLOADED = (
    "kvm_amd", "kvm", "ccp",              # -cpu max offers SVM; nothing in the lab nests VMs
    "ahci",                               # q35's SATA controller, with no disk on it (the disks are virtio)
    "psmouse", "serio_raw", "pcspkr",     # no mouse, no speaker
    "i2c_i801", "lpc_ich", "iTCO_wdt",    # q35's SMBus, LPC bridge and watchdog
    "vmw_vsock_vmci_transport", "vmw_vmci",  # VMware's VMCI; systemd's AF_VSOCK probe asks for the transport
    "qemu_fw_cfg", "efi_pstore",
)
BOOT_TRIM = " ".join([f"systemd.mask={unit}" for unit in BOOT_MASKED] + ["modprobe.blacklist=" + ",".join(BOOT_UNLOADED)])


def qemu_argv(index: int, img: str) -> list:
    name = f"vm{index}"
    run = os.path.join(LAB_DIR, name)
    if NVMS == 2:
        peer = udp_port(2 if index == 1 else 1)
    elif NVMS > 2:
        peer = hub_port()
    else:
        peer = udp_port(index) + 500  # nobody listens there: a lone VM's data NIC
    # no_timer_check: Linux skips its test of the PIT's interrupt through the IO-APIC, as it does in every KVM guest.
    # Under TCG the test can fail when the machine is busy (QEMU's timer thread starved while the emulated CPU runs
    # the test's delay loop): five VMs booting at once on this 2-CPU machine, one bookworm VM panicked with
    # "IO-APIC + timer doesn't work!" (2026-12-02).
    append = (
        "root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet no_timer_check "
        f"systemd.hostname={name} lab.data_netdev={DATA_NETDEV} lab.data_ip={data_ip(index)}/{DATA_PREFIX}"
    )
    if BOOT_TRIMMED:
        append += " " + BOOT_TRIM
    if PCIE:
        # pt: the host's own devices keep identity mappings (no IOVA translation to emulate per DMA);
        # the IOMMU is still on, so the kernel requests ACS and makes IOMMU groups.
        append += " intel_iommu=on iommu=pt"
    iommu, data_nic = pcie_argv(index, f"virtio-net-pci,netdev=data,mac=52:54:00:77:00:{index:02x}")
    return [
        shutil.which("qemu-system-x86_64") or "qemu-system-x86_64",
        "-name", f"rdma-fabric-lab-{name}",
        "-nodefaults", "-display", "none", "-machine", "q35",
        "-accel", "tcg,thread=multi,tb-size=256", "-cpu", CPU_MODEL, "-smp", "1", "-m", str(memory_mib()),
        *iommu,
        "-kernel", os.path.join(img, "vmlinuz"), "-initrd", os.path.join(img, "initrd.img"),
        "-append", append,
        "-drive", f"file={run}/disk.qcow2,if=virtio,format=qcow2,cache=unsafe",
        "-netdev", f"user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:{ssh_port(index)}-:22",
        "-device", f"virtio-net-pci,netdev=mgmt,mac=52:54:00:00:00:{index:02x}",
        "-netdev", f"socket,id=data,udp=127.0.0.1:{peer},localaddr=127.0.0.1:{udp_port(index)}",
        *data_nic,
        *second_nic_argv(index),
        "-device", "virtio-rng-pci",
        # a new generation ID whenever a saved boot is resumed: the guest kernel reseeds its RNG (save_boot())
        "-device", "vmgenid,guid=auto",
        *(["-drive", f"file={img}/container.tar,if=virtio,format=raw,readonly=on",
           "-drive", f"file={docker_disk(index, img)},if=virtio,format={'qcow2' if docker_cached(img) else 'raw'},"
           "cache=unsafe"] if DOCKER else []),
        "-serial", f"file:{run}/console.log", "-monitor", "none",
        "-qmp", f"unix:{run}/qmp.sock,server=on,wait=off",
        "-pidfile", f"{run}/qemu.pid", "-daemonize",
    ]


def start_vm(index: int, img: str, saved: str = "") -> bool:
    """Start vmN: boot it, or resume the boot saved in the directory saved. False when it was already running."""
    name = f"vm{index}"
    run = os.path.join(LAB_DIR, name)
    if pid_alive(os.path.join(run, "qemu.pid")):
        say(f"{name}: already running")
        return False
    os.makedirs(run, exist_ok=True)
    disk = os.path.join(run, "disk.qcow2")
    if os.path.exists(disk):
        os.unlink(disk)
    argv = qemu_argv(index, img)
    if saved:
        # the disks as the saved lab left them (overlays on the same base.img and Docker store), the saved memory and devices
        for source, target in saved_disks(index, img):
            if subprocess.run(["cp", "--sparse=always", os.path.join(saved, source), target], check=False).returncode:
                raise LabError(f"{name}: the saved boot {saved} cannot be copied; remove it, or LAB_RESUME=0 boots")
        argv += ["-incoming", f"exec:cat {shlex.quote(os.path.join(saved, f'{name}.state'))}"]
    else:
        subprocess.run(
            ["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", os.path.join(img, "base.img"), disk],
            check=True,
        )
        if DOCKER:
            make_docker_disk(index, img)
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise LabError(f"{name}: qemu failed to start: {proc.stderr.strip()}")
    say(f"{name}: {'resumed' if saved else 'started'}, ssh 127.0.0.1:{ssh_port(index)}, data {data_ip(index)}")
    return True


# --- saved boots -------------------------------------------------------------
# A boot costs a VM 45-90 CPU-seconds of emulation (and starting the Docker engines 40 more), and every lab of
# make test boots VMs that are set up alike each time. The first lab of a setup is saved in the image cache once
# it is up (save_boot, after the boot has finished and the Docker engines or the scale hosts have started: every
# VM's memory and devices through QEMU's migration to a file, its disk overlays copied), and later labs of the
# same setup start from there (start_vm with -incoming) instead of booting: what runs is the same kernel and the
# same userland, only the boot is not done again. The saved boot is tied to everything that shaped it
# (boot_key): QEMU's version, the image's files and every VM's full QEMU command line (the lab directory's
# paths left out), so a change of any of them boots afresh and saves again. A resumed VM gets the controller's
# clock (its own stood still since the save) and a new VM generation ID, on which Linux reseeds its RNG.
# Reboots inside a lab are real boots. LAB_RESUME=0 always boots.
SAVED_BOOTS_KEPT = 4
SAVED_BOOT_FORMAT = 2  # what a saved boot holds: 2 = memory and devices, disk overlay, Docker disk overlay (LAB_DOCKER)


def saved_disks(index: int, img: str) -> list:
    """vmN's disks in a saved boot: (the file in the saved boot's directory, the disk in the lab directory)."""
    disks = [(f"vm{index}.qcow2", os.path.join(LAB_DIR, f"vm{index}", "disk.qcow2"))]
    return disks + ([(f"vm{index}-docker.qcow2", docker_disk(index, img))] if DOCKER else [])


def boot_key(img: str) -> str:
    """What a saved boot must match to be resumed: QEMU's version, the image's files, every VM's QEMU argv."""
    qemu = shutil.which("qemu-system-x86_64") or "qemu-system-x86_64"
    try:
        version = subprocess.run([qemu, "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:
        version = ""
    digest = hashlib.sha256(f"saved boot {SAVED_BOOT_FORMAT}\n{version.splitlines()[0] if version else ''}\n".encode())
    names = ["base.img", "vmlinuz", "initrd.img"] + (["container.tar", "docker-store.img"] if DOCKER else [])
    for name in names:
        try:
            info = os.stat(os.path.join(img, name))  # through links: the first-run test's stand-in links the real image
        except OSError:
            digest.update(f"{name} missing\n".encode())
            continue
        digest.update(f"{name} {info.st_dev} {info.st_ino} {info.st_size} {info.st_mtime_ns}\n".encode())
    for index in range(1, NVMS + 1):
        argv = [word.replace(LAB_DIR, "@LAB_DIR@") for word in qemu_argv(index, img)]
        digest.update(json.dumps(argv).encode())
    return digest.hexdigest()[:16]


def saved_boot(img: str, key: str) -> str:
    """The directory of the saved boot with this key, or "" when there is none."""
    path = os.path.join(img, "booted", key)
    if not os.path.exists(os.path.join(path, "complete")):
        return ""
    os.utime(os.path.join(path, "complete"))  # the saved boots used last are the ones kept
    return path


def qmp(index: int, *commands: dict) -> list:
    """Run QMP commands on vmN's QEMU in order; their return values. A command QEMU refuses raises LabError."""
    path = os.path.join(LAB_DIR, f"vm{index}", "qmp.sock")
    values = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(120)
        sock.connect(path)
        with sock.makefile("rwb") as stream:

            def reply() -> dict:
                while True:
                    line = stream.readline()
                    if not line:
                        raise LabError(f"vm{index}: QEMU closed its QMP socket")
                    message = json.loads(line)
                    if "event" not in message:
                        return message

            reply()  # the greeting
            for command in ({"execute": "qmp_capabilities"},) + commands:
                stream.write(json.dumps(command).encode() + b"\n")
                stream.flush()
                message = reply()
                if "error" in message:
                    raise LabError(f"vm{index}: QMP {command['execute']}: {message['error'].get('desc', message)}")
                values.append(message.get("return"))
    return values[1:]


def run_resumed() -> None:
    """Let every resumed VM run once QEMU has read its saved memory (it was saved stopped, so it arrives paused)."""
    deadline = time.monotonic() + BOOT_TIMEOUT
    for index in range(1, NVMS + 1):
        while True:
            status = qmp(index, {"execute": "query-status"})[0].get("status")
            if status == "running":
                break
            if status == "paused":
                qmp(index, {"execute": "cont"})
                break
            if status != "inmigrate" or time.monotonic() > deadline:
                raise LabError(f"vm{index}: the saved boot was not resumed (QEMU's state: {status}); LAB_RESUME=0 boots instead")
            time.sleep(0.2)


def set_clocks() -> None:
    """Give every VM the controller's time (a resumed or saved VM's clock stood still while it was stopped)."""
    for index in range(1, NVMS + 1):
        subprocess.run(ssh_argv(index, f"date -u -s @{time.time():.3f} >/dev/null"), check=True, capture_output=True,
                       timeout=60)


def save_boot(img: str, key: str) -> None:
    """Keep the lab's finished boot in the image cache (see above); a failed save is said, not fatal."""
    start = time.monotonic()
    for index in range(1, NVMS + 1):
        proc = subprocess.run(ssh_argv(index, "timeout 300 systemctl is-system-running --wait"), capture_output=True,
                              text=True, timeout=330, check=False)
        if proc.stdout.strip() != "running":
            say(f"vm{index}: the boot ended {proc.stdout.strip() or 'without an answer'}, not running: not saved")
            return
    root = os.path.join(img, "booted")
    os.makedirs(root, exist_ok=True)
    tmp = os.path.join(root, f"{key}.partial.{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    stopped = []
    try:
        for index in range(1, NVMS + 1):
            name = f"vm{index}"
            state = os.path.join(tmp, f"{name}.state")
            stopped.append(index)
            qmp(index, {"execute": "stop"},
                {"execute": "migrate-set-parameters", "arguments": {"max-bandwidth": 2 ** 34}},
                {"execute": "migrate", "arguments": {"uri": f"exec:cat > {shlex.quote(state)}"}})
            deadline = time.monotonic() + 300
            while True:
                info = qmp(index, {"execute": "query-migrate"})[0]
                if info.get("status") == "completed":
                    break
                if info.get("status") in ("failed", "cancelled") or time.monotonic() > deadline:
                    raise LabError(f"{name}: its memory was not saved ({info.get('status')}: {info.get('error-desc', '')})")
                time.sleep(0.2)
            # QEMU has flushed the disks at the end of the migration; the VM still stands
            for target, source in saved_disks(index, img):
                subprocess.run(["cp", "--sparse=always", source, os.path.join(tmp, target)], check=True)
            qmp(index, {"execute": "cont"})
            stopped.remove(index)
        with open(os.path.join(tmp, "complete"), "w", encoding="utf-8") as done:
            done.write(f"{time.monotonic() - start:.0f}\n")
        target = os.path.join(root, key)
        if os.path.exists(target):
            shutil.rmtree(tmp)
        else:
            os.rename(tmp, target)
    except (LabError, OSError, ValueError, subprocess.CalledProcessError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        for index in stopped:
            qmp(index, {"execute": "cont"})
        say(f"the boot was not saved for resuming: {exc}")
        return
    set_clocks()
    kept = sorted((entry for entry in os.listdir(root) if os.path.exists(os.path.join(root, entry, "complete"))),
                  key=lambda entry: os.path.getmtime(os.path.join(root, entry, "complete")), reverse=True)
    for entry in kept[SAVED_BOOTS_KEPT:]:
        shutil.rmtree(os.path.join(root, entry), ignore_errors=True)
    size = sum(os.stat(os.path.join(target, name)).st_blocks * 512 for name in os.listdir(target))
    say(f"the finished boot is saved for the next labs like this one ({size // 2**20} MiB, "
        f"{time.monotonic() - start:.0f}s): {target}")
    record("lab", f"boot of {NVMS} VM(s) saved for resuming", time.monotonic() - start)


def ssh_argv(index: int, *command: str) -> list:
    return [
        "ssh", "-q", "-i", os.path.join(LAB_DIR, "id_ed25519"), "-p", str(ssh_port(index)),
        "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "StrictHostKeyChecking=no",
        "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
        "root@127.0.0.1", *command,
    ]


def answers(index: int) -> bool:
    try:
        proc = subprocess.run(ssh_argv(index, "true"), capture_output=True, timeout=20, check=False)
    except subprocess.TimeoutExpired:
        return False
    return proc.returncode == 0


def console_tail(index: int, lines: int = 25) -> str:
    path = os.path.join(LAB_DIR, f"vm{index}", "console.log")
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return "(no console log)"
    return "\n".join(text.splitlines()[-lines:])


def wait_for_ssh(start: float) -> None:
    pending = set(range(1, NVMS + 1))
    while pending:
        for index in sorted(pending):
            if not pid_alive(os.path.join(LAB_DIR, f"vm{index}", "qemu.pid")):
                raise LabError(f"vm{index}: qemu exited during boot; console tail:\n{console_tail(index)}")
            if answers(index):
                say(f"vm{index}: ssh answers after {time.monotonic() - start:.0f}s")
                pending.discard(index)
        if pending and time.monotonic() - start > BOOT_TIMEOUT:
            tails = "\n".join(f"--- vm{i} console tail ---\n{console_tail(i)}" for i in sorted(pending))
            raise LabError(f"waiting for ssh: {', '.join(f'vm{i}' for i in sorted(pending))} "
                           f"did not answer within {BOOT_TIMEOUT}s\n{tails}")
        if pending:
            time.sleep(3)


def data_nic_check(index: int) -> str:
    """A shell line for vmN: exit 0 when its data NIC is up with its address (or the image has no lab-net).

    lab-net.service waits for the NIC's device unit, but only for systemd's device timeout (90 s): on a
    starved machine udev loaded virtio_net later than that, lab-net ran before eth1 existed and failed,
    and the NIC stayed down (rxe0's port DOWN, no IPv4 GID; molecule failed twice in its first play).
    Then lab-net is started again, once the NIC is there.
    """
    return (f"systemctl cat lab-net.service >/dev/null 2>&1 || exit 0; "
            # on eth1, or on the bridge br-data that the scale hosts' veths share with it (lab/hosts.sh)
            f"ip -4 -o addr show 2>/dev/null | grep -Eq '^[0-9]+: ({DATA_NETDEV}|br-data) .* {data_ip(index)}/' && "
            f"ip -o link show dev {DATA_NETDEV} | grep -q 'state UP' && exit 0; "
            f"if systemctl -q is-failed lab-net.service && [ -e /sys/class/net/{DATA_NETDEV} ]; then "
            f"echo restarted; systemctl restart lab-net.service; fi; exit 1")


def wait_for_data_nics(start: float) -> None:
    pending = set(range(1, NVMS + 1))
    while pending:
        for index in sorted(pending):
            try:
                proc = subprocess.run(ssh_argv(index, data_nic_check(index)), capture_output=True, text=True, timeout=30,
                                      check=False)
            except subprocess.TimeoutExpired:
                continue
            if "restarted" in proc.stdout:
                say(f"vm{index}: lab-net.service had failed at boot ({DATA_NETDEV} came late); started it again")
            if proc.returncode == 0:
                pending.discard(index)
        if pending and time.monotonic() - start > BOOT_TIMEOUT:
            raise LabError(f"the data NIC {DATA_NETDEV} of {', '.join(f'vm{i}' for i in sorted(pending))} is not up with its "
                           f"address within {BOOT_TIMEOUT}s (lab-net.service)")
        if pending:
            time.sleep(2)


def docker_cached(img: str) -> bool:
    return os.path.exists(os.path.join(img, "docker-store.img"))


def docker_disk(index: int, img: str) -> str:
    name = "docker.qcow2" if docker_cached(img) else "docker-seed.img"
    return os.path.join(LAB_DIR, f"vm{index}", name)


def make_docker_disk(index: int, img: str) -> None:
    """/var/lib/docker's disk: an overlay on the cached store, or an empty ext4 to import into."""
    disk = docker_disk(index, img)
    if os.path.exists(disk):
        os.unlink(disk)
    if docker_cached(img):
        argv = ["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b",
                os.path.join(img, "docker-store.img"), disk]
    else:
        argv = ["mkfs.ext4", "-q", "-L", "labdocker", disk, "4096M"]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def docker_socket(index: int) -> str:
    return os.path.join(LAB_DIR, f"docker-vm{index}.sock")


def docker_ping(path: str) -> bool:
    """True when a Docker engine answers GET /_ping on the unix socket at path."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(path)
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            reply = b""
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                reply += chunk
    except OSError:
        return False
    return reply.startswith(b"HTTP/1.") and b" 200 " in reply.split(b"\r\n", 1)[0] and reply.endswith(b"OK")


# The engine is masked in the image; the container image comes from the read-only
# second disk (the image's container.tar), imported once per boot.
DOCKER_SETUP = (
    # a resumed lab (see save_boot) has its engine running and the image imported
    f"if systemctl -q is-active docker.service; then docker image inspect --format '{{{{.Size}}}}' {CONTAINER_IMAGE}; "
    "exit; fi; "
    "set -e; mkdir -p /var/lib/docker; mountpoint -q /var/lib/docker || mount /dev/vdc /var/lib/docker; "
    # what a Docker host gives its RDMA containers: /dev/infiniband exists before they start
    "modprobe -a ib_uverbs rdma_ucm; "
    "systemctl unmask --quiet containerd.service docker.socket docker.service; "
    "systemctl start docker.service; "
    f"docker image inspect {CONTAINER_IMAGE} >/dev/null 2>&1 || "
    "docker import --change 'CMD [\"/sbin/init\"]' "
    f"--change 'ENV container=docker' /dev/vdb {CONTAINER_IMAGE} >/dev/null; "
    f"docker image inspect --format '{{{{.Size}}}}' {CONTAINER_IMAGE}"
)


def save_docker_store(img: str) -> None:
    """Keep vm1's freshly imported /var/lib/docker as the cached store of this image."""
    stop = "systemctl stop docker.service docker.socket containerd.service && sync && umount /var/lib/docker"
    subprocess.run(ssh_argv(1, stop), check=True, capture_output=True, timeout=600)
    tmp = os.path.join(img, "docker-store.img.partial")
    subprocess.run(["cp", "--sparse=always", docker_disk(1, img), tmp], check=True)
    os.rename(tmp, os.path.join(img, "docker-store.img"))
    subprocess.run(ssh_argv(1, "mount /dev/vdc /var/lib/docker && systemctl start docker.service"),
                   check=True, capture_output=True, timeout=600)
    say(f"vm1: /var/lib/docker with {CONTAINER_IMAGE} kept in {img}/docker-store.img for the next boots")


def start_docker(img: str) -> None:
    """Start each VM's engine, import the image, forward the engine's socket over SSH."""
    start = time.monotonic()
    seeding = not docker_cached(img) and os.path.exists(docker_disk(1, img))
    procs = {i: subprocess.Popen(ssh_argv(i, DOCKER_SETUP), stdout=subprocess.PIPE,  # pylint: disable=consider-using-with
                                 stderr=subprocess.PIPE, text=True) for i in range(1, NVMS + 1)}
    limit = max(BOOT_TIMEOUT, 2400)
    for index, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise LabError(f"vm{index}: docker setup did not finish within {limit}s") from None
        if proc.returncode != 0:
            raise LabError(f"vm{index}: docker setup failed (rc {proc.returncode}): {err.strip() or out.strip()}")
        say(f"vm{index}: docker engine up, {CONTAINER_IMAGE} ({int(out.split()[-1]) // 2**20} MiB) "
            f"after {time.monotonic() - start:.0f}s")
    how = "from the cached store" if docker_cached(img) else "imported"
    record("lab", f"docker engines up, container image {how}", time.monotonic() - start)
    if seeding:
        saved = time.monotonic()
        save_docker_store(img)
        record("lab", "docker store saved to the image cache", time.monotonic() - saved)
    for index in range(1, NVMS + 1):
        path = docker_socket(index)
        pidfile = os.path.join(LAB_DIR, f"vm{index}", "docker-ssh.pid")
        if not pid_alive(pidfile):
            if os.path.exists(path):
                os.unlink(path)
            argv = ssh_argv(index)
            argv[1:1] = ["-N", "-o", "ExitOnForwardFailure=yes", "-o", "ServerAliveInterval=15",
                         "-L", f"{path}:/run/docker.sock"]
            proc = subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL,  # pylint: disable=consider-using-with
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(pidfile, "w", encoding="utf-8") as handle:
                handle.write(f"{proc.pid}\n")
        for _attempt in range(100):
            if docker_ping(path):
                break
            time.sleep(0.2)
        else:
            raise LabError(f"vm{index}: the engine does not answer on {path} (the SSH forward failed)")
        say(f"vm{index}: DOCKER_HOST=unix://{path}")


def start_hosts() -> None:
    """Make each VM's scale hosts (lab/hosts.sh), all VMs at once, and wait until every host's sshd answers."""
    start = time.monotonic()
    with open(os.path.join(LAB_SRC, "hosts.sh"), "rb") as handle:
        script = handle.read()
    procs = {}
    for index in range(1, NVMS + 1):
        argv = ssh_argv(index, "bash", "-s", "--", str(host_index(index, 0)), str(HOSTS_PER_VM), DATA_NET, str(DATA_PREFIX))
        procs[index] = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,  # pylint: disable=consider-using-with
                                        stderr=subprocess.PIPE)
    for index, proc in procs.items():
        try:
            out, err = proc.communicate(script, timeout=max(BOOT_TIMEOUT, 900))
        except subprocess.TimeoutExpired:
            proc.kill()
            raise LabError(f"vm{index}: lab/hosts.sh did not finish") from None
        if proc.returncode != 0:
            raise LabError(f"vm{index}: lab/hosts.sh failed (rc {proc.returncode}): "
                           f"{(err or out).decode('utf-8', 'replace').strip()[-2000:]}")
    # each VM probes its own hosts' sshd (one SSH per VM and round): the banner's first bytes
    pending = {vm: [host_index(vm, slot) for slot in range(HOSTS_PER_VM)] for vm in range(1, NVMS + 1)}
    while pending:
        for vm, numbers in list(pending.items()):
            probe = "; ".join(f"timeout 5 bash -c 'exec 3<>/dev/tcp/{DATA_NET}.{100 + n}/22 && head -c 4 <&3 "
                              f"| grep -q SSH- && echo {n}' 2>/dev/null" for n in numbers)
            proc = subprocess.run(ssh_argv(vm, probe + "; true"), capture_output=True, text=True, timeout=120,
                                  check=False)
            answered = {int(word) for word in proc.stdout.split() if word.isdigit()}
            pending[vm] = [n for n in numbers if n not in answered]
            if not pending[vm]:
                del pending[vm]
        if pending and time.monotonic() - start > BOOT_TIMEOUT:
            names = ", ".join(f"node{n:02d}" for numbers in pending.values() for n in numbers)
            raise LabError(f"scale hosts {names}: sshd does not answer within {BOOT_TIMEOUT}s")
        if pending:
            time.sleep(3)
    record("lab", f"{NVMS * HOSTS_PER_VM} scale hosts up", time.monotonic() - start)
    say(f"{NVMS * HOSTS_PER_VM} scale hosts answer after {time.monotonic() - start:.0f}s")


def write_inventory() -> str:
    key = os.path.join(LAB_DIR, "id_ed25519")
    lines = [
        "# Written by lab/labctl up: the rdma.fabric lab (QEMU VMs, loopback only).",
        "all:",
        "  children:",
    ]
    if HOSTS_PER_VM:
        # lab/group_vars/scale_hosts.yml derives each host's address, device name and SSH path
        lines += ["    lab_vms:", "      hosts:"]
        lines += [f"        vm{i}: {{ansible_host: 127.0.0.1, ansible_port: {ssh_port(i)}}}" for i in range(1, NVMS + 1)]
        hosts = [f"node{host_index(vm, slot):02d}" for vm in range(1, NVMS + 1) for slot in range(HOSTS_PER_VM)]
        for group in ("rdma_hosts", "scale_hosts"):
            lines += [f"    {group}:", "      hosts:"]
            lines += [f"        {name}:" for name in hosts]
    else:
        lines += ["    rdma_hosts:", "      hosts:"]
        for index in range(1, NVMS + 1):
            lines += [
                f"        vm{index}:",
                "          ansible_host: 127.0.0.1",
                f"          ansible_port: {ssh_port(index)}",
                f"          lab_data_netdev: {DATA_NETDEV}",
                f"          lab_data_ip: {data_ip(index)}",
            ]
    lines += [
        "  vars:",
        "    ansible_user: root",
        f"    ansible_ssh_private_key_file: {key}",
        "    ansible_python_interpreter: /usr/bin/python3",
        f"    lab_data_prefix: {DATA_PREFIX}",
        f"    lab_dir: {LAB_DIR}",
        f"    lab_suite: {SUITE}",
        f"    lab_port_base: {PORT_BASE}",
        f"    lab_hosts_per_vm: {HOSTS_PER_VM}",
    ]
    # The lab's intent for playbooks/site.yml sits beside the inventory, where Ansible loads it.
    group_vars = os.path.join(LAB_DIR, "group_vars")
    if not os.path.islink(group_vars):
        os.symlink(os.path.join(LAB_SRC, "group_vars"), group_vars)
    path = os.path.join(LAB_DIR, "inventory.yml")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(tmp, path)
    return path


def hub_main() -> None:
    """Repeat every datagram from one VM's data NIC to all the others (NVMS > 2)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", hub_port()))
    peers = [("127.0.0.1", udp_port(i)) for i in range(1, NVMS + 1)]
    while True:
        ready, _w, _x = select.select([sock], [], [], 60)
        if not ready:
            continue
        data, source = sock.recvfrom(65536)
        for peer in peers:
            if peer != source:
                sock.sendto(data, peer)


def start_hub() -> None:
    pidfile = os.path.join(LAB_DIR, "hub.pid")
    if NVMS <= 2 or pid_alive(pidfile):
        return
    proc = subprocess.Popen(  # pylint: disable=consider-using-with
        [sys.executable, os.path.abspath(__file__), "hub", LAB_DIR],
        start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    with open(pidfile, "w", encoding="utf-8") as handle:
        handle.write(f"{proc.pid}\n")


def cmd_up() -> None:
    check_settings()
    img = ensure_image()
    os.makedirs(LAB_DIR, exist_ok=True)
    running = [i for i in range(1, 65) if pid_alive(os.path.join(LAB_DIR, f"vm{i}", "qemu.pid"))]
    if running and _SAVED and (_SAVED.get("vms"), _SAVED.get("port_base")) != (NVMS, PORT_BASE):
        raise LabError(f"{LAB_DIR} already runs {_SAVED.get('vms')} VM(s) on port base {_SAVED.get('port_base')}; "
                       "lab/labctl down first, or use another LAB_DIR")
    with open(os.path.join(LAB_DIR, "lab.json"), "w", encoding="utf-8") as handle:
        json.dump({"vms": NVMS, "port_base": PORT_BASE, "docker": int(DOCKER), "hosts_per_vm": HOSTS_PER_VM,
                   "pcie": int(PCIE), "data_nics": DATA_NICS}, handle)
    for name in ("id_ed25519", "id_ed25519.pub"):
        shutil.copyfile(os.path.join(img, name), os.path.join(LAB_DIR, name))
    os.chmod(os.path.join(LAB_DIR, "id_ed25519"), 0o600)
    start = time.monotonic()
    start_hub()
    key = boot_key(img) if RESUME else ""
    saved = saved_boot(img, key) if key else ""
    # the first lab with Docker seeds the image's Docker store, and the labs after it have another Docker disk
    seeding = DOCKER and not docker_cached(img)
    started = [start_vm(index, img, saved) for index in range(1, NVMS + 1)]
    resumed = bool(saved) and any(started)
    if resumed:
        run_resumed()
    wait_for_ssh(start)
    if resumed:
        set_clocks()
    wait_for_data_nics(start)
    record("lab", f"{'resume' if resumed else 'boot'} {NVMS} VM(s) to ssh", time.monotonic() - start,
           **({"pcie": 1} if PCIE else {}))
    if DOCKER:
        start_docker(img)
    if HOSTS_PER_VM:
        start_hosts()
    # the whole lab as it is now (the engines and the scale hosts included), when every VM was booted here
    if key and not saved and all(started) and not seeding:
        save_boot(img, key)
    path = write_inventory()
    say(f"{NVMS} VM(s) up in {time.monotonic() - start:.0f}s")
    result(path)


def cmd_down() -> None:
    stopped = 0
    pidfiles = [os.path.join(LAB_DIR, f"vm{i}", "docker-ssh.pid") for i in range(1, 65)]
    pidfiles += [os.path.join(LAB_DIR, f"vm{i}", "qemu.pid") for i in range(1, 65)]
    pidfiles.append(os.path.join(LAB_DIR, "hub.pid"))
    vm_cpu = []
    for pidfile in pidfiles:
        pid = pid_alive(pidfile)
        if pid:
            if pidfile.endswith("qemu.pid"):
                vm_cpu.append(cpu_seconds(pid))
            os.kill(pid, signal.SIGTERM)
            for _attempt in range(50):
                if not os.path.exists(f"/proc/{pid}"):
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
            stopped += 1
        if os.path.exists(pidfile):
            os.unlink(pidfile)
    if vm_cpu:
        # what the emulated CPUs cost this machine from boot to now (the QEMUs daemonize: no part's own CPU time has it)
        record("lab", f"CPU of {len(vm_cpu)} VM(s), from start to down", sum(vm_cpu))
    say(f"stopped {stopped} process(es) of {LAB_DIR}")


def cpu_seconds(pid: int) -> float:
    """A process's user and system CPU seconds so far (/proc/PID/stat), 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # after the command's closing parenthesis: state is field 3, utime and stime are fields 14 and 15
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cmd_status() -> int:
    say(f"lab dir {LAB_DIR}; image cache {image_dir()} "
        f"({'built' if os.path.exists(os.path.join(image_dir(), 'complete')) else 'not built'})")
    running = 0
    for index in range(1, NVMS + 1):
        pid = pid_alive(os.path.join(LAB_DIR, f"vm{index}", "qemu.pid"))
        state = "stopped"
        if pid:
            running += 1
            state = f"running (pid {pid}), ssh 127.0.0.1:{ssh_port(index)} " + \
                ("answers" if answers(index) else "does not answer")
        result(f"vm{index}: {state}")
    inventory = os.path.join(LAB_DIR, "inventory.yml")
    result(f"inventory: {inventory if os.path.exists(inventory) else '(none)'}")
    return 0 if running == NVMS else 3


def use_every_cpu() -> None:
    """Let this process and the VMs it starts run on every CPU of the machine.

    mitogen pins Ansible's processes to one CPU each, and a child inherits its parent's CPU
    affinity: molecule's create step, an Ansible task under the mitogen strategy, started both
    VMs on CPU 1 only (affinity mask 2 on this 2-CPU machine), where they shared one core for the
    whole default scenario, while the same boot from a shell took 39-44 s instead of 98-128 s.
    """
    try:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    except (AttributeError, OSError) as exc:  # a cpuset that excludes some CPUs: keep what is allowed
        say(f"CPU affinity left as it is ({exc})")


def main(argv: list) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__)
        return 0
    if argv[0] != "ssh":  # ssh: the remote command's output is the result
        keep_stdout_for_results()
    use_every_cpu()
    try:
        if SUITE not in SUITES:
            raise LabError(f"LAB_SUITE: '{SUITE}' is not supported; allowed: {', '.join(SUITES)}")
        if argv[0] == "image":
            result(ensure_image())
        elif argv[0] == "up":
            cmd_up()
        elif argv[0] == "down":
            cmd_down()
        elif argv[0] == "status":
            return cmd_status()
        elif argv[0] == "hub":
            hub_main()
        elif argv[0] == "ssh" and len(argv) >= 2:
            index = int(argv[1].lstrip("vm"))
            os.execvp("ssh", ssh_argv(index, *argv[2:]))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except LabError as err:
        say(f"FAILED: {err}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
