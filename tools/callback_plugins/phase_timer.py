# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""make test's timing record: every playbook, play and long task as one JSON line.

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
"""

LONG_TASK = 5.0


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

    def _write(self, kind, name, seconds, **extra):
        if not self._path:
            return
        row = {"kind": kind, "name": name, "seconds": round(seconds, 1), "end": round(time.time(), 1),
               "scenario": os.environ.get("MOLECULE_SCENARIO_NAME", ""), "playbook": self._playbook}
        row.update(extra)
        with open(self._path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")

    def _close(self, kind):
        start = self._started.pop(kind, None)
        if start is None:
            return
        if kind == "task":
            seconds = time.monotonic() - start
            name, action = self._task
            if seconds >= LONG_TASK or action.endswith("reboot"):
                self._write("task", name, seconds, play=self._play, action=action)
        elif kind == "play":
            self._write("play", self._play, time.monotonic() - start)

    def v2_playbook_on_start(self, playbook):
        self._playbook = os.path.relpath(playbook._file_name)  # pylint: disable=protected-access
        self._started["playbook"] = time.monotonic()

    def v2_playbook_on_play_start(self, play):
        self._close("task")
        self._close("play")
        self._play = play.get_name()
        self._started["play"] = time.monotonic()

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
        self._close("play")
        start = self._started.pop("playbook", None)
        if start is not None:
            self._write("playbook", self._playbook, time.monotonic() - start)
