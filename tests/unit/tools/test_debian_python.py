# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/debian-python and tools/bootstrap's choice of the controller's Python.

On a Debian 12 machine without a distribution's Python 3.12 or 3.13, tools/bootstrap makes .venv from Debian 13's
python3.13 that tools/debian-python unpacks: that interpreter must run with its own root's dynamic loader and C
library (Debian 12's is older than the one it was built for), the programs it starts must be the machine's, and its
venvs must have the root's pip. These tests run in .venv itself.
"""

from __future__ import annotations

import os
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TOOL = os.path.join(TOP, "tools", "debian-python")
DISTRIBUTION = [path for path in ("/usr/bin/python3.13", "/usr/bin/python3.12") if os.access(path, os.X_OK)]


def debian_python() -> subprocess.CompletedProcess:
    return subprocess.run(["/usr/bin/python3", TOOL], capture_output=True, text=True, timeout=1800, check=False)


def test_bootstrap_picked_a_distribution_s_build_for_the_controller():
    running = os.path.realpath(sys.executable)
    if DISTRIBUTION:
        assert running == os.path.realpath(DISTRIBUTION[0])
        return
    proc = debian_python()
    if proc.returncode == 0:
        assert running == os.path.realpath(proc.stdout.strip()), (running, proc.stdout, proc.stderr)
    else:  # the fallback: any other 3.11-3.13, and the tool said why it could not build here
        assert proc.stdout == "" and "[debian-python] " in proc.stderr, proc
        assert "/python/trixie-" not in running


def test_the_unpacked_python_runs_on_its_own_c_library_and_starts_the_machine_s_programs():
    proc = debian_python()
    if proc.returncode != 0:
        assert "[debian-python] " in proc.stderr and proc.stdout == "", proc
        return
    python = proc.stdout.strip()
    root = python[:-len("/usr/bin/python3.13")]
    code = ("import subprocess, ssl, sqlite3\n"
            "maps = open('/proc/self/maps').read().split()\n"
            "print('\\n'.join(sorted({p for p in maps if '/libc.so.6' in p or '/ld-linux-x86-64.so.2' in p})))\n"
            "print('child', subprocess.run(['readlink', '/proc/self/exe'], capture_output=True, text=True).stdout.strip())\n")
    run = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    lines = run.stdout.splitlines()
    loaded = [line for line in lines if not line.startswith("child ")]
    assert len(loaded) == 2 and all(path.startswith(root + "/") for path in loaded), run.stdout
    # a program it starts is the machine's own, with the machine's loader (no LD_LIBRARY_PATH leaks to it)
    assert lines[-1] == "child /usr/bin/readlink", run.stdout
    assert "LD_LIBRARY_PATH" not in os.environ or root not in os.environ["LD_LIBRARY_PATH"]


def test_a_second_call_prints_the_same_interpreter_and_builds_nothing():
    first, second = debian_python(), debian_python()
    assert first.returncode == second.returncode
    assert first.stdout == second.stdout
    if second.returncode == 0:
        assert second.stderr == "", second.stderr  # a build says so on standard error; the check of a built one is quiet
