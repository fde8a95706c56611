# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/callback_plugins/phase_timer.py: the CPU seconds it records per play, read from real processes."""

from __future__ import annotations

import importlib.util
import os
import select
import subprocess
import sys

import pytest

PLUGIN = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "callback_plugins", "phase_timer.py")

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")  # Linux only, as the lab is


def _plugin():
    spec = importlib.util.spec_from_file_location("phase_timer_under_test", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The child burns the CPU seconds it is given, says so on its standard output, then sleeps until it is killed. The
# test waits for that line, not for a deadline: make test runs the unit tests at nice 19 beside two busy VMs, where a
# child may get 1-2 % of a CPU (0.6 CPU-s then takes most of a minute).
BURN = ("import sys, time\nend = time.process_time() + float(sys.argv[1])\nwhile time.process_time() < end: pass\n"
        "print('burnt', flush=True)\ntime.sleep(600)\n")
WAIT = 900  # seconds for the child to burn its share, far above what nice 19 on a busy machine needs


def _burnt(child) -> None:
    """Wait until the child has burnt its CPU seconds (its line), failing only when it died or WAIT passed."""
    ready, _w, _x = select.select([child.stdout], [], [], WAIT)
    assert ready, f"the child did not burn its CPU seconds within {WAIT} s"
    assert child.stdout.readline() == b"burnt\n", "the child ended before it burnt its CPU seconds"


def test_a_child_s_cpu_counts_for_the_controller_live_and_reaped():
    timer = _plugin()
    before = timer.cpu_snapshot()
    child = subprocess.Popen([sys.executable, "-c", BURN, "0.6"], stdout=subprocess.PIPE)
    try:
        _burnt(child)
        live = timer.cpu_delta(before, timer.cpu_snapshot())["controller_cpu"]
        assert live >= 0.5  # the running child, a descendant, is counted
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    reaped = timer.cpu_delta(before, timer.cpu_snapshot())["controller_cpu"]
    assert reaped >= 0.5  # reaped, it is in this process's children's time


def test_a_lab_vm_is_found_by_its_pidfile_and_counted_by_lab(tmp_path):
    timer = _plugin()
    pidfile = str(tmp_path / ".lab-unit" / "vm1" / "qemu.pid")
    before = timer.cpu_snapshot()
    assert ".lab-unit" not in before[1]
    # a process that looks like the lab's QEMU: started as qemu-system-x86_64 (its command name in /proc), with
    # -pidfile LAB_DIR/vm1/qemu.pid
    qemu = tmp_path / "qemu-system-x86_64"
    qemu.symlink_to(sys.executable)
    vm = subprocess.Popen([str(qemu), "-c", BURN, "0.4", "-pidfile", pidfile], stdout=subprocess.PIPE)
    try:
        _burnt(vm)
        delta = timer.cpu_delta(before, timer.cpu_snapshot())
        assert delta["guest_cpu"][".lab-unit"] >= 0.3  # a VM that started in between counts from zero
        assert set(timer.cpu_snapshot()[1][".lab-unit"]) == {str(vm.pid)}
        with open(f"/proc/{vm.pid}/stat", encoding="utf-8") as handle:
            assert "(qemu-system-x86)" in handle.read()  # the name the snapshot looks for first
    finally:
        vm.kill()
        vm.wait()
        vm.stdout.close()


@pytest.mark.parametrize("before, after, expected", [
    ((1.0, {}), (3.5, {}), {"controller_cpu": 2.5, "guest_cpu": {}}),
    # two labs, one VM each; the idle one is left out
    ((0.0, {".lab-a": {"10": 5.0}, ".lab-b": {"20": 7.0}}), (0.0, {".lab-a": {"10": 9.5}, ".lab-b": {"20": 7.0}}),
     {"controller_cpu": 0.0, "guest_cpu": {".lab-a": 4.5}}),
    # a VM that rebooted as a new process (another pid) counts from zero; the one that stopped is gone
    ((0.0, {".lab-a": {"10": 50.0, "11": 40.0}}), (0.0, {".lab-a": {"12": 6.0, "11": 41.0}}),
     {"controller_cpu": 0.0, "guest_cpu": {".lab-a": 7.0}}),
])
def test_cpu_delta(before, after, expected):
    assert _plugin().cpu_delta(before, after) == expected
