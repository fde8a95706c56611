# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""make test's timing record: every playbook, play and long task as one JSON line.

Playbooks and plays carry CPU seconds too: the controller's (this ansible-playbook process and its descendants, mitogen's
included) and the lab VMs' (each running QEMU of a lab, by lab directory), read from /proc at their start and end.

Enabled by the make targets that drive the lab (ANSIBLE_CALLBACK_PLUGINS=tools/callback_plugins,
ANSIBLE_CALLBACKS_ENABLED=phase_timer) and writing only when RDMA_FABRIC_TIMING names a file;
tools/timing-table turns the lines into .build/logs/timing.md.
"""

from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: phase_timer
type: aggregate
short_description: Seconds per playbook, play and long task, as JSON lines
description:
  - Appends one JSON line per playbook, play and task of 5 s or more (and every reboot) to the file named by
    E(RDMA_FABRIC_TIMING); does nothing when it is not set.
  - Playbook and play lines carry C(controller_cpu), the CPU seconds of ansible-playbook and its descendants, and
    C(guest_cpu), the CPU seconds of each lab's running VMs (their QEMU processes), by lab directory name.
"""

LONG_TASK = 5.0
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: str):
    """(command name, parent pid, own CPU seconds, reaped children's CPU seconds) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            head, tail = handle.read().rsplit(")", 1)
    except (OSError, ValueError):
        return None
    fields = tail.split()
    # after the command name: state ppid ... utime(14) stime(15) cutime(16) cstime(17), numbered from pid as 1
    return (head.partition("(")[2], int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK,
            (int(fields[13]) + int(fields[14])) / TICK)


def _lab_dir(pid: str):
    """The lab directory name of a lab VM's QEMU (its -pidfile is LAB_DIR/vmN/qemu.pid), None for anything else."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return None
    if not argv or "qemu-system" not in os.path.basename(argv[0]) or "-pidfile" not in argv[:-1]:
        return None
    pidfile = argv[argv.index("-pidfile") + 1]
    return os.path.basename(os.path.dirname(os.path.dirname(pidfile)))


def cpu_snapshot() -> tuple:
    """(this process tree's CPU seconds, {lab directory name: {qemu pid: CPU seconds}})."""
    parents, own, labs = {}, {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        stat = _stat(pid)
        if stat is None:
            continue
        comm, parent, cpu, children = stat
        parents[pid], own[pid] = str(parent), cpu + children
        # only a QEMU's command line is read (the kernel's command name: its first 15 characters)
        lab = _lab_dir(pid) if comm.startswith("qemu-system") else None
        if lab:
            labs.setdefault(lab, {})[pid] = cpu
    me, tree = str(os.getpid()), 0.0
    for pid, seconds in own.items():
        ancestor, hops = pid, 0
        while ancestor not in (me, "0", "1") and ancestor in parents and hops < 64:
            ancestor, hops = parents[ancestor], hops + 1
        if ancestor == me:
            tree += seconds
    return tree, labs


def cpu_delta(before: tuple, after: tuple) -> dict:
    """controller_cpu and guest_cpu between two snapshots; a VM that started in between counts from zero."""
    guest = {}
    for lab, pids in after[1].items():
        seconds = sum(cpu - before[1].get(lab, {}).get(pid, 0.0) for pid, cpu in pids.items())
        if seconds > 0:
            guest[lab] = round(seconds, 1)
    return {"controller_cpu": round(after[0] - before[0], 1), "guest_cpu": guest}


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "phase_timer"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._path = os.environ.get("RDMA_FABRIC_TIMING")
        self._playbook = None
        self._play = None
        self._task = None
        self._started = {}
        self._cpu = {}

    def _write(self, kind, name, seconds, **extra):
        if not self._path:
            return
        row = {"kind": kind, "name": name, "seconds": round(seconds, 1), "end": round(time.time(), 1),
               "scenario": os.environ.get("MOLECULE_SCENARIO_NAME", ""), "playbook": self._playbook}
        row.update(extra)
        with open(self._path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")

    def _close(self, kind, now=None):
        """Write the row of the task, play or playbook that ends; now: the CPU snapshot of that moment (plays)."""
        start = self._started.pop(kind, None)
        if start is None:
            return
        if kind == "task":
            seconds = time.monotonic() - start
            name, action = self._task
            if seconds >= LONG_TASK or action.endswith("reboot"):
                self._write("task", name, seconds, play=self._play, action=action)
        elif kind == "play":
            self._write("play", self._play, time.monotonic() - start, **self._cpu_since("play", now))

    def _snapshot(self):
        """The CPU snapshot of this moment, None when nothing is written."""
        return cpu_snapshot() if self._path else None

    def _cpu_since(self, kind, now) -> dict:
        before = self._cpu.pop(kind, None)
        return {} if before is None or now is None else cpu_delta(before, now)

    def v2_playbook_on_start(self, playbook):
        self._playbook = os.path.relpath(playbook._file_name)  # pylint: disable=protected-access
        self._started["playbook"] = time.monotonic()
        self._cpu["playbook"] = self._snapshot()

    def v2_playbook_on_play_start(self, play):
        self._close("task")
        now = self._snapshot()  # the end of the last play and the start of this one
        self._close("play", now)
        self._play = play.get_name()
        self._started["play"] = time.monotonic()
        self._cpu["play"] = now

    def _task_start(self, task):
        self._close("task")
        self._task = (task.get_name(), task.action or "")
        self._started["task"] = time.monotonic()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._task_start(task)

    def v2_playbook_on_handler_task_start(self, task):
        self._task_start(task)

    def v2_playbook_on_stats(self, stats):
        self._close("task")
        now = self._snapshot()
        self._close("play", now)
        start = self._started.pop("playbook", None)
        if start is not None:
            self._write("playbook", self._playbook, time.monotonic() - start, **self._cpu_since("playbook", now))
