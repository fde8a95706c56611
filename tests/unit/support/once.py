# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A costly fixture value computed once per test session, also across pytest-xdist's workers.

ansible-test runs the unit tests on two xdist workers that take tests from every module in turn,
so a module-scoped fixture is set up again whenever a worker comes back to its module: the
constructed-inventory fixture, which runs ansible-inventory, ran 10 times for 10 tests (92 s).
The value goes through a JSON file in the session's shared temporary directory, under a lock.
"""

from __future__ import annotations

import fcntl
import json
import os


def once_per_session(tmp_path_factory, name: str, compute):
    """compute()'s JSON-able value, computed by the first worker that asks and read by the others."""
    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker's base is <session>/popen-gwN; without it, base is the session's own.
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    path = root / f"{name}.json"
    with open(root / f"{name}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
        value = compute()
        tmp = root / f"{name}.json.tmp"
        tmp.write_text(json.dumps(value), encoding="utf-8")
        tmp.replace(path)
        return json.loads(json.dumps(value))
