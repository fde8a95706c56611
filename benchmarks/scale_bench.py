# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time the collection's fleet work at 2 to 32 RDMA hosts of the scale lab (make scale).

    LAB_DIR=$PWD/.lab-bench python3 benchmarks/scale_bench.py [--hosts 2,4,8,16,32] [--all-max 16]
        [--serial-max 32] [--json FILE]

The lab: two VMs with the trixie-backports kernel and M/2 namespace hosts each, M the largest count
asked for (node01-node16 on vm1 and node17-node32 on vm2 for 32; lab/hosts.sh), brought up once by this
script (lab/labctl up) unless it is up already, and converged once with playbooks/site.yml (not timed). A
measurement at N hosts uses the first N/2 hosts of each VM (--limit), so every N runs on the same two
emulated machines and the same kernels, and the idle hosts cost nothing but an sshd each.

For each N, one after the other (wall time of each ansible-playbook run, start-up included, and the
controller's peak memory, the largest sum of the resident memory of ansible-playbook and its forks,
sampled every 0.2 s):
- site_noop: playbooks/site.yml again; it must report changed=0 on every host, or the script stops;
- facts: playbooks/facts.yml (fact gathering with gid_facts, the fleet tables);
- ring: fabric_check as a ring, in rounds (every host in at most one pair per round);
- ring_serial: the same ring with fabric_check_max_pairs 1, one pair per round: the pairs one after
  another, as fabric_check ran them before the rounds (N <= --serial-max);
- all: fabric_check over all pairs, in rounds (N <= --all-max).
Each fabric_check run's report gives its rounds, their seconds and its failed pairs (reported, not fatal:
a failed pair still took its time). Ratios: each ring time over the ring time at the smallest N of the run
(the goal: at most 2.5 at 16 hosts and 3 at 32), and ring_serial over ring at the same N.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from _bench import TOP, ansible_env, emit

LABCTL = os.path.join(TOP, "lab", "labctl")
MAX_PER_VM = 16
GOALS = {16: 2.5, 32: 3.0}


def subset(count: int, per_vm: int) -> list:
    """The first count/2 hosts of each VM."""
    half = count // 2
    return [f"node{n:02d}" for n in range(1, half + 1)] + [f"node{per_vm + n:02d}" for n in range(1, half + 1)]


def _tree_rss_kib(root: int) -> int:
    """Resident memory (KiB) of root and every process below it (VmRSS of /proc/PID/status)."""
    total, stack, seen = 0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", encoding="utf-8") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            continue
    return total


def run_playbook(args: list, env: dict) -> dict:
    """ansible-playbook with the json callback: {seconds, peak_rss_mib, rc, stats, stdout tail when it failed}."""
    proc = subprocess.Popen(["ansible-playbook"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=TOP)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.wait(0.2):
            peak[0] = max(peak[0], _tree_rss_kib(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    start = time.monotonic()
    sampler.start()
    stdout, stderr = proc.communicate()
    seconds = time.monotonic() - start
    done.set()
    sampler.join()
    result = {"seconds": round(seconds, 1), "peak_rss_mib": round(peak[0] / 1024, 1), "rc": proc.returncode}
    try:
        result["stats"] = json.loads(stdout).get("stats", {})
    except ValueError:
        result["stats"] = {}
    if proc.returncode != 0:
        result["tail"] = (stdout[-1500:] + stderr[-1500:])
    return result


def fabric_play(hosts: list, topology: str, report_dir: str, max_pairs: int) -> list:
    return [{"name": f"fabric_check {topology}", "hosts": ",".join(hosts), "gather_facts": False, "become": True,
             "tasks": [{"name": "fabric_check", "block": [{"name": "run", "ansible.builtin.include_role": {
                 "name": "rdma.fabric.fabric_check"}}], "rescue": [{"name": "go on", "ansible.builtin.debug": {
                     "msg": "{{ ansible_failed_result.msg | default('failed') }}"}}],
                 "vars": {"fabric_check_topology": topology, "fabric_check_report_dir": report_dir,
                          "fabric_check_max_pairs": max_pairs}}]}]


def fabric_check(inventory: str, hosts: list, topology: str, max_pairs: int, env: dict, tmp: str) -> dict:
    report_dir = os.path.join(tmp, f"{topology}-{len(hosts)}-{max_pairs}")
    play = os.path.join(tmp, "fabric.json")
    with open(play, "w", encoding="utf-8") as handle:
        json.dump(fabric_play(hosts, topology, report_dir, max_pairs), handle)
    result = run_playbook(["-i", inventory, play], env)
    report_path = os.path.join(report_dir, "fabric-check.json")
    if not os.path.exists(report_path):
        raise SystemExit(f"fabric_check {topology} over {len(hosts)} hosts wrote no report:\n{result.get('tail', '')}")
    with open(report_path, encoding="utf-8") as handle:
        report = json.load(handle)
    summary = report.get("summary") or {}
    result.update(rounds=len(report.get("rounds") or []), pairs=summary.get("pairs"),
                  failed_pairs=summary.get("failed_pairs") or [],
                  round_seconds=[one.get("seconds") for one in report.get("rounds") or []])
    result.pop("stats", None)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", default="2,4,8,16,32", help="host counts, even, at most 32 (default 2,4,8,16,32)")
    parser.add_argument("--all-max", type=int, default=16, help="all pairs up to this many hosts (default 16)")
    parser.add_argument("--serial-max", type=int, default=32, help="the serial ring up to this many hosts (default 32)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--readme", help="put the table and the plot between the scale markers of this file")
    parser.add_argument("--render", help="only render: the table and plot of this JSON file (to --readme or stdout)")
    options = parser.parse_args()
    if options.render:
        with open(options.render, encoding="utf-8") as handle:
            publish(json.load(handle), options.readme)
        return
    counts = sorted({int(n) for n in options.hosts.split(",")})
    if any(n < 2 or n % 2 or n > 2 * MAX_PER_VM for n in counts):
        raise SystemExit(f"--hosts: {options.hosts!r}; allowed: even numbers from 2 to {2 * MAX_PER_VM}")
    per_vm = max(counts) // 2

    lab_dir = os.environ.get("LAB_DIR") or os.path.join(TOP, ".lab-bench")
    lab = dict(os.environ, LAB_DIR=lab_dir, LAB_VMS="2", LAB_HOSTS_PER_VM=str(per_vm),
               LAB_SUITE="trixie-backports", LAB_PORT_BASE=os.environ.get("LAB_PORT_BASE", "3622"))
    start = time.monotonic()
    up = subprocess.run([LABCTL, "up"], env=lab, capture_output=True, text=True, check=False)
    if up.returncode != 0:
        raise SystemExit(f"lab/labctl up failed:\n{up.stdout[-2000:]}\n{up.stderr[-2000:]}")
    boot = round(time.monotonic() - start, 1)
    inventory = os.path.join(lab_dir, "inventory.yml")
    # the first task starts mitogen's Python on 16 hosts per emulated CPU at once
    env = ansible_env({"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json", "ANSIBLE_FORKS": "64",
                       "ANSIBLE_TIMEOUT": "900", "ANSIBLE_STRATEGY_PLUGINS": os.path.join(TOP, ".build", "mitogen"),
                       "ANSIBLE_STRATEGY": os.environ.get("RDMA_FABRIC_STRATEGY", "mitogen_linear"),
                       "MOLECULE_PROJECT_DIRECTORY": TOP})
    site = os.path.join(TOP, "playbooks", "site.yml")
    everyone = subset(max(counts), per_vm)
    converge = run_playbook(["-i", inventory, site, "--limit", ",".join(everyone)], env)
    if converge["rc"] != 0:
        raise SystemExit(f"site.yml did not converge:\n{converge.get('tail', '')}")
    results = {"lab": {"boot_seconds": boot, "converge_seconds": converge["seconds"], "hosts_per_vm": per_vm,
                       "strategy": env["ANSIBLE_STRATEGY"]}, "by_hosts": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for count in counts:
            hosts = subset(count, per_vm)
            row = {}
            noop = run_playbook(["-i", inventory, site, "--limit", ",".join(hosts)], env)
            changed = {host: stats.get("changed") for host, stats in noop.pop("stats").items() if stats.get("changed")}
            if noop["rc"] != 0 or changed:
                raise SystemExit(f"the no-op site.yml at {count} hosts changed {changed} (rc {noop['rc']}):\n{noop.get('tail', '')}")
            row["site_noop"] = noop
            facts = run_playbook(["-i", inventory, os.path.join(TOP, "playbooks", "facts.yml"), "--limit", ",".join(hosts),
                                  "-e", f"rdma_facts_dir={tmp}/facts-{count}"], env)
            facts.pop("stats")
            row["facts"] = facts
            row["ring"] = fabric_check(inventory, hosts, "ring", 0, env, tmp)
            if count <= options.serial_max:
                row["ring_serial"] = fabric_check(inventory, hosts, "ring", 1, env, tmp)
            if count <= options.all_max:
                row["all"] = fabric_check(inventory, hosts, "all", 0, env, tmp)
            results["by_hosts"][str(count)] = row
            print(f"[scale] {count} hosts: " + ", ".join(f"{name} {value['seconds']} s" for name, value in row.items()),
                  file=sys.stderr)
            ratios(results)
            if options.json:  # what is measured so far survives a run that stops later
                with open(options.json, "w", encoding="utf-8") as handle:
                    json.dump(results, handle, indent=2)
                    handle.write("\n")
    emit(results, options.json)
    if options.readme:
        publish(results, options.readme)


def ratios(results: dict) -> None:
    """Each ring time over the ring time at the smallest count measured, and serial over rounds per count."""
    counts = sorted(int(n) for n in results["by_hosts"])
    smallest = results["by_hosts"][str(counts[0])]["ring"]["seconds"]
    for count in counts:
        row = results["by_hosts"][str(count)]
        row["ring_ratio_to_smallest"] = round(row["ring"]["seconds"] / smallest, 2)
        if count in GOALS:
            row["ring_goal"] = GOALS[count]
        if "ring_serial" in row:
            row["serial_over_rounds"] = round(row["ring_serial"]["seconds"] / row["ring"]["seconds"], 2)


BEGIN, END = "<!-- scale_bench: begin -->", "<!-- scale_bench: end -->"


def _cell(row: dict, name: str) -> str:
    one = row.get(name)
    if not one:
        return "-"
    text = f"{one['seconds']:.0f}"
    if "rounds" in one:
        text += f" ({one['rounds']} r, {sum(float(x or 0) for x in one['round_seconds']):.0f} in them"
        text += f"; {len(one['failed_pairs'])} failed)" if one["failed_pairs"] else ")"
    return text


def render(results: dict) -> str:
    """The markdown table and a mermaid line chart of a run's figures."""
    counts = sorted(int(n) for n in results["by_hosts"])
    lines = ["| hosts | no-op site.yml s | facts.yml s | ring s (rounds, s in them) | ring, one pair at a time s "
             "| serial / rounds | ring / smallest (goal) | all pairs s (rounds) | controller peak MiB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for count in counts:
        row = results["by_hosts"][str(count)]
        peak = max(one["peak_rss_mib"] for one in row.values() if isinstance(one, dict) and "peak_rss_mib" in one)
        goal = f" (<= {row['ring_goal']})" if "ring_goal" in row else ""
        lines.append(f"| {count} | {_cell(row, 'site_noop')} | {_cell(row, 'facts')} | {_cell(row, 'ring')} "
                     f"| {_cell(row, 'ring_serial')} | {row.get('serial_over_rounds', '-')} "
                     f"| {row['ring_ratio_to_smallest']}{goal} | {_cell(row, 'all')} | {peak:.0f} |")
    lab = results["lab"]
    lines += ["", f"Lab: two VMs, {lab['hosts_per_vm']} hosts each, booted in {lab['boot_seconds']:.0f} s; site.yml "
              f"converged all of them in {lab['converge_seconds']:.0f} s (not in the table); strategy {lab['strategy']}.", ""]
    serial = [results["by_hosts"][str(n)].get("ring_serial", {}).get("seconds") for n in counts]
    lines += ["```mermaid", "xychart-beta", '    title "fabric_check ring: seconds by hosts"',
              "    x-axis [" + ", ".join(str(n) for n in counts) + "]", '    y-axis "seconds"',
              "    line [" + ", ".join(f"{results['by_hosts'][str(n)]['ring']['seconds']:.0f}" for n in counts) + "]"]
    if all(value is not None for value in serial):
        lines.append("    line [" + ", ".join(f"{value:.0f}" for value in serial) + "]")
    lines += ["```", "", "The lower line is the ring in rounds, the upper one the same pairs one at a time."
              if all(value is not None for value in serial) else "The line is the ring in rounds."]
    return "\n".join(lines) + "\n"


def publish(results: dict, readme) -> None:
    text = render(results)
    if not readme:
        print(text)
        return
    with open(readme, encoding="utf-8") as handle:
        current = handle.read()
    if BEGIN not in current or END not in current:
        raise SystemExit(f"{readme}: no {BEGIN} ... {END} markers")
    head, rest = current.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(readme, "w", encoding="utf-8") as handle:
        handle.write(head + BEGIN + "\n" + text + END + tail)


if __name__ == "__main__":
    main()
