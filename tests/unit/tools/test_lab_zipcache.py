# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab guests' bytecode cache for zip imports (lab/image/rootfs/.../rdma_fabric_lab_zipcache.py).

Each case runs in a Python of its own (a fresh sys.modules and import system), with the cache in a
temporary directory: the module from a second archive at another path gets the cached code, with
that archive's file names; a changed source compiles again; a damaged entry or an unusable cache
falls back to compiling; install() swaps zipimport's hook and nothing else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ZIPCACHE = os.path.join(TOP, "lab", "image", "rootfs", "usr", "lib", "python3", "dist-packages",
                        "rdma_fabric_lab_zipcache.py")

SOURCES = {
    "pkg/__init__.py": "VALUE = 'package'\n",
    "pkg/mod.py": (
        "def outer():\n"
        "    def inner():\n"
        "        raise ValueError('from inner')\n"
        "    return inner\n"
        "class Thing:\n"
        "    def method(self):\n"
        "        return 'method'\n"
        "ANSWER = 42\n"
    ),
}

# The child: load the importer from its file, point it at CACHE, install it, import from ARCHIVE; with
# NO_COMPILE, compiling is an error anywhere, the importer's own compile() and the builtin that zipimport
# calls (the code must come from the cache, and no step of the import may compile the source to throw it
# away, as zipimport's get_filename() does). It prints what it saw as JSON.
CHILD = r"""
import builtins, importlib.util, json, sys, traceback, zipimport
spec = importlib.util.spec_from_file_location("rdma_fabric_lab_zipcache", sys.argv[1])
zc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(zc)
zc.CachingZipImporter.cache = sys.argv[2]
if sys.argv[4] == "no-compile":
    def refuse(*args, **kwargs):
        raise AssertionError("compiled although the cache had the code")
    zc.compile = builtins.compile = refuse
hooks_before = list(sys.path_hooks)
zc.install()
sys.path.insert(0, sys.argv[3])
import pkg, pkg.mod
try:
    pkg.mod.outer()()
except ValueError:
    frames = [frame.filename for frame in traceback.extract_tb(sys.exc_info()[2])]
print(json.dumps({
    "value": pkg.VALUE, "answer": pkg.mod.ANSWER, "method": pkg.mod.Thing().method(),
    "files": [pkg.__file__, pkg.mod.__file__, pkg.mod.outer.__code__.co_filename,
              pkg.mod.outer().__code__.co_filename, pkg.mod.Thing.method.__code__.co_filename],
    "frames": frames,
    "loader": type(pkg.mod.__loader__).__name__,
    "hooks": [getattr(h, "__name__", repr(h)) for h in sys.path_hooks],
    "hooks_before": [getattr(h, "__name__", repr(h)) for h in hooks_before],
}))
"""


def archive(path, sources):
    with zipfile.ZipFile(path, "w") as handle:
        for name, text in sources.items():
            handle.writestr(name, text)
    return str(path)


def child(cache, zip_path, mode="compile"):
    proc = subprocess.run([sys.executable, "-c", CHILD, ZIPCACHE, str(cache), zip_path, mode],
                          capture_output=True, text=True, check=False, timeout=120, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_second_archive_gets_the_cached_code_under_its_own_paths(tmp_path):
    cache = tmp_path / "cache"
    first = child(cache, archive(tmp_path / "one.zip", SOURCES))
    assert (first["value"], first["answer"], first["method"]) == ("package", 42, "method")
    assert len(os.listdir(cache)) == 2
    other = tmp_path / "elsewhere"
    other.mkdir()
    second = child(cache, archive(other / "two.zip", SOURCES), mode="no-compile")
    assert (second["value"], second["answer"], second["method"]) == ("package", 42, "method")
    where = str(other / "two.zip")
    assert second["files"] == [os.path.join(where, "pkg", "__init__.py")] + [os.path.join(where, "pkg", "mod.py")] * 4
    assert second["frames"][-1] == os.path.join(where, "pkg", "mod.py"), second["frames"]
    assert second["loader"] == "CachingZipImporter"
    assert len(os.listdir(cache)) == 2


def test_a_changed_source_is_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    child(cache, archive(tmp_path / "one.zip", SOURCES))
    changed = dict(SOURCES, **{"pkg/mod.py": SOURCES["pkg/mod.py"].replace("ANSWER = 42", "ANSWER = 43")})
    with pytest.raises(AssertionError, match="compiled although"):
        child(cache, archive(tmp_path / "two.zip", changed), mode="no-compile")
    assert child(cache, archive(tmp_path / "three.zip", changed))["answer"] == 43
    assert len(os.listdir(cache)) == 3


@pytest.mark.parametrize("damage", [b"", b"not marshal data", b"\xe3\x00\x00"])
def test_a_damaged_entry_is_compiled_again_and_replaced(tmp_path, damage):
    cache = tmp_path / "cache"
    child(cache, archive(tmp_path / "one.zip", SOURCES))
    for name in os.listdir(cache):
        (cache / name).write_bytes(damage)
    assert child(cache, archive(tmp_path / "two.zip", SOURCES))["answer"] == 42
    assert child(cache, archive(tmp_path / "three.zip", SOURCES), mode="no-compile")["answer"] == 42


def test_an_unusable_cache_falls_back_to_compiling(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    seen = child(blocker / "cache", archive(tmp_path / "one.zip", SOURCES))
    assert (seen["value"], seen["answer"]) == ("package", 42)


def test_install_swaps_zipimport_only(tmp_path):
    seen = child(tmp_path / "cache", archive(tmp_path / "one.zip", SOURCES))
    assert seen["hooks_before"][0] == "zipimporter"
    assert seen["hooks"] == ["CachingZipImporter"] + seen["hooks_before"][1:]


def test_the_pth_file_installs_it():
    pth = ZIPCACHE[:-3] + ".pth"
    with open(pth, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    # site.py runs a .pth line only when it starts with "import"
    assert lines == ["import rdma_fabric_lab_zipcache; rdma_fabric_lab_zipcache.install()"]
