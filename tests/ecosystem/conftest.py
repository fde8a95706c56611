# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What `make ecosystem` shares between its checks: the tools' venvs, the collection as a release would see it, the
built tarball and its install into a venv with only ansible-core.

- .venv-ecosystem: tests/requirements-ecosystem.txt (galaxy-importer, antsibull-docs, antsibull-changelog, Sphinx);
  .venv-ecosystem/core-only: nothing but ansible-core. tools/bootstrap makes both.
- The source: the files git tracks, and the new ones it does not ignore, copied to ansible_collections/rdma/fabric in
  a temporary directory: what a clean clone holds, without the checkout's venvs, lab images and reports.
- Every tool runs without the ANSIBLE_* variables of make and without the repository's ansible.cfg, so that what it
  finds is only what the test gives it.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess

import pytest
import yaml

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ECO = os.path.join(TOP, ".venv-ecosystem")
CORE = os.path.join(ECO, "core-only")


def _galaxy() -> dict:
    with open(os.path.join(TOP, "galaxy.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


GALAXY = _galaxy()
FQCN = f"{GALAXY['namespace']}.{GALAXY['name']}"
VERSION = str(GALAXY["version"])


def _filter_names() -> list:
    names = []
    for path in glob.glob(os.path.join(TOP, "plugins", "filter", "*.yml")):
        with open(path, encoding="utf-8") as handle:
            names.append(yaml.safe_load(handle)["DOCUMENTATION"]["name"])
    return sorted(names)


# what the collection ships, read from the source tree: every module, filter (each documented in its own .yml),
# role (each with an argument spec) and playbook
CONTENT = {
    "module": sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(TOP, "plugins", "modules", "*.py"))
                     if not os.path.basename(p).startswith("_")),
    "filter": _filter_names(),
    "role": sorted(os.path.basename(os.path.dirname(os.path.dirname(p)))
                   for p in glob.glob(os.path.join(TOP, "roles", "*", "meta", "argument_specs.yml"))),
    "playbook": sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(TOP, "playbooks", "*.yml"))),
}


def _released() -> dict:
    """{(kind, name): version} of everything changelogs/changelog.yaml lists as new in a release."""
    with open(os.path.join(TOP, "changelogs", "changelog.yaml"), encoding="utf-8") as handle:
        releases = yaml.safe_load(handle)["releases"]
    found = {}
    for version, release in releases.items():
        for kind, entries in [("module", release.get("modules", [])), ("filter", release.get("plugins", {}).get("filter", [])),
                              ("role", release.get("objects", {}).get("role", [])),
                              ("playbook", release.get("objects", {}).get("playbook", []))]:
            found.update({(kind, entry["name"]): str(version) for entry in entries})
    return found


RELEASED = _released()


def tool_env(venv: str, **extra) -> dict:
    """The environment without make's ANSIBLE_* settings and GALAXY_IMPORTER_* overrides, venv's bin first in PATH."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ANSIBLE_", "GALAXY_IMPORTER_"))}
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "")
    env["ANSIBLE_NOCOLOR"] = "1"
    env.update(extra)
    return env


def run(command: list, venv: str, cwd: str, timeout: int = 900, expect_rc: int | None = 0, **extra) -> subprocess.CompletedProcess:
    """Run a tool of venv in cwd; with expect_rc, fail with its output unless it exits with that status."""
    proc = subprocess.run(command, cwd=cwd, env=tool_env(venv, **extra), capture_output=True, text=True, timeout=timeout, check=False)
    if expect_rc is not None:
        assert proc.returncode == expect_rc, f"{' '.join(command)}: rc {proc.returncode}\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
    return proc


def warnings_of(text: str) -> list:
    """ansible-core's [WARNING]/[ERROR] lines, without the one about its own internal _protomatter collection."""
    return [line for line in text.splitlines()
            if line.startswith(("[WARNING]", "[ERROR]", "[DEPRECATION WARNING]")) and "_protomatter" not in line]


@pytest.fixture(scope="session", autouse=True)
def venvs():
    for venv, tool in ((ECO, "galaxy-importer's python"), (CORE, "ansible-core")):
        assert os.path.isfile(os.path.join(venv, "bin", "python")), f"{venv} is missing ({tool}): run tools/bootstrap"


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("ecosystem")


@pytest.fixture(scope="session")
def source(workdir) -> str:
    """A copy of the collection as a clean clone holds it, at ansible_collections/<namespace>/<name>."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=TOP,
                            capture_output=True, check=True, timeout=120).stdout.decode("utf-8").split("\0")
    dest = workdir / "src" / "ansible_collections" / GALAXY["namespace"] / GALAXY["name"]
    for name in filter(None, listed):
        path = os.path.join(TOP, name)
        if os.path.isfile(path):  # a file git tracks but the change deleted is not copied
            os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
            shutil.copy2(path, os.path.join(dest, name), follow_symlinks=False)
    return str(dest)


@pytest.fixture(scope="session")
def tarball(source, workdir) -> str:
    """ansible-galaxy collection build of the source, by the venv with only ansible-core."""
    out = workdir / "dist"
    run([os.path.join(CORE, "bin", "ansible-galaxy"), "collection", "build", "--output-path", str(out), source], CORE, str(workdir))
    built = glob.glob(str(out / "*.tar.gz"))
    assert [os.path.basename(p) for p in built] == [f"{GALAXY['namespace']}-{GALAXY['name']}-{VERSION}.tar.gz"], built
    return built[0]


@pytest.fixture(scope="session")
def installed(tarball, workdir) -> str:
    """The tarball installed by ansible-galaxy of the core-only venv into a collections path of its own."""
    path = workdir / "collections"
    run([os.path.join(CORE, "bin", "ansible-galaxy"), "collection", "install", "--offline", "-p", str(path), tarball], CORE,
        str(workdir), ANSIBLE_HOME=str(workdir / "ansible-home"))
    manifest = path / "ansible_collections" / GALAXY["namespace"] / GALAXY["name"] / "MANIFEST.json"
    assert json.loads(manifest.read_text(encoding="utf-8"))["collection_info"]["version"] == VERSION
    return str(path)
