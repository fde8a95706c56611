# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The bad-input corpus (tests/unit/plugins/modules/bad_input_cases.py) on a real VM.

Every case runs as a task on vm1 or vm2 (alternately; the two VMs' plays run at the same
time), through Ansible and the real module, between two manifests (manifest.py) of
everything the collection could change on that VM. Each must fail
with a one-line message naming the option and changed=false, and the manifests must
be identical. The unit test proves the same cases stop before any command or file
access; this one proves it where the commands and files are real.
"""

from __future__ import annotations

import os
import sys

import pytest
from labplay import TOP, manifest, manifest_of, module, start
from manifest import differences

sys.path.insert(0, os.path.join(TOP, "tests", "unit", "plugins", "modules"))
from bad_input_cases import BASE, HOST_DIR_MARK, NULL, corpus  # noqa: E402 pylint: disable=wrong-import-position

HOSTS = ("vm1", "vm2")
CASES = corpus()


def arguments(module_name: str, args: dict) -> dict:
    merged = dict(BASE[module_name])
    merged.update({key: value.replace(HOST_DIR_MARK, "") if isinstance(value, str) else value for key, value in args.items()})
    return {key: None if value == NULL else value for key, value in merged.items() if value is not None}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("badinput")
    plays = []
    for index, host in enumerate(HOSTS):
        steps = [manifest(f"before_{host}")]
        steps += [module(f"c{number}", f"rdma.fabric.{name}", arguments(name, args))
                  for number, (name, args, _option, _id) in enumerate(CASES) if number % len(HOSTS) == index]
        steps.append(manifest(f"after_{host}"))
        plays.append(start(host, steps, [], tmp))
    found = {}
    for play in plays:
        found.update(play.results())
    return found


@pytest.mark.parametrize("host", HOSTS)
def test_no_case_changed_the_host(results, host):
    assert len(CASES) >= 200
    assert differences(manifest_of(results[f"before_{host}"]), manifest_of(results[f"after_{host}"])) == []


@pytest.mark.parametrize("number", range(len(CASES)), ids=[case[3] for case in CASES])
def test_bad_input_fails_on_the_lab(results, number):
    name, args, option, _id = CASES[number]
    result = results[f"c{number}"]
    assert result is not None, "the case never ran"
    assert result.get("failed") is True, f"{name} accepted {args!r}: {result}"
    assert not result.get("changed"), result
    # ansible-core 2.19 adds exception='(traceback unavailable)' to every failure
    assert "module_stderr" not in result and "Traceback" not in str(result.get("exception", "")), result
    msg = result.get("msg")
    assert isinstance(msg, str) and msg and "\n" not in msg and "\r" not in msg, f"not one line: {msg!r}"
    assert option in msg, f"message does not name {option!r}: {msg!r}"
