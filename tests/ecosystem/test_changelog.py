# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The changelog as antsibull-changelog (the tool Ansible collections release with) judges it.

- antsibull-changelog lint passes on the fragments, lint-changelog-yaml on changelogs/changelog.yaml.
- CHANGELOG.rst is what antsibull-changelog generate makes of changelogs/changelog.yaml.
- A release can be cut: a trial release of galaxy.yml's version (--update-existing, plugins read afresh with
  ansible-doc) in a copy of the source succeeds, has a release summary, and lists every module, filter, role and
  playbook the collection ships as new in it.
"""

from __future__ import annotations

import os
import shutil

import pytest
import yaml

from conftest import CONTENT, ECO, TOP, VERSION, run

pytestmark = pytest.mark.xdist_group("changelog")
TOOL = os.path.join(ECO, "bin", "antsibull-changelog")


def test_lint_passes(source):
    proc = run([TOOL, "lint"], ECO, source)
    assert proc.stdout.strip() == "", proc.stdout


def test_lint_changelog_yaml_passes(source):
    proc = run([TOOL, "lint-changelog-yaml", os.path.join("changelogs", "changelog.yaml")], ECO, source)
    assert proc.stdout.strip() == "", proc.stdout


def _copy(source, workdir, name):
    scratch = workdir / name
    shutil.copytree(source, scratch)
    return scratch


def test_changelog_rst_is_generated_from_changelog_yaml(source, workdir):
    scratch = _copy(source, workdir, "generate")
    os.remove(scratch / "CHANGELOG.rst")
    run([TOOL, "generate"], ECO, str(scratch))
    with open(os.path.join(TOP, "CHANGELOG.rst"), encoding="utf-8") as kept:
        assert (scratch / "CHANGELOG.rst").read_text(encoding="utf-8") == kept.read(), \
            "CHANGELOG.rst differs from what antsibull-changelog generate makes of changelogs/changelog.yaml"


def test_a_release_of_the_galaxy_version_lists_everything_the_collection_ships(source, workdir):
    """The trial release of galaxy.yml's version, with the releases before it, lists every module, filter, role and
    playbook exactly once: in the release of its version_added."""
    scratch = _copy(source, workdir, "release")
    run([TOOL, "release", "--version", VERSION, "--update-existing", "--reload-plugins"], ECO, str(scratch))
    with open(scratch / "changelogs" / "changelog.yaml", encoding="utf-8") as handle:
        releases = yaml.safe_load(handle)["releases"]
    assert releases[VERSION]["changes"], releases[VERSION]
    listed = {kind: [] for kind in CONTENT}
    for release in releases.values():
        listed["module"] += [entry["name"] for entry in release.get("modules", [])]
        listed["filter"] += [entry["name"] for entry in release.get("plugins", {}).get("filter", [])]
        listed["role"] += [entry["name"] for entry in release.get("objects", {}).get("role", [])]
        listed["playbook"] += [entry["name"] for entry in release.get("objects", {}).get("playbook", [])]
    for kind, names in CONTENT.items():
        assert sorted(listed[kind]) == names, kind
    text = (scratch / "CHANGELOG.rst").read_text(encoding="utf-8")
    assert f"v{VERSION}" in text and "Release Summary" in text
