# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A test stdout callback: every task result as one JSON line, with the case it belongs to.

Used by tests/unit/roles/test_role_bad_input.py, which includes a file once per
case with the loop variable rdma_case ({id, role, settings}); a task belongs to
the case whose rdma_case the nearest include up its parent chain carries
(through include_role). The file is named by RDMA_CASE_LOG; stdout gets one
short line per result and the recap.
"""

from __future__ import annotations

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: rdma_case_log
type: stdout
short_description: Task results as JSON lines, per test case
description:
  - Writes every task result to the file named by E(RDMA_CASE_LOG), and one short line per result to stdout.
"""

CASE_VAR = "rdma_case"


def case_of(task):
    """The id of the case whose include the task comes from, or None."""
    node = task
    while node is not None:
        variables = getattr(node, "vars", None)
        if isinstance(variables, dict) and isinstance(variables.get(CASE_VAR), dict):
            return str(variables[CASE_VAR].get("id"))
        node = getattr(node, "_parent", None)
    return None


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "rdma_case_log"

    def __init__(self):
        super().__init__()
        self._path = os.environ["RDMA_CASE_LOG"]

    def _write(self, event, result):
        task = result.task
        data = result.result
        role = getattr(task, "_role", None)
        record = {
            "case": case_of(task),
            "host": result.host.get_name(),
            "event": event,
            "task": task.name,
            "action": task.action,
            "role": role.get_name() if role else None,
            "changed": bool(data.get("changed")),
            "msg": data.get("msg"),
            "argument_errors": data.get("argument_errors"),
        }
        with open(self._path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, default=str) + "\n")
        self._display.display(f"{event}: [{record['host']}] case {record['case']}: {record['task']}")

    def v2_runner_on_ok(self, result):
        self._write("ok", result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._write("failed", result)

    def v2_runner_on_unreachable(self, result):
        self._write("unreachable", result)

    def v2_runner_on_skipped(self, result):
        self._write("skipped", result)

    def v2_playbook_on_stats(self, stats):
        self._display.display("PLAY RECAP")
        for host in sorted(stats.processed):
            summary = stats.summarize(host)
            self._display.display(f"{host}: " + " ".join(f"{key}={value}" for key, value in sorted(summary.items())))
