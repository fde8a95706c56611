# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""pam_limits memlock entries and the systemd DefaultLimitMEMLOCK drop-in.

The pure part (validators, the line model, the edits, the effective-limit
rules, the drop-in renderer) does no I/O. Files are handled as text decoded
with ``surrogateescape``, so every byte that is not a managed entry survives
an edit unchanged, whatever its encoding. Lines are split on ``\\n`` only,
as pam_limits reads them with getline(3).

The I/O part at the end (``locked_update``) serialises read-modify-write on
one file with flock(2) on the file's directory; the write itself is the
caller's (the module kit's atomic ``Kit.write_file`` and ``Kit.remove_file``).

The rules below follow Linux-PAM's pam_limits.c (1.5):

- a line is: optional leading white space, then domain, type and item
  separated by spaces or tabs, then the value (the rest, trimmed of spaces and
  tabs); ``#`` starts a comment anywhere; type, item and value are compared
  in lower case;
- ``unlimited``, ``infinity``, ``-1`` and ``-`` mean no limit; other values
  are read with strtoull (leading digits) in KiB; a value that does not start
  with a number makes the line ignored;
- files: ``/etc/security/limits.conf`` then ``/etc/security/limits.d/*.conf``
  sorted by name (strcmp);
- an entry applies when it is at least as specific as the one that set the
  limit before it: user (and uid range) beats ``@group`` (and gid range),
  which beats ``*``; ``%`` and ``%group`` entries are ignored for memlock;
  among equally specific entries the last one read wins;
- a two-field line ``<domain> -`` that applies stops pam_limits from setting
  any limit at all.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat

from ansible_collections.rdma.fabric.plugins.module_utils import _kit

MANAGED_ITEM = "memlock"
KINDS = ("soft", "hard")
LIMITS_CONF = "/etc/security/limits.conf"
LIMITS_DIR = "/etc/security/limits.d"
DEFAULT_DEST = "/etc/security/limits.d/90-rdma-fabric-memlock.conf"
SYSTEMD_DROPIN = "/etc/systemd/system.conf.d/90-rdma-fabric-memlock.conf"

UNLIMITED = "unlimited"
INFINITY_WORDS = ("unlimited", "infinity", "-1", "-")
RLIM_INFINITY = 2 ** 64 - 1
# pam_limits turns KiB values at or above RLIM_INFINITY / 1024 into "unlimited"
MAX_KIB = RLIM_INFINITY // 1024 - 1

SOURCE_USER = 0
SOURCE_GROUP = 1
SOURCE_DEFAULT = 4
SOURCE_NONE = 6
SOURCE_NAMES = {SOURCE_USER: "user", SOURCE_GROUP: "group", SOURCE_DEFAULT: "default"}

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]*\$?"
_DOMAIN = re.compile(r"\A(?:\*|%|[@%]?" + _NAME + r"|@?[0-9]*:[0-9]*|%:[0-9]+)\Z")
_GROUP = re.compile(r"\A" + _NAME + r"\Z")
GROUP_NAME_MAX = 32  # groupadd's limit on most distributions (GROUP_NAME_MAX_LENGTH)
# Linux-PAM 1.5's parse_config_file reads a limits file with fgets(buf, 1024): 1023 bytes at a time, so a
# longer line is read as two lines, the second one on its own. Every line the module writes or rewrites is
# kept to PAM_LINE_MAX bytes plus its newline; the fields are bounded so that a new entry always fits.
PAM_LINE_MAX = 1022
DOMAIN_MAX = 255  # bytes: LOGIN_NAME_MAX (256) without the NUL; user and group names are far shorter
VALUE_TEXT_MAX = 32  # characters of a value as given; MAX_KIB has 17 digits
PATH_MAX = 4095  # bytes, without the NUL
NAME_MAX = 255  # bytes of one path component
_RANGE = re.compile(r"\A[@%]?([0-9]*):([0-9]*)\Z")
_SPACE = " \t"
_LEADING = " \t\n\r\v\f"
_LINE = re.compile(
    r"\A(?P<lead>[ \t\n\r\v\f]*)(?P<domain>[^ \t]+)(?P<s1>[ \t]+)(?P<type>[^ \t]+)(?P<s2>[ \t]+)"
    r"(?P<item>[^ \t]+)(?P<s3>[ \t]+)(?P<value>.*?)(?P<trail>[ \t]*)\Z",
    re.DOTALL,
)
_STRTOULL = re.compile(r"\A[ \t\n\r\v\f]*([+-]?)([0-9]+)")


# --- validation ---------------------------------------------------------------

def validate_domain(value, option: str = "domain") -> str:
    """A limits.conf domain: '*', a user, '@group', '%group' or a uid/gid range.

    White space, '#' and control characters would change how the line is read,
    so they are refused along with anything else outside these forms.
    """
    allowed = (f"'*', a user name, '@group', '%group', or a range like '1000:2000' / '@100:'; no white space or '#'; "
               f"at most {DOMAIN_MAX} bytes")
    if isinstance(value, str) and len(value.encode("utf-8", "surrogateescape")) > DOMAIN_MAX:
        raise ValueError(f"{option}: {len(value.encode('utf-8', 'surrogateescape'))} bytes is too long; allowed: {allowed}")
    if not isinstance(value, str) or not _DOMAIN.match(value) or not _range_ok(value):
        raise ValueError(f"{option}: invalid limits domain {value!r}; allowed: {allowed}")
    return value


def validate_group(value, option: str = "group") -> str:
    """A group name that groupadd takes and '@<group>' names in limits.conf (the user/group form of a domain)."""
    allowed = f"1-{GROUP_NAME_MAX} letters, digits, '_', '.' or '-' (not first), an optional final '$', not only digits"
    if not isinstance(value, str) or not _GROUP.match(value) or len(value) > GROUP_NAME_MAX or value.isdigit():
        raise ValueError(f"{option}: invalid group name {value!r}; allowed: {allowed}")
    return value


def _range_ok(domain: str) -> bool:
    match = _RANGE.match(domain)
    if not match:
        return True
    low, high = match.groups()
    if domain.startswith("%"):
        return low == "" and high != ""
    if low == "" and high == "":
        return False
    return not (low and high and int(low) > int(high))


def validate_value(value, option: str = "value") -> str:
    """Return the value as it will be written: a limit word or a KiB integer.

    'unlimited', 'infinity' and '-1' keep their spelling (lower case); an
    integer is written in decimal without leading zeros.
    """
    allowed = f"'unlimited', 'infinity', '-1' or an integer 0-{MAX_KIB} (KiB)"
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{option}: {value!r} is not a limit; allowed: {allowed}")
    if isinstance(value, int):
        if value.bit_length() > 64:
            raise ValueError(f"{option}: an integer of {value.bit_length()} bits is out of range; allowed: {allowed}")
        text = str(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if len(text) > VALUE_TEXT_MAX:
            raise ValueError(f"{option}: {len(text)} characters is too long for a limit; allowed: {allowed}")
    else:
        raise ValueError(f"{option}: {value!r} is not a limit; allowed: {allowed}")
    if text in ("unlimited", "infinity", "-1"):
        return text
    if not re.fullmatch(r"[0-9]+", text):
        raise ValueError(f"{option}: {value!r} is not a limit; allowed: {allowed}")
    number = int(text)
    if number > MAX_KIB:
        raise ValueError(f"{option}: {number} is out of range; allowed: {allowed}")
    return str(number)


def kinds_for(limit_type: str) -> tuple:
    """'both' -> ('soft', 'hard'); 'soft' -> ('soft',); 'hard' -> ('hard',)."""
    if limit_type == "both":
        return KINDS
    if limit_type in KINDS:
        return (limit_type,)
    raise ValueError(f"limit_type: invalid value {limit_type!r}; allowed: soft, hard, both")


# --- values -------------------------------------------------------------------

def value_kib(text):
    """Read a value like pam_limits: 'unlimited' or an int of KiB; None when ignored."""
    text = text.lower()
    if text in INFINITY_WORDS:
        return UNLIMITED
    match = _STRTOULL.match(text)
    if not match:
        return None
    sign, digits = match.groups()
    number = min(int(digits), RLIM_INFINITY)
    if sign == "-":
        number = (RLIM_INFINITY + 1 - number) % (RLIM_INFINITY + 1)
    if number == RLIM_INFINITY or number >= RLIM_INFINITY // 1024:
        return UNLIMITED
    return number


def kib_to_systemd(value) -> str:
    """A KiB value (or 'unlimited') as systemd reads a LimitMEMLOCK= value (bytes)."""
    if value == UNLIMITED:
        return "infinity"
    return str(int(value) * 1024)


def _le(soft, hard) -> bool:
    if hard == UNLIMITED:
        return True
    if soft == UNLIMITED:
        return False
    return int(soft) <= int(hard)


# --- the line model ------------------------------------------------------------

def split_lines(text: str) -> list:
    """Split on '\\n' only, each line keeping its terminator (the last may have none)."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class Entry:
    """One limits line as pam_limits reads it, with the spans needed to edit it."""

    __slots__ = ("domain", "type", "item", "value", "fields", "match", "code", "rest")

    def __init__(self, domain, ltype, item, value, fields, match=None, code="", rest=""):
        self.domain = domain
        self.type = ltype
        self.item = item
        self.value = value
        self.fields = fields
        self.match = match
        self.code = code
        self.rest = rest

    def is_memlock_for(self, domain: str) -> bool:
        return self.fields == 4 and self.domain == domain and self.item == MANAGED_ITEM and self.type in ("soft", "hard", "-")


def parse_line(line: str):
    """Parse one line (with or without its '\\n'); None for blank and comment-only lines.

    The Entry's ``fields`` is 4 for a complete line, 2 for a '<domain> -'
    line, another count for lines pam_limits skips as invalid.
    """
    body = line[:-1] if line.endswith("\n") else line
    hash_at = body.find("#")
    code = body if hash_at < 0 else body[:hash_at]
    rest = "" if hash_at < 0 else body[hash_at:]
    stripped = code.lstrip(_LEADING)
    if not stripped:
        return None
    match = _LINE.match(code)
    if match and match.group("value"):
        return Entry(match.group("domain"), match.group("type").lower(), match.group("item").lower(),
                     match.group("value").lower(), 4, match, code, rest)
    tokens = [tok for tok in re.split(r"[ \t]+", stripped) if tok]
    ltype = tokens[1].lower() if len(tokens) > 1 else ""
    return Entry(tokens[0], ltype, "", "", len(tokens), None, code, rest)


def _fits(line: str) -> str:
    """line (with or without its newline) when pam_limits reads it as one line, else ValueError naming dest."""
    size = len(line.rstrip("\n").encode("utf-8", "surrogateescape"))
    if size > PAM_LINE_MAX:
        raise ValueError(f"dest: the entry {line[:40]!r}... would be {size} bytes; pam_limits reads {PAM_LINE_MAX} bytes "
                         "and a newline as one line and the rest as another, so the module does not write it")
    return line


def render_entry(domain: str, kind: str, value: str) -> str:
    return _fits(f"{domain}\t{kind}\t{MANAGED_ITEM}\t{value}")


def _rewrite(line: str, entry: Entry, ltype=None, value=None) -> str:
    """Replace the type and/or value of a parsed line, keeping every other byte.

    A rewritten line ends in '\\n' (if it had a terminator): a '\\r' left at
    the end of the value would make pam_limits ignore the line.
    """
    match = entry.match
    parts = [match.group("lead"), match.group("domain"), match.group("s1"),
             ltype if ltype is not None else match.group("type"), match.group("s2"),
             match.group("item"), match.group("s3"),
             value if value is not None else match.group("value"), match.group("trail")]
    return _fits("".join(parts) + entry.rest + ("\n" if line.endswith("\n") else ""))


def file_limits(text: str, domain: str) -> dict:
    """The memlock soft/hard that this text alone sets for domain (last entry wins)."""
    found = {"soft": None, "hard": None}
    for line in split_lines(text):
        entry = parse_line(line)
        if entry is None or not entry.is_memlock_for(domain):
            continue
        value = value_kib(entry.value)
        if value is None:
            continue
        for kind in KINDS:
            if entry.type in (kind, "-"):
                found[kind] = value
    return found


def managed_lines(text: str, domain: str) -> list:
    """The memlock lines of domain in text, as they stand."""
    out = []
    for line in split_lines(text):
        entry = parse_line(line)
        if entry is not None and entry.is_memlock_for(domain):
            out.append(line.rstrip("\n"))
    return out


def _append(text: str, new_lines: list) -> str:
    if not new_lines:
        return text
    if text and not text.endswith("\n"):
        # keep the file's missing final newline: state=absent can then restore it exactly
        return text + "\n" + "\n".join(new_lines)
    return text + "".join(line + "\n" for line in new_lines)


def _join_without(lines: list, keep: list, had_final_newline: bool) -> str:
    out = "".join(line for line, wanted in zip(lines, keep) if wanted)
    removed_last = bool(lines) and not keep[-1]
    if removed_last and not had_final_newline and out.endswith("\n"):
        out = out[:-1]
    return out


def apply_present(text: str, domain: str, kinds: tuple, value: str) -> str:
    """Make text set memlock `kinds` of `domain` to `value`, changing as little as possible.

    Nothing changes when the entries already give that value. Otherwise the
    first entry of each managed type gets the value, later duplicates go, and
    a '-' entry that would also set the other limit is turned into an entry
    for that other limit with its old value. Missing entries are appended.
    """
    wanted = value_kib(value)
    current = file_limits(text, domain)
    if all(current[kind] == wanted for kind in kinds):
        return text
    lines = split_lines(text)
    had_final_newline = not lines or lines[-1].endswith("\n")
    out = []
    keep = []
    seen = set()
    both = set(kinds) == set(KINDS)
    for line in lines:
        entry = parse_line(line)
        if entry is None or not entry.is_memlock_for(domain):
            out.append(line)
            keep.append(True)
            continue
        if entry.type == "-" and not both:
            other = "hard" if kinds == ("soft",) else "soft"
            out.append(_rewrite(line, entry, ltype=other))
            keep.append(True)
            continue
        if entry.type == "-" or entry.type in kinds:
            if entry.type in seen:
                out.append(line)
                keep.append(False)
                continue
            seen.add(entry.type)
            same = value_kib(entry.value) == wanted
            out.append(line if same else _rewrite(line, entry, value=value))
            keep.append(True)
            continue
        out.append(line)
        keep.append(True)
    result = _join_without(out, keep, had_final_newline)
    if "-" in seen:
        missing = []
    else:
        missing = [kind for kind in kinds if kind not in seen]
    return _append(result, [render_entry(domain, kind, value) for kind in missing])


def apply_absent(text: str, domain: str, kinds: tuple) -> str:
    """Remove memlock `kinds` of `domain` from text; a '-' entry keeps the other limit."""
    lines = split_lines(text)
    had_final_newline = not lines or lines[-1].endswith("\n")
    both = set(kinds) == set(KINDS)
    out = []
    keep = []
    changed = False
    for line in lines:
        entry = parse_line(line)
        if entry is not None and entry.is_memlock_for(domain):
            if entry.type in kinds or (entry.type == "-" and both):
                out.append(line)
                keep.append(False)
                changed = True
                continue
            if entry.type == "-":
                other = "hard" if kinds == ("soft",) else "soft"
                out.append(_rewrite(line, entry, ltype=other))
                keep.append(True)
                changed = True
                continue
        out.append(line)
        keep.append(True)
    if not changed:
        return text
    return _join_without(out, keep, had_final_newline)


# --- effective limits ------------------------------------------------------------

class Login:
    """Who logs in: user name, uid, primary gid, group names and gids (None = unknown)."""

    def __init__(self, user=None, uid=None, gid=None, groups=(), gids=()):
        self.user = user
        self.uid = uid
        self.gid = gid
        self.groups = set(groups)
        self.gids = set(gids)


def login_for_domain(domain: str, resolve_user=None, resolve_group=None):
    """The login whose limits are reported for a domain, or None when there is no such rule.

    - a user name: that user, with the groups resolve_user(name) returns
      (uid, gid, [group names], [gids]) when it exists;
    - '@group': a member of that group with no user entries and no other groups;
    - '*': a user matched by no user or group entry;
    - '%group', '%' and uid/gid ranges: None (pam_limits ignores '%' for
      memlock, and a range stands for many logins).
    """
    if domain.startswith("%") or ":" in domain:
        return None
    if domain.startswith("@"):
        name = domain[1:]
        gid = resolve_group(name) if resolve_group else None
        return Login(groups=[name], gids=[] if gid is None else [gid])
    if domain == "*":
        return Login()
    if resolve_user is None:
        return Login(user=domain)
    found = resolve_user(domain)
    if not found:
        return Login(user=domain)
    uid, gid, groups, gids = found
    return Login(user=domain, uid=uid, gid=gid, groups=groups, gids=gids)


def _range(domain: str):
    match = _RANGE.match(domain)
    if not match:
        return None
    low, high = match.groups()
    if low == "":
        return (int(high), int(high))
    return (int(low), int(high) if high else None)


def _in_range(number, bounds) -> bool:
    if number is None:
        return False
    low, high = bounds
    return number >= low and (high is None or number <= high)


def _source(entry: Entry, login: Login):
    """The specificity with which entry applies to login, or None when it does not."""
    domain = entry.domain
    if login.user is not None and domain == login.user:
        return SOURCE_USER
    bounds = _range(domain)
    if domain.startswith("@"):
        if bounds is None:
            return SOURCE_GROUP if domain[1:] in login.groups else None
        if domain.startswith("@:"):
            return SOURCE_GROUP if bounds[0] in login.gids else None
        return SOURCE_GROUP if _in_range(login.gid, bounds) else None
    if domain.startswith("%"):
        return None  # pam_limits: '%' domains are valid for maxlogins only
    if bounds is not None:
        return SOURCE_USER if _in_range(login.uid, bounds) else None
    if domain == "*":
        return SOURCE_DEFAULT
    return None


def limits_files_order(conf_path: str, dropin_dir: str, names) -> list:
    """pam_limits' reading order: limits.conf, then the drop-ins' *.conf by name (strcmp)."""
    wanted = {name for name in names if name.endswith(".conf") and not name.startswith(".") and "/" not in name}
    ordered = sorted(wanted, key=lambda name: name.encode("utf-8", "surrogateescape"))
    return [conf_path] + [dropin_dir.rstrip("/") + "/" + name for name in ordered]


def effective(files: list, login: Login) -> dict:
    """The memlock limits pam_limits sets for login, reading files [(name, text)] in order.

    Returns {'soft', 'hard'}: 'unlimited', KiB, or None when no entry sets it
    (the limit is then inherited from the process that opens the session),
    plus 'soft_from'/'hard_from' ('file:line') and 'stopped_by' for a
    '<domain> -' line that disables pam_limits for this login.
    """
    state = {kind: (None, SOURCE_NONE, None) for kind in KINDS}
    for name, text in files:
        for number, line in enumerate(split_lines(text), 1):
            entry = parse_line(line)
            if entry is None:
                continue
            if entry.fields == 2 and entry.type.startswith("-"):
                if _applies_no_limit(entry, login):
                    return {"soft": None, "hard": None, "soft_from": None, "hard_from": None, "stopped_by": f"{name}:{number}"}
                continue
            if entry.fields != 4 or entry.item != MANAGED_ITEM or entry.type not in ("soft", "hard", "-"):
                continue
            source = _source(entry, login)
            if source is None:
                continue
            value = value_kib(entry.value)
            if value is None:
                continue
            where = f"{name}:{number}"
            for kind in KINDS:
                if entry.type not in (kind, "-"):
                    continue
                if state[kind][1] < source:
                    break  # pam_limits returns here: a '-' entry then sets no hard limit either
                state[kind] = (value, source, where)
    soft, hard = state["soft"][0], state["hard"][0]
    if soft is not None and hard is not None and not _le(soft, hard):
        soft = hard  # setup_limits() caps the soft limit at the hard one
    return {"soft": soft, "hard": hard, "soft_from": state["soft"][2], "hard_from": state["hard"][2], "stopped_by": None}


def _applies_no_limit(entry: Entry, login: Login) -> bool:
    domain = entry.domain
    if login.user is not None and domain == login.user:
        return True
    if domain.startswith("@"):
        return _source(entry, login) is not None
    bounds = _range(domain)
    return bounds is not None and _in_range(login.uid, bounds)


# --- systemd ----------------------------------------------------------------------

DROPIN_HEADER = "# Managed by rdma.fabric.memlock: the memlock limit of every systemd service.\n"


def render_systemd_dropin(soft, hard) -> str:
    """A system.conf drop-in setting DefaultLimitMEMLOCK; soft/hard in KiB or 'unlimited'."""
    if not _le(soft, hard):
        raise ValueError(f"systemd: soft limit {soft} is above hard limit {hard}; DefaultLimitMEMLOCK needs soft <= hard")
    soft_text, hard_text = kib_to_systemd(soft), kib_to_systemd(hard)
    value = soft_text if soft_text == hard_text else f"{soft_text}:{hard_text}"
    return f"{DROPIN_HEADER}[Manager]\nDefaultLimitMEMLOCK={value}\n"


def parse_systemd_limit(text: str) -> dict:
    """DefaultLimitMEMLOCK from a drop-in's text as {'soft', 'hard'} in KiB/'unlimited', or {} when unset.

    Only the forms this module writes (bytes or 'infinity', optionally
    soft:hard) are read back; anything else counts as unset and is rewritten.
    """
    found = {}
    section = None
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if section != "Manager" or "=" not in line:
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        if key != "DefaultLimitMEMLOCK":
            continue
        halves = value.split(":")
        parsed = [_systemd_value(half) for half in halves]
        if len(parsed) == 1 and parsed[0] is not None:
            found = {"soft": parsed[0], "hard": parsed[0]}
        elif len(parsed) == 2 and None not in parsed:
            found = {"soft": parsed[0], "hard": parsed[1]}
        else:
            found = {}
    return found


def _systemd_value(text: str):
    if text == "infinity":
        return UNLIMITED
    if re.fullmatch(r"[0-9]+", text) and int(text) % 1024 == 0:
        return int(text) // 1024
    return None


def systemd_target(current: dict, kinds: tuple, value: str) -> dict:
    """The soft/hard the drop-in should hold: the managed kinds get value, the other keeps its value.

    Without a current drop-in, the limit that is not managed takes the same value.
    """
    wanted = value_kib(value)
    target = {}
    for kind in KINDS:
        if kind in kinds or kind not in current:
            target[kind] = wanted
        else:
            target[kind] = current[kind]
    return target


def systemd_dropin(text, kinds: tuple, value: str) -> str:
    """The drop-in's new text: value for the managed kinds, the other half as text (None: no drop-in) sets it."""
    target = systemd_target(parse_systemd_limit(text or ""), kinds, value)
    return render_systemd_dropin(target["soft"], target["hard"])


def systemd_shown(text):
    """The DefaultLimitMEMLOCK value a drop-in's text sets, as written ('infinity', 'soft:hard'), or None."""
    limit = parse_systemd_limit(text or "")
    if not limit:
        return None
    soft, hard = kib_to_systemd(limit["soft"]), kib_to_systemd(limit["hard"])
    return soft if soft == hard else f"{soft}:{hard}"


# --- I/O: locked read-modify-write -------------------------------------------------

class UpdateResult:
    """What locked_update did: text before/after (None = no file), whether it wrote."""

    def __init__(self, before, after, written, backup=None):
        self.before = before
        self.after = after
        self.written = written
        self.backup = backup

    @property
    def changed(self) -> bool:
        return self.before != self.after


def locked_update(filename: str, transform, check_mode: bool = False, write=None, remove=None, backup=None,
                  remove_when_empty: bool = False) -> UpdateResult:
    """Apply transform(text_or_None) -> text_or_None to filename under an exclusive lock.

    The lock is flock(2) on the file's directory: the file itself is
    replaced by rename, so a lock on it would not serialise writers, and a
    directory lock leaves no lock file behind. The lock is held from the read
    to the end of the write, which is the caller's: write(filename, text)
    replaces the file atomically in its directory (the module kit's
    Kit.write_file), remove(filename) removes it (Kit.remove_file). A None
    result, or an empty one with remove_when_empty, removes the file. Nothing
    is written when the text does not change or in check mode. backup(filename)
    is called before a change to an existing file and its result returned in
    UpdateResult.backup.

    A missing directory reads as no file; it is made (0755) only when the
    file is to be written, never in check mode.
    """
    directory = os.path.dirname(os.path.abspath(filename))
    if not os.path.isdir(directory):
        after = _after(transform, None, remove_when_empty)
        if after is None or check_mode:
            return UpdateResult(None, after, False)
        os.makedirs(directory, mode=0o755, exist_ok=True)
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(dir_fd, fcntl.LOCK_EX)
        before = _kit.read_file(filename)
        after = _after(transform, before, remove_when_empty)
        if after == before or check_mode:
            return UpdateResult(before, after, False)
        saved = backup(filename) if backup is not None and before is not None else None
        if after is None:
            remove(filename)
        else:
            write(filename, after)
        return UpdateResult(before, after, True, saved)
    finally:
        os.close(dir_fd)


def _after(transform, before, remove_when_empty: bool):
    after = transform(before)
    return None if after == "" and remove_when_empty else after


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _not_regular(mode: int) -> str:
    for test, name in _FILE_KINDS:
        if test(mode):
            return name
    return "not a regular file"


def resolve_dest(dest, option: str = "dest") -> str:
    """The real path that the limits file dest is read from and written to, checked before any open().

    dest must be an absolute path whose directory exists as the kernel resolves
    it (``dir/missing/../x.conf`` is refused as the kernel would refuse it, not
    normalised away) and that names a regular file or nothing. A symbolic link
    is followed: the returned path is the link's target, so that the file is
    replaced in the target's directory and the link is kept (what
    ansible.builtin.copy does by default). Only stat(2) and readlink(2) run
    here: a FIFO is refused without being opened. ValueError names the option.
    """
    if not isinstance(dest, str) or not dest or "\x00" in dest:
        raise ValueError(f"{option}: {dest!r} is not a file path")
    if not dest.startswith("/"):
        raise ValueError(f"{option}: {dest!r} is not an absolute path; allowed: an absolute path such as {DEFAULT_DEST}")
    if dest.endswith("/") or os.path.basename(dest) in (".", ".."):
        raise ValueError(f"{option}: {dest!r} is not a file path")
    encoded = dest.encode("utf-8", "surrogateescape")
    if len(encoded) > PATH_MAX or any(len(part) > NAME_MAX for part in encoded.split(b"/")):
        raise ValueError(f"{option}: {dest!r} is too long (at most {NAME_MAX} bytes a name, {PATH_MAX} in all)")
    real = dest
    for _hop in range(41):  # the kernel's limit on symbolic links in one lookup is 40
        directory = os.path.dirname(real)
        try:
            dir_info = os.stat(directory)
        except FileNotFoundError:
            raise ValueError(f"{option}: the directory of {dest!r} does not exist") from None
        except OSError as err:
            raise ValueError(f"{option}: the directory of {dest!r} cannot be used: {err.strerror}") from None
        if not stat.S_ISDIR(dir_info.st_mode):
            raise ValueError(f"{option}: the directory of {dest!r} is not a directory")
        try:
            info = os.lstat(real)
        except FileNotFoundError:
            return real
        except OSError as err:
            raise ValueError(f"{option}: {dest!r} cannot be used: {err.strerror}") from None
        if stat.S_ISREG(info.st_mode):
            return real
        if stat.S_ISDIR(info.st_mode):
            raise ValueError(f"{option}: {dest!r} is not a file path")
        if not stat.S_ISLNK(info.st_mode):
            raise ValueError(f"{option}: {dest!r} is {_not_regular(info.st_mode)}, not a regular file")
        target = os.readlink(real)
        real = target if target.startswith("/") else os.path.join(directory, target)
    raise ValueError(f"{option}: {dest!r} cannot be used: too many levels of symbolic links")
