# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time rdma.fabric.gid_facts against ansible.builtin.ping on a lab VM with a full GID table.

    LAB_DIR=/work/main/.lab-a python3 benchmarks/gid_facts_bench.py [--host vm1] [--rounds 9]
        [--addresses 200] [--strategy configured|linear|both] [--json FILE]

What it does, in one run:
1. puts --addresses addresses on the host's data NIC (half IPv4 in 169.254.78.0/24,
   half IPv6 in fd00:77::/64, added with `ip -batch`, IPv6 without DAD), creates an rxe
   link on that NIC if there is none (not persistent), and waits until the GID table
   holds them all: rxe adds one GID per address;
2. runs one playbook per strategy with a warm-up of each module, then --rounds of
   ansible.builtin.ping and rdma.fabric.gid_facts in alternating order, and times each
   task on the controller (a small callback written to a temporary directory: from the
   task's start to its result);
3. prints median and range per module and the ratio of the medians (goal <= 1.25);
4. removes the addresses and the link it created, whatever happened.

Networking: the addresses live on the lab's private data link between the VMs only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

from _bench import TOP, ansible_env, emit, run_timed, summary

LINK = "rxebench"


def adhoc(inventory: str, host: str, module: str, args: dict, check=True) -> dict:
    """Run one module ad hoc and return its JSON result (minimal callback: 'vm1 | SUCCESS => {...}')."""
    argv = ["ansible", "-i", inventory, host, "-m", module]
    if args:
        argv += ["-a", json.dumps(args)]
    env = ansible_env({"ANSIBLE_LOAD_CALLBACK_PLUGINS": "1", "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.minimal",
                       "ANSIBLE_CALLBACK_RESULT_FORMAT": "json"})
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    command = re.match(r"^\S+ \| (\w+) \| rc=(-?\d+) >>\n(.*)", proc.stdout, re.S)
    _head, sep, body = proc.stdout.partition(" => ")
    if command:  # command-like modules: 'vm1 | CHANGED | rc=0 >>' then the output
        result = {"rc": int(command.group(2)), "stdout": command.group(3), "failed": command.group(1) == "FAILED"}
    else:
        try:
            result = json.loads(body) if sep else None
        except ValueError:
            result = None
    if not isinstance(result, dict):
        raise SystemExit(f"{module} on {host} gave no result: {proc.stdout[-500:]} {proc.stderr[-500:]}")
    if check and result.get("failed"):
        raise SystemExit(f"{module} on {host} failed: {result.get('msg') or result.get('stderr')}")
    return result


def host_var(inventory: str, host: str, name: str) -> str:
    proc = subprocess.run(["ansible-inventory", "-i", inventory, "--host", host], capture_output=True, text=True,
                          env=ansible_env(), check=True)
    return json.loads(proc.stdout)[name]


def address_batch(verb: str, netdev: str, count: int) -> str:
    lines = []
    for i in range(count):
        if i % 2 == 0:
            lines.append(f"address {verb} 169.254.78.{i // 2 + 1}/32 dev {netdev}")
        else:
            nodad = " nodad" if verb == "add" else ""
            lines.append(f"address {verb} fd00:77::{i // 2 + 1:x}/64 dev {netdev}{nodad}")
    return "\n".join(lines) + "\n"


def gid_count(inventory: str, host: str, device: str) -> int:
    facts = adhoc(inventory, host, "rdma.fabric.gid_facts", {"device": [device]})["ansible_facts"]
    return facts["rdma_devices"][device]["ports"]["1"]["gid_count"]


def timed_playbook(inventory: str, host: str, rounds: int, strategy: str) -> dict:
    tasks = []
    warm = [("ansible.builtin.ping", "warm-up ping"), ("rdma.fabric.gid_facts", "warm-up gid_facts")]
    for module, name in warm:
        tasks.append({"name": name, module: {}})
    for i in range(rounds):
        pair = [("ansible.builtin.ping", "ping"), ("rdma.fabric.gid_facts", "gid_facts")]
        if i % 2:
            pair.reverse()
        for module, name in pair:
            tasks.append({"name": f"{name} {i}", module: {}})
    play = [{"name": "benchmark", "hosts": host, "gather_facts": False, "tasks": tasks}]
    rows, wall = run_timed(inventory, play, strategy)
    out = {"ping": [], "gid_facts": [], "wall_seconds": round(wall, 1)}
    for row in rows:
        kind = row["task"].split()[0]
        if kind in out and not row["task"].startswith("warm-up"):
            out[kind].append(row["seconds"])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    lab_dir = os.environ.get("LAB_DIR", os.path.join(TOP, ".lab"))
    parser.add_argument("--inventory", default=os.path.join(lab_dir, "inventory.yml"))
    parser.add_argument("--host", default="vm1")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--addresses", type=int, default=200)
    parser.add_argument("--strategy", default="both", choices=["configured", "linear", "both"])
    parser.add_argument("--json", help="also write the figures to this file")
    opts = parser.parse_args()

    inv, host = opts.inventory, opts.host
    netdev = host_var(inv, host, "lab_data_netdev")
    facts = adhoc(inv, host, "rdma.fabric.gid_facts", {})["ansible_facts"]
    device = facts["rdma_roce_v2_gid_index"]["by_netdev"].get(netdev, {}).get("device")
    created = device is None
    if created:
        device = LINK
        adhoc(inv, host, "rdma.fabric.rdma_link", {"name": LINK, "type": "rxe", "netdev": netdev, "persistent": False})
    before = gid_count(inv, host, device)
    results = {"host": host, "device": device, "netdev": netdev, "addresses": opts.addresses, "rounds": opts.rounds}
    try:
        adhoc(inv, host, "ansible.builtin.command", {"argv": ["ip", "-batch", "-"],
                                                     "stdin": address_batch("add", netdev, opts.addresses)})
        deadline = time.monotonic() + 120
        while True:
            count = gid_count(inv, host, device)
            if count >= before + opts.addresses or time.monotonic() > deadline:
                break
            time.sleep(2)
        results["gids_populated"] = count
        results["gid_slots"] = 1024
        print(f"[bench] {host}: {device} on {netdev} holds {count} GIDs ({before} before the addresses)", file=sys.stderr)
        strategies = ["configured", "linear"] if opts.strategy == "both" else [opts.strategy]
        for strategy in strategies:
            data = timed_playbook(inv, host, opts.rounds, strategy)
            ping, gid = summary(data["ping"]), summary(data["gid_facts"])
            results[strategy] = {"ping": ping, "gid_facts": gid, "ratio_of_medians": round(gid["median"] / ping["median"], 2),
                                 "playbook_wall_seconds": data["wall_seconds"]}
            print(f"[bench] strategy {strategy}: ping median {ping['median']:.2f}s (range {ping['min']:.2f}-{ping['max']:.2f}), "
                  f"gid_facts median {gid['median']:.2f}s (range {gid['min']:.2f}-{gid['max']:.2f}), "
                  f"ratio {results[strategy]['ratio_of_medians']:.2f} (goal <= 1.25)", file=sys.stderr)
    finally:
        cleanup = [("ansible.builtin.command", {"argv": ["ip", "-force", "-batch", "-"],
                                                "stdin": address_batch("del", netdev, opts.addresses)})]
        if created:
            cleanup.append(("rdma.fabric.rdma_link", {"name": LINK, "state": "absent"}))
        for module, args in cleanup:
            try:
                adhoc(inv, host, module, args, check=False)
            except SystemExit as err:
                print(f"[bench] cleanup step {module} failed: {err}", file=sys.stderr)
        if not created:
            results["gids_after_cleanup"] = gid_count(inv, host, device)
    emit(results, opts.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
