#!/usr/bin/python
# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: memlock
short_description: Manage the locked-memory limit (memlock) for logins and systemd services
version_added: 0.1.0
description:
  - Sets or removes C(memlock) entries for one domain in a pam_limits file, by default the drop-in
    C(/etc/security/limits.d/90-rdma-fabric-memlock.conf). RDMA applications pin memory, and
    libibverbs warns when the limit is 32 KiB or less.
  - Every byte of the file that is not a C(memlock) entry of O(domain) is kept as it is (comments,
    tabs, CRLF line ends, a missing final newline). The file is replaced atomically (a temporary file
    in its own directory, written and synced, then a rename) and only when its content changes, so a run
    that changes nothing leaves the file, its inode and its mtime alone.
  - Concurrent runs on the same file are serialised with C(flock) on the file's directory, so no
    entry is lost when several plays edit one file at once.
  - pam_limits applies at login only (C(su -), C(runuser -l), SSH, sudo). With O(systemd=true) the module
    also writes C(DefaultLimitMEMLOCK) into C(/etc/systemd/system.conf.d/90-rdma-fabric-memlock.conf)
    and re-executes the service manager (C(systemctl daemon-reexec)) when that file changes, so services
    started afterwards get the limit. Services that are already running keep their old limit until they restart.
  - Returns the limit in force for a login of the domain, computed from C(/etc/security/limits.conf)
    and C(/etc/security/limits.d/*.conf) with pam_limits' own rules (see RV(effective)).
author:
  - rdma.fabric contributors (@rdma-fabric)
options:
  domain:
    description:
      - Whose limit this is, as pam_limits reads the first column.
      - A user name, V(@group), V(*) for everyone not matched by a user or group entry,
        or a uid/gid range such as V(1000:2000) or V(@100:).
      - V(%group) is accepted and written, but pam_limits honours C(%) domains for C(maxlogins) only, so the
        module warns that such an entry has no effect on C(memlock).
      - White space, V(#) and control characters are refused.
      - At most 255 bytes. Linux-PAM 1.5 reads a limits file 1023 bytes at a time (C(fgets) with a 1024-byte
        buffer), so the rest of a longer line would be read as a line of its own; with this bound every entry the
        module writes (domain, type, C(memlock) and value, tab-separated, no comment) is read by pam_limits as one
        line. An existing entry that the module would rewrite into a line longer than 1022 bytes is refused too.
      - A YAML boolean, number or list is refused (quote a numeric user name); so is text that is not valid UTF-8.
    type: str
    required: true
    version_added: 0.1.0
  limit_type:
    description:
      - Which limit to manage. V(both) writes a C(soft) and a C(hard) entry.
      - An existing C(-) entry (both limits) of the domain is kept for V(both); for V(soft) or V(hard) it is
        turned into an entry for the other limit with its old value.
    type: str
    choices: [soft, hard, both]
    default: both
    version_added: 0.1.0
  value:
    description:
      - The limit in KiB, or V(unlimited), V(infinity) or V(-1) for no limit.
      - Required when O(state=present).
      - At most 32 characters (the largest KiB value has 17 digits); a YAML number is taken as its decimal text.
      - An entry that already has the same meaning (for example V(infinity) for V(unlimited)) is left as it is.
    type: str
    version_added: 0.1.0
  state:
    description:
      - V(present) makes the file set the limit; V(absent) removes the domain's C(memlock) entries of O(limit_type).
      - With V(absent), a file that ends up empty is removed.
    type: str
    choices: [present, absent]
    default: present
    version_added: 0.1.0
  dest:
    description:
      - The limits file to edit, an absolute path whose directory exists. The path is resolved as the kernel
        resolves it before anything is read or written (V(dir/missing/../x.conf) is refused because C(dir/missing)
        does not exist); it must name a regular file or nothing. A directory, a FIFO, a socket or a device, a
        path through a regular file, a symbolic-link loop and names longer than 255 bytes are refused with a
        message naming O(dest), before the file is opened.
      - When O(dest) is a symbolic link, the module writes through it and keeps the link, as
        M(ansible.builtin.copy) does by default. The link's target is replaced atomically (a temporary file in the
        target's directory, then a rename), and with O(state=absent) an emptied target is kept as an empty file
        rather than removed, so the link does not dangle.
      - pam_limits reads only C(/etc/security/limits.conf) and C(/etc/security/limits.d/*.conf); the module
        warns when O(dest) is another file.
    type: path
    default: /etc/security/limits.d/90-rdma-fabric-memlock.conf
    version_added: 0.1.0
  systemd:
    description:
      - Also set C(DefaultLimitMEMLOCK) for systemd services in C(/etc/systemd/system.conf.d/90-rdma-fabric-memlock.conf),
        a file this module owns, and run C(systemctl daemon-reexec) when it changes (never in check mode; listed
        in RV(commands) in both modes).
      - When the drop-in is to change, C(systemctl) must be installed; without it the module fails before it
        writes anything, in check mode too.
      - KiB values are written in bytes, V(unlimited) as C(infinity); different soft and hard values are
        written as C(soft:hard). With O(limit_type=soft) or O(limit_type=hard) the other half keeps the value
        the drop-in has, or takes the same value when there is no drop-in yet.
      - With O(state=absent) the drop-in is removed.
    type: bool
    default: false
    version_added: 0.1.0
  backup:
    description:
      - Keep a timestamped copy of O(dest) (and of the systemd drop-in) before changing it.
    type: bool
    default: false
    version_added: 0.1.0
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.attributes.actiongroup
  - rdma.fabric.attributes.platform
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: linux
notes:
  - "How RV(effective) is computed: the files are read in pam_limits' order (C(limits.conf), then the
    C(limits.d/*.conf) drop-ins sorted by name). An entry applies when it is at least as specific as the one
    that set the limit before it (user or uid range, then C(@group) or gid range, then C(*)); among equally
    specific entries the last one wins; C(%) domains do not apply to C(memlock); a soft limit above the hard
    one is lowered to it."
  - "The login it is computed for: for a user, that user with the groups the system resolves for it; for
    C(@group), a member of that group that has no user entry and no other group entry; for C(*), a user with no
    user or group entry. For C(%group) and ranges it is not computed."
  - Lines the module adds end in LF even in a CRLF file, because pam_limits would read C(unlimited\r) as an invalid value.
  - "A failure after a file was written (the drop-in, then O(dest), then C(systemctl daemon-reexec)) reports
    C(changed=true), and its message ends with what was already done, for example
    (C(already done: wrote /etc/systemd/system.conf.d/90-rdma-fabric-memlock.conf))."
seealso:
  - name: limits.conf(5)
    description: The pam_limits configuration file format.
    link: https://man7.org/linux/man-pages/man5/limits.conf.5.html
  - name: systemd-system.conf(5)
    description: DefaultLimitMEMLOCK and the other service defaults.
    link: https://www.freedesktop.org/software/systemd/man/latest/systemd-system.conf.html
"""

EXAMPLES = r"""
- name: Members of the rdma group may lock unlimited memory, in logins and in services
  rdma.fabric.memlock:
    domain: "@rdma"
    value: unlimited
    systemd: true

- name: A soft limit of 64 GiB for one user
  rdma.fabric.memlock:
    domain: alice
    limit_type: soft
    value: "67108864"

- name: Remove the rdma group's entries and the systemd drop-in
  rdma.fabric.memlock:
    domain: "@rdma"
    state: absent
    systemd: true
"""

RETURN = r"""
dest:
  description: The limits file that was edited.
  returned: always
  type: str
  sample: /etc/security/limits.d/90-rdma-fabric-memlock.conf
entries:
  description: The C(memlock) lines of the domain in O(dest) after the run (what check mode would leave).
  returned: always
  type: list
  elements: str
  sample: ["@rdma\tsoft\tmemlock\tunlimited", "@rdma\thard\tmemlock\tunlimited"]
effective:
  description:
    - The C(memlock) limits in force for a login of the domain after the run (see the notes for the rules),
      in KiB or V(unlimited); C(null) for a limit no entry sets (it is then inherited) or when it cannot be computed.
  returned: always
  type: dict
  contains:
    soft:
      description: Soft limit in KiB, V(unlimited), or null.
      type: raw
      sample: unlimited
    hard:
      description: Hard limit in KiB, V(unlimited), or null.
      type: raw
      sample: unlimited
    soft_from:
      description: The C(file:line) that set the soft limit.
      type: str
      sample: /etc/security/limits.d/90-rdma-fabric-memlock.conf:1
    hard_from:
      description: The C(file:line) that set the hard limit.
      type: str
      sample: /etc/security/limits.d/90-rdma-fabric-memlock.conf:2
    stopped_by:
      description: The C(file:line) of a C(<domain> -) line that turns pam_limits off for this login, else null.
      type: str
      sample: null
  sample: {"soft": "unlimited", "hard": "unlimited", "soft_from": "/etc/security/limits.d/90-rdma-fabric-memlock.conf:1",
           "hard_from": "/etc/security/limits.d/90-rdma-fabric-memlock.conf:2", "stopped_by": null}
systemd:
  description: The systemd drop-in, when O(systemd=true).
  returned: when O(systemd=true)
  type: dict
  contains:
    dest:
      description: Path of the drop-in.
      type: str
      sample: /etc/systemd/system.conf.d/90-rdma-fabric-memlock.conf
    changed:
      description: Whether the drop-in changed (or would change in check mode).
      type: bool
      sample: true
    default_limit_memlock:
      description: The C(DefaultLimitMEMLOCK) value written, or null when the drop-in is removed.
      type: str
      sample: infinity
    reexecuted:
      description: Whether C(systemctl daemon-reexec) ran.
      type: bool
      sample: true
before:
  description:
    - The files the module manages before the run, as RV(diff) shows them, each with its C(path) and C(content)
      (V(null) when the file did not exist).
  returned: always
  type: dict
  contains:
    dest:
      description: O(dest) as given, and its text.
      type: dict
    systemd:
      description: The systemd drop-in, and its text; only with O(systemd=true).
      type: dict
  sample:
    dest: {path: /etc/security/limits.d/90-rdma-fabric-memlock.conf, content: null}
    systemd: {path: /etc/systemd/system.conf.d/90-rdma-fabric-memlock.conf, content: null}
after:
  description:
    - The same files after the run (what check mode would leave), keyed like RV(before); C(content) is V(null)
      for a file that does not exist or was removed.
  returned: always
  type: dict
  contains:
    dest:
      description: O(dest) as given, and its text.
      type: dict
    systemd:
      description: The systemd drop-in, and its text; only with O(systemd=true).
      type: dict
  sample:
    dest: {path: /etc/security/limits.d/90-rdma-fabric-memlock.conf, content: "@rdma\tsoft\tmemlock\tunlimited\n@rdma\thard\tmemlock\tunlimited\n"}
diff:
  description:
    - The text diff of O(dest), or with O(systemd=true) a list of two, O(dest) and the drop-in
      (C(before_header), C(after_header), C(before), C(after) each; a missing file is empty text).
  returned: always
  type: raw
commands:
  description:
    - The commands that changed the host, as lines a person could paste, in order; in check mode the ones
      that would run. With O(systemd=true), C(systemctl daemon-reexec) when the drop-in changes; file writes
      are not commands (see RV(before) and RV(after)).
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/systemctl daemon-reexec"]
backup_file:
  description: The backup of O(dest), when O(backup=true) and it changed.
  returned: when a backup was made
  type: str
  sample: /etc/security/limits.d/90-rdma-fabric-memlock.conf.12345.2025-01-01@00:00:00~
"""

import grp
import os
import pwd

from ansible_collections.rdma.fabric.plugins.module_utils import _args, _limits, _kit


def _resolve_user(name):
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    gids = os.getgrouplist(name, entry.pw_gid)
    names = []
    for gid in gids:
        try:
            names.append(grp.getgrgid(gid).gr_name)
        except KeyError:
            continue
    return entry.pw_uid, entry.pw_gid, names, gids


def _resolve_group(name):
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        return None


def _effective(domain, dest, dest_text):
    """Limits in force for a login of domain, with dest's planned text in place of what is on disk."""
    login = _limits.login_for_domain(domain, _resolve_user, _resolve_group)
    if login is None:
        return {"soft": None, "hard": None, "soft_from": None, "hard_from": None, "stopped_by": None}
    names = set(_list_dir(_limits.LIMITS_DIR))
    dest = os.path.abspath(dest)
    if os.path.dirname(dest) == os.path.abspath(_limits.LIMITS_DIR):
        names.add(os.path.basename(dest))
    files = []
    for name in _limits.limits_files_order(_limits.LIMITS_CONF, _limits.LIMITS_DIR, names):
        if os.path.abspath(name) == dest:
            text = dest_text
        else:
            try:
                text = _kit.read_file(name)
            except _kit.Failure:
                text = None
        if text is not None:
            files.append((name, text))
    return _limits.effective(files, login)


def _list_dir(directory):
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _read_by_pam(dest):
    dest = os.path.abspath(dest)
    if dest == os.path.abspath(_limits.LIMITS_CONF):
        return True
    name = os.path.basename(dest)
    return os.path.dirname(dest) == os.path.abspath(_limits.LIMITS_DIR) and name.endswith(".conf") and not name.startswith(".")


class _Task:
    """The validated options and the two edits they stand for: the limits file and the systemd drop-in."""

    def __init__(self, params):
        self.domain = _limits.validate_domain(params["domain"])
        self.kinds = _limits.kinds_for(params["limit_type"])
        self.present = params["state"] == "present"
        self.value = _limits.validate_value(params["value"]) if self.present else None
        self.dest = params["dest"]
        self.real_dest = _limits.resolve_dest(self.dest)  # a symbolic link's target: the link is kept
        self.systemd = params["systemd"]
        self.backup = params["backup"]

    def warn(self, module):
        if self.domain.startswith("%"):
            module.warn(f"domain {self.domain!r}: pam_limits applies '%' domains to maxlogins only, so this memlock entry has no effect")
        if not _read_by_pam(self.dest):
            module.warn(f"dest {self.dest!r} is not read by pam_limits (it reads {_limits.LIMITS_CONF} and {_limits.LIMITS_DIR}/*.conf)")

    def limits_text(self, text):
        if self.present:
            return _limits.apply_present(text or "", self.domain, self.kinds, self.value)
        return None if text is None else _limits.apply_absent(text, self.domain, self.kinds)

    def dropin_text(self, text):
        return _limits.systemd_dropin(text, self.kinds, self.value) if self.present else None


class _Files:
    """The limits file's update and, with systemd=true, the drop-in's (UpdateResult each)."""

    def __init__(self, limits, dropin=None, systemctl=None):
        self.limits = limits
        self.dropin = dropin
        self.systemctl = systemctl

    @property
    def reexec(self) -> bool:
        return self.dropin is not None and self.dropin.changed


def _update(kit, task, path, transform, check, remove_when_empty=False):
    """One locked update of path through the kit's atomic writer; with check, a read and a transform only."""
    try:
        return _limits.locked_update(path, transform, check_mode=check, write=kit.write_file, remove=kit.remove_file,
                                     backup=kit.module.backup_local if task.backup else None,
                                     remove_when_empty=remove_when_empty)
    except OSError as err:
        raise _kit.Failure(f"{'reading' if check else 'writing'} {err.filename or path}: {err.strerror}") from None


def _plan(kit, task):
    """Both edits, read and transformed under their locks and written nowhere: a bad combination fails here."""
    limits = _update(kit, task, task.real_dest, task.limits_text, True, task.real_dest == task.dest)
    files = _Files(limits, _update(kit, task, _limits.SYSTEMD_DROPIN, task.dropin_text, True) if task.systemd else None)
    if files.reexec:
        files.systemctl = kit.tool("systemctl", "install systemd, or use systemd=false on a host that does not run it")
    return files


def _apply(kit, task, plan):
    """The drop-in first (when it changes), then the limits file, each read again under its lock."""
    dropin = _update(kit, task, _limits.SYSTEMD_DROPIN, task.dropin_text, False) if plan.reexec else plan.dropin
    return _Files(_update(kit, task, task.real_dest, task.limits_text, False, task.real_dest == task.dest), dropin, plan.systemctl)


def _reexec_failed(rc, out, err):
    return f"systemctl daemon-reexec failed (rc {rc}): {_kit.first_line(err or out)}"


def _warn_overridden(module, task, effective):
    if not task.present:
        return
    wanted = _limits.value_kib(task.value)
    for kind in task.kinds:
        if effective[kind] is not None and effective[kind] != wanted:
            where = effective[f"{kind}_from"] or "the hard limit"
            module.warn(f"{task.domain} {kind} memlock in force is {effective[kind]}, not {wanted}: set by {where}")


def _view(path, text):
    return {"path": path, "content": text}


def _result(task, files, effective, reexecuted):
    """The result keys: the limits file's entries and effective limits, the drop-in, before/after and diff."""
    changes = _kit.Changes()
    changes.add("dest", _view(task.dest, files.limits.before), _view(task.dest, files.limits.after))
    diff = _kit.text_diff(task.dest, files.limits.before, files.limits.after)
    result = dict(dest=task.dest, entries=_limits.managed_lines(files.limits.after or "", task.domain), effective=effective)
    if files.limits.backup:
        result["backup_file"] = files.limits.backup
    if task.systemd:
        dropin = files.dropin
        changes.add("systemd", _view(_limits.SYSTEMD_DROPIN, dropin.before), _view(_limits.SYSTEMD_DROPIN, dropin.after))
        diff = [diff, _kit.text_diff(_limits.SYSTEMD_DROPIN, dropin.before, dropin.after)]
        result["systemd"] = dict(dest=_limits.SYSTEMD_DROPIN, changed=dropin.changed,
                                 default_limit_memlock=_limits.systemd_shown(dropin.after), reexecuted=reexecuted)
    return dict(result, changed=changes.changed, diff=diff, before=changes.before, after=changes.after)


def main():
    module = _args.module(
        argument_spec=dict(
            domain=dict(type="str", required=True),
            limit_type=dict(type="str", default="both", choices=["soft", "hard", "both"]),
            value=dict(type="str"),
            state=dict(type="str", default="present", choices=["present", "absent"]),
            dest=dict(type="path", default=_limits.DEFAULT_DEST),
            systemd=dict(type="bool", default=False),
            backup=dict(type="bool", default=False),
        ),
        required_if=[("state", "present", ["value"])],
        numbers=("value",),
        supports_check_mode=True,
    )
    kit = _kit.Kit(module)
    with kit.failures():
        task = _Task(module.params)
        task.warn(module)
        files = _plan(kit, task)
        if not module.check_mode:
            files = _apply(kit, task, files)
        if files.reexec:
            kit.change([files.systemctl, "daemon-reexec"], explain=_reexec_failed)
        effective = _effective(task.domain, task.dest, files.limits.after)
        _warn_overridden(module, task, effective)
        kit.exit(**_result(task, files, effective, reexecuted=files.reexec and not module.check_mode))


if __name__ == "__main__":
    main()
