# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's documentation as antsibull-docs (the Ansible docsite's generator) sees it.

- antsibull-docs lint-collection-docs --plugin-docs passes on the source, with nothing to say.
- A docs site built the way antsibull-docs sphinx-init sets one up (antsibull-docs collection --fail-on-error, then
  Sphinx), from the installed tarball: every module, filter and role has its page, none is antsibull-docs' error page,
  and every documented option has its anchor, fabric_check's among them. The site is built offline: intersphinx gets
  no inventories, so a reference to the Ansible docsite (ansible.builtin's modules, common_return_values) stays
  unresolved; every other Sphinx warning fails.
"""

from __future__ import annotations

import html
import json
import os
import re

import pytest

from conftest import CONTENT, CORE, ECO, FQCN, run

pytestmark = pytest.mark.xdist_group("docs")
NAMESPACE, NAME = FQCN.split(".")
# Sphinx's warning for a reference into the Ansible docsite, which an offline build cannot resolve
EXTERNAL_LABEL = re.compile(r"WARNING: undefined label: '(?!ansible_collections\.%s\.%s\.)[^']+' \[ref\.ref\]$" % (NAMESPACE, NAME))


def test_lint_collection_docs_passes(source):
    proc = run([os.path.join(ECO, "bin", "antsibull-docs"), "lint-collection-docs", "--plugin-docs", "."], ECO, source)
    assert proc.stdout.strip() == "", proc.stdout


@pytest.fixture(scope="module")
def site(installed, workdir) -> dict:
    """antsibull-docs sphinx-init, then its build.sh's two steps, with intersphinx offline; the pages' HTML by name."""
    dest = workdir / "docsite"
    dest.mkdir(mode=0o700)
    env = {"ANSIBLE_COLLECTIONS_PATH": installed, "ANSIBLE_HOME": str(workdir / "ansible-home")}
    antsibull_docs = os.path.join(ECO, "bin", "antsibull-docs")
    run([antsibull_docs, "sphinx-init", "--use-current", "--fail-on-error", "--dest-dir", str(dest), FQCN], ECO, str(workdir), **env)
    with open(dest / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\n# make ecosystem: offline, no inventories to fetch\nintersphinx_mapping = {}\n")
    (dest / "rst").mkdir(mode=0o700, exist_ok=True)
    run([antsibull_docs, "--config-file", "antsibull-docs.cfg", "collection", "--cleanup", "everything", "--fail-on-error",
         "--use-current", "--dest-dir", "rst", FQCN], ECO, str(dest), **env)
    build = run([os.path.join(ECO, "bin", "sphinx-build"), "-M", "html", "rst", "build", "-c", ".", "--keep-going",
                 "-w", "warnings.txt"], ECO, str(dest), **env)
    warnings = [line.split(": ", 1)[1] for line in (dest / "warnings.txt").read_text(encoding="utf-8").splitlines() if ": WARNING: " in line]
    pages = {}
    for kind, names in CONTENT.items():
        if kind == "playbook":
            continue
        for name in names:
            path = dest / "build" / "html" / "collections" / NAMESPACE / NAME / f"{name}_{kind}.html"
            pages[(kind, name)] = path.read_text(encoding="utf-8") if path.exists() else None
    return {"warnings": warnings, "pages": pages, "log": build.stdout}


def test_sphinx_warns_only_about_references_into_the_ansible_docsite(site):
    assert site["warnings"], "no warning at all: the check below would not see a page that failed"
    assert [w for w in site["warnings"] if not EXTERNAL_LABEL.search(w)] == []


@pytest.fixture(scope="module")
def docs(installed, workdir) -> dict:
    """ansible-doc --json of every module, filter and role, by (kind, name)."""
    found = {}
    for kind in ("module", "filter", "role"):
        proc = run([os.path.join(CORE, "bin", "ansible-doc"), "-t", kind, "--json", *(f"{FQCN}.{name}" for name in CONTENT[kind])],
                   CORE, str(workdir), ANSIBLE_COLLECTIONS_PATH=installed)
        for fqcn, entry in json.loads(proc.stdout).items():
            found[(kind, fqcn.rsplit(".", 1)[1])] = entry["entry_points"]["main"] if kind == "role" else entry["doc"]
    return found


@pytest.mark.parametrize("kind, name", [(kind, name) for kind in ("module", "filter", "role") for name in CONTENT[kind]])
def test_every_page_renders_with_every_option(site, docs, kind, name):
    page = site["pages"][(kind, name)]
    assert page is not None, f"no page for the {kind} {name}"
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "was malformed" not in text and "There were some errors parsing the documentation" not in text
    title = f"{FQCN}.{name} {kind}"
    assert title in text, title
    doc = docs[(kind, name)]
    assert doc["short_description"].split(" ")[0] in text
    prefix = "parameter-main--" if kind == "role" else "parameter-"
    for option in doc.get("options") or {}:
        assert f'id="{prefix}{option}"' in page, option


def test_fabric_check_page_shows_the_report_dir_default_and_no_template(site):
    text = html.unescape(re.sub(r"<[^>]+>", "", site["pages"][("role", "fabric_check")]))
    section = text.split("fabric_check_report_dir", 1)[1][:2000]
    assert re.search(r'Default:\s*"fabric-check"', section), section
    assert "{{" not in text
