# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Debian root filesystems of a named suite for tests on a Debian 12 host, and a way to run their programs.

The file keeps its first suite's name (it is imported as trixie_root); it builds a root of any suite of
SUITES: trixie (Debian 13, the default), trixie-backports (trixie with its backports, which win for every
package they have: apt's -t trixie-backports) and sid (Debian unstable).

ensure_root(packages, suite="trixie") returns the path of an unpacked root of that suite with those packages
(and their dependencies, no Recommends). It is built once with mmdebstrap from the machine's own apt sources
with the suite name changed (bookworm -> trixie, bookworm-security -> trixie-security, as lab/build-image.sh
does; for trixie-backports, trixie's sources plus trixie-backports beside trixie; for sid, which has no
-updates or -security suite, only sid), kept as a tarball and unpacked next to it:

    ${LAB_CACHE:-~/.cache/rdma-fabric-lab}/roots/<suite>-<key>.tar.zst   the build (mmdebstrap's output)
    ${LAB_CACHE:-~/.cache/rdma-fabric-lab}/roots/<suite>-<key>/          unpacked, read-only by convention

<key> is a digest of the suite, the sorted package list and RECIPE (bump it when the build changes).
Concurrent callers (pytest -n 2) serialise on a per-key lock file (flock); the tarball and the unpacked
directory are made under temporary names and renamed into place, so a reader never sees half of either,
and a build killed half-way leaves only a temporary name that the next build removes.

chroot_argv(root, argv, binds) turns a command into one that runs it inside the root: a private mount
namespace (unshare --mount: nothing leaks to the host, and it goes away with the process) with /proc and
/dev mounted and each host directory of binds bind-mounted at its path inside the root; then chroot.
unshare, sh and chroot exec one another, so the PID of the returned command is the PID of the program.
Needs root.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

SUITE = "trixie"  # the default suite
# suite: (the suite the machine's bookworm is renamed to, the suite added beside it whose packages win, or "")
SUITES = {"trixie": ("trixie", ""), "trixie-backports": ("trixie", "trixie-backports"), "sid": ("sid", "")}
# Suites without -updates and -security companions: those are left out of the sources.
NO_COMPANIONS = ("sid",)
# Suites whose Release file's Valid-Until apt does not check: the mirror here may serve a sid that is weeks
# old (its signature still good, its one-week Valid-Until past), which apt-get update --error-on=any refuses.
NO_VALID_UNTIL = ("sid",)
# Bump when the build below changes in a way the package list does not show.
RECIPE = "1"
# Directories of the root where chroot_argv may bind host directories (made at build time: the cached
# root itself is never written to afterwards).
MOUNT_POINTS = ("/srv/harness",)
BUILD_LIMIT = 1800  # seconds mmdebstrap may take (a cold build downloads ~100 packages)
UNPACK_LIMIT = 600
TOOLS = ("mmdebstrap", "zstd", "unshare", "chroot", "tar")


class RootError(Exception):
    """The root could not be built or unpacked; the message says why."""


def cache_dir() -> str:
    """The roots' cache: LAB_CACHE (lab/labctl.py's image cache, same default) / roots."""
    return os.path.join(os.path.expanduser(os.environ.get("LAB_CACHE", "~/.cache/rdma-fabric-lab")), "roots")


def missing_tools() -> list:
    """What this machine lacks to build or enter a root (callers fail, never skip, when this is not empty)."""
    path = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"])
    missing = [tool for tool in TOOLS if shutil.which(tool, path=path) is None]
    if os.geteuid() != 0:
        missing.append("root (mmdebstrap --mode=root, mount, chroot)")
    return missing


def _check_suite(suite: str) -> None:
    if suite not in SUITES:
        raise ValueError(f"suite {suite!r}: one of {', '.join(SUITES)}")


def root_key(packages, suite: str = SUITE) -> str:
    _check_suite(suite)
    digest = hashlib.sha256(f"suite={suite}\nrecipe={RECIPE}\n".encode())
    for name in sorted(set(packages)):
        digest.update(f"package={name}\n".encode())
    return digest.hexdigest()[:16]


def _say(msg: str) -> None:
    print(f"[debian-root] {msg}", file=sys.stderr, flush=True)


def _suite_sources(text: str, suite: str) -> str:
    """The machine's bookworm sources (deb822 or one-line) as suite's: renamed, companions dropped, backports added."""
    base, extra = SUITES[suite]
    text = text.replace("bookworm", base)
    if base in NO_COMPANIONS:
        companion = re.compile(rf"^{re.escape(base)}-(updates|security)$")
        stanzas = []
        for stanza in re.split(r"\n\s*\n", text):
            match = re.search(r"^Suites:(.*)$", stanza, re.M)
            if match:
                kept = [name for name in match.group(1).split() if not companion.match(name)]
                if not kept:
                    continue
                stanza = stanza[:match.start(1)] + " " + " ".join(kept) + stanza[match.end(1):]
            stanzas.append(stanza)
        text = "\n\n".join(stanzas).rstrip("\n") + "\n"
        text = re.sub(rf"^deb(-src)? .* {re.escape(base)}-(updates|security) .*\n?", "", text, flags=re.M)
    if extra:
        text = re.sub(rf"^(Suites:.* {re.escape(base)})( |$)", rf"\1 {extra}\2", text, flags=re.M)
        text = re.sub(rf"^(deb .* ){re.escape(base)}( .*)$", rf"\g<0>\n\g<1>{extra}\2", text, flags=re.M)
    return text


def _machine_sources(workdir: str, suite: str = SUITE) -> str:
    """The machine's own bookworm apt sources made suite's (_suite_sources), written into workdir."""
    for path in ("/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"):
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError:
            continue
        if re.search(r"^[^#\n]*(Suites:.*bookworm|deb .* bookworm)", text, re.M):
            # mmdebstrap reads deb822 files by their name's ending: keep the name.
            out = os.path.join(workdir, os.path.basename(path))
            with open(out, "w", encoding="utf-8") as handle:
                handle.write(_suite_sources(text, suite))
            return out
    raise RootError(f"no bookworm apt source found in /etc/apt (the {suite} root uses the machine's own mirrors)")


def _build(tarball: str, packages, suite: str = SUITE) -> None:
    """mmdebstrap the root into tarball (zstd), through a temporary name."""
    work = tempfile.mkdtemp(prefix=os.path.basename(tarball) + ".build-", dir=os.path.dirname(tarball))
    try:
        sources = _machine_sources(work, suite)
        partial = os.path.join(work, "root.tar.zst")
        hooks = [f'mkdir -p "$1{point}"' for point in MOUNT_POINTS]
        argv = ["mmdebstrap", "--variant=minbase", "--mode=root", "--quiet", "--format=tar",
                "--include=" + ",".join(sorted(set(packages))),
                '--aptopt=APT::Install-Recommends "false"',
                "--dpkgopt=path-exclude=/usr/share/man/*",
                "--dpkgopt=path-exclude=/usr/share/locale/*",
                "--dpkgopt=path-exclude=/usr/share/doc/*",
                "--dpkgopt=path-include=/usr/share/doc/*/copyright",
                "--dpkgopt=path-exclude=/usr/share/info/*"]
        extra = SUITES[suite][1]
        if extra:  # apt-get -t extra: its packages (and their dependencies there) win over the base suite's
            argv.append(f'--aptopt=APT::Default-Release "{extra}"')
        if suite in NO_VALID_UNTIL:
            argv.append('--aptopt=Acquire::Check-Valid-Until "false"')
        argv += [f"--customize-hook={hook}" for hook in hooks]
        argv += [SUITES[suite][0], partial, sources]
        log = os.path.join(work, "mmdebstrap.log")
        with open(log, "wb") as out:
            try:
                proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                      timeout=BUILD_LIMIT, check=False)
            except subprocess.TimeoutExpired as exc:
                raise RootError(f"mmdebstrap took more than {BUILD_LIMIT}s") from exc
        if proc.returncode != 0:
            with open(log, encoding="utf-8", errors="replace") as handle:
                tail = "".join(handle.readlines()[-30:])
            raise RootError(f"mmdebstrap exited {proc.returncode}:\n{tail}")
        os.rename(partial, tarball)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _unpack(tarball: str, target: str) -> None:
    """Unpack tarball into target, through a temporary name (numeric owners, device nodes, xattrs)."""
    partial = tempfile.mkdtemp(prefix=os.path.basename(target) + ".partial-", dir=os.path.dirname(target))
    try:
        proc = subprocess.run(["tar", "--zstd", "-xpf", tarball, "-C", partial, "--numeric-owner",
                               "--xattrs", "--xattrs-include=*"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=UNPACK_LIMIT, check=False)
        if proc.returncode != 0:
            raise RootError(f"tar -x {tarball} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        os.chmod(partial, 0o755)  # mkdtemp's 0700 would be the root's /
        os.rename(partial, target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _sweep(roots: str, key: str, suite: str = SUITE) -> None:
    """Temporary names of this key that a killed build or unpack left behind (called under the lock)."""
    for name in os.listdir(roots):
        if name.startswith((f"{suite}-{key}.partial-", f"{suite}-{key}.tar.zst.build-")):
            shutil.rmtree(os.path.join(roots, name), ignore_errors=True)


def ensure_root(packages, suite: str = SUITE) -> str:
    """The path of an unpacked root of suite with packages; built and unpacked once per suite and package list."""
    _check_suite(suite)
    missing = missing_tools()
    if missing:
        raise RootError(f"cannot build the {suite} root: missing {', '.join(missing)}")
    roots = cache_dir()
    os.makedirs(roots, exist_ok=True)
    key = root_key(packages, suite)
    target = os.path.join(roots, f"{suite}-{key}")
    tarball = target + ".tar.zst"
    if os.path.isdir(target):
        return target
    with open(target + ".lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isdir(target):  # another worker finished while this one waited
            return target
        _sweep(roots, key, suite)
        if not os.path.exists(tarball):
            _say(f"building {os.path.basename(tarball)} ({', '.join(sorted(set(packages)))}) in {roots}")
            start = time.monotonic()
            _build(tarball, packages, suite)
            _say(f"built in {time.monotonic() - start:.0f}s")
        start = time.monotonic()
        _unpack(tarball, target)
        _say(f"unpacked into {target} in {time.monotonic() - start:.0f}s")
    return target


def chroot_argv(root: str, argv, binds=None) -> list:
    """argv run inside root: own mount namespace, /proc and /dev, binds {host dir: dir in root}, chroot."""
    binds = dict(binds or {})
    for inside in binds.values():
        if inside not in MOUNT_POINTS:
            raise ValueError(f"{inside} is not a mount point of the root (one of {', '.join(MOUNT_POINTS)})")
    steps = [f"mount -t proc proc {shlex.quote(root)}/proc",
             f"mount --rbind /dev {shlex.quote(root)}/dev"]
    steps += [f"mount --bind {shlex.quote(host)} {shlex.quote(root + inside)}" for host, inside in binds.items()]
    script = " && ".join(steps) + ' && exec chroot "$0" "$@"'
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-ec", script, root, *argv]
