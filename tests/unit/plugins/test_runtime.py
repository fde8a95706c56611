# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""meta/runtime.yml's action group and the modules' documented membership say the same."""

from __future__ import annotations

import ast
import os

import yaml

TOP = os.path.join(os.path.dirname(__file__), "..", "..", "..")
MODULES = os.path.join(TOP, "plugins", "modules")


def documented_members() -> set:
    members = set()
    for name in os.listdir(MODULES):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(MODULES, name), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
                doc = yaml.safe_load(node.value.value)
                if "rdma.fabric.attributes.actiongroup" in (doc.get("extends_documentation_fragment") or []):
                    members.add(name[:-3])
    return members


def test_action_group_matches_the_documentation():
    with open(os.path.join(TOP, "meta", "runtime.yml"), encoding="utf-8") as handle:
        runtime = yaml.safe_load(handle)
    group = runtime["action_groups"]["rdma"]
    assert len(group) == len(set(group))
    documented = documented_members()
    assert documented, "no module documents the action group"
    assert set(group) == documented
