# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A manifest of what rdma.fabric can change on a host: a test-only Ansible module.

labplay.py runs it on the lab VMs as the module `manifest` (ANSIBLE_LIBRARY points
here; under mitogen it runs inside the warm interpreter, in well under a second);
the tests import differences() from it.

For every file and directory under TREES: inode, size, mtime, mode and, for regular
files and configfs attributes, a SHA-256 of the content; for symlinks the target.
Then the output of the commands in COMMANDS and the loaded kernel modules.
NetworkManager's profiles are the files in /etc and /run. Two manifests are equal
exactly when nothing rdma.fabric touches changed.

configfs (like sysfs) makes its inodes when a path is looked up and may drop them
again, so an attribute read twice can show a new inode number and mtime while
nothing was written (Debian 13's kernel did so between two reads of a play). Under
/sys, differences() compares only existence, type, mode, size and content; with
compare_to the module returns differences() against an earlier manifest.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess

TREES = (
    "/sys/kernel/config/rdma_cm",
    "/etc/security",
    "/etc/systemd",
    "/etc/udev/rules.d",
    "/etc/modules-load.d",
    "/etc/modprobe.d",
    "/etc/rdma-fabric",
    "/etc/nfs.conf.d",
    "/etc/exports.d",
    "/etc/NetworkManager/system-connections",
    "/run/NetworkManager/system-connections",
)

UNSTABLE_IN_SYS = ("inode", "mtime_ns")

COMMANDS = {
    "rdma link": ["rdma", "-j", "link", "show"],
    "rdma dev": ["rdma", "-j", "dev", "show"],
}


def entry(path: str) -> dict:
    info = os.lstat(path)
    item = {"inode": info.st_ino, "size": info.st_size, "mtime_ns": info.st_mtime_ns, "mode": oct(info.st_mode)}
    if stat.S_ISLNK(info.st_mode):
        item["target"] = os.readlink(path)
    elif stat.S_ISREG(info.st_mode):
        try:
            with open(path, "rb") as handle:
                item["sha256"] = hashlib.sha256(handle.read()).hexdigest()
        except OSError as exc:
            item["error"] = exc.strerror
    return item


def tree(top: str) -> dict:
    if not os.path.lexists(top):
        return {}
    found = {top: entry(top)}
    for root, dirs, files in os.walk(top):
        for name in sorted(dirs) + sorted(files):
            path = os.path.join(root, name)
            found[path] = entry(path)
    return found


def command(argv: list) -> dict:
    env = dict(os.environ, LC_ALL="C", LANG="C")
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=60)
    except OSError as exc:
        return {"error": exc.strerror}
    return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def take(trees=TREES, commands=None) -> dict:
    files = {}
    for top in trees:
        files.update(tree(top))
    with open("/proc/modules", encoding="ascii") as handle:
        modules = sorted(line.split()[0] for line in handle)
    return {"files": files, "commands": {name: command(argv) for name, argv in (commands or COMMANDS).items()},
            "kernel modules": modules}


def differences(before: dict, after: dict, ignore=(), directories_by_mode=False) -> list:
    """What changed between two manifests, one line per path or command.

    ignore: entry keys not to compare anywhere (for example inode and mtime_ns, to
    compare files by content only); under /sys, UNSTABLE_IN_SYS is never compared.
    directories_by_mode: a directory that is in both compares by its mode alone (its
    mtime and size move when an entry comes and goes; its inode when it was made again).
    """
    lines = []
    for path in sorted(set(before["files"]) | set(after["files"])):
        old, new = before["files"].get(path), after["files"].get(path)
        skip = set(ignore) | (set(UNSTABLE_IN_SYS) if path.startswith("/sys/") else set())
        if directories_by_mode and old and new and all(stat.S_ISDIR(int(item["mode"], 8)) for item in (old, new)):
            skip |= set(old) | set(new)
            skip.discard("mode")
        if skip and old and new:
            old, new = ({key: value for key, value in item.items() if key not in skip} for item in (old, new))
        if old != new:
            what = "added" if old is None else "removed" if new is None else ", ".join(
                key for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key))
            lines.append(f"{path}: {what}")
    for name in sorted(set(before["commands"]) | set(after["commands"])):
        if before["commands"].get(name) != after["commands"].get(name):
            lines.append(f"{name}: {before['commands'].get(name)} -> {after['commands'].get(name)}")
    if before["kernel modules"] != after["kernel modules"]:
        lines.append(f"kernel modules: {before['kernel modules']} -> {after['kernel modules']}")
    return lines


def main() -> None:
    from ansible.module_utils.basic import AnsibleModule  # pylint: disable=import-outside-toplevel

    module = AnsibleModule(argument_spec={"trees": {"type": "list", "elements": "str", "default": list(TREES)},
                                          "compare_to": {"type": "dict"},
                                          "directories_by_mode": {"type": "bool", "default": False}},
                           supports_check_mode=True)
    manifest = take(module.params["trees"])
    result = {"changed": False, "manifest": manifest}
    if module.params["compare_to"] is not None:
        # the same comparison as the Python tests (differences()), so a playbook asserts differences == []
        result["differences"] = differences(module.params["compare_to"], manifest,
                                            directories_by_mode=module.params["directories_by_mode"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
