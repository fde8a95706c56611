# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The path every new user takes first, in `make test` (make first-run).

1. `lab/labctl image` with the real recipe: standard output is exactly the image
   directory (on a fresh machine this is the real cold build).
2. `lab/labctl image` and `lab/labctl up` on an empty LAB_CACHE, with a stand-in
   recipe (tests/firstrun/recipe) that writes to its standard output as the real build
   does: labctl's standard output is exactly the directory, then exactly the inventory
   path, while the build's own output reaches standard error.
3. `tools/demo` end to end on the VMs that step 2 booted, its own `labctl up` again on an
   empty cache: it passes, and its report is this run's and says every pair passed.
4. Step 2's `up` saved its finished boot in that cache: `lab/labctl down` and `up` again resume
   it (no boot), the guests with the controller's clock, a reseeded RNG and the saved disk (the
   demo's RDMA links gone).

The VMs are stopped afterwards (lab/labctl down), whatever happened.
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
STANDIN = os.path.join(HERE, "recipe")
LAB_DIR = os.path.join(TOP, ".lab-firstrun")
# The child's own standard output, which must not reach labctl's
NOISE = "Creating regular file"


def run(argv, env, timeout):
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False, cwd=TOP)


def lab_env(**extra):
    env = dict(os.environ, LAB_DIR=LAB_DIR, LAB_VMS="2", LAB_PORT_BASE=os.environ.get("FIRSTRUN_PORT_BASE", "2822"))
    env.pop("LAB_RECIPE", None)
    env.update(extra)
    return env


def ssh(env, port, command):
    return run(["ssh", "-i", os.path.join(LAB_DIR, "id_ed25519"), "-p", str(port), "-o", "BatchMode=yes",
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
                "root@127.0.0.1", command], env, 120)


def only_line(proc, what):
    assert proc.returncode == 0, f"{what} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert proc.stdout.endswith("\n") and proc.stdout.count("\n") == 1, \
        f"{what}: standard output is not exactly one line: {proc.stdout[:2000]!r}"
    return proc.stdout[:-1]


@pytest.fixture(scope="module")
def real_image():
    env = dict(os.environ)
    env.pop("LAB_RECIPE", None)
    proc = run([LABCTL, "image"], env, timeout=3600)
    path = only_line(proc, "lab/labctl image (the real recipe)")
    assert os.path.isfile(os.path.join(path, "complete")), path
    return path


def test_real_image_prints_only_its_directory(real_image):
    assert os.path.dirname(real_image) == os.path.expanduser(os.environ.get("LAB_CACHE", "~/.cache/rdma-fabric-lab"))
    for name in ("base.img", "vmlinuz", "initrd.img", "id_ed25519"):
        assert os.path.isfile(os.path.join(real_image, name)), name


def test_image_on_a_cold_cache_prints_only_its_directory(real_image, tmp_path):
    cache = tmp_path / "cache"
    proc = run([LABCTL, "image"], lab_env(LAB_CACHE=str(cache), LAB_RECIPE=STANDIN, LAB_STANDIN_FROM=real_image), 600)
    path = only_line(proc, "lab/labctl image (cold cache)")
    built = [name for name in os.listdir(cache) if not name.startswith(".")]
    assert path == str(cache / built[0]) and len(built) == 1, (path, built)
    assert os.path.isfile(os.path.join(path, "complete"))
    # the build ran and its standard output went to labctl's standard error
    assert NOISE in proc.stderr and "stand-in recipe: done" in proc.stderr and "[lab] image built" in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def lab(real_image, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache-up")
    env = lab_env(LAB_CACHE=str(cache), LAB_RECIPE=STANDIN, LAB_STANDIN_FROM=real_image)
    try:
        proc = run([LABCTL, "up"], env, timeout=1200)
        yield proc, env
    finally:
        down = run([LABCTL, "down"], env, timeout=300)
        # the saved boot in this cache is about 430 MiB, and pytest keeps its last three runs' directories
        shutil.rmtree(cache, ignore_errors=True)
        assert down.returncode == 0, down.stderr


def test_up_on_a_cold_cache_prints_only_the_inventory(lab):
    proc, _env = lab
    assert only_line(proc, "lab/labctl up (cold cache)") == os.path.join(LAB_DIR, "inventory.yml")
    assert NOISE in proc.stderr and "[lab] image built" in proc.stderr and "VM(s) up" in proc.stderr, proc.stderr
    with open(os.path.join(LAB_DIR, "inventory.yml"), encoding="utf-8") as handle:
        text = handle.read()
    assert "vm1:" in text and "vm2:" in text


def test_demo_end_to_end(lab, tmp_path):
    _proc, env = lab
    # the demo's own `labctl up` also starts on an empty cache: it builds, finds the VMs running, prints the path
    env = dict(env, LAB_CACHE=str(tmp_path / "cache-demo"))
    start = time.time()
    proc = run([os.path.join(TOP, "tools", "demo")], env, timeout=2400)
    seconds = time.time() - start
    tail = (proc.stdout[-3000:] + "\n" + proc.stderr[-3000:])
    assert proc.returncode == 0, f"tools/demo exited {proc.returncode} after {seconds:.0f}s:\n{tail}"
    assert "[demo] FAILED" not in proc.stdout + proc.stderr
    # a first-time user sees no warning of Ansible's (mitogen's deprecated strategy plugin printed two kinds)
    warnings = [line for line in (proc.stdout + proc.stderr).splitlines()
                if line.lstrip().startswith(("[WARNING]", "[DEPRECATION WARNING]", "[ERROR]"))]
    assert warnings == [], warnings
    for step in ("1/5", "2/5", "3/5", "4/5", "5/5", "summary"):
        assert f"[demo] {step}" in proc.stdout, step
    assert "hosts in rdma_hosts: vm1 vm2" in proc.stdout
    assert NOISE in proc.stderr and "vm1: already running" in proc.stderr, proc.stderr[-2000:]
    report = os.path.join(LAB_DIR, "report", "fabric-check.json")
    assert os.stat(report).st_mtime >= start, "the report is older than this demo"
    with open(report, encoding="utf-8") as handle:
        data = json.load(handle)
    assert sorted(e["host"] for e in data["endpoints"]) == ["vm1", "vm2"]
    assert data["results"] and all(r["ok"] for r in data["results"]), data["results"]
    assert {r["test"] for r in data["results"]} >= {"rping", "ibv_rc_pingpong", "ib_write_bw"}
    # the guests kept the code that AnsiballZ's zip archives compiled to (lab/image: rdma_fabric_lab_zipcache)
    for port in (int(env["LAB_PORT_BASE"]), int(env["LAB_PORT_BASE"]) + 1):
        entries = ssh(env, port, "ls /var/cache/rdma-fabric-lab-zipimport | wc -l")
        assert entries.returncode == 0 and int(entries.stdout) >= 20, (port, entries.stdout, entries.stderr)
    print(f"tools/demo passed in {seconds:.0f}s")


def test_the_same_lab_again_resumes_the_saved_boot(lab):
    proc, env = lab
    assert "the finished boot is saved for the next labs like this one" in proc.stderr, proc.stderr[-3000:]
    down = run([LABCTL, "down"], env, 300)
    assert down.returncode == 0, down.stderr
    again = run([LABCTL, "up"], env, 600)
    assert only_line(again, "lab/labctl up (a saved boot)") == os.path.join(LAB_DIR, "inventory.yml")
    assert "vm1: resumed" in again.stderr and "vm2: resumed" in again.stderr, again.stderr[-3000:]
    assert "started" not in again.stderr and "saved for the next labs" not in again.stderr, again.stderr[-3000:]
    for port in (int(env["LAB_PORT_BASE"]), int(env["LAB_PORT_BASE"]) + 1):
        state = ssh(env, port, "date -u +%s; systemctl is-system-running; ls /sys/class/infiniband | wc -l; "
                               "dmesg | grep -c 'crng reseeded due to virtual machine fork'")
        assert state.returncode == 0, (port, state.stderr)
        clock, running, devices, reseeded = state.stdout.split()
        assert abs(int(clock) - time.time()) < 60, (port, clock, time.time())
        # the saved boot's state: running, no RDMA link yet (the demo made rxe links before the down), reseeded once
        assert (running, devices, reseeded) == ("running", "0", "1"), (port, state.stdout)
