# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The test harnesses' daemons (ibsim and OpenSM, munged and slurmctld), each bounded in time.

spawn() starts one with its output in a file and a timer that kills it by PID (SIGKILL) after its limit,
whatever the test does; kill() ends one by PID if it is still running; stop() asks it to end and waits, then
kills it. Nothing else is ever signalled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading


def kill(proc: subprocess.Popen, sig=signal.SIGTERM) -> None:
    """sig to proc's PID, unless it has exited."""
    if proc.poll() is None:
        try:
            os.kill(proc.pid, sig)
        except ProcessLookupError:
            pass


def spawn(argv: list, output: str, limit: float, timers: list, **popen) -> subprocess.Popen:
    """argv started with stdout and stderr in the file output, killed after limit seconds; its timer joins timers
    (cancel them when the daemons are stopped)."""
    with open(output, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, **popen)  # pylint: disable=consider-using-with
    timer = threading.Timer(limit, kill, (proc, signal.SIGKILL))
    timer.daemon = True
    timer.start()
    timers.append(timer)
    return proc


def stop(proc: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 10):
    """sig to proc, its exit code within timeout, else SIGKILL and its exit code."""
    kill(proc, sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        kill(proc, signal.SIGKILL)
        return proc.wait(5)
