# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure helpers of the nfs_rdma role: its inputs checked and normalised, and the files it writes.

- the server's NFS configuration drop-in (``/etc/nfs.conf.d/*.conf``, ``[nfsd] rdma=y``, ``rdma-port=N``):
  rpc.nfsd reads it on Debian 12 (nfs-utils 2.6.2) and later;
- a drop-in of ``nfs-server.service`` that adds the RDMA listener through ``/proc/fs/nfsd/portlist`` after
  the start when the start did not: Debian 13's unit starts nfsd with ``nfsdctl autostart`` (nfs-utils 2.8.3),
  which reads the threads from nfs.conf but no listener settings, and falls back to rpc.nfsd only on failure;
- its exports (``/etc/exports.d/*.exports``, read by ``exportfs -r``), one line per path;
- a systemd mount unit per client mount (``Type=nfs``, ``Options=proto=rdma,port=N,...``), named as
  ``systemd-escape --path --suffix=mount`` names it, ordered after the RDMA links it needs.

What reaches those files is checked first, so nothing can add a line, a client, an export option or a mount
option that the user did not list: paths are absolute, of letters, digits and ``_ . + @ -`` only, with no
``.``/``..`` component; options are single ``name`` or ``name=value`` items; the mount options the role sets
itself (``proto``, ``port``, the transport) are refused. Every error is one line that names the variable.
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.rdma.fabric.plugins.module_utils import _persist, _validate

DEFAULT_PORT = 20049
PATH_MAX = 1024
HOST_MAX = 253
THREADS_MAX = 8192
MOUNT_STATES = ("mounted", "absent")

_COMPONENT = re.compile(r"[A-Za-z0-9_.+@-]+")
PATH_DESCRIPTION = ("an absolute path of components of letters, digits and '_', '.', '+', '@', '-' "
                    "(not '.' or '..', no empty component, no spaces, commas or newlines)")
_OPTION = re.compile(r"([a-z][a-z0-9_]*)(?:=([A-Za-z0-9_.:/@+-]+))?")
OPTION_DESCRIPTION = "'name' or 'name=value' (name: lower-case letters, digits, '_'; value: letters, digits and '_', '.', ':', '/', '@', '+', '-')"
_HOSTNAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?")
_WILDCARD = re.compile(r"[A-Za-z0-9*?.-]+")
_NETGROUP = re.compile(r"@[A-Za-z0-9_.-]+")
CLIENT_DESCRIPTION = ("a host name, an IPv4/IPv6 address or network (192.0.2.0/24), a wildcard (*.example.com), "
                      "'*' or a netgroup (@name); no spaces, parentheses or commas, no IPv6 zone ('%')")

# exports(5) of nfs-utils 2.5-2.8: the options exportfs knows. A name not listed here is a typo that exportfs
# would refuse only after the file is written.
EXPORT_OPTIONS = frozenset((
    "rw", "ro", "sync", "async", "secure", "insecure", "wdelay", "no_wdelay", "hide", "nohide", "crossmnt",
    "subtree_check", "no_subtree_check", "secure_locks", "insecure_locks", "auth_nlm", "no_auth_nlm", "mountpoint",
    "mp", "fsid", "refer", "replicas", "root_squash", "no_root_squash", "all_squash", "no_all_squash", "anonuid",
    "anongid", "sec", "pnfs", "no_pnfs", "security_label", "no_security_label", "acl", "no_acl", "xprtsec",
))
# the mount options the role sets (proto=rdma,port=<nfs_rdma_port>) or that would pick another transport
ROLE_MOUNT_OPTIONS = frozenset(("proto", "port", "rdma", "tcp", "udp", "mountproto", "transport"))


def _shown(value) -> str:
    return repr(value) if isinstance(value, str) else f"{value!r} ({type(value).__name__})"


def path(value, option: str) -> str:
    """An export path or a mount point: absolute and of safe components (see PATH_DESCRIPTION); '/' is refused."""
    if not isinstance(value, str) or not value.startswith("/") or len(value) > PATH_MAX or value == "/":
        raise ValueError(f"{option}: {_shown(value)} is not allowed; allowed: {PATH_DESCRIPTION}, not '/' itself, "
                         f"at most {PATH_MAX} characters")
    parts = value[1:].split("/")
    if value.endswith("/") and len(value) > 1:
        parts = parts[:-1]
    for part in parts:
        if not _COMPONENT.fullmatch(part) or part in (".", ".."):
            raise ValueError(f"{option}: {_shown(value)} is not allowed; allowed: {PATH_DESCRIPTION}")
    return "/" + "/".join(parts)


def option_list(value, option: str, known=None, refused=frozenset(), why: str = "") -> list:
    """A list of export or mount options, each one item; known: the names allowed (None: any name)."""
    if isinstance(value, str) or not isinstance(value, list):
        raise ValueError(f"{option}: {_shown(value)} is not a list; allowed: a list of options, each {OPTION_DESCRIPTION}")
    seen = {}
    for index, item in enumerate(value):
        where = f"{option}[{index}]"
        match = _OPTION.fullmatch(item) if isinstance(item, str) else None
        if match is None:
            raise ValueError(f"{where}: {_shown(item)} is not one option; allowed: {OPTION_DESCRIPTION}")
        name = match.group(1)
        if name in refused:
            raise ValueError(f"{where}: {_shown(item)} is set by the role{why}; allowed: any other option")
        if known is not None and name not in known:
            raise ValueError(f"{where}: {_shown(item)} is not an export option of exports(5); allowed: {', '.join(sorted(known))}")
        if name in seen:
            raise ValueError(f"{where}: {_shown(item)} sets {name} again (first at {option}[{seen[name]}]); allowed: each option once")
        seen[name] = index
    return list(value)


def client(value, option: str) -> str:
    """An exports(5) client: host, address, network, wildcard or netgroup."""
    if isinstance(value, str) and 0 < len(value) <= HOST_MAX and "%" not in value:
        if value == "*" or _NETGROUP.fullmatch(value) or _HOSTNAME.fullmatch(value):
            return value
        if "*" in value or "?" in value:
            if _WILDCARD.fullmatch(value):
                return value
        else:
            try:
                ipaddress.ip_network(value, strict=False)
                return value
            except ValueError:
                pass
    raise ValueError(f"{option}: {_shown(value)} is not an NFS client; allowed: {CLIENT_DESCRIPTION}")


def server(value, option: str) -> str:
    """The NFS server of a mount: a host name or an IP address; the mount source's form of it ([v6] in brackets)."""
    if isinstance(value, str) and value and "%" not in value:
        try:
            address = ipaddress.ip_address(value)
            return f"[{address}]" if address.version == 6 else str(address)
        except ValueError:
            if _HOSTNAME.fullmatch(value) and not value.replace(".", "").isdigit():
                return value
    raise ValueError(f"{option}: {_shown(value)} is not an NFS server; allowed: a host name or an IPv4/IPv6 address, without an IPv6 zone ('%')")


def _dict(value, option: str, keys: tuple, required: tuple) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{option}: {_shown(value)} is not a dictionary; allowed: a dictionary with {', '.join(keys)}")
    unknown = sorted(str(key) if str(key).isprintable() else repr(key) for key in value if key not in keys)
    if unknown:
        raise ValueError(f"{option}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(keys)}")
    for key in required:
        if key not in value:
            raise ValueError(f"{option}.{key}: missing; allowed: {', '.join(keys)} ({', '.join(required)} required)")
    return value


def _list(value, option: str) -> list:
    if isinstance(value, str) or not isinstance(value, list):
        raise ValueError(f"{option}: {_shown(value)} is not a list")
    return value


def exports(value, option: str = "nfs_rdma_exports") -> list:
    """[{path, clients: [{host, options}], create, mode}] normalised; each path once, each client once per path."""
    result, seen = [], {}
    for index, entry in enumerate(_list(value, option)):
        where = f"{option}[{index}]"
        entry = _dict(entry, where, ("path", "clients", "create", "mode"), ("path", "clients"))
        export_path = path(entry["path"], f"{where}.path")
        if export_path in seen:
            raise ValueError(f"{where}.path: {export_path!r} is exported again (first at {option}[{seen[export_path]}]); "
                             "allowed: each path once, with all its clients")
        seen[export_path] = index
        clients, hosts = [], {}
        for number, item in enumerate(_list(entry["clients"], f"{where}.clients")):
            at = f"{where}.clients[{number}]"
            item = _dict(item, at, ("host", "options"), ("host",))
            host = client(item["host"], f"{at}.host")
            if host in hosts:
                raise ValueError(f"{at}.host: {host!r} is listed again (first at {where}.clients[{hosts[host]}]); allowed: each client once")
            hosts[host] = number
            options = option_list(item.get("options", ["rw", "sync", "no_subtree_check"]), f"{at}.options", EXPORT_OPTIONS)
            clients.append({"host": host, "options": options})
        if not clients:
            raise ValueError(f"{where}.clients: [] exports to no one; allowed: at least one client")
        create = _validate.boolean(entry.get("create", True), f"{where}.create")
        mode = entry.get("mode", "0755")
        if not isinstance(mode, str) or not re.fullmatch(r"0?[0-7]{3,4}", mode):
            raise ValueError(f"{where}.mode: {_shown(mode)} is not allowed; allowed: an octal mode as text, like '0755'")
        result.append({"path": export_path, "clients": clients, "create": create, "mode": mode})
    return result


def mounts(value, option: str = "nfs_rdma_mounts") -> list:
    """[{server, export, path, options, state}] normalised, with 'source' (server:export) and 'unit' (its mount unit)."""
    result, seen = [], {}
    for index, entry in enumerate(_list(value, option)):
        where = f"{option}[{index}]"
        entry = _dict(entry, where, ("server", "export", "path", "options", "state"), ("server", "export", "path"))
        where_path = path(entry["path"], f"{where}.path")
        if where_path in seen:
            raise ValueError(f"{where}.path: {where_path!r} is a mount point again (first at {option}[{seen[where_path]}]); "
                             "allowed: each mount point once")
        seen[where_path] = index
        host = server(entry["server"], f"{where}.server")
        export_path = path(entry["export"], f"{where}.export")
        options = option_list(entry.get("options", []), f"{where}.options", None, ROLE_MOUNT_OPTIONS,
                              " (proto=rdma,port=nfs_rdma_port)")
        state = entry.get("state", "mounted")
        if state not in MOUNT_STATES:
            raise ValueError(f"{where}.state: {_shown(state)} is not allowed; allowed: {', '.join(MOUNT_STATES)}")
        result.append({"server": entry["server"], "export": export_path, "path": where_path, "options": options,
                       "state": state, "source": f"{host}:{export_path}", "unit": mount_unit_name(where_path)})
    return result


def links(value, option: str = "nfs_rdma_links") -> list:
    """RDMA link names (rdma.fabric.rdma_link's persistent links) the mounts wait for."""
    names = []
    for index, name in enumerate(_list(value, option)):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.@-]{1,63}", name) or name in (".", ".."):
            raise ValueError(f"{option}[{index}]: {_shown(name)} is not an RDMA link name; allowed: 1-63 letters, digits "
                             "and '_', '.', '@', '-'")
        names.append(name)
    return names


def settings(values: dict) -> dict:
    """Every nfs_rdma_* variable checked (ValueError naming the first bad one), normalised for the templates."""
    port = _validate.int_in_range(values.get("nfs_rdma_port", DEFAULT_PORT), 1, 65535, "nfs_rdma_port")
    threads = _validate.int_in_range(values.get("nfs_rdma_threads", 0), 0, THREADS_MAX, "nfs_rdma_threads")
    for name in ("nfs_rdma_server", "nfs_rdma_install"):
        _validate.boolean(values.get(name, False), name)
    return {
        "port": port,
        "threads": threads,
        "exports": exports(values.get("nfs_rdma_exports", [])),
        "mounts": mounts(values.get("nfs_rdma_mounts", [])),
        "links": links(values.get("nfs_rdma_links", [])),
    }


# --- the files ----------------------------------------------------------------------------------------------

HEADER = "# Managed by rdma.fabric.nfs_rdma; changes here are overwritten.\n"


def render_nfs_conf(port: int, threads: int = 0) -> str:
    """The [nfsd] drop-in: the RDMA listener on port (rdma-port as a number: Debian's /etc/services has no 'nfsrdma')."""
    lines = [HEADER.rstrip("\n"), "[nfsd]", "rdma=y", f"rdma-port={port}"]
    if threads:
        lines.append(f"threads={threads}")
    return "\n".join(lines) + "\n"


def render_server_dropin(port: int) -> str:
    """nfs-server.service's drop-in: after the start, the RDMA listener on port unless nfsd already has it."""
    listener = f"rdma {port}"
    return (
        HEADER
        + "[Service]\n"
        + f"ExecStartPost=/bin/sh -c 'grep -qx \"{listener}\" /proc/fs/nfsd/portlist || echo \"{listener}\" >/proc/fs/nfsd/portlist'\n"
    )


def render_exports(entries: list) -> str:
    """exports(5) lines: '<path> <client>(<options>) ...', one per path, in the order given."""
    lines = [HEADER.rstrip("\n")]
    for entry in entries:
        clients = " ".join(f"{item['host']}({','.join(item['options'])})" for item in entry["clients"])
        lines.append(f"{entry['path']} {clients}")
    return "\n".join(lines) + "\n"


def mount_unit_name(where: str) -> str:
    """systemd-escape --path --suffix=mount of a path that path() accepted."""
    trimmed = where.strip("/")
    if not trimmed:
        return "-.mount"
    out = []
    for position, char in enumerate(trimmed):
        if char == "/":
            out.append("-")
        elif char.isalnum() and char.isascii() or char in ":_" or (char == "." and position > 0):
            out.append(char)
        else:
            out.append(f"\\x{ord(char):02x}")
    return "".join(out) + ".mount"


def render_mount_unit(mount: dict, port: int, link_names=()) -> str:
    """The mount unit of one normalised mount: NFS over RDMA, after the network and the RDMA links."""
    after = ["network-online.target"] + [_persist.unit_instance(name) for name in link_names]
    options = ",".join(["proto=rdma", f"port={port}"] + list(mount["options"]))
    return (
        HEADER
        + "[Unit]\n"
        + f"Description=NFS over RDMA: {mount['source']} on {mount['path']} (rdma.fabric)\n"
        + f"Wants={' '.join(after)}\n"
        + f"After={' '.join(after)}\n"
        + "\n[Mount]\n"
        + f"What={mount['source']}\n"
        + f"Where={mount['path']}\n"
        + "Type=nfs\n"
        + f"Options={options}\n"
        + "\n[Install]\n"
        + "WantedBy=remote-fs.target\n"
    )


def files(values: dict) -> dict:
    """What the role writes: {nfs_conf, server_dropin, exports, mounts: [mount + {content}]} from the role's variables."""
    normal = settings(values)
    return {
        "nfs_conf": render_nfs_conf(normal["port"], normal["threads"]),
        "server_dropin": render_server_dropin(normal["port"]),
        "exports": render_exports(normal["exports"]),
        "export_dirs": [{"path": entry["path"], "mode": entry["mode"]} for entry in normal["exports"] if entry["create"]],
        "mounts": [dict(mount, content=render_mount_unit(mount, normal["port"], normal["links"])) for mount in normal["mounts"]],
        "port": normal["port"],
    }


# --- what the kernel reports --------------------------------------------------------------------------------

def _unescape_mount_field(field: str) -> str:
    """A /proc/mounts field: the kernel writes space, tab, newline and backslash as \\ooo octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), field)


def parse_proc_mounts(text: str) -> list:
    """/proc/mounts (or /proc/self/mounts) -> [{source, path, fstype, options: [..]}], in the file's order."""
    rows = []
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) < 4:
            continue
        rows.append({"source": _unescape_mount_field(fields[0]), "path": _unescape_mount_field(fields[1]),
                     "fstype": fields[2], "options": fields[3].split(",")})
    return rows


def mount_problems(text: str, wanted: list, port: int) -> list:
    """One line per 'mounted' mount of wanted (normalised) that /proc/mounts does not show as NFS over RDMA on port.

    The last row of a mount point counts (a later mount hides an earlier one).
    """
    current = {}
    for row in parse_proc_mounts(text):
        current[row["path"]] = row
    problems = []
    for mount in wanted:
        if mount["state"] != "mounted":
            continue
        row = current.get(mount["path"])
        if row is None:
            problems.append(f"{mount['path']}: not mounted")
        elif row["fstype"] not in ("nfs", "nfs4") or "proto=rdma" not in row["options"] or f"port={port}" not in row["options"]:
            problems.append(f"{mount['path']}: {row['source']} is mounted as {row['fstype']} {','.join(row['options'])}, "
                            f"not NFS with proto=rdma,port={port}")
    return problems
