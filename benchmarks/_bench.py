# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers shared by the benchmark scripts: the environment for Ansible, a playbook run timed per task
(a callback written to a temporary directory), summaries and JSON output."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import statistics
import subprocess
import tempfile
import textwrap
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CALLBACK = '''
from __future__ import annotations
import json, os, time
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: task_timer
type: aggregate
short_description: task wall times as JSON lines (benchmark helper)
description: Writes one JSON line per task result to BENCH_TIMES.
requirements: [enabled in configuration]
"""

class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_timer"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_play_start(self, play):
        self._play = play.get_name()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._start = time.monotonic()

    def v2_runner_on_ok(self, result):
        row = {"play": getattr(self, "_play", ""), "task": result.task_name, "host": result._host.get_name(),
               "seconds": time.monotonic() - self._start, "changed": bool(result._result.get("changed"))}
        with open(os.environ["BENCH_TIMES"], "a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\\n")

    def v2_playbook_on_stats(self, stats):
        if os.environ.get("BENCH_STATS"):  # the recap per host (ok, changed, skipped, ...), when asked for
            with open(os.environ["BENCH_STATS"], "w", encoding="utf-8") as out:
                json.dump({host: stats.summarize(host) for host in stats.processed}, out)
'''


def ansible_env(extra=None) -> dict:
    env = dict(os.environ)
    env.setdefault("ANSIBLE_CONFIG", os.path.join(TOP, "ansible.cfg"))
    env.setdefault("ANSIBLE_COLLECTIONS_PATH", os.path.join(TOP, ".build", "collections"))
    env["PATH"] = os.path.join(TOP, ".venv", "bin") + os.pathsep + env.get("PATH", "")
    env["ANSIBLE_DEPRECATION_WARNINGS"] = "False"
    env.update(extra or {})
    return env


def run_timed(inventory: str, plays: list, strategy: str, extra_env=None) -> tuple:
    """Run plays with the task_timer callback; return (rows of {play, task, host, seconds}, wall seconds)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "callback"))
        with open(os.path.join(tmp, "callback", "task_timer.py"), "w", encoding="utf-8") as handle:
            handle.write(textwrap.dedent(CALLBACK))
        with open(os.path.join(tmp, "play.yml"), "w", encoding="utf-8") as handle:
            json.dump(plays, handle)
        times = os.path.join(tmp, "times.jsonl")
        extra = {"ANSIBLE_CALLBACK_PLUGINS": os.path.join(tmp, "callback"), "ANSIBLE_CALLBACKS_ENABLED": "task_timer",
                 "BENCH_TIMES": times}
        extra.update(extra_env or {})
        if strategy != "configured":
            extra["ANSIBLE_STRATEGY"] = strategy
        start = time.monotonic()
        proc = subprocess.run(["ansible-playbook", "-i", inventory, os.path.join(tmp, "play.yml")],
                              capture_output=True, text=True, env=ansible_env(extra), check=False)
        wall = time.monotonic() - start
        if proc.returncode != 0:
            raise SystemExit(f"benchmark playbook failed ({strategy}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        if not os.path.exists(times):  # plays without tasks
            return [], wall
        with open(times, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle], wall


def emit(results: dict, path=None) -> None:
    """Print the figures as JSON, and write them to path too when given."""
    print(json.dumps(results, indent=2))
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
            handle.write("\n")


def rotated(items: list, round_no: int) -> list:
    """items in round round_no's order: rotated by one per round, so each takes every position in turn."""
    shift = round_no % len(items)
    return items[shift:] + items[:shift]


def timed_tasks(inventory: str, host: str, timed: list, rounds: int, strategy: str) -> dict:
    """One playbook on host: a warm-up of each (name, module, args) of timed, then rounds of them in rotated order.

    Returns {name: [seconds of each round's task], 'wall_seconds': the playbook's}, timed on the controller."""
    tasks = [{"name": f"warm-up {name}", module: args} for name, module, args in timed]
    for i in range(rounds):
        for name, module, args in rotated(timed, i):
            tasks.append({"name": f"{name} {i}", module: args})
    play = [{"name": "benchmark", "hosts": host, "gather_facts": False, "tasks": tasks}]
    rows, wall = run_timed(inventory, play, strategy)
    out = {name: [] for name, _module, _args in timed}
    out["wall_seconds"] = round(wall, 1)
    for row in rows:
        kind = row["task"].split()[0]
        if kind in out and not row["task"].startswith("warm-up"):
            out[kind].append(row["seconds"])
    return out


def summary(values: list) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
            "max": round(max(values), 3), "n": len(values)}


def lab_lock(path=None):
    """A context manager: an exclusive flock(2) on path for the block (the lock flock(1) takes), or none without path."""
    if not path:
        return contextlib.nullcontext()
    return _flocked(path)


@contextlib.contextmanager
def _flocked(path: str):
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_recap(inventory: str, plays: list, strategy: str, extra_env=None) -> tuple:
    """run_timed, and the play recap: (rows, wall seconds, {host: {ok, changed, skipped, failures, unreachable, ...}})."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "recap.json")
        rows, wall = run_timed(inventory, plays, strategy, dict(extra_env or {}, BENCH_STATS=path))
        with open(path, encoding="utf-8") as handle:
            return rows, wall, json.load(handle)


def lab_options(doc: str, rounds: int, strategies: list) -> argparse.ArgumentParser:
    """A parser with the options of the lab benchmarks: --inventory (in $LAB_DIR, default .lab), --rounds,
    --strategy (one of strategies, or both), --lock (a file to flock while using the lab), --json."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    lab_dir = os.environ.get("LAB_DIR", os.path.join(TOP, ".lab"))
    parser.add_argument("--inventory", default=os.path.join(lab_dir, "inventory.yml"))
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--strategy", default="both", choices=strategies + ["both"])
    parser.add_argument("--lock", help="hold flock(2) on this file while using the lab (one shared with others)")
    parser.add_argument("--json", help="also write the figures to this file")
    return parser


def chosen(strategy: str, strategies: list) -> list:
    """The strategies --strategy names: all of them for 'both'."""
    return list(strategies) if strategy == "both" else [strategy]
