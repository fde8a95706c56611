# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric_check role's InfiniBand checks against real OpenSM and infiniband-diags on ibsim (make ib).

The subnet_manager role renders opensm.conf and partitions.conf for hca1 (render only, once); each test starts its own
ibsim (tests/ib/net.fabric: one switch, five HCAs) with a console, and OpenSM with those files on hca1. Then the
fabric_check role runs with ansible-playbook on hca1..hca4, local hosts whose commands run as that simulated host
through a play-level environment of per-host variables (LD_PRELOAD of libumad2sim, IBSIM_SOCKNAME, SIM_HOST, and a
PATH that starts with tests/ib/sim-bin, whose ibping marks the server as ibsim wants it). fabric_check_ib is auto:
the hosts are found to be InfiniBand hosts by ibstat. Faults come through ibsim's console (Unlink) and through the
hosts' IPoIB connections. Every test fails, never skips, when OpenSM, ibsim, the diagnostics or libumad2sim are missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import ibsim_fabric
from ib_console import ConsoleFabric
from ibsim_fabric import PORT_GUIDS, UMAD2SIM

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SIM_BIN = os.path.join(HERE, "sim-bin")
PLAYBOOK_LIMIT = 120
HOSTS = ("hca1", "hca2", "hca3", "hca4")

# storage: hca2 and hca3 full, hca4 limited; backup: only hca5 (never in the play)
PARTITIONS = [
    {"name": "storage", "pkey": "0x0002", "ipoib": True, "mtu": 5, "members": [
        {"guid": PORT_GUIDS["hca2"], "membership": "full"}, {"guid": PORT_GUIDS["hca3"], "membership": "full"},
        {"guid": PORT_GUIDS["hca4"], "membership": "limited"}]},
    {"name": "backup", "pkey": "0x0003", "ipoib": True, "members": [{"guid": PORT_GUIDS["hca5"], "membership": "full"}]},
]
STORAGE = {"name": "storage", "parent": "ib0", "pkey": "0x8002", "transport_mode": "datagram"}
IPOIB = {
    "hca1": [{"name": "ib0", "ifname": "ib0", "transport_mode": "connected", "mtu": 65520}],
    "hca2": [{"name": "ib0", "ifname": "ib0"}, dict(STORAGE, mtu=4092)],
    "hca3": [{"name": "ib0", "ifname": "ib0"}, dict(STORAGE, mtu=4092)],
    "hca4": [{"name": "ib0", "ifname": "ib0"}, dict(STORAGE, mtu=2044)],
}


@pytest.fixture(autouse=True)
def tools_present():
    """Fail (not skip) on a machine without the simulator, OpenSM or the diagnostics."""
    missing = ibsim_fabric.missing_tools() + [tool for tool in ("ibstat", "saquery", "perfquery", "ibqueryerrors", "ibnetdiscover", "ibping")
                                              if not shutil.which(tool, path=ibsim_fabric.PATH)]
    assert not missing, f"missing: {', '.join(missing)} (tools/bootstrap installs opensm infiniband-diags ibsim-utils libumad2sim0)"


def run_play(workdir: str, inventory: dict, play: list, tag: str) -> tuple:
    """ansible-playbook on local hosts: (rc, output, {host: (ok, changed, failed)})."""
    paths = {}
    for kind, content in (("inventory", inventory), ("play", play)):
        paths[kind] = os.path.join(workdir, f"{kind}-{tag}.yml")
        with open(paths[kind], "w", encoding="utf-8") as handle:
            json.dump(content, handle)  # JSON is YAML
    env = dict(os.environ, PATH=ibsim_fabric.PATH, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_COLLECTIONS_PATH=os.environ.get("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections")))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", paths["inventory"], paths["play"]]
    proc = subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=PLAYBOOK_LIMIT, check=False)
    output = proc.stdout + proc.stderr
    recap = {name: tuple(int(value) for value in match) for name, *match in
             re.findall(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)", output, re.M)}
    return proc.returncode, output, recap


@pytest.fixture(scope="module")
def sm_files(tmp_path_factory):
    """opensm.conf and partitions.conf for hca1, rendered by the subnet_manager role (render only)."""
    workdir = str(tmp_path_factory.mktemp("subnet-manager"))
    etc = os.path.join(workdir, "etc")
    inventory = {"all": {"hosts": {"hca1": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable, "subnet_manager_manage_service": False,
        "subnet_manager_install": False, "subnet_manager_config_dir": etc, "subnet_manager_partitions": PARTITIONS,
        "subnet_manager_options": {"sm_priority": 10, "force_log_flush": True}}}}}
    play = [{"name": "subnet_manager, render only", "hosts": "all", "gather_facts": False, "roles": ["rdma.fabric.subnet_manager"]}]
    rc, output, _recap = run_play(workdir, inventory, play, "render")
    assert rc == 0, output
    return etc


def check(fabric: ConsoleFabric, workdir: str, etc: str, tag: str, sm_host: str, ipoib: dict = None, **extra) -> tuple:
    """fabric_check (IB only) on hca1..hca4 as the simulated hosts: (rc, output, recap, report text, report json).

    sm_host has subnet_manager_config_dir in the inventory (the agreement reads its partitions.conf there); it is in
    the play when it is one of hca1..hca4.
    """
    report_dir = os.path.join(workdir, f"report-{tag}")
    hosts = {}
    for host in HOSTS + ((sm_host,) if sm_host not in HOSTS else ()):
        hosts[host] = {
            "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
            "ib_env": {"LD_PRELOAD": UMAD2SIM, "IBSIM_SOCKNAME": fabric.sockname, "SIM_HOST": host, "LC_ALL": "C",
                       "PATH": os.pathsep.join([SIM_BIN, ibsim_fabric.PATH])},
            "fabric_check_ib_ipoib": (ipoib or IPOIB).get(host, []),
        }
    hosts[sm_host]["subnet_manager_config_dir"] = etc
    variables = {"fabric_check_roce": False, "fabric_check_ib": "auto", "fabric_check_report_dir": report_dir,
                 "fabric_check_timeout": 15, "fabric_check_ib_ping_count": 2}
    variables.update(extra)
    inventory = {"all": {"hosts": hosts, "vars": variables}}
    play = [{"name": "fabric_check on the simulated fabric", "hosts": ":".join(HOSTS), "gather_facts": False,
             "environment": "{{ ib_env }}", "roles": ["rdma.fabric.fabric_check"]}]
    rc, output, recap = run_play(workdir, inventory, play, tag)
    report, data = "", None
    if os.path.exists(os.path.join(report_dir, "fabric-check.md")):
        with open(os.path.join(report_dir, "fabric-check.md"), encoding="utf-8") as handle:
            report = handle.read()
        with open(os.path.join(report_dir, "fabric-check.json"), encoding="utf-8") as handle:
            data = json.load(handle)
    return rc, output, recap, report, data


def start(tmp_path, etc: str, sm_host: str) -> ConsoleFabric:
    """ibsim with a console, and OpenSM on sm_host with the role's files at -d0 (ibping's server is an SM to ibsim, and a
    master that polls it crashes umad2sim's receiver thread in it: ibsim-facts.md §2)."""
    fabric = ConsoleFabric(tmp_path / "fabric")
    os.makedirs(fabric.workdir)
    fabric.start()
    fabric.start_opensm("sm", sm_host, os.path.join(etc, "opensm.conf"), "-d0")
    fabric.wait_for_sm(guid=PORT_GUIDS[sm_host], host="hca3")
    fabric.wait_for("hca3", ["smpquery", "-G", "pkeys", PORT_GUIDS["hca4"]], " 0x0002 ")
    return fabric


def test_healthy_fabric_passes_and_is_drawn(tmp_path, sm_files):
    """OpenSM on hca5, outside the play (fabric_check_ib_sm_hosts names it): under ibsim an ibping to the SM's own port
    is handed to OpenSM's client, which it crashes; on real hardware the HCA answers it."""
    fabric = start(tmp_path, sm_files, "hca5")
    try:
        rc, output, recap, report, data = check(fabric, str(tmp_path), sm_files, "healthy", "hca5", fabric_check_ib_sm_hosts=["hca5"])
    finally:
        fabric.close()
    assert rc == 0 and all(recap[host][2] == 0 for host in HOSTS), output[-6000:]
    assert "**IB checks passed**: 4 ports on 4 hosts Active/LinkUp at 10 Gb/s" in report, report
    ib = data["ib"]
    assert ib["failures"] == [] and ib["agreement"] == []
    assert [(p["host"], p["guid"], p["state"], p["rate"]) for p in ib["ports"]] == [
        (host, PORT_GUIDS[host], "Active/LinkUp", 10) for host in HOSTS]
    assert [(s["name"], s["guid"], s["priority"], s["state"]) for s in ib["sms"]] == [(None, PORT_GUIDS["hca5"], 10, "MASTER")]
    assert {(k["host"], k["interface"], k["pkey"], k["membership"]) for k in ib["pkeys"]} >= {
        ("hca2", "ib0.8002", "0x8002", "ibsim0/1 full"), ("hca4", "ib0.8002", "0x8002", "ibsim0/1 limited"),
        ("hca1", "ib0", "0xffff", "ibsim0/1 full")}
    assert [(r["client"], r["server"], r["received"]) for r in ib["pings"]] == [
        ("hca1", "hca2", 2), ("hca2", "hca3", 2), ("hca3", "hca4", 2), ("hca4", "hca1", 2)], ib["pings"]
    assert ib["partition_sources"] == [f"hca5:{sm_files}/partitions.conf"]
    assert "They agree." in report
    # the picture: the switch and every HCA, each link with its ports and speed, nothing marked
    mermaid = report.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert re.search(r'^  n0\["rdma-fabric-sw1<br/>lid \d+ · 8 ports"\]:::switch$', mermaid, re.M), mermaid
    for number, host in enumerate(HOSTS, 1):
        assert re.search(rf'^  n\d+\(\["{host} · node{number} HCA-1<br/>lid \d+"\]\):::hca$', mermaid, re.M), mermaid
    assert re.search(r'^  n\d+\(\["node5 HCA-1<br/>lid \d+, SM MASTER, priority 10"\]\):::hca$', mermaid, re.M), mermaid  # not in the play
    assert len(re.findall(r'^  n0 ---\|"\d ↔ 1 · 4xSDR"\| n\d$', mermaid, re.M)) == 5, mermaid
    assert "linkStyle" not in mermaid and ":::down" not in mermaid.split("classDef down", 1)[1].split("\n", 1)[1]
    with open(os.path.join(str(tmp_path), "report-healthy", "fabric-check-ibnetdiscover.txt"), encoding="utf-8") as handle:
        saved = handle.read()
    assert saved.count('"rdma-fabric-sw1"') >= 5 and "Switch\t8" in saved


def test_link_down_missing_pkeys_and_counters_fail_naming_port_pkey_and_counter(tmp_path, sm_files):
    """Four faults at once, each named on its own line: hca4's link taken down through ibsim's console; hca3 uses a
    P_Key partitions.conf does not define (0x8005); hca2 uses one it defines for hca5 only (0x8003), so it is not in
    hca2's port table either; error counters set through the console, hca3's SymbolErrorCounter (above the threshold
    0) and the switch's PortRcvErrors on port 2 (3, under its own threshold 5, so not a failure). OpenSM runs on hca1,
    in the play: the role finds it with saquery -s and sminfo and reads hca1's partitions.conf (fabric_check_ib_sm_hosts
    empty); no ibping here."""
    ipoib = dict(IPOIB, hca2=IPOIB["hca2"] + [{"name": "backup", "parent": "ib0", "pkey": "0x8003"}],
                 hca3=IPOIB["hca3"] + [{"name": "other", "parent": "ib0", "pkey": "0x8005"}])
    fabric = start(tmp_path, sm_files, "hca1")
    try:
        fabric.console('PerformanceSet "hca3"[1] PortCounters.SymbolErrorCounter=50', "has been set to 50")
        fabric.console('PerformanceSet "sw1"[2] PortCounters.PortRcvErrors=3', "has been set to 3")
        fabric.console('Unlink "hca4"[1]')
        fabric.wait_for("hca4", ["ibstat"], "State: Down")
        rc, output, recap, report, data = check(fabric, str(tmp_path), sm_files, "faults", "hca1", ipoib, fabric_check_ib_ping_count=0,
                                                fabric_check_ib_error_thresholds={"PortRcvErrors": 5})
    finally:
        fabric.close()
    assert rc != 0 and recap["hca1"][2] == 1, output[-6000:]
    failures = data["ib"]["failures"]
    expected = [
        f"hca4 port ibsim0/1 ({PORT_GUIDS['hca4']}): Down/Polling, expected Active/LinkUp",
        "hca3 ib0.8005: P_Key 0x8005 is not in the P_Key table of its port (ibsim0/1: 0xffff 0x8002)",
        "hca2 ib0.8003: P_Key 0x8003 is not in the P_Key table of its port (ibsim0/1: 0xffff 0x8002)",
        "ib_pkey_undefined: hca3 ib0.8005 (P_Key 0x8005) uses a P_Key that hca1:",
        f"ib_port_not_member: hca2 ib0.8003 (P_Key 0x8003): hca1:{sm_files}/partitions.conf backup=0x0003 does not list the "
        f"host's port ({PORT_GUIDS['hca2']})",
        f"hca3 port ibsim0/1 ({PORT_GUIDS['hca3']}): SymbolErrorCounter 50 is above the threshold 0",
    ]
    for line in expected:
        assert any(failure.startswith(line) for failure in failures), (line, failures)
    assert len(failures) == len(expected), failures
    fatal = [line for line in output.splitlines() if line.startswith("[ERROR]: Task failed: Action failed: 6 IB problem(s): ")]
    assert fatal and all(line in fatal[0] for line in expected[:3]), output[-4000:]  # the play's own failure names them
    assert "**IB checks FAILED**: 6 problem(s)." in report
    assert "| rdma-fabric-sw1 port 2" not in report  # PortRcvErrors 3 is under its threshold 5
    mermaid = report.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert re.search(rf'^  x0\(\["hca4 · ibsim0/1 Down/Polling<br/>{PORT_GUIDS["hca4"]} · not in the fabric"\]\):::down$', mermaid, re.M), mermaid
    assert "node4 HCA-1" not in mermaid and len(re.findall(r"^  n0 ---", mermaid, re.M)) == 4
    red = [edge for index, edge in enumerate(re.findall(r"^  n0 ---.*$", mermaid, re.M)) if f"  linkStyle {index} stroke:#cc0000" in mermaid]
    assert red == ['  n0 ---|"3 ↔ 1 · 4xSDR · ⚠ SymbolErrorCounter 50"| n3'], mermaid


def test_saturated_error_counters_fail_whatever_the_threshold(tmp_path, sm_files):
    """A PortCounters error field at the top of its width stops there: hca3's LinkDownedCounter at 255 (8 bits) and the
    switch's PortXmitDiscards at 65535 (16 bits) on port 2, set through ibsim's console, with thresholds above those
    tops, so only saturation can fail them. The role names host, port, counter and 'saturated at N' (perfquery on hca3,
    ibqueryerrors for the switch); hca2's SymbolErrorCounter at 65534, one below its top and under its threshold, passes."""
    fabric = start(tmp_path, sm_files, "hca1")
    try:
        fabric.console('PerformanceSet "hca3"[1] PortCounters.LinkDownedCounter=255', "has been set to 255")
        fabric.console('PerformanceSet "sw1"[2] PortCounters.PortXmitDiscards=65535', "has been set to 65535")
        fabric.console('PerformanceSet "hca2"[1] PortCounters.SymbolErrorCounter=65534', "has been set to 65534")
        rc, output, recap, report, data = check(fabric, str(tmp_path), sm_files, "saturated", "hca1", fabric_check_ib_ping_count=0,
                                                fabric_check_ib_error_thresholds={"LinkDownedCounter": 1000, "PortXmitDiscards": 100000,
                                                                                  "SymbolErrorCounter": 100000})
    finally:
        fabric.close()
    assert rc != 0 and recap["hca1"][2] == 1, output[-6000:]
    failures = data["ib"]["failures"]
    assert failures == [
        f"hca3 port ibsim0/1 ({PORT_GUIDS['hca3']}): LinkDownedCounter saturated at 255, the top of its 8-bit PortCounters field: "
        "it can no longer count, so new errors would not show (clear it: perfquery -R)",
        "rdma-fabric-sw1 port 2 (0x0002c90300000100): PortXmitDiscards saturated at 65535, the top of its 16-bit PortCounters field: "
        "it can no longer count, so new errors would not show (clear it: perfquery -R)",
    ], failures
    assert "| LinkDownedCounter | 255 (saturated: it no longer counts) | 1000 |" in report, report
    assert "**IB checks FAILED**: 2 problem(s)." in report
