# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real Slurm controller of three Debian releases, started on a topology file, for tests.

    with Controller("bookworm", tmp_path, ["n01", "n02"], "topology/tree",
                    {"topology.conf": "SwitchName=s1 Nodes=n[01-02]\\n"}) as ctld:
        print(ctld.show_topology())

bookworm is the host's own slurmctld 22.05 (Debian 12: apt-get install slurmctld slurm-client munge, as
tools/bootstrap does); trixie is slurmctld 24.11 (Debian 13) in a trixie root built once by
tests/support/trixie_root.py and entered with unshare --mount + chroot, the workdir bind-mounted at
/srv/harness; sid is slurmctld 26.05 (Debian unstable: neither Debian 13 nor trixie-backports has a Slurm
>= 25.05, the first that reads topology.yaml) in a sid root made and entered the same way.
Each Controller has its own munged (its own random key and socket: AuthInfo=socket=...) and its own
slurmctld -D on a free loopback port, both children of this process, with slurm.conf, the given files
(topology.conf, topology.yaml, ...) beside it and every state, spool, pid and log file in the workdir:
nothing depends on, or touches, a system munge or slurmctld service. No slurmd runs: the nodes are
declared with NodeAddr=127.0.0.1 and stay in state UNKNOWN/DOWN, which slurmctld accepts.

Every process is bounded like tests/ib/ibsim_fabric.py's: a timer kills each daemon by PID after
PROCESS_LIMIT seconds, close() (the context manager's exit) stops them by PID, and every command runs with
a timeout. When slurmctld exits while starting (it refuses the configuration: a fatal() of the topology
plugin on a duplicate or unknown switch, an unparsable line, a missing topology.conf after 60 s of
retries, a plugin the release lacks) the start raises Refused with slurmctld's log, so a test can assert
the refusal; probe() returns the same without raising. A node the topology names but slurm.conf does not
declare, or a declared node under no switch, is no refusal: see probe(). Missing programs (or no root for
trixie and sid) raise AssertionError with what to install: the tests fail, never skip.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
SUPPORT = os.path.join(os.path.dirname(HERE), "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)

import bounded  # noqa: E402  pylint: disable=wrong-import-position
import trixie_root  # noqa: E402  pylint: disable=wrong-import-position

RELEASES = ("bookworm", "trixie", "sid")
# The releases the topology.conf forms and tests run on (sid's slurmctld is for topology.yaml).
CONF_RELEASES = ("bookworm", "trixie")
# The trixie root's packages (lldpd is for another test that shares the root).
TRIXIE_PACKAGES = ("slurmctld", "slurm-client", "munge", "lldpd")
# Debian unstable's Slurm (26.05: topology.yaml, new in 25.05, is in no release of Debian 13 or trixie-backports).
SID_PACKAGES = ("slurmctld", "slurm-client", "munge")
# The releases that run chrooted in a root of tests/support/trixie_root.py: {release: (suite, packages)}.
ROOTS = {"trixie": ("trixie", TRIXIE_PACKAGES), "sid": ("sid", SID_PACKAGES)}
BOOKWORM_PACKAGES = ("slurmctld", "slurm-client", "munge")
TOOLS = ("slurmctld", "scontrol", "munged")
PROCESS_LIMIT = 180  # seconds munged or slurmctld may live
COMMAND_LIMIT = 20  # seconds any scontrol may take
START_LIMIT = 90  # seconds slurmctld may take to answer scontrol ping (22.05 retries a missing topology.conf for 60 s)
INSIDE = "/srv/harness"  # where a root (trixie, sid) sees the workdir (trixie_root.MOUNT_POINTS)
PATH = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"])
CHROOT_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


class Refused(AssertionError):
    """slurmctld exited while starting; log is its log file (or its output when it wrote no log)."""

    def __init__(self, release: str, returncode, log: str):
        self.release = release
        self.returncode = returncode
        self.log = log
        super().__init__(f"slurmctld ({release}) exited {returncode} while starting; its log:\n{log[-4000:]}")


def missing_tools(release: str) -> list:
    """What this machine lacks for release's controller (the tests fail, never skip, when not empty)."""
    if release == "bookworm":
        return [tool for tool in TOOLS if shutil.which(tool, path=PATH) is None]
    if release in ROOTS:
        return trixie_root.missing_tools()
    raise ValueError(f"release {release!r}: one of {', '.join(RELEASES)}")


def require(release: str) -> None:
    """AssertionError naming what to install when release's controller cannot run here."""
    missing = missing_tools(release)
    if release == "bookworm":
        assert not missing, (f"missing: {', '.join(missing)} (tools/bootstrap installs the Debian 12 packages "
                             f"{' '.join(BOOKWORM_PACKAGES)})")
    else:
        assert not missing, (f"missing for the {release} root: {', '.join(missing)} (tools/bootstrap installs mmdebstrap and zstd; "
                             "the root is built as root)")


def trixie_root_dir() -> str:
    """The unpacked trixie root with TRIXIE_PACKAGES (built once, cached: tests/support/trixie_root.py)."""
    return root_dir("trixie")


def root_dir(release: str) -> str:
    """The unpacked root of a release of ROOTS with its packages (built once, cached: tests/support/trixie_root.py)."""
    suite, packages = ROOTS[release]
    return trixie_root.ensure_root(packages, suite)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def package_versions(release: str) -> dict:
    """{package: version} of the release's slurmctld, slurm-client and munge (dpkg-query, in its root for trixie, sid)."""
    argv = ["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *BOOKWORM_PACKAGES]
    if release in ROOTS:
        argv = ["chroot", root_dir(release), *argv]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_LIMIT, check=False)
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)


# --- scontrol show topology ---------------------------------------------------------------------

_PAIR = re.compile(r"(\w+)=(\S*)")


def parse_topology(text: str) -> list:
    """scontrol show topology's records: one dict per line of Key=Value pairs (SwitchName/BlockName first).

    22.05 and 24.11 (tree) print `SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=n[01-02]`; 24.11's block plugin
    prints `BlockName=b1 BlockIndex=0 Nodes=n[01-02] BlockSize=2`. A line without Key=Value (a message such
    as "Topology plugin may not be configured") is not a record.
    """
    records = []
    for line in text.splitlines():
        pairs = _PAIR.findall(line)
        if pairs:
            records.append(dict(pairs))
    return records


def expand_hostlist(expr: str) -> list:
    """Slurm's hostlist expression (n[01-03,07],m1) as names; enough for the tests' node names."""
    names = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", expr or ""):
        match = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", part)
        if not match:
            names.append(part)
            continue
        head, ranges, tail = match.groups()
        for item in ranges.split(","):
            lo, _dash, hi = item.partition("-")
            hi = hi or lo
            width = len(lo)
            names.extend(f"{head}{number:0{width}d}{tail}" for number in range(int(lo), int(hi) + 1))
    return names


# --- the controller ------------------------------------------------------------------------------

class Controller:
    """munged and slurmctld -D of one release on a slurm.conf with nodes, topology_plugin and files."""

    def __init__(self, release: str, workdir, nodes: list, topology_plugin: str = "", files: dict = None,
                 extra_conf: str = "", debug: str = "debug"):
        if release not in RELEASES:
            raise ValueError(f"release {release!r}: one of {', '.join(RELEASES)}")
        self.release = release
        self.workdir = os.path.abspath(str(workdir))
        self.nodes = list(nodes)
        self.topology_plugin = topology_plugin
        self.files = dict(files or {})
        self.extra_conf = extra_conf
        self.debug = debug
        self.root = ""
        self.processes = {}
        self.timers = []
        self._rundir = ""
        self.port = 0

    # --- paths: as this process sees them, and as the daemons do ---------------------------------
    def host(self, *parts: str) -> str:
        return os.path.join(self.workdir, *parts)

    def inner(self, *parts: str) -> str:
        return os.path.join(INSIDE if self.release in ROOTS else self.workdir, *parts)

    @property
    def conf(self) -> str:
        """slurm.conf's path for the daemons and scontrol (topology.conf and topology.yaml are beside it)."""
        return self.inner("etc", "slurm.conf")

    def _munge_socket(self) -> tuple:
        """(host path, daemon path) of munged's socket: a short directory, well below sun_path's 108 bytes."""
        if self.release in ROOTS:
            return self.host("munge", "munge.socket"), self.inner("munge", "munge.socket")
        if not self._rundir:
            self._rundir = tempfile.mkdtemp(prefix="slurmh-", dir="/tmp")
        path = os.path.join(self._rundir, "munge.socket")
        return path, path

    def slurm_conf(self) -> str:
        lines = [
            "# written by tests/slurm/slurmctld_harness.py",
            "ClusterName=harness",
            f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)",
            f"SlurmctldPort={self.port}",
            f"SlurmdPort={free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self._munge_socket()[1]}",
            f"StateSaveLocation={self.inner('state')}",
            f"SlurmdSpoolDir={self.inner('spool')}",
            f"SlurmctldPidFile={self.inner('slurmctld.pid')}",
            f"SlurmdPidFile={self.inner('slurmd.pid')}",
            f"SlurmctldLogFile={self.inner('slurmctld.log')}",
            f"SlurmctldDebug={self.debug}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "ReturnToService=2",
            "MpiDefault=none",
            "MailProg=/bin/true",
        ]
        if self.topology_plugin:
            lines.append(f"TopologyPlugin={self.topology_plugin}")
        if self.extra_conf:
            lines.append(self.extra_conf.rstrip("\n"))
        lines += [f"NodeName={node} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN" for node in self.nodes]
        if self.nodes:
            lines.append("PartitionName=all Nodes=ALL Default=YES State=UP MaxTime=INFINITE")
        return "\n".join(lines) + "\n"

    def _write(self) -> None:
        for sub in ("etc", "state", "spool", "munge", "out"):
            os.makedirs(self.host(sub), mode=0o755, exist_ok=True)  # munged wants its socket's directory searchable
        self.port = free_port()
        with open(self.host("etc", "slurm.conf"), "w", encoding="utf-8") as handle:
            handle.write(self.slurm_conf())
        for name, text in self.files.items():
            with open(self.host("etc", name), "w", encoding="utf-8") as handle:
                handle.write(text)
        key = self.host("munge", "munge.key")
        with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(os.urandom(1024))

    # --- processes ---------------------------------------------------------------------------------
    def argv(self, *argv: str) -> list:
        """argv as this release runs it: the host's program, or its root's (chroot, workdir bound)."""
        if self.release in ROOTS:
            return trixie_root.chroot_argv(self.root, list(argv), {self.workdir: INSIDE})
        return list(argv)

    def env(self) -> dict:
        return dict(os.environ, LC_ALL="C", SLURM_CONF=self.conf,
                    PATH=CHROOT_PATH if self.release in ROOTS else PATH)

    def _spawn(self, name: str, argv: list) -> subprocess.Popen:
        proc = bounded.spawn(self.argv(*argv), self.host("out", f"{name}.txt"), PROCESS_LIMIT, self.timers, cwd=self.workdir,
                             env=self.env(), stdin=subprocess.DEVNULL)
        self.processes[name] = proc
        return proc

    def output(self, name: str) -> str:
        try:
            with open(self.host("out", f"{name}.txt"), encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except FileNotFoundError:
            return ""

    def log(self) -> str:
        """slurmctld's log file (SlurmctldLogFile), or what it printed when it wrote none."""
        try:
            with open(self.host("slurmctld.log"), encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except FileNotFoundError:
            text = ""
        return text or self.output("slurmctld")

    def _start_munged(self, timeout: float = 15) -> None:
        host_socket, socket_path = self._munge_socket()
        self._spawn("munged", ["munged", "--foreground", "--force", f"--socket={socket_path}",
                               f"--key-file={self.inner('munge', 'munge.key')}",
                               f"--log-file={self.inner('munge', 'munged.log')}",
                               f"--pid-file={self.inner('munge', 'munged.pid')}",
                               f"--seed-file={self.inner('munge', 'munged.seed')}"])
        deadline = time.monotonic() + timeout
        while not os.path.exists(host_socket):
            proc = self.processes["munged"]
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"munged ({self.release}) did not make its socket in {timeout} s "
                                     f"(rc {proc.poll()}): {self.output('munged')[-2000:]}")
            time.sleep(0.05)

    def start(self, timeout: float = START_LIMIT) -> "Controller":
        """munged, then slurmctld -D; returns once scontrol ping answers UP; Refused when slurmctld exits first."""
        require(self.release)
        if self.release in ROOTS:
            self.root = root_dir(self.release)
        self._write()
        try:
            self._start_munged()
            proc = self._spawn("slurmctld", ["slurmctld", "-D", "-f", self.conf])
            deadline = time.monotonic() + timeout
            last = None
            while True:
                if proc.poll() is not None:
                    raise Refused(self.release, proc.returncode, self.log())
                try:
                    last = self.scontrol("ping", timeout=10)
                except subprocess.TimeoutExpired as exc:
                    # 24.11 accepts connections before it has read topology.conf, and may hold them
                    last = subprocess.CompletedProcess(exc.cmd, None, "", "scontrol ping: no answer in 10 s")
                if proc.poll() is None and last.returncode == 0 and " is UP" in last.stdout:
                    return self
                if time.monotonic() > deadline:
                    raise AssertionError(f"slurmctld ({self.release}) did not answer scontrol ping in {timeout} s: "
                                         f"{last.stdout.strip()} {last.stderr.strip()}\nits log:\n{self.log()[-4000:]}")
                time.sleep(0.2)
        except BaseException:
            self.close()
            raise

    def stop(self, name: str, sig=signal.SIGTERM, timeout: float = 10):
        proc = self.processes.get(name)
        if proc is None:
            return None
        return bounded.stop(proc, sig, timeout)

    def close(self) -> None:
        """slurmctld, then munged, by PID; the timers; the socket directory."""
        for name in ("slurmctld", "munged"):
            self.stop(name)
        for timer in self.timers:
            timer.cancel()
        if self._rundir:
            shutil.rmtree(self._rundir, ignore_errors=True)
            self._rundir = ""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # --- commands ----------------------------------------------------------------------------------
    def scontrol(self, *args: str, timeout: float = COMMAND_LIMIT) -> subprocess.CompletedProcess:
        """scontrol of the same release, on this controller's slurm.conf, bounded by timeout."""
        return subprocess.run(self.argv("scontrol", *args), cwd=self.workdir, env=self.env(), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def show_topology(self) -> str:
        """scontrol show topology's text (its stdout; stderr appended when it wrote only there)."""
        proc = self.scontrol("show", "topology")
        return proc.stdout if proc.stdout.strip() else proc.stdout + proc.stderr

    def alive(self) -> bool:
        proc = self.processes.get("slurmctld")
        return proc is not None and proc.poll() is None


# --- how a release reacts to a configuration ---------------------------------------------------

# slurmctld's log lines about the topology: its plugin's own lines, and fatal/error/warning lines that are not
# about a fresh state directory or the MPI plugins (22.05 logs pmix errors on every start).
_TOPOLOGY_LINE = re.compile(r"(fatal|error|warning|topology|switch|block)", re.I)
# Noise: lines about other plugins and files, and slurmctld's check of the machine's clock at start ("error: High
# latency for 1000 calls to gettimeofday(): 1204 microseconds", seen in make test with the machine 99 % busy): a
# statement about the load, not about the topology.
_NOISE = re.compile(r"(mpi|pmix|state file|state save file|create_mmap_buf|MailProg|Cray/Aries|switch/none|"
                    r"_log_switches: \t|clustername|High latency for \d+ calls to gettimeofday\(\))", re.I)


def topology_lines(log: str) -> list:
    """The lines of a slurmctld log about the topology (and every fatal line), without the timestamps."""
    lines = []
    for line in log.splitlines():
        if _TOPOLOGY_LINE.search(line) and not _NOISE.search(line):
            lines.append(re.sub(r"^\[[^\]]*\] ", "", line))
    return lines


@dataclass
class Probe:
    """What slurmctld did with a configuration: started (and its topology) or refused (and why)."""
    release: str
    started: bool
    returncode: object = None
    topology: str = ""
    log: str = ""

    @property
    def notable(self) -> list:
        return topology_lines(self.log)


def probe(release: str, workdir, nodes: list, topology_plugin: str = "", files: dict = None,
          settle: float = 1.0, **kwargs) -> Probe:
    """Start release's controller on the configuration and report: refused (exit, log) or started (topology, log).

    This is how a test learns how a release reacts to, say, a topology.conf naming an undeclared node
    (both releases start, log `error: _find_node_record: lookup failure for node "n05"` and the node
    under `Invalid hostnames in switch configuration`, and show the switch's configured Nodes= string) or
    a declared node under no switch (both start, log `switches lack access to 1 nodes: n05`, and the
    node is in no record of scontrol show topology). settle: seconds to wait after the controller
    answers, so that messages logged just after start-up are in the log too.
    """
    ctld = Controller(release, workdir, nodes, topology_plugin, files, **kwargs)
    try:
        ctld.start()
    except Refused as refused:
        return Probe(release, False, refused.returncode, "", refused.log)
    try:
        time.sleep(settle)
        topology = ctld.show_topology()
        return Probe(release, ctld.alive(), None, topology, ctld.log())
    finally:
        ctld.close()


# --- the configurations the tests use and the recordings hold ---------------------------------

NODES = ["n01", "n02", "n03", "n04"]
TREE = "SwitchName=leaf1 Nodes=n[01-02]\nSwitchName=leaf2 Nodes=n[03-04]\nSwitchName=spine1 Switches=leaf[1-2]\n"
# topology/block (24.11 only): BlockSizes' first value is the planning base block size (every block needs at
# least that many nodes), each further value that base times a power of two: 2,4 also makes the aggregated
# block b[1-2] of 4 nodes. Without BlockSizes the base is the first block's node count and levels 0-4
# (base x 1, 2, 4, 8, 16) are allowed.
BLOCK = "BlockName=b1 Nodes=n[01-02]\nBlockName=b2 Nodes=n[03-04]\nBlockSizes=2,4\n"
# topology.yaml as Slurm 25.05 reads it (doc/man/man5/topology.yaml.5 there). 24.11 has no reader for it:
# with the file alone it runs topology/default; beside a topology.conf and TopologyPlugin it is ignored.
# sid's 26.05 reads it from beside slurm.conf, with or without a TopologyPlugin, and then ignores topology.conf.
YAML = """- topology: fabric
  cluster_default: true
  tree:
    switches:
      - switch: leaf1
        nodes: n[01-02]
      - switch: leaf2
        nodes: n[03-04]
      - switch: spine1
        children: leaf[1-2]
"""
# A block topology in topology.yaml: BLOCK's blocks and BlockSizes.
YAML_BLOCK = """- topology: blocks
  cluster_default: true
  block:
    block_sizes:
      - 2
      - 4
    blocks:
      - block: b1
        nodes: n[01-02]
      - block: b2
        nodes: n[03-04]
"""
# Two topologies, the tree the cluster default: scontrol show topology prints the default one only (26.05),
# scontrol show topology <name> each; a partition picks one with Topology=<name>.
YAML_TWO = YAML + YAML_BLOCK.replace("cluster_default: true", "cluster_default: false")
# The first lines of the collection's generated topology.yaml (a comment, then a document start).
YAML_HEADER = "# rdma.fabric: topology.yaml managed by Ansible\n---\n"
# form: (releases, nodes, TopologyPlugin, files)
FORMS = {
    "tree": (CONF_RELEASES, NODES, "topology/tree", {"topology.conf": TREE}),
    "tree-undeclared-node": (CONF_RELEASES, NODES, "topology/tree", {"topology.conf": TREE.replace("n[03-04]", "n[03-05]")}),
    "tree-node-without-switch": (CONF_RELEASES, NODES + ["n05"], "topology/tree", {"topology.conf": TREE}),
    "none": (CONF_RELEASES, NODES, "", {}),
    "block": (("trixie",), NODES, "topology/block", {"topology.conf": BLOCK}),
    "block-base-only": (("trixie",), NODES, "topology/block", {"topology.conf": BLOCK.replace("2,4", "2")}),
    "block-undeclared-node": (("trixie",), NODES, "topology/block",
                              {"topology.conf": BLOCK.replace("n[03-04]", "n[03-05]")}),
    "block-node-without-block": (("trixie",), NODES + ["n05"], "topology/block", {"topology.conf": BLOCK}),
    "yaml": (("trixie", "sid"), NODES, "", {"topology.yaml": YAML}),
    "yaml-block": (("sid",), NODES, "", {"topology.yaml": YAML_BLOCK}),
    "yaml-two": (("sid",), NODES, "", {"topology.yaml": YAML_TWO}),
    "yaml-node-without-switch": (("sid",), NODES + ["n05"], "", {"topology.yaml": YAML}),
}
RECORD_COMMAND = "sudo .venv/bin/python tests/slurm/slurmctld_harness.py record tests/unit/support/slurm_recorded"


def record(outdir: str) -> list:
    """Write <release>-<form>.txt (scontrol show topology's stdout) for every form, and SOURCES.md, into outdir."""
    os.makedirs(outdir, exist_ok=True)
    written = []
    rows = []
    for release in RELEASES:
        for form, (releases, nodes, plugin, files) in FORMS.items():
            if release not in releases:
                continue
            with tempfile.TemporaryDirectory(prefix=f"slurm-record-{release}-{form}-") as workdir:
                with Controller(release, workdir, nodes, plugin, files) as ctld:
                    time.sleep(1)
                    proc = ctld.scontrol("show", "topology")
                    lines = topology_lines(ctld.log())
            assert proc.returncode == 0, f"{release} {form}: scontrol show topology exited {proc.returncode}: {proc.stderr}"
            name = f"{release}-{form}.txt"
            with open(os.path.join(outdir, name), "w", encoding="utf-8") as handle:
                handle.write(proc.stdout)
            written.append(os.path.join(outdir, name))
            logged = [line for line in lines if re.search(r"(fatal|error|warning)", line, re.I) and not line.startswith("debug")]
            rows.append(f"| `{name}` | {release} | {plugin or '(none)'} | {', '.join(files) or '(none)'} | "
                        f"{len(proc.stdout.splitlines())} | {'<br>'.join(f'`{line}`' for line in logged) or '-'} | "
                        f"{('`' + proc.stderr.strip() + '`') if proc.stderr.strip() else '-'} |")
    versions = {release: package_versions(release) for release in RELEASES}
    text = [
        "# Recorded `scontrol show topology` output",
        "",
        "Real output of the Slurm controllers of Debian 12, Debian 13 and Debian unstable (sid), for the unit tests of a",
        "topology parser.",
        "Each `<release>-<form>.txt` is the standard output of `scontrol show topology` (exit code 0 in every case),",
        "as the same release's scontrol printed it, against that release's slurmctld started by",
        "`tests/slurm/slurmctld_harness.py` (slurmctld -D, its own munged, no slurmd: the nodes are declared with",
        "NodeAddr=127.0.0.1 and are in state UNKNOWN) on the nodes, TopologyPlugin and files of `FORMS` there.",
        "`tests/slurm/test_slurmctld_harness.py` checks that the live output still equals these files.",
        "",
        "Recorded (as root; trixie and sid run in a Debian 13 and a Debian unstable root built with mmdebstrap,",
        "tests/support/trixie_root.py; sid because neither Debian 13 nor trixie-backports has a Slurm >= 25.05, the",
        "first that reads topology.yaml) with:",
        "",
        f"    {RECORD_COMMAND}",
        "",
        "Packages:",
        "",
    ]
    for release in RELEASES:
        text.append(f"- {release}: " + ", ".join(f"{name} {version}" for name, version in sorted(versions[release].items())))
    text += [
        "",
        "Every form's nodes are n01-n04 (n01-n05 in the `*-without-*` forms). The files:",
        "",
        "- `tree`: topology.conf",
        "",
        *["      " + line for line in TREE.splitlines()],
        "",
        "- `tree-undeclared-node`: the same with `Nodes=n[03-05]` on leaf2 (n05 is not a NodeName).",
        "- `tree-node-without-switch`: `tree`, with n05 declared in slurm.conf but under no switch.",
        "- `none`: no TopologyPlugin and no topology file (22.05: topology/none; 24.11: topology/default).",
        "- `block` (24.11 only; 22.05 has no topology/block and refuses to start: `fatal: Failed to initialize",
        "  topology plugin`): topology.conf",
        "",
        *["      " + line for line in BLOCK.splitlines()],
        "",
        "- `block-base-only`: the same with `BlockSizes=2` (no aggregated block).",
        "- `block-undeclared-node`, `block-node-without-block`: as for the tree.",
        "- `yaml` (24.11 and 26.05): no TopologyPlugin, a topology.yaml (the 25.05 form, one tree topology with",
        "  cluster_default: true) and no topology.conf. 24.11 does not read topology.yaml (it first appears in",
        "  Slurm 25.05): it runs topology/default, and the output is empty. 26.05 (sid) reads it from beside",
        "  slurm.conf and prints the tree (LinkSpeed=0 where topology.conf's tree has LinkSpeed=1):",
        "",
        *["      " + line for line in YAML.splitlines()],
        "",
        "- `yaml-block` (26.05 only): a block topology, BLOCK's blocks and BlockSizes:",
        "",
        *["      " + line for line in YAML_BLOCK.splitlines()],
        "",
        "- `yaml-two` (26.05 only): both topologies, the tree the cluster default (the block one with",
        "  `cluster_default: false`): `scontrol show topology` prints the default topology only;",
        "  `scontrol show topology blocks` prints the other.",
        "- `yaml-node-without-switch` (26.05 only): `yaml`, with n05 declared in slurm.conf but under no switch.",
        "",
        "| file | release | TopologyPlugin | files | lines | fatal/error/warning lines of slurmctld's log | scontrol stderr |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    with open(os.path.join(outdir, "SOURCES.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(text))
    return written


if __name__ == "__main__":
    # RECORD_COMMAND
    if len(sys.argv) != 3 or sys.argv[1] != "record":
        sys.exit("usage: slurmctld_harness.py record OUTDIR")
    for release_name in RELEASES:
        print(release_name, package_versions(release_name))
    for written_path in record(sys.argv[2]):
        print(written_path)
