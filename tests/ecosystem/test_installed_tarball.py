# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The built tarball, installed into a venv that has only ansible-core, as a user of Galaxy gets it.

- The venv holds ansible-core and its own dependencies, nothing else, at the line tests/requirements.txt allows.
- ansible-galaxy collection verify --offline finds every installed file as the tarball's manifest lists it.
- ansible-doc lists every module, filter and role the source has, and renders each, with no warning.
- A facts play on localhost (connection local, no RDMA needed): gid_facts and counter_facts gathered as FACTS_MODULES,
  and a filter, from the installed collection.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from conftest import CONTENT, CORE, FQCN, RELEASED, TOP, VERSION, run, warnings_of

pytestmark = pytest.mark.xdist_group("installed")
DOC = os.path.join(CORE, "bin", "ansible-doc")


def _requirement(path: str) -> str:
    with open(os.path.join(TOP, path), encoding="utf-8") as handle:
        found = re.findall(r"^(ansible-core[<>=!~][^\s#]*)", handle.read(), re.M)
    assert len(found) == 1, (path, found)
    return found[0]


def test_core_only_venv_holds_ansible_core_and_its_dependencies_only(workdir):
    script = """
import json, re
from importlib import metadata
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
def name(text):
    return re.sub(r"[-_.]+", "-", text).lower()
need, todo = set(), ["ansible-core"]
while todo:
    dist = todo.pop()
    if name(dist) in need:
        continue
    need.add(name(dist))
    for line in metadata.requires(dist) or []:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            todo.append(req.name)
installed = {name(d.metadata["Name"]) for d in metadata.distributions()} - {"pip"}
print(json.dumps({"need": sorted(need), "installed": sorted(installed), "core": metadata.version("ansible-core")}))
"""
    found = json.loads(run([os.path.join(CORE, "bin", "python"), "-c", script], CORE, str(workdir)).stdout)
    assert found["installed"] == found["need"]
    spec = _requirement("tests/requirements.txt")
    assert spec == _requirement("tests/requirements-ecosystem.txt"), "the two requirement files name different ansible-core ranges"
    from packaging.specifiers import SpecifierSet  # pylint: disable=import-outside-toplevel
    assert found["core"] in SpecifierSet(spec[len("ansible-core"):]), (found["core"], spec)


def test_collection_verify_offline_passes(installed, workdir):
    proc = run([os.path.join(CORE, "bin", "ansible-galaxy"), "collection", "verify", "--offline", "-p", installed, FQCN], CORE,
               str(workdir), ANSIBLE_COLLECTIONS_PATH=installed)
    assert f"Successfully verified that checksums for '{FQCN}:{VERSION}' are internally consistent with its manifest." in proc.stdout
    assert not warnings_of(proc.stdout + proc.stderr)


@pytest.mark.parametrize("kind", ["module", "filter", "role"])
def test_ansible_doc_lists_and_renders_everything(installed, workdir, kind):
    env = {"ANSIBLE_COLLECTIONS_PATH": installed}
    listed = run([DOC, "-t", kind, "--list", "--json", FQCN], CORE, str(workdir), **env)
    assert sorted(name[len(FQCN) + 1:] for name in json.loads(listed.stdout)) == CONTENT[kind]
    names = [f"{FQCN}.{name}" for name in CONTENT[kind]]
    as_json = run([DOC, "-t", kind, "--json", *names], CORE, str(workdir), **env)
    docs = json.loads(as_json.stdout)
    assert sorted(docs) == names
    for name, entry in docs.items():
        doc = entry["entry_points"]["main"] if kind == "role" else entry["doc"]
        assert doc.get("short_description"), name
        # the release that listed it (changelogs/changelog.yaml), else galaxy.yml's version: new in the next release
        assert str(doc.get("version_added")) == RELEASED.get((kind, name.split(".")[-1]), VERSION), (name, doc.get("version_added"))
        assert doc.get("options") or kind == "filter", name
    text = run([DOC, "-t", kind, *names], CORE, str(workdir), **env)
    for name in names:
        # "> MODULE rdma.fabric.x (path)"; roles: "> ROLE: *rdma.fabric.x* (path)"
        assert re.search(rf"^> {kind.upper()}:? \*?{re.escape(name)}\*? \(", text.stdout, re.M), name
    assert not warnings_of(listed.stderr + as_json.stderr + text.stderr)


def test_a_facts_play_runs_on_localhost(installed, workdir):
    infiniband = os.path.isdir("/sys/class/infiniband")
    play = [{
        "name": "RDMA facts of the controller",
        "hosts": "localhost",
        "connection": "local",
        "gather_facts": True,
        "vars": {"ansible_facts_modules": [f"{FQCN}.gid_facts", f"{FQCN}.counter_facts"], "ansible_facts_parallel": False,
                 "ansible_python_interpreter": os.path.join(CORE, "bin", "python"), "has_rdma": infiniband},
        "tasks": [{
            "name": "The facts are there, and without RDMA devices empty",
            "ansible.builtin.assert": {"that": [
                "ansible_facts.rdma_devices is mapping",
                "ansible_facts.rdma_gids is sequence",
                "ansible_facts.rdma_roce_v2_gid_index.by_ipv4 is mapping",
                "ansible_facts.rdma_cm_status.readable is boolean",
                "ansible_facts.rdma_counters is mapping",
                "ansible_facts.rdma_counter_meanings.out_of_sequence.error",
                "has_rdma or ansible_facts.rdma_devices == {}",
                "has_rdma or ansible_facts.rdma_counters == {}",
            ]},
        }, {
            "name": "A filter of the collection",
            "ansible.builtin.assert": {"that": [f"26 | {FQCN}.dscp_to_tos == 104", f"'192.0.2.1' | {FQCN}.ipv4_to_gid is string"]},
        }],
    }]
    playbook = workdir / "facts-play.yml"
    playbook.write_text(json.dumps(play), encoding="utf-8")
    proc = run([os.path.join(CORE, "bin", "ansible-playbook"), "-i", "localhost,", str(playbook)], CORE, str(workdir),
               ANSIBLE_COLLECTIONS_PATH=installed, ANSIBLE_LOCAL_TEMP=str(workdir / "tmp"), ANSIBLE_HOME=str(workdir / "ansible-home"))
    assert re.search(r"^localhost\s+: ok=3\s+changed=0\s+unreachable=0\s+failed=0", proc.stdout, re.M), proc.stdout
    assert not warnings_of(proc.stdout + proc.stderr)
