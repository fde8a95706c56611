# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RDMA subsystem's two netns modes on the kernel of trixie-backports, in `make test` (make netns).

One lab VM (LAB_SUITE=trixie-backports, Debian 13 with the 7.x kernel, whose rxe keeps its sockets in the namespace
that made it) with two RDMA hosts, node01 and node02: each a network, mount and UTS namespace around an sshd of its
own (lab/hosts.sh, the scale lab's mechanism). In order, on the same VM:

1. shared mode (the kernel's default): each host makes its rxe with rdma.fabric.rdma_link inside its namespaces, and
   the fabric_check role passes rping (RDMA-CM) and ibv_rc_pingpong (verbs) between the two hosts' own devices;
   rdma_link's netns option refuses to move a device, naming the mode.
2. rdma.fabric.rdma_system persists exclusive mode (the kernel refuses the switch while the hosts' namespaces live:
   reboot_required), the VM reboots, `lab/labctl up` makes the hosts again; the kernel is in exclusive mode.
3. exclusive mode: each host's device lives in its namespace, each host lists only its own, ibv_rc_pingpong passes,
   and fabric_check reports rping's failure as the known kernel limit with the kernel release, not as a broken pair.
4. removing node02's namespace removes its device: polled, within seconds.

Its own lab directory (.lab-netns) and SSH port (NETNS_PORT_BASE, 2922); the VM is stopped afterwards
(lab/labctl down), whatever happened. A lab that cannot start fails the test loudly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
LABCTL = os.path.join(TOP, "lab", "labctl")
LAB_DIR = os.environ.get("NETNS_LAB_DIR") or os.path.join(TOP, ".lab-netns")
INVENTORY = os.path.join(LAB_DIR, "inventory.yml")


def lab_env() -> dict:
    env = dict(os.environ, LAB_DIR=LAB_DIR, LAB_VMS="1", LAB_HOSTS_PER_VM="2", LAB_SUITE="trixie-backports",
               LAB_PORT_BASE=os.environ.get("NETNS_PORT_BASE", "2922"))
    env.pop("LAB_RECIPE", None)
    return env


def run(argv, timeout, env=None):
    return subprocess.run(argv, capture_output=True, text=True, env=env or lab_env(), timeout=timeout, check=False, cwd=TOP)


def tail(proc) -> str:
    return f"{proc.stdout[-4000:]}\n{proc.stderr[-3000:]}"


def up(what: str) -> None:
    start = time.monotonic()
    proc = run([LABCTL, "up"], timeout=1800)
    assert proc.returncode == 0, f"lab/labctl up ({what}) exited {proc.returncode}: the lab did not start\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip() == INVENTORY, proc.stdout
    print(f"lab/labctl up ({what}): {time.monotonic() - start:.0f}s")


def vm(command: str, timeout: int = 120):
    return run([LABCTL, "ssh", "vm1", command], timeout=timeout)


def playbook(name: str, *extra):
    start = time.monotonic()
    proc = run(["ansible-playbook", "-i", INVENTORY, os.path.join(HERE, name), *extra], timeout=1800)
    assert proc.returncode == 0, f"{name} exited {proc.returncode} after {time.monotonic() - start:.0f}s:\n{tail(proc)}"
    print(f"{name}: {time.monotonic() - start:.0f}s")
    return proc


def report(name: str) -> dict:
    with open(os.path.join(LAB_DIR, name, "fabric-check.json"), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def lab():
    for name in ("report-shared", "report-exclusive"):  # a report read below is this run's
        shutil.rmtree(os.path.join(LAB_DIR, name), ignore_errors=True)
    try:
        up("boot")
        yield
    finally:
        down = run([LABCTL, "down"], timeout=300)
        assert down.returncode == 0, down.stderr


def test_shared_mode(lab):
    playbook("shared.yml")
    data = report("report-shared")
    assert sorted((e["host"], e["device"], e["netns_mode"]) for e in data["endpoints"]) == [
        ("node01", "rxe1", "shared"), ("node02", "rxe2", "shared")]
    assert sorted(r["test"] for r in data["results"]) == ["ibv_rc_pingpong", "rping"]
    assert all(r["ok"] for r in data["results"]), data["results"]


def test_exclusive_mode_after_the_reboot(lab):
    playbook("switch.yml")
    before = vm("cat /proc/sys/kernel/random/boot_id").stdout.strip()
    assert before, "no boot id"
    vm("systemctl reboot", timeout=60)
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        now = vm("cat /proc/sys/kernel/random/boot_id", timeout=60).stdout.strip()
        if now and now != before:
            break
        time.sleep(5)
    else:
        pytest.fail("vm1 did not come back from its reboot within 900 s")
    up("after the reboot: the hosts again")
    playbook("exclusive.yml")
    data = report("report-exclusive")
    kernel = vm("uname -r").stdout.strip()
    assert sorted((e["host"], e["device"], e["netns_mode"], e["kernel"]) for e in data["endpoints"]) == [
        ("node01", "rxe1", "exclusive", kernel), ("node02", "rxe2", "exclusive", kernel)]
    rows = {r["test"]: r for r in data["results"]}
    assert rows["ibv_rc_pingpong"]["ok"], rows
    rping = rows["rping"]
    assert not rping["ok"] and rping["known_limit"].startswith("known kernel limit, not a fabric fault:"), rping
    assert f"on kernel {kernel}:" in rping["known_limit"] and "Couldn't create ib_mad QP1" in rping["known_limit"]
    assert data["summary"]["failed_pairs"] == [] and len(data["summary"]["known_limits"]) == 1


# Gone when no namespace left lists it: node01's and the VM's own are then the only network namespaces of the kernel
# (lsns), so the device exists nowhere; checked twice, a second apart, in case ib_core hands it back to the VM first.
GONE = ("gone() { [ \"$(lsns -t net -n -o NS | sort -u | wc -l)\" = 2 ] && ! rdma -j dev show | grep -q rxe2 "
        "&& ! ip netns exec node01 rdma -j dev show | grep -q rxe2; }; ")


def test_removing_a_namespace_removes_its_device(lab):
    start = "for pid in $(ip netns pids node02); do kill -9 $pid; done; ip netns delete node02; "
    poll = ("for i in $(seq 1 150); do if gone; then sleep 1; gone && { echo gone after $((i / 5)).$((i % 5 * 2))s; exit 0; }; fi; "
            "sleep 0.2; done; echo still there; lsns -t net; rdma dev show; exit 1")
    proc = vm(GONE + start + poll, timeout=180)
    assert proc.returncode == 0 and "gone after" in proc.stdout, tail(proc)
    print(f"rxe2 {proc.stdout.strip()} (polled every 0.2 s)")
    listed = vm("ip netns exec node01 rdma -j dev show; rdma -j dev show")
    assert "rxe2" not in listed.stdout and "rxe1" in listed.stdout, tail(listed)
