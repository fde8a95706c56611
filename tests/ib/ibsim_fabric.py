# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A simulated InfiniBand fabric for tests: ibsim, real OpenSM and infiniband-diags under libumad2sim.

Every process is bounded: ibsim and each OpenSM are killed by PID after their time limit
(a timer) and when the fabric is closed; every diagnostic command runs with a timeout.
Each fabric has its own IBSIM_SOCKNAME (ibsim's abstract socket names are shared by the
whole host) and each process its own writable working directory (umad2sim writes
./sys-<pid> there). Nothing needs root. See ../shared/docs/ibsim-facts.md.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
import bounded  # noqa: E402  pylint: disable=wrong-import-position

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
TOOLS = ("ibsim", "opensm", "sminfo", "smpquery")
HERE = os.path.dirname(os.path.abspath(__file__))
TOPOLOGY = os.path.join(HERE, "net.fabric")
# the topology's port GUIDs (node GUID + port 1)
PORT_GUIDS = {f"hca{n}": f"0x0002c9030000{n}001" for n in range(1, 6)}
PROCESS_LIMIT = 150  # seconds any ibsim or OpenSM may live
COMMAND_LIMIT = 10  # seconds any diagnostic command may take
# opensm and the diagnostics are in /usr/sbin, which a non-root PATH may lack
PATH = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"])


def missing_tools() -> list:
    """What this machine lacks to run the fabric (the tests fail, never skip, when this is not empty)."""
    missing = [tool for tool in TOOLS if shutil.which(tool, path=PATH) is None]
    if not os.path.exists(UMAD2SIM):
        missing.append(UMAD2SIM + " (libumad2sim0)")
    return missing


class Fabric:
    """One ibsim with its own socket name, and the OpenSMs and commands run against it."""

    def __init__(self, workdir, topology: str = TOPOLOGY):
        self.workdir = str(workdir)
        self.topology = topology
        self.sockname = f"rdmafab{os.getpid()}x{uuid.uuid4().hex[:10]}"
        self.processes = {}
        self.timers = []
        self._count = 0

    # --- processes ----------------------------------------------------------------------------
    def _dir(self, name: str) -> str:
        self._count += 1
        path = os.path.join(self.workdir, f"{self._count:02d}-{name}")
        os.makedirs(path)
        return path

    def env(self, host: str = "", **extra) -> dict:
        env = dict(os.environ, IBSIM_SOCKNAME=self.sockname, LC_ALL="C", PATH=PATH)
        if host:
            env.update(SIM_HOST=host, LD_PRELOAD=UMAD2SIM)
        env.update(extra)
        return env

    def _spawn(self, name: str, argv: list, env: dict, cwd: str, stdin=subprocess.DEVNULL) -> subprocess.Popen:
        proc = bounded.spawn(argv, os.path.join(cwd, "output.txt"), PROCESS_LIMIT, self.timers, cwd=cwd, env=env, stdin=stdin)
        self.processes[name] = (proc, cwd)
        return proc

    def output(self, name: str) -> str:
        with open(os.path.join(self.processes[name][1], "output.txt"), encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def start(self, timeout: float = 10, console: bool = False) -> "Fabric":
        """ibsim on the topology, once it is ready; console keeps its console on a pipe (ib_console.py), else -n."""
        cwd = self._dir("ibsim")
        argv = ["ibsim", "-s", self.topology] if console else ["ibsim", "-s", "-n", self.topology]
        proc = self._spawn("ibsim", argv, self.env(), cwd, stdin=subprocess.PIPE if console else subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while "Network simulator ready." not in self.output("ibsim"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"ibsim did not get ready in {timeout} s (rc {proc.poll()}): {self.output('ibsim')[-2000:]}")
            time.sleep(0.05)
        return self

    def start_opensm(self, name: str, host: str, conf: str, *extra: str, guid: str = "") -> subprocess.Popen:
        """OpenSM on host's port (guid, by default net.fabric's for host) with conf (-F), its own log (-f), cache and
        dump directories."""
        cwd = self._dir(name)
        env = self.env(host, OSM_CACHE_DIR=os.path.join(cwd, "cache"), OSM_TMP_DIR=cwd)
        os.makedirs(env["OSM_CACHE_DIR"])
        argv = ["opensm", "-F", conf, "-g", guid or PORT_GUIDS[host], "-f", self.log_path(name), "--dump_files_dir", cwd, *extra]
        return self._spawn(name, argv, env, cwd)

    def log_path(self, name: str) -> str:
        return os.path.join(self.workdir, f"{name}.log")

    def log(self, name: str) -> str:
        try:
            with open(self.log_path(name), encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except FileNotFoundError:
            return ""

    def send(self, name: str, sig) -> None:
        proc = self.processes[name][0]
        assert proc.poll() is None, f"{name} exited (rc {proc.returncode}): {self.output(name)[-2000:]}"
        os.kill(proc.pid, sig)

    def stop(self, name: str, sig=signal.SIGTERM, timeout: float = 10) -> int:
        return bounded.stop(self.processes[name][0], sig, timeout)

    def close(self) -> None:
        """Every OpenSM first (they exit cleanly on SIGTERM), then ibsim."""
        for name in [name for name in self.processes if name != "ibsim"] + (["ibsim"] if "ibsim" in self.processes else []):
            self.stop(name)
        for timer in self.timers:
            timer.cancel()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # --- diagnostics ----------------------------------------------------------------------------
    def run(self, host: str, *argv: str, timeout: float = COMMAND_LIMIT) -> subprocess.CompletedProcess:
        """A diagnostic command from host's port, in a directory of its own, bounded by timeout."""
        cwd = self._dir(argv[0])
        return subprocess.run(list(argv), cwd=cwd, env=self.env(host), capture_output=True, text=True, timeout=timeout, check=False)

    def sminfo(self, guid: str = "", host: str = "hca5") -> str:
        proc = self.run(host, "sminfo", *(["-G", guid] if guid else []))
        return proc.stdout.strip() or proc.stderr.strip()

    def wait_for_sm(self, state: str = "SMINFO_MASTER", guid: str = "", host: str = "hca5", timeout: float = 20) -> str:
        """Poll sminfo until it reports state; the last answer."""
        deadline = time.monotonic() + timeout
        answer = ""
        while time.monotonic() < deadline:
            answer = self.sminfo(guid, host)
            if answer.endswith(state):
                return answer
            time.sleep(0.2)
        raise AssertionError(f"no {state} from sminfo {guid} in {timeout} s; last answer: {answer!r}")

    def pkeys(self, guid: str, host: str = "hca5") -> set:
        """The non-zero P_Keys in the port's table (smpquery pkeys, addressed by port GUID)."""
        proc = self.run(host, "smpquery", "-G", "pkeys", guid)
        assert proc.returncode == 0, f"smpquery -G pkeys {guid}: rc {proc.returncode}: {proc.stderr.strip()}"
        return {word for line in proc.stdout.splitlines() if ":" in line
                for word in line.split(":", 1)[1].split() if word.startswith("0x") and int(word, 16)}

    def pkeys_direct(self, host: str, via: str = "hca5") -> set:
        """The non-zero P_Keys of an HCA's port by directed route from via (no SA needed: works after opensm -o exits)."""
        number = int(host[3:])
        path = "0" if host == via else f"0,1,{number}"  # via's port 1 to the switch, then the switch's port <number>
        cwd = os.path.join(self.workdir, "pkeys-direct")  # one directory for every call: a property test makes hundreds
        os.makedirs(cwd, exist_ok=True)
        proc = subprocess.run(["smpquery", "-D", "pkeys", path], cwd=cwd, env=self.env(via), capture_output=True, text=True,
                              timeout=COMMAND_LIMIT, check=False)
        assert proc.returncode == 0, f"smpquery -D pkeys {path}: rc {proc.returncode}: {proc.stderr.strip()}"
        return {word for line in proc.stdout.splitlines() if ":" in line
                for word in line.split(":", 1)[1].split() if word.startswith("0x") and int(word, 16)}

    def once(self, name: str, partitions_conf: str, options: str = "", host: str = "hca1") -> str:
        """OpenSM in once mode (-o: sweep, program the ports, exit) with this partitions.conf text; its log and stderr.

        The directory and log of a name are reused (emptied log) by the next run of that name.
        """
        cwd = os.path.join(self.workdir, f"once-{name}")
        os.makedirs(cwd, exist_ok=True)
        if os.path.exists(self.log_path(name)):
            os.remove(self.log_path(name))
        partitions = os.path.join(cwd, "partitions.conf")
        conf = os.path.join(cwd, "opensm.conf")
        with open(partitions, "w", encoding="utf-8") as handle:
            handle.write(partitions_conf)
        with open(conf, "w", encoding="utf-8") as handle:
            handle.write(f"{options}partition_config_file {partitions}\n")
        env = self.env(host, OSM_CACHE_DIR=cwd, OSM_TMP_DIR=cwd)
        argv = ["opensm", "-o", "-F", conf, "-g", PORT_GUIDS[host], "-f", self.log_path(name), "--dump_files_dir", cwd]
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMAND_LIMIT * 3, check=False)
        assert proc.returncode == 0, f"opensm -o: rc {proc.returncode}: {proc.stdout[-1000:]} {proc.stderr[-1000:]}"
        return self.log(name) + proc.stdout + proc.stderr

    def wait_for_pkeys(self, expected: dict, timeout: float = 15) -> dict:
        """Poll every port until its table is expected[port] ({host: set of '0x....'}); the tables seen."""
        deadline = time.monotonic() + timeout
        while True:
            seen = {host: self.pkeys(PORT_GUIDS[host]) for host in expected}
            if seen == expected or time.monotonic() > deadline:
                return seen
            time.sleep(0.3)
