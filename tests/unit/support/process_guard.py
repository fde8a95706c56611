# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fact modules start no process: the guard their unit tests run under (not a test module)."""

from __future__ import annotations

import os
import subprocess

SPAWNERS = ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "posix_spawn", "posix_spawnp",
            "spawnv", "spawnve")


class ProcessStarted(AssertionError):
    pass


def forbid_processes(monkeypatch, harness, who: str) -> None:
    """Make starting any process (the module kit's run_command, subprocess, os.*) a test failure naming who did it."""

    def forbidden(*args, **kwargs):
        raise ProcessStarted(f"{who} started a process: {args!r}")

    harness.run_command = forbidden
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    for name in SPAWNERS:
        if hasattr(os, name):
            monkeypatch.setattr(os, name, forbidden)
