# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The module kit: how every module of this collection runs tools, reads and writes files and reports.

One Kit per module run. It holds the run's two records:

- ``commands``: each command that changes the host, as a line a person could paste (``shlex``
  quoting), in order; in check mode the ones that would run. Sysfs and configfs writes appear as
  ``echo VALUE > FILE``. The result of every module carries it (a list of strings).
- ``done``: what this run has changed so far (never in check mode). A failure after some changes
  reports ``changed=true`` and ends its one-line message with ``(already done: a; b)``.

Code that finds a problem raises Failure (or ValueError from the pure helpers) with one line naming
the option, the value and what is allowed; ``with kit.failures():`` turns either into fail_json
with the progress above. Tools run as argv lists with a C locale; files are written atomically in
their own directory (a temporary file, fsync, the old mode kept, then a rename); sysfs and configfs
attributes with one write(2) and a read-back.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile

from ansible_collections.rdma.fabric.plugins.module_utils import _sysfs

C_LOCALE = {"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}

# How each manager is told to read a changed file now, and when it reads it otherwise.
_RELOADS = {
    "udevadm": (["control", "--reload"], "udevd reads"),
    "systemctl": (["daemon-reload"], "systemd loads the unit at its next daemon-reload or boot:"),
}


class Failure(Exception):
    """A one-line failure; Kit.failures() reports it with what was already done."""


def first_line(text: str) -> str:
    """The first non-empty line of a tool's message, for one-line errors."""
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line
    return ""


def command_line(argv: list) -> str:
    """argv as one line a shell would split back into the same words."""
    return " ".join(shlex.quote(str(word)) for word in argv)


def run(module, argv: list, data=None):
    """Run argv (a list, never a shell string) with a C locale and return (rc, stdout, stderr)."""
    if not isinstance(argv, list):
        raise TypeError("argv must be a list")
    return module.run_command(argv, environ_update=C_LOCALE, data=data, check_rc=False)


def read_file(path: str, what: str = ""):
    """A text file's content, or None when it does not exist; any other error is a Failure (what prefixes it).

    Bytes that are not UTF-8 decode with surrogateescape, so write_file puts them back as they were.
    """
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    except OSError as err:
        raise Failure(f"{what}cannot read {path}: {err.strerror}") from None


class Kit:
    """The tools, files and result of one module run."""

    def __init__(self, module):
        self.module = module
        self.commands = []
        self.done = []

    # tools
    def tool(self, name: str, hint: str) -> str:
        """The path of a tool, or a Failure naming it and how to install it."""
        path = self.module.get_bin_path(name)
        if not path:
            raise Failure(f"{name}: command not found; {hint}")
        return path

    def query(self, argv: list, data=None):
        """Run a command that only reads: (rc, stdout, stderr)."""
        return run(self.module, argv, data)

    def change(self, argv: list, explain=None, data=None):
        """Run a command that changes the host: recorded in commands, skipped in check mode.

        A non-zero exit is a Failure: explain(rc, stdout, stderr) words it, or the command line and
        the tool's first line. Returns stdout ('' in check mode).
        """
        line = command_line(argv)
        self.commands.append(line)
        if self.module.check_mode:
            return ""
        rc, out, err = run(self.module, argv, data)
        if rc != 0:
            self.commands.pop()
            raise Failure(explain(rc, out, err) if explain else f"{line} failed (rc={rc}): {first_line(err or out) or 'no message'}")
        self.done.append(line)
        return out

    def reload_or_warn(self, tool: str, path: str) -> None:
        """Have udevd (tool udevadm) or systemd (systemctl) read a changed file now; trouble is a warning.

        The file is in place: a host (or container) where the manager does not run, or without the
        tool, still gets it; the warning says when the manager reads it.
        """
        args, later = _RELOADS[tool]
        binary = self.module.get_bin_path(tool)
        if not binary:
            self.module.warn(f"persistent: {tool} not found; {later} {path}")
            return
        rc, _out, err = run(self.module, [binary] + args)
        if rc != 0:
            self.module.warn(f"persistent: '{' '.join([tool] + args)}' failed ({first_line(err) or f'rc={rc}'}); {later} {path}")

    # files
    def write_file(self, path: str, text, mode: int = 0o644, what: str = "", keep_mode: bool = True) -> None:
        """Replace path with text atomically: a temporary file in the same directory, fsync, then a rename.

        text is str (written as UTF-8, bytes it could not decode kept through surrogateescape) or bytes.
        An existing file keeps its mode unless keep_mode is false; a new one gets mode. Recorded in
        done; the caller gates on check mode. what prefixes a failure ('persistent: ').
        """
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")
        directory = os.path.dirname(path) or "."
        tmp = None
        try:
            os.makedirs(directory, mode=0o755, exist_ok=True)
            if keep_mode:
                try:
                    mode = os.stat(path).st_mode & 0o7777
                except FileNotFoundError:
                    pass
            fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=directory)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, mode)
        except OSError as err:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
            raise Failure(f"{what}cannot write {path}: {err.strerror}") from None
        self.module.atomic_move(tmp, path)  # it gives the new file an existing one's mode and owner
        self.done.append(f"wrote {path}")
        if not keep_mode:
            try:
                os.chmod(path, mode)
            except OSError as err:
                raise Failure(f"{what}cannot set mode {mode:04o} on {path}: {err.strerror}") from None

    def remove_file(self, path: str, what: str = "") -> None:
        """Remove path (gone already is fine); recorded in done."""
        try:
            os.unlink(path)
        except FileNotFoundError:
            return
        except OSError as err:
            raise Failure(f"{what}cannot remove {path}: {err.strerror}") from None
        self.done.append(f"removed {path}")

    def write_attr(self, filename: str, value, what: str = "", done: str = "", check=None) -> str:
        """A sysfs/configfs attribute: one write(2), then a read-back.

        The read-back must equal value, or, for files that read back something else (a driver's whole
        table), pass check(read_back), which raises Failure. Recorded in commands (echo VALUE > FILE)
        and, with done's wording or the command, in done. Raises _sysfs.AttrWriteError as it comes
        (callers explain some errnos), and nothing of it is recorded.
        """
        text = str(value)
        line = f"echo {shlex.quote(text)} > {shlex.quote(filename)}"
        self.commands.append(line)
        if self.module.check_mode:
            return text
        try:
            back = _sysfs.write_attr(filename, text)
        except _sysfs.AttrWriteError:
            self.commands.pop()
            raise
        if check is not None:
            check(back)
        elif (back or "").strip() != text:
            raise Failure(f"{what}wrote {text!r} to {filename} but it reads back {back!r}")
        self.done.append(done or line)
        return back

    def record(self, argv: list) -> None:
        """A command the module carries out by other means (os.mkdir for 'mkdir'), named in commands."""
        self.commands.append(command_line(argv))

    # the result
    def fail(self, msg: str, **extra) -> None:
        """fail_json with the run's progress: changed when something was done, and what."""
        if self.done:
            msg = f"{msg} (already done: {'; '.join(self.done)})"
        self.module.fail_json(msg=msg, changed=bool(self.done), commands=list(self.commands), **extra)

    @contextlib.contextmanager
    def failures(self):
        """Report a Failure or ValueError raised inside the block as a one-line failure."""
        try:
            yield self
        except (Failure, ValueError) as err:
            self.fail(str(err))

    def exit(self, changed: bool, **result) -> None:
        """exit_json with commands; changed is also true when anything was done."""
        self.module.exit_json(changed=bool(changed or self.done), commands=list(self.commands), **result)


class Changes:
    """Before/after of the state a module manages, one key per thing, for diff and changed."""

    def __init__(self):
        self.before = {}
        self.after = {}

    def add(self, key: str, before, after) -> None:
        self.before[key] = before
        self.after[key] = after

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def keys_changed(self) -> list:
        return [key for key in self.before if self.before[key] != self.after[key]]

    def diff(self) -> dict:
        return {"before": dict(self.before), "after": dict(self.after)}


def text_diff(path: str, before, after) -> dict:
    """A file's diff entry as Ansible's diff callback shows it (headers, text)."""
    return {"before_header": path, "after_header": path, "before": before or "", "after": after or ""}
