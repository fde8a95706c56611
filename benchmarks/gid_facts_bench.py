# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time rdma.fabric.gid_facts against ansible.builtin.ping on a lab VM with a full GID table.

    LAB_DIR=/work/main/.lab-a python3 benchmarks/gid_facts_bench.py [--host vm1] [--rounds 9]
        [--addresses 200] [--strategy configured|linear|both] [--lock FILE] [--json FILE]

What it does, in one run (with --lock FILE, all of it under flock(2) on FILE):
1. puts --addresses addresses on the host's data NIC (half IPv4 /32 in 169.254.78.1-250,
   then 169.254.79.x and so on, half IPv6 in fd00:77::/64, added with `ip -batch`, IPv6
   without DAD), creates an rxe link on that NIC if there is none (not persistent), and
   waits until the GID table holds them all: rxe adds one GID per address, and its table
   has 1,024 slots (--addresses 1000 fills about 1,000); the count is taken with gid_facts
   and checked against sysfs (slots, and those holding a GID);
2. runs one playbook per strategy with a warm-up of each task, then --rounds of
   ansible.builtin.ping, rdma.fabric.gid_facts and rdma.fabric.gid_facts with
   gid_table=false (the same facts without the GID rows) in rotating order, and times
   each task on the controller (a small callback written to a temporary directory: from
   the task's start to its result);
3. prints median and range per task and the ratios of the medians to ping's (goal <= 1.25);
4. removes the addresses and the link it created, whatever happened, and checks that
   none of its addresses is left.

Networking: the addresses live on the lab's private data link between the VMs only.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

from _bench import ansible_env, chosen, emit, lab_lock, lab_options, summary, timed_tasks

LINK = "rxebench"
STRATEGIES = ["configured", "linear"]
SYSFS_GIDS = """
import os, sys
values = []
for name in os.listdir(sys.argv[1]):
    try:
        with open(os.path.join(sys.argv[1], name), encoding="ascii") as handle:
            values.append(handle.read().strip())
    except OSError:
        values.append("")
print(len(values), sum(1 for value in values if value.strip(":0")))
"""


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


def bench_addresses(count: int) -> list:
    """The addresses the benchmark adds: alternately IPv4 /32 (169.254.78.1-250, then .79.x, ...) and IPv6 in fd00:77::/64."""
    out = []
    for i in range(count):
        n = i // 2
        out.append(f"169.254.{78 + n // 250}.{n % 250 + 1}/32" if i % 2 == 0 else f"fd00:77::{n + 1:x}/64")
    return out


def address_batch(verb: str, netdev: str, count: int) -> str:
    nodad = " nodad" if verb == "add" else ""
    lines = [f"address {verb} {address} dev {netdev}{nodad if ':' in address else ''}" for address in bench_addresses(count)]
    return "\n".join(lines) + "\n"


def leftover_addresses(inventory: str, host: str, netdev: str, count: int) -> list:
    """The benchmark's addresses still on netdev (none after the cleanup)."""
    shown = adhoc(inventory, host, "ansible.builtin.command", {"argv": ["ip", "-o", "address", "show", "dev", netdev]})
    present = {word for line in shown["stdout"].splitlines() for word in line.split()}
    return [address for address in bench_addresses(count) if address in present]


def sysfs_gids(inventory: str, host: str, device: str) -> dict:
    """The GID table as sysfs has it: its slots, and how many hold a GID (not all zeros)."""
    path = f"/sys/class/infiniband/{device}/ports/1/gids"
    shown = adhoc(inventory, host, "ansible.builtin.command", {"argv": ["python3", "-c", SYSFS_GIDS, path]})
    slots, populated = (int(word) for word in shown["stdout"].split())
    return {"slots": slots, "populated": populated}


def gid_count(inventory: str, host: str, device: str) -> int:
    facts = adhoc(inventory, host, "rdma.fabric.gid_facts", {"device": [device]})["ansible_facts"]
    return facts["rdma_devices"][device]["ports"]["1"]["gid_count"]


# The timed tasks: name, module, arguments. Each round runs all of them, the order rotated by one per round.
TIMED = [
    ("ping", "ansible.builtin.ping", {}),
    ("gid_facts", "rdma.fabric.gid_facts", {}),
    ("gid_facts_no_rows", "rdma.fabric.gid_facts", {"gid_table": False}),
]


def rxe_device(inv: str, host: str, netdev: str) -> tuple:
    """(the rxe device on netdev, whether the benchmark created it: not persistent, removed at the end)."""
    facts = adhoc(inv, host, "rdma.fabric.gid_facts", {})["ansible_facts"]
    device = facts["rdma_roce_v2_gid_index"]["by_netdev"].get(netdev, {}).get("device")
    if device is not None:
        return device, False
    adhoc(inv, host, "rdma.fabric.rdma_link", {"name": LINK, "type": "rxe", "netdev": netdev, "persistent": False})
    return LINK, True


def populate(opts, netdev: str, device: str, before: int) -> dict:
    """Add the addresses and wait until the GID table holds them (rxe adds one GID per address), or a time limit."""
    inv, host = opts.inventory, opts.host
    adhoc(inv, host, "ansible.builtin.command", {"argv": ["ip", "-batch", "-"],
                                                 "stdin": address_batch("add", netdev, opts.addresses)})
    deadline = time.monotonic() + 120 + opts.addresses // 5
    while True:
        count = gid_count(inv, host, device)
        if count >= before + opts.addresses or time.monotonic() > deadline:
            break
        time.sleep(2)
    table = sysfs_gids(inv, host, device)
    print(f"[bench] {host}: {device} on {netdev} holds {count} GIDs ({before} before the addresses); "
          f"sysfs: {table['populated']} of {table['slots']} slots", file=sys.stderr)
    return {"gids_populated": count, "gid_slots": table["slots"], "gids_populated_sysfs": table["populated"]}


def measure(opts, strategy: str) -> dict:
    data = timed_tasks(opts.inventory, opts.host, TIMED, opts.rounds, strategy)
    out = {name: summary(data[name]) for name, _module, _args in TIMED}
    ping = out["ping"]
    text = [f"ping median {ping['median']:.2f}s (range {ping['min']:.2f}-{ping['max']:.2f})"]
    for name, suffix in (("gid_facts", ""), ("gid_facts_no_rows", "_no_rows")):
        ratio = round(out[name]["median"] / ping["median"], 2)
        # Each round's tasks run back to back, so a round's ratio is less exposed to the load drifting.
        per_round = summary([mine / theirs for mine, theirs in zip(data[name], data["ping"])])
        out["ratio_of_medians" + suffix] = ratio
        out["ratio_per_round" + suffix] = per_round
        text.append(f"{name} median {out[name]['median']:.2f}s (range {out[name]['min']:.2f}-{out[name]['max']:.2f}), "
                    f"ratio {ratio:.2f}, per round {per_round['median']:.2f} ({per_round['min']:.2f}-{per_round['max']:.2f})")
    print(f"[bench] strategy {strategy}: " + ", ".join(text) + " (goal <= 1.25)", file=sys.stderr)
    out["seconds"] = {name: [round(value, 3) for value in data[name]] for name, _module, _args in TIMED}
    out["playbook_wall_seconds"] = data["wall_seconds"]
    return out


def cleanup(opts, netdev: str, device: str, created: bool) -> dict:
    """Remove the addresses (and the link the benchmark made), whatever happened; then check what is left."""
    inv, host = opts.inventory, opts.host
    steps = [("ansible.builtin.command", {"argv": ["ip", "-force", "-batch", "-"],
                                          "stdin": address_batch("del", netdev, opts.addresses)})]
    if created:
        steps.append(("rdma.fabric.rdma_link", {"name": LINK, "state": "absent"}))
    for module, args in steps:
        try:
            adhoc(inv, host, module, args, check=False)
        except SystemExit as err:
            print(f"[bench] cleanup step {module} failed: {err}", file=sys.stderr)
    left = leftover_addresses(inv, host, netdev, opts.addresses)
    print(f"[bench] after the cleanup: {len(left)} of the benchmark's addresses left on {netdev}", file=sys.stderr)
    out = {"addresses_left_after_cleanup": len(left)}
    if not created:
        out["gids_after_cleanup"] = gid_count(inv, host, device)
    return out


def run(opts) -> dict:
    inv, host = opts.inventory, opts.host
    netdev = host_var(inv, host, "lab_data_netdev")
    device, created = rxe_device(inv, host, netdev)
    results = {"host": host, "device": device, "netdev": netdev, "addresses": opts.addresses, "rounds": opts.rounds}
    try:
        results.update(populate(opts, netdev, device, gid_count(inv, host, device)))
        for strategy in chosen(opts.strategy, STRATEGIES):
            results[strategy] = measure(opts, strategy)
    finally:
        results.update(cleanup(opts, netdev, device, created))
    return results


def main() -> int:
    parser = lab_options(__doc__, 9, STRATEGIES)
    parser.add_argument("--host", default="vm1")
    parser.add_argument("--addresses", type=int, default=200, help="addresses to add, one GID each (rxe: 1,024 slots)")
    opts = parser.parse_args()
    with lab_lock(opts.lock):
        results = run(opts)
    emit(results, opts.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
