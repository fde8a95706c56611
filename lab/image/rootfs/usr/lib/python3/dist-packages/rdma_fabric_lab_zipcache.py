# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab guests' bytecode cache for modules imported from zip archives.

In the lab's VMs and containers only (lab/image; loaded by rdma_fabric_lab_zipcache.pth). Every
task that Ansible runs without mitogen sends its module as a zip archive (AnsiballZ), and Python's
zipimport compiles every module of it from source each time: on the emulated CPU that is about
a third of the 2-2.5 s a module takes (ansible.module_utils.basic and what it imports). Python
compiles each of them twice, in fact: zipimport's get_filename() compiles the module only to learn
which file it comes from (import asks for it when it makes the module's spec), and get_code()
compiles it again. This keeps the compiled code of each source text, keyed by the text's SHA-256
and the interpreter's bytecode magic, in /var/cache/rdma-fabric-lab-zipimport, and hands the same
source the same code object again; get_filename() names the source's path without compiling. The
code that runs is the code Python would compile from that source: only its file names are set to
the archive's paths, as zipimport sets them. Anything unexpected (no source, an unreadable or
unwritable cache, a damaged entry) falls back to zipimport's own compilation.
"""

import marshal
import os
import sys
import types
import zipimport

CACHE = "/var/cache/rdma-fabric-lab-zipimport"


def _retarget(code, filename):
    consts = tuple(_retarget(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


class CachingZipImporter(zipimport.zipimporter):
    """zipimport's importer, with compiled source kept across processes."""

    cache = CACHE

    def _source(self, fullname):
        """(source text, file name) of fullname's .py in the archive; None when it has none."""
        try:
            source = self.get_source(fullname)
            package = self.is_package(fullname)
        except Exception:  # pylint: disable=broad-except
            return None
        if source is None:
            return None
        inner = self.prefix + fullname.rpartition(".")[2] + ("/__init__.py" if package else ".py")
        return source, self.archive + os.sep + inner.replace("/", os.sep)

    def get_filename(self, fullname):
        found = self._source(fullname)
        if found is None:
            return super().get_filename(fullname)
        return found[1]

    def get_code(self, fullname):
        found = self._source(fullname)
        if found is None:
            return super().get_code(fullname)
        source, filename = found
        import hashlib  # pylint: disable=import-outside-toplevel
        from importlib.util import MAGIC_NUMBER  # pylint: disable=import-outside-toplevel

        key = hashlib.sha256(MAGIC_NUMBER + source.encode("utf-8", "surrogateescape")).hexdigest()
        entry = os.path.join(self.cache, key)
        try:
            with open(entry, "rb") as handle:
                return _retarget(marshal.load(handle), filename)
        except (OSError, EOFError, ValueError, TypeError):
            pass
        code = compile(source, filename, "exec", dont_inherit=True)
        try:
            os.makedirs(self.cache, mode=0o755, exist_ok=True)
            temp = f"{entry}.{os.getpid()}"
            with open(temp, "wb") as handle:
                marshal.dump(code, handle)
            os.replace(temp, entry)
        except OSError:
            pass
        return code


def install():
    """Put the caching importer in zipimport's place among the path hooks."""
    sys.path_hooks[:] = [CachingZipImporter if hook is zipimport.zipimporter else hook for hook in sys.path_hooks]
    for path, finder in list(sys.path_importer_cache.items()):
        if type(finder) is zipimport.zipimporter:  # pylint: disable=unidiomatic-typecheck
            del sys.path_importer_cache[path]
