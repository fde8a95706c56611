# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""CPU per host-task of rdma.fabric modules against ansible.builtin.ping, on local aliases (no lab needed).

    .venv/bin/python benchmarks/controller_cpu_bench.py [--hosts 50,200] [--rounds 3] [--tasks 1]
        [--strategy linear|mitogen_linear|both] [--check-mode] [--json FILE]

For each inventory size in --hosts, an inventory of that many aliases of this machine is
written to a temporary directory: ansible_connection=local (no network at all), the
interpreter the venv's Python behind a small wrapper (see below). Every play runs --tasks
tasks of one module on all aliases, with forks=5 and pipelining (as ansible.cfg has it for
the lab's SSH), no become:
- ping:          ansible.builtin.ping, the baseline;
- gid_facts:     rdma.fabric.gid_facts (without /sys/class/infiniband its tables are empty,
                 but the module's whole start-up path runs);
- memlock:       rdma.fabric.memlock, state present, dest a file per alias in the temporary
                 directory; a warm-up run creates the files, so what is measured is the
                 idempotent rerun (read, compare, no write);
- memlock_check: with --check-mode, the same in check mode on files that do not exist
                 (would change, writes nothing);
- empty:         a play without tasks (start-up, inventory, playbook), subtracted from the others.

CPU is user + system time of ansible-playbook and of every descendant that was waited for
(resource.getrusage(RUSAGE_CHILDREN) around the run); this process is a child subreaper,
so a descendant that outlived its parent is reaped and counted too. With a local
connection the module's interpreter runs on this machine, where a real target's would not:
the wrapper logs its CPU (bash's `times`), reported as the target side; the rest is the
controller's own.

Per host-task: (CPU of the play - CPU of the empty play of the same round, size and
strategy) / (hosts x tasks). Each round runs every variant once per size and strategy, in
rotating order. Printed and written: median and range over the rounds, per variant, and of
the per-round ratio to ping.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import resource
import shlex
import sys
import tempfile
import time

from _bench import TOP, emit, rotated, run_timed, summary

PYTHON = os.path.join(TOP, ".venv", "bin", "python")
PR_SET_CHILD_SUBREAPER = 36
STRATEGIES = ["linear", "mitogen_linear"]
MEMLOCK = {"domain": "@rdma", "value": "unlimited"}
DEST = "{{ bench_dir }}/{{ inventory_hostname }}/"
TASKS = {
    "empty": None,
    "ping": {"ansible.builtin.ping": {}},
    "gid_facts": {"rdma.fabric.gid_facts": {}},
    "memlock": {"rdma.fabric.memlock": dict(MEMLOCK, dest=DEST + "limits.conf")},
    "memlock_check": {"rdma.fabric.memlock": dict(MEMLOCK, dest=DEST + "check.conf"), "check_mode": True},
}
WRAPPER = """#!/bin/bash
# Module interpreter for the benchmark: run Python, then log its CPU (bash's times: own, then children's).
{python} "$@"
rc=$?
times >> {logs}/$$
exit $rc
"""
TIMES = re.compile(r"(\d+)m([\d.]+)s (\d+)m([\d.]+)s")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", default="50,200", help="inventory sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=1, help="tasks per play")
    parser.add_argument("--strategy", default="both", choices=STRATEGIES + ["both"])
    parser.add_argument("--check-mode", action="store_true", help="also time memlock in check mode")
    parser.add_argument("--json", help="also write the figures to this file")
    opts = parser.parse_args()
    opts.variants = [name for name in TASKS if name != "memlock_check" or opts.check_mode]
    opts.hosts = [int(count) for count in opts.hosts.split(",")]
    opts.strategies = STRATEGIES if opts.strategy == "both" else [opts.strategy]
    return opts


def become_subreaper() -> None:
    """Orphaned descendants of ansible-playbook become this process's children, to be reaped and counted."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())}")


def reap_orphans() -> int:
    """Reap descendants that have outlived ansible-playbook; return 1 if some are still running, else 0."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            return 1


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def write_wrapper(tmp: str, logs: str) -> str:
    path = os.path.join(tmp, "python-wrapper")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(WRAPPER.format(python=shlex.quote(PYTHON), logs=shlex.quote(logs)))
    os.chmod(path, 0o755)
    return path


def write_inventory(tmp: str, count: int, interpreter: str) -> str:
    """count local aliases, each with its own directory for memlock's files."""
    hosts = {}
    for i in range(1, count + 1):
        name = f"alias{i:03d}"
        os.makedirs(os.path.join(tmp, "hosts", name), exist_ok=True)
        hosts[name] = {}
    group_vars = {"ansible_connection": "local", "ansible_python_interpreter": interpreter,
                  "bench_dir": os.path.join(tmp, "hosts")}
    path = os.path.join(tmp, f"inventory-{count}.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"all": {"hosts": hosts, "vars": group_vars}}, handle)
    return path


def bench_env(tmp: str) -> dict:
    return {"ANSIBLE_FORKS": "5", "ANSIBLE_PIPELINING": "True", "ANSIBLE_BECOME": "False",
            "ANSIBLE_GATHERING": "explicit", "ANSIBLE_STRATEGY_PLUGINS": os.path.join(TOP, ".build", "mitogen"),
            "ANSIBLE_LOCAL_TEMP": os.path.join(tmp, "local-tmp"), "ANSIBLE_REMOTE_TMP": os.path.join(tmp, "remote-tmp")}


def play(name: str, tasks: int) -> dict:
    task = TASKS[name]
    body = [] if task is None else [dict(task, name=f"{name} {i}") for i in range(tasks)]
    return {"name": name, "hosts": "all", "gather_facts": False, "tasks": body}


def target_cpu(logs: str) -> tuple:
    """(CPU seconds of the module interpreters, how many ran) from the wrapper's logs, which are then removed."""
    total, count = 0.0, 0
    for name in os.listdir(logs):
        path = os.path.join(logs, name)
        with open(path, encoding="utf-8") as handle:
            lines = [line for line in handle if line.strip()]
        os.unlink(path)
        for line in lines[1::2]:  # bash's times: the shell's own line, then its children's
            match = TIMES.match(line)
            if not match:
                raise SystemExit(f"unexpected line from the wrapper's times: {line!r}")
            total += 60 * int(match[1]) + float(match[2]) + 60 * int(match[3]) + float(match[4])
            count += 1
    return total, count


def measure(inventory: str, plays: list, strategy: str, env: dict, logs: str) -> dict:
    """Run one playbook; its CPU (all descendants), target-side CPU, wall time and task results."""
    before = children_cpu()
    rows, wall = run_timed(inventory, plays, strategy, env)
    left = reap_orphans()
    cpu = children_cpu() - before
    target, interpreters = target_cpu(logs)
    return {"cpu": round(cpu, 3), "target_cpu": round(target, 3), "interpreters": interpreters,
            "results": len(rows), "wall": round(wall, 2), "orphans_left_running": left}


def warm_up(opts: argparse.Namespace, inventories: dict, env: dict, logs: str) -> tuple:
    """Per strategy, one memlock task on the largest inventory (the first creates memlock's files): (strategies that work, errors)."""
    errors = {}
    for strategy in opts.strategies:
        try:
            measure(inventories[max(opts.hosts)], [dict(play("memlock", 1), name="warm-up")], strategy, env, logs)
        except SystemExit as err:
            errors[strategy] = str(err)
            print(f"[bench] warm-up with {strategy} failed, strategy left out: {err}", file=sys.stderr)
    return [strategy for strategy in opts.strategies if strategy not in errors], errors


def run_rounds(opts: argparse.Namespace, strategies: list, inventories: dict, env: dict, logs: str) -> list:
    runs = []
    for rnd in range(opts.rounds):
        for count in opts.hosts:
            for strategy in strategies:
                for name in rotated(opts.variants, rnd):
                    run = measure(inventories[count], [play(name, opts.tasks)], strategy, env, logs)
                    expected = 0 if TASKS[name] is None else count * opts.tasks
                    if run["results"] != expected:
                        raise SystemExit(f"{name}: {run['results']} task results, expected {expected}")
                    runs.append(dict(run, round=rnd, hosts=count, strategy=strategy, variant=name))
                    print(f"[bench] round {rnd + 1}/{opts.rounds}, {count} hosts, {strategy}, {name}: "
                          f"CPU {run['cpu']:.1f} s (target side {run['target_cpu']:.1f} s), wall {run['wall']:.1f} s",
                          file=sys.stderr)
    return runs


def file_stamps(tmp: str, name: str) -> dict:
    """{path: (inode, mtime_ns)} of every alias's file of that name."""
    out = {}
    top = os.path.join(tmp, "hosts")
    for alias in os.listdir(top):
        path = os.path.join(top, alias, name)
        if os.path.exists(path):
            stat = os.stat(path)
            out[path] = (stat.st_ino, stat.st_mtime_ns)
    return out


def per_host_task(runs: list, count: int, strategy: str, opts: argparse.Namespace) -> dict:
    """{variant: {figure: [one value per round]}} for one size and strategy."""
    rounds = {}
    for run in runs:
        if run["hosts"] == count and run["strategy"] == strategy:
            rounds.setdefault(run["round"], {})[run["variant"]] = run
    out = {name: {"cpu_ms": [], "target_ms": [], "controller_ms": [], "wall_s": [], "ratio": []}
           for name in opts.variants if name != "empty"}
    for variants in rounds.values():
        empty, scale = variants["empty"]["cpu"], 1000 / (count * opts.tasks)
        ping = (variants["ping"]["cpu"] - empty) * scale
        for name, values in out.items():
            run = variants[name]
            net = (run["cpu"] - empty) * scale
            values["cpu_ms"].append(net)
            values["target_ms"].append(run["target_cpu"] * scale)
            values["controller_ms"].append(net - run["target_cpu"] * scale)
            values["wall_s"].append(run["wall"])
            values["ratio"].append(net / ping)
    return out


def figures(runs: list, opts: argparse.Namespace, strategies: list) -> dict:
    out = {}
    for count in opts.hosts:
        for strategy in strategies:
            values = per_host_task(runs, count, strategy, opts)
            empty = [run["cpu"] for run in runs if (run["hosts"], run["strategy"], run["variant"]) == (count, strategy, "empty")]
            entry = {"empty_play_cpu_s": summary(empty)}
            for name, figs in values.items():
                entry[name] = {key: summary(series) for key, series in figs.items() if name != "ping" or key != "ratio"}
            for name in modules(opts):
                entry[name]["ratio_of_medians"] = round(entry[name]["cpu_ms"]["median"] / entry["ping"]["cpu_ms"]["median"], 2)
            out.setdefault(str(count), {})[strategy] = entry
            report(count, strategy, entry, modules(opts))
    return out


def modules(opts: argparse.Namespace) -> list:
    return [name for name in opts.variants if name not in ("empty", "ping")]


def report(count: int, strategy: str, entry: dict, names: list) -> None:
    ping = entry["ping"]["cpu_ms"]
    for name in names:
        cpu, ratio = entry[name]["cpu_ms"], entry[name]["ratio"]
        print(f"[bench] {count} hosts, {strategy}: ping {ping['median']:.1f} ms/host-task ({ping['min']:.1f}-{ping['max']:.1f}), "
              f"{name} {cpu['median']:.1f} ms ({cpu['min']:.1f}-{cpu['max']:.1f}), "
              f"ratio {ratio['median']:.2f} ({ratio['min']:.2f}-{ratio['max']:.2f})", file=sys.stderr)


def main() -> int:
    opts = parse_args()
    start = time.monotonic()
    become_subreaper()
    with tempfile.TemporaryDirectory(prefix="rdma-fabric-cpu-bench-") as tmp:
        logs = os.path.join(tmp, "target-cpu")
        os.makedirs(logs)
        interpreter = write_wrapper(tmp, logs)
        inventories = {count: write_inventory(tmp, count, interpreter) for count in opts.hosts}
        env = bench_env(tmp)
        strategies, errors = warm_up(opts, inventories, env, logs)
        memlock_before = file_stamps(tmp, "limits.conf")
        runs = run_rounds(opts, strategies, inventories, env, logs)
        checks = {"memlock_files": len(memlock_before),
                  "memlock_files_rewritten": sum(stamp != memlock_before.get(path)
                                                 for path, stamp in file_stamps(tmp, "limits.conf").items()),
                  "check_mode_files_created": len(file_stamps(tmp, "check.conf")),
                  "runs_with_orphans_left_running": sum(run["orphans_left_running"] for run in runs)}
    results = {"hosts": opts.hosts, "rounds": opts.rounds, "tasks_per_play": opts.tasks, "forks": 5, "pipelining": True,
               "connection": "local", "cpu_count": os.cpu_count(), "errors": errors, "checks": checks,
               "figures": figures(runs, opts, strategies), "total_wall_seconds": round(time.monotonic() - start), "runs": runs}
    emit(results, opts.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
