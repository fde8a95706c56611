# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run gid_facts' main() in a process preloaded with libumad2sim (not a test: test_ib_port_facts_ibsim.py runs it).

    python gid_facts_umad2sim.py COLLECTIONS_PATH MODULE_ARGS_JSON

libumad2sim interposes libc's open(), opendir() and scandir() and sends /sys/class/infiniband to the tree it
writes at ./sys-<pid>/sys for this process (from the simulated port's NodeInfo, PortInfo and P_Key table
when the process first lists the directory). Python opens files with open64(), which it does not interpose:
the module, run as shipped, lists the simulated device and its ports but reads none of their files. So the
module runs twice, and this prints both results as one JSON object:
- "as_shipped": sysfs at /sys, as on a host;
- "rerooted": _sysfs.SYSFS_ROOT pointed at the simulator's tree, the one change (the same seam the unit tests
  use), with everything else (main(), argument handling, the reader and the parsers) as shipped;
plus "listed" (what listing /sys/class/infiniband gave) and "open_error" (what reading a file there gave).
Starting any process (subprocess, fork, exec, spawn, system) raises: fact modules start none.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys


class ProcessStarted(AssertionError):
    pass


def forbid_processes() -> None:
    def forbidden(*args, **kwargs):
        raise ProcessStarted(f"gid_facts started a process: {args!r}")

    subprocess.Popen = forbidden
    for name in ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "posix_spawn",
                 "posix_spawnp", "spawnv", "spawnve"):
        if hasattr(os, name):
            setattr(os, name, forbidden)


def run_module(gid_facts, patch_module_args, args: dict) -> dict:
    out = io.StringIO()
    with patch_module_args(args), contextlib.redirect_stdout(out):
        try:
            gid_facts.main()
        except SystemExit:
            pass
    return json.loads(out.getvalue())


def main() -> None:
    sys.path.insert(0, sys.argv[1])
    args = json.loads(sys.argv[2])
    # pylint: disable=import-outside-toplevel
    from ansible.module_utils.testing import patch_module_args

    from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs
    from ansible_collections.rdma.fabric.plugins.modules import gid_facts

    with patch_module_args({}):  # ansible's first use may run ldconfig (ctypes): before the guard
        pass
    listed = sorted(os.listdir("/sys/class/infiniband"))  # umad2sim connects to ibsim and writes its tree
    tree = os.path.abspath(os.path.join(f"sys-{os.getpid()}", "sys"))
    open_error = None
    try:
        with open(f"/sys/class/infiniband/{listed[0]}/node_guid", "rb"):
            pass
    except (OSError, IndexError) as err:
        open_error = repr(err)
    forbid_processes()
    report = {"listed": listed, "open_error": open_error, "tree": tree}
    report["as_shipped"] = run_module(gid_facts, patch_module_args, args)
    _sysfs.SYSFS_ROOT = tree
    report["rerooted"] = run_module(gid_facts, patch_module_args, args)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
