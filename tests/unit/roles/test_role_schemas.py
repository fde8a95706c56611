# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The copies of the role-facing schemas agree with their one source.

- rdma_qos_intent is declared in roles/roce_qos and roles/switch_qos meta/argument_specs.yml; both
  declarations must have the keys, types, defaults and choices of _qos_intent.role_option_spec()
  (built from _qos_intent.DEFAULTS and MODES), and the same descriptions as each other.
- Each role's preflight hands the role_input_errors filter a dict of its variables, written out in
  its tasks; its keys must be the variables of the role's argument specs, each mapped to itself.
"""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.plugin_utils import _qos_intent

COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLES = os.path.join(COLLECTION, "roles")
INTENT_ROLES = ("roce_qos", "switch_qos")
SCHEMA_KEYS = ("type", "elements", "default", "choices", "required", "options")


def _options(role: str) -> dict:
    with open(os.path.join(ROLES, role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["argument_specs"]["main"]["options"]


def _schema(spec: dict) -> dict:
    """spec without descriptions: the keys, types, defaults and choices, nested."""
    assert set(spec) <= set(SCHEMA_KEYS) | {"description"}, sorted(spec)
    found = {key: spec[key] for key in SCHEMA_KEYS if key in spec}
    if "options" in found:
        found["options"] = {name: _schema(sub) for name, sub in found["options"].items()}
    return found


def _descriptions(spec: dict) -> dict:
    return {name: (sub.get("description"), _descriptions(sub.get("options", {}))) for name, sub in spec.items()}


def _roles_with_input_check() -> list:
    return sorted(role for role in os.listdir(ROLES) if os.path.isfile(os.path.join(ROLES, role, "meta", "argument_specs.yml")))


def _input_check_dict(role: str) -> list:
    """[(key, variable)] of the dict the role's tasks give role_input_errors(role), in order."""
    tasks_dir = os.path.join(ROLES, role, "tasks")
    found = []
    for name in sorted(os.listdir(tasks_dir)):
        with open(os.path.join(tasks_dir, name), encoding="utf-8") as handle:
            for task in yaml.safe_load(handle) or []:
                for expression in (task.get("vars") or {}).values():
                    if isinstance(expression, str) and f"role_input_errors('{role}')" in expression:
                        found.append(expression)
    assert len(found) == 1, found
    literal = re.search(r"\{\{\s*(\{.*\})\s*\|\s*rdma\.fabric\.role_input_errors", found[0], re.S)
    assert literal, found[0]
    return re.findall(r"'(\w+)':\s*(\w+)", literal.group(1))


@pytest.mark.parametrize("role", INTENT_ROLES)
def test_qos_intent_spec_matches_the_python_source(role):
    assert _schema(_options(role)["rdma_qos_intent"]) == _qos_intent.role_option_spec()


def test_qos_intent_spec_is_described_alike_in_both_roles():
    first, second = (_options(role)["rdma_qos_intent"]["options"] for role in INTENT_ROLES)
    assert _descriptions(first) == _descriptions(second)


def test_python_source_covers_every_default():
    spec = _qos_intent.role_option_spec()["options"]
    assert set(spec) == set(_qos_intent.DEFAULTS)
    for key, value in _qos_intent.DEFAULTS.items():
        if isinstance(value, dict):
            assert set(spec[key]["options"]) == set(value)
            assert {sub: option.get("default") for sub, option in spec[key]["options"].items()} == value
        else:
            assert spec[key]["default"] == value


@pytest.mark.parametrize("role", _roles_with_input_check())
def test_preflight_variables_are_the_argument_specs_variables(role):
    pairs = _input_check_dict(role)
    assert [key for key, _variable in pairs] == list(_options(role))
    assert all(key == variable for key, variable in pairs), pairs
