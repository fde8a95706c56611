# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run external tools the one way this collection does: argv lists, C locale."""

from __future__ import annotations

C_LOCALE = {"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}


def run(module, argv: list, data=None):
    """Run argv (a list, never a shell string) and return (rc, stdout, stderr)."""
    if not isinstance(argv, list):
        raise TypeError("argv must be a list")
    return module.run_command(argv, environ_update=C_LOCALE, data=data, check_rc=False)


# How each manager is told to read a changed file now, and when it reads it otherwise.
_RELOADS = {
    "udevadm": (["control", "--reload"], "udevd reads"),
    "systemctl": (["daemon-reload"], "systemd loads the unit at its next daemon-reload or boot:"),
}


def reload_or_warn(module, tool: str, path: str) -> None:
    """Have udevd (tool udevadm) or systemd (systemctl) read a changed file now; trouble is a warning.

    The file is in place: a host (or container) where the manager does not run,
    or without the tool, still gets it; the warning says when the manager reads it.
    """
    args, later = _RELOADS[tool]
    binary = module.get_bin_path(tool)
    if not binary:
        module.warn(f"persistent: {tool} not found; {later} {path}")
        return
    rc, _out, err = run(module, [binary] + args)
    if rc != 0:
        module.warn(f"persistent: '{' '.join([tool] + args)}' failed ({first_line(err) or f'rc={rc}'}); {later} {path}")


def first_line(text: str) -> str:
    """The first non-empty line of a tool's message, for one-line errors."""
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line
    return ""
