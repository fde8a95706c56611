# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A real LLDP fabric for tests: one real lldpd per switch and host, each in its own network namespace, cabled by veths.

    with LldpFabric(workdir) as f:          # builds DEFAULT_SPEC, waits until every link is seen from both ends
        f.neighbors_json0("node01")         # 'lldpcli -f json0 show neighbors' on node01, as text

Run as a script it records lldpcli's output for tests/unit/support/lldp_recorded/ (see SOURCES.md there):

    python tests/lldp/lldp_fabric.py record OUTDIR [--root ROOTFS]

Every node (switch or host) is a holder process, 'unshare --net --uts --mount sleep LIMIT', whose namespaces
the node's commands enter with 'nsenter -t PID'. The veths are created inside the namespaces (one end made in
one node's namespace, its peer placed straight into the other's), never in the host's initial namespace, so
no LLDP frame ever leaves the fabric. In each node's private mount namespace /run is bind-mounted from
WORKDIR/<node>/run (lldpd's pid file, its socket /run/lldpd.socket, its config /run/lldpd.conf and its own
privilege-separation chroot /run/lldpd all land there, unchanged from a packaged lldpd) and /sys is a fresh
sysfs, which shows the namespace's own interfaces. lldpcli runs inside the node's mount namespace too:
Debian's lldpcli is setuid _lldpd, and even for root it cannot reach a socket below pytest's 0700 tmp
directory by its host path. With root=ROOTFS (an unpacked Debian root, e.g. trixie's, for its lldpd), the
same is mounted below ROOTFS inside the namespace (plus /proc and /dev) and lldpd and lldpcli run chrooted
there; the root itself is never written to.

Interface MACs are fixed, 02:00:00:<node#>:00:<if#> (hex): node# counts the hosts, then the switches, in the
spec's order (DEFAULT_SPEC: node01..node04 = 01..04, leaf1 05, leaf2 06, spine1 07, spine2 08); if# counts the
node's interfaces in the order the links name them. So chassis ids (lldpd takes a MAC of the node) and host
port ids (a host's port id is its NIC's MAC) are the same in every run and recording.

Switches announce their ports by name ('configure lldp portidsubtype ifname', as Cumulus and SONiC do) and
the capabilities bridge and router; hosts keep lldpd's defaults (port id: the MAC). Every node sends every
tx_interval seconds with a TTL of tx_interval * tx_hold, so a neighbor that goes away is gone within seconds.

Nothing outlives the fabric: close() stops each lldpd by PID, kills by PID whatever is left in the fabric's
namespaces, then kills the holders; and each holder ('sleep') and each lldpd ('timeout') ends by itself
after limit seconds even if Python dies first. Needs root (namespaces, mounts, veths).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOOLS = ("unshare", "nsenter", "ip", "mount", "timeout", "chroot", "lldpd", "lldpcli")
# lldpd and lldpcli are in /usr/sbin, which a non-root PATH may lack
PATH = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"])
COMMAND_LIMIT = 10  # seconds any one command (ip, lldpcli, mount) may take
SOCKET = "/run/lldpd.socket"
CONFIG = "/run/lldpd.conf"

# Two leaves, two spines; node01..node03 with one NIC, node04 dual-rail (eth0 on leaf1, eth1 on leaf2).
DEFAULT_SPEC = {
    "switches": ["leaf1", "leaf2", "spine1", "spine2"],
    "hosts": ["node01", "node02", "node03", "node04"],
    "links": [
        ("leaf1", "swp51", "spine1", "swp1"),
        ("leaf1", "swp52", "spine2", "swp1"),
        ("leaf2", "swp51", "spine1", "swp2"),
        ("leaf2", "swp52", "spine2", "swp2"),
        ("node01", "eth0", "leaf1", "swp1"),
        ("node02", "eth0", "leaf1", "swp2"),
        ("node03", "eth0", "leaf2", "swp3"),
        ("node04", "eth0", "leaf1", "swp4"),
        ("node04", "eth1", "leaf2", "swp4"),
    ],
}


def missing_tools(root=None) -> list:
    """What this machine lacks to run the fabric (the tests fail, never skip, when this is not empty)."""
    missing = [tool for tool in TOOLS if shutil.which(tool, path=PATH) is None]
    if root is not None:
        missing += [f"{root}{path}" for path in ("/usr/sbin/lldpd", "/usr/sbin/lldpcli") if not os.path.exists(root + path)]
    if os.geteuid() != 0:
        missing.append("root (network namespaces, mounts, veths)")
    return missing


def _values(entry, key) -> list:
    found = entry.get(key) if isinstance(entry, dict) else None
    if isinstance(found, dict):
        found = [found]
    return found if isinstance(found, list) else []


def _first(entry, key) -> dict:
    items = _values(entry, key)
    return items[0] if items and isinstance(items[0], dict) else {}


def parse_neighbors(text: str) -> list:
    """'lldpcli -f json0 show neighbors' as [{interface, chassis, chassis_id, chassis_id_type, port_id, port_id_type,
    port_descr, capabilities (the enabled ones)}], one per neighbor, in lldpcli's order.

    json0: {"lldp": [{"interface": [{"name": "eth0", "chassis": [{"id": [{"type": "mac", "value": ...}],
    "name": [{"value": ...}], "capability": [{"type": "Bridge", "enabled": true}, ...]}], "port": [{"id":
    [{"type": "ifname", "value": "swp1"}], "descr": [{"value": ...}]}]}, ...]}]}; no neighbor: {"lldp": [{}]}.
    """
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("lldp"), list):
        raise ValueError(f"not lldpcli json0 output: {text[:200]!r}")
    found = []
    for block in data["lldp"]:
        for interface in _values(block, "interface"):
            chassis, port = _first(interface, "chassis"), _first(interface, "port")
            chassis_id, port_id = _first(chassis, "id"), _first(port, "id")
            found.append({
                "interface": interface.get("name"),
                "chassis": _first(chassis, "name").get("value"),
                "chassis_id": chassis_id.get("value"), "chassis_id_type": chassis_id.get("type"),
                "port_id": port_id.get("value"), "port_id_type": port_id.get("type"),
                "port_descr": _first(port, "descr").get("value"),
                "capabilities": sorted(item.get("type") for item in _values(chassis, "capability")
                                       if isinstance(item, dict) and item.get("enabled") in (True, "on")),
            })
    return found


def _run(argv, what: str, timeout: float = COMMAND_LIMIT) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False, env=dict(os.environ, PATH=PATH))
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{what}: no answer in {timeout} s ({' '.join(argv)})") from None
    if done.returncode != 0:
        raise AssertionError(f"{what}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[-1500:]} ({' '.join(argv)})")
    return done.stdout


def _net_ns(pid: int):
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


class LldpFabric:
    """Switches and hosts, each a network namespace with its own lldpd, cabled by veths as spec says."""

    def __init__(self, workdir, spec=None, *, root=None, limit: float = 240, tx_interval: int = 1, tx_hold: int = 3):
        self.workdir = os.path.abspath(str(workdir))
        self.spec = spec or DEFAULT_SPEC
        self.root = os.path.abspath(root) if root else None
        self.limit = int(limit)
        self.tx_interval = int(tx_interval)
        self.tx_hold = int(tx_hold)
        self.holders = {}  # node -> Popen of its 'unshare ... sleep'
        self.daemons = {}  # node -> Popen of its 'timeout LIMIT lldpd'
        self.up_seconds = None
        self.nodes = list(self.spec["hosts"]) + list(self.spec["switches"])
        self._macs = {}  # (node, ifname) -> MAC
        self._peer = {}  # (node, ifname) -> (node, ifname)
        for a, a_if, b, b_if in self.spec["links"]:
            for node, ifname in ((a, a_if), (b, b_if)):
                if node not in self.nodes:
                    raise ValueError(f"link {a}:{a_if} - {b}:{b_if}: {node} is neither a switch nor a host of the spec")
                if (node, ifname) in self._macs:
                    raise ValueError(f"{node}:{ifname} is cabled twice")
                count = sum(1 for key in self._macs if key[0] == node) + 1
                self._macs[(node, ifname)] = f"02:00:00:{self.nodes.index(node) + 1:02x}:00:{count:02x}"
            self._peer[(a, a_if)], self._peer[(b, b_if)] = (b, b_if), (a, a_if)

    # --- setup ---------------------------------------------------------------------------------
    def __enter__(self) -> "LldpFabric":
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def inside(self, node: str) -> list:
        """argv prefix that runs a command in node's namespaces (network, hostname, mounts)."""
        return ["nsenter", "--mount", "--net", "--uts", "-t", str(self.holders[node].pid), "--"]

    def _in_root(self, path: str) -> str:
        return (self.root or "") + path

    def start(self) -> None:
        missing = missing_tools(self.root)
        if missing:
            raise AssertionError(f"missing: {', '.join(missing)} (tools/bootstrap installs lldpd; the tests need root)")
        began = time.monotonic()
        os.makedirs(self.workdir, exist_ok=True)
        for node in self.nodes:
            run = os.path.join(self.workdir, node, "run")
            os.makedirs(run)
            self.holders[node] = subprocess.Popen(["unshare", "--net", "--uts", "--mount", "--propagation", "private", "sleep", str(self.limit)],
                                                  stdin=subprocess.DEVNULL, start_new_session=True, env=dict(os.environ, PATH=PATH))
        for node in self.nodes:
            self._wait_holder(node)
            self._mounts(node)
        for a, a_if, b, b_if in self.spec["links"]:
            _run(self.inside(a) + ["ip", "link", "add", a_if, "address", self._macs[(a, a_if)], "type", "veth", "peer", "name", b_if,
                                   "address", self._macs[(b, b_if)], "netns", str(self.holders[b].pid)], f"veth {a}:{a_if} - {b}:{b_if}")
        for node in self.nodes:
            for (owner, ifname) in self._macs:
                if owner == node:
                    _run(self.inside(node) + ["ip", "link", "set", ifname, "up"], f"{node}: ip link set {ifname} up")
        for node in self.nodes:
            self._start_lldpd(node)
        for node in self.nodes:  # lldpd makes its socket once it is set up (then runs lldpcli on its config)
            self.wait_for(lambda node=node: self._daemon_alive(node) and os.path.exists(os.path.join(self.workdir, node, "run", "lldpd.socket")),
                          f"{node}: lldpd's socket", timeout=COMMAND_LIMIT, interval=0.05)
        self.wait_for(self._all_links_seen, "every link seen from both ends", timeout=max(30, 6 * self.tx_interval * self.tx_hold))
        self.up_seconds = round(time.monotonic() - began, 2)

    def _wait_holder(self, node: str) -> None:
        holder = self.holders[node]
        sleep = os.path.realpath(shutil.which("sleep", path=PATH) or "/usr/bin/sleep")
        deadline = time.monotonic() + COMMAND_LIMIT
        while True:  # until unshare has made the namespaces, set mount propagation and exec'd sleep
            try:
                if os.path.realpath(os.readlink(f"/proc/{holder.pid}/exe")) == sleep:
                    return
            except OSError:
                pass
            if holder.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{node}: 'unshare --net --uts --mount sleep' did not start (rc {holder.poll()})")
            time.sleep(0.01)

    def _mounts(self, node: str) -> None:
        run = os.path.join(self.workdir, node, "run")
        steps = [["hostname", node], ["mount", "--bind", run, self._in_root("/run")], ["mount", "-t", "sysfs", "sysfs", self._in_root("/sys")]]
        if self.root:
            steps += [["mount", "-t", "proc", "proc", self._in_root("/proc")], ["mount", "--bind", "/dev", self._in_root("/dev")]]
        for step in steps:
            _run(self.inside(node) + step, f"{node}: {' '.join(step)}")
        lines = [f"configure lldp tx-interval {self.tx_interval}", f"configure lldp tx-hold {self.tx_hold}",
                 f"configure system hostname {node}"]
        if node in self.spec["switches"]:
            lines += ["configure lldp portidsubtype ifname", "configure system capabilities enabled bridge,router"]
        with open(os.path.join(run, "lldpd.conf"), "w", encoding="utf-8") as conf:
            conf.write("\n".join(lines) + "\n")

    def _start_lldpd(self, node: str) -> None:
        chroot = ["chroot", self.root] if self.root else []
        argv = self.inside(node) + ["timeout", str(self.limit)] + chroot + ["/usr/sbin/lldpd", "-d", "-u", SOCKET, "-O", CONFIG]
        with open(os.path.join(self.workdir, node, "lldpd.log"), "ab") as log:
            self.daemons[node] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                                  start_new_session=True, env=dict(os.environ, PATH=PATH))

    def _all_links_seen(self) -> bool:
        seen = {node: self.neighbors(node) for node in self.nodes}
        return all(any(n["interface"] == a_if and n["chassis"] == b for n in seen[a])
                   and any(n["interface"] == b_if and n["chassis"] == a for n in seen[b])
                   for a, a_if, b, b_if in self.spec["links"])

    # --- queries -------------------------------------------------------------------------------
    def log(self, node: str) -> str:
        try:
            with open(os.path.join(self.workdir, node, "lldpd.log"), encoding="utf-8", errors="replace") as log:
                return log.read()
        except OSError:
            return ""

    def _daemon_alive(self, node: str) -> bool:
        daemon = self.daemons.get(node)
        if daemon is not None and daemon.poll() is not None:
            raise AssertionError(f"{node}: lldpd exited (rc {daemon.returncode}): {self.log(node)[-1500:]}")
        return True

    def lldpcli(self, node: str, *args, fmt: str = "json0") -> str:
        """lldpcli -f fmt ARGS... against node's lldpd, as text (in node's mount namespace, chrooted with root)."""
        self._daemon_alive(node)
        chroot = ["chroot", self.root] if self.root else []
        return _run(self.inside(node) + chroot + ["/usr/sbin/lldpcli", "-u", SOCKET, "-f", fmt] + list(args), f"{node}: lldpcli {' '.join(args)}")

    def neighbors_json0(self, node: str) -> str:
        """'lldpcli -f json0 show neighbors' on node, as text."""
        return self.lldpcli(node, "show", "neighbors")

    def neighbors(self, node: str) -> list:
        return parse_neighbors(self.neighbors_json0(node))

    def sees(self, node: str, ifname: str, chassis: str) -> bool:
        """Whether node's lldpd has the neighbor named chassis (a system name) on its interface ifname."""
        return any(n["interface"] == ifname and n["chassis"] == chassis for n in self.neighbors(node))

    def mac(self, node: str, ifname: str) -> str:
        """The fixed MAC of node's interface ifname (02:00:00:<node#>:00:<if#>)."""
        return self._macs[(node, ifname)]

    def peer(self, node: str, ifname: str) -> tuple:
        """(node, ifname) at the other end of node's interface ifname."""
        return self._peer[(node, ifname)]

    def version(self) -> str:
        """The version of the lldpd this fabric runs ('1.0.16'), from 'lldpd -v' (in the root, with root)."""
        chroot = ["chroot", self.root] if self.root else []
        return _run(chroot + ["/usr/sbin/lldpd", "-v"], "lldpd -v").strip()

    def wait_for(self, pred, what: str, timeout: float = 10, interval: float = 0.2):
        """Call pred() until it returns something true (returned); AssertionError naming what after timeout s."""
        deadline = time.monotonic() + timeout
        while True:
            got = pred()
            if got:
                return got
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {timeout} s: {what}")
            time.sleep(interval)

    # --- faults ----------------------------------------------------------------------------------
    def unlink(self, host: str, nic: str) -> None:
        """Pull host's cable: its NIC down (the veth's peer, the switch port, loses its carrier)."""
        _run(self.inside(host) + ["ip", "link", "set", nic, "down"], f"{host}: ip link set {nic} down")

    def relink(self, host: str, nic: str) -> None:
        _run(self.inside(host) + ["ip", "link", "set", nic, "up"], f"{host}: ip link set {nic} up")

    # --- teardown --------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop every lldpd, then everything else in the fabric's namespaces, then the holders; all by PID."""
        for proc in self.daemons.values():  # timeout passes SIGTERM on to lldpd
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.daemons.values():
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        namespaces = {_net_ns(proc.pid) for proc in self.holders.values() if proc.poll() is None} - {None, _net_ns(os.getpid())}
        if namespaces:
            holders = {proc.pid for proc in self.holders.values()}
            for entry in os.listdir("/proc"):
                if entry.isdigit() and int(entry) not in holders and _net_ns(int(entry)) in namespaces:
                    try:
                        os.kill(int(entry), signal.SIGKILL)
                    except OSError:
                        pass
        for proc in self.holders.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=5)
        self.daemons, self.holders = {}, {}


# --- recording ---------------------------------------------------------------------------------------
# what record() writes: name -> (node, lldpcli arguments after -f FORMAT, format)
RECORDINGS = {
    "neighbors-json0-single-nic.json": ("node01", ("show", "neighbors"), "json0"),
    "neighbors-json0-dual-rail.json": ("node04", ("show", "neighbors"), "json0"),
    "neighbors-json0-leaf.json": ("leaf1", ("show", "neighbors"), "json0"),
    "neighbors-json0-none.json": (None, ("show", "neighbors"), "json0"),
    "neighbors-json-single-nic.json": ("node01", ("show", "neighbors"), "json"),
    "neighbors-json-dual-rail.json": ("node04", ("show", "neighbors"), "json"),
    "neighbors-json-leaf.json": ("leaf1", ("show", "neighbors"), "json"),
    "neighbors-json-none.json": (None, ("show", "neighbors"), "json"),
    "chassis-json0-host.json": ("node01", ("show", "chassis"), "json0"),
    "chassis-json0-leaf.json": ("leaf1", ("show", "chassis"), "json0"),
}


def record(outdir: str, root=None) -> None:
    """Write RECORDINGS into outdir from DEFAULT_SPEC (and, for 'none', a lone host with an unplugged NIC)."""
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lldp-record-") as tmp:
        with LldpFabric(os.path.join(tmp, "fabric"), root=root) as fabric:
            version = fabric.version()
            for name, (node, args, fmt) in RECORDINGS.items():
                if node:
                    _write(outdir, name, fabric.lldpcli(node, *args, fmt=fmt))
        lone = {"switches": ["leaf1"], "hosts": ["node01"], "links": [("node01", "eth0", "leaf1", "swp1")]}
        with LldpFabric(os.path.join(tmp, "lone"), lone, root=root) as fabric:
            fabric.unlink("node01", "eth0")
            fabric.wait_for(lambda: not fabric.neighbors("node01"), "node01 without a neighbor", timeout=15)
            for name, (node, args, fmt) in RECORDINGS.items():
                if not node:
                    _write(outdir, name, fabric.lldpcli("node01", *args, fmt=fmt))
    print(f"recorded lldpd {version} into {outdir}: {', '.join(sorted(RECORDINGS))}")


def _write(outdir: str, name: str, text: str) -> None:
    json.loads(text)  # lldpcli's output is JSON, or the recording is wrong
    with open(os.path.join(outdir, name), "w", encoding="utf-8") as out:
        out.write(text if text.endswith("\n") else text + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record lldpcli's JSON output from the default fabric into OUTDIR")
    rec.add_argument("outdir")
    rec.add_argument("--root", help="an unpacked Debian root (e.g. trixie) whose lldpd and lldpcli to run, chrooted")
    args = parser.parse_args(argv)
    record(args.outdir, args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
