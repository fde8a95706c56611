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

The consumers decide what is valid: export options in the shapes nfs-utils' exportfs parses (parseopts() of
support/nfs/exports.c), mount options among Linux's NFS mount parameters (nfs_fs_parameters of fs/nfs/fs_context.c)
and mount(8)'s generic ones; pairs that the reader resolves silently (the later option wins: ``rw``/``ro``,
``hard``/``soft``, ``vers``/``nfsvers``, ...), one client in two spellings and one fsid on two paths are refused.
An IPv6 server is mounted with ``proto=rdma6`` (Linux takes the address family from proto=).
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

# exports(5) as nfs-utils' parser reads it (support/nfs/exports.c, parseopts(), 2.5-2.8): each option's shape.
# A flag takes no value; "uint" is strtol/strtoul's decimal number (anonuid, anongid); "fsid" is root, a number
# (strtoul base 0: 16, 0x10, 020) or a UUID of 32 hex digits; "flavors" a ':' list of sec= flavours; "path" an
# absolute path (mountpoint=, optional); "locations" refer=/replicas= path@host[+host][:path@host...].
# Anything else exportfs refuses after the file is written ("unknown keyword", "bad anonuid").
_EXPORT_FLAGS = (
    "rw", "ro", "secure", "insecure", "sync", "async", "nordirplus", "security_label", "hide", "nohide", "crossmnt",
    "nocrossmnt", "wdelay", "no_wdelay", "root_squash", "no_root_squash", "all_squash", "no_all_squash", "subtree_check",
    "no_subtree_check", "auth_nlm", "no_auth_nlm", "secure_locks", "insecure_locks", "acl", "no_acl", "pnfs", "no_pnfs",
)
EXPORT_SHAPES = dict({name: "flag" for name in _EXPORT_FLAGS}, anonuid="uint", anongid="uint", fsid="fsid", sec="flavors",
                     mountpoint="path?", mp="path?", refer="locations", replicas="locations")
EXPORT_OPTIONS = frozenset(EXPORT_SHAPES)
SEC_FLAVORS = ("none", "sys", "krb5", "krb5i", "krb5p")
# exportfs takes the later of two options that set the same thing; listed together they are a contradiction.
EXPORT_CONFLICTS = (
    ("rw", "ro"), ("secure", "insecure"), ("sync", "async"), ("hide", "nohide"), ("crossmnt", "nocrossmnt"),
    ("wdelay", "no_wdelay"), ("root_squash", "no_root_squash"), ("all_squash", "no_all_squash"),
    ("subtree_check", "no_subtree_check"), ("auth_nlm", "no_auth_nlm", "secure_locks", "insecure_locks"),
    ("acl", "no_acl"), ("pnfs", "no_pnfs"), ("mountpoint", "mp"), ("refer", "replicas"),
)
# the mount options the role sets (proto=rdma,port=<nfs_rdma_port>) or that would pick another transport
ROLE_MOUNT_OPTIONS = frozenset(("proto", "port", "rdma", "tcp", "udp", "mountproto", "transport"))
# Linux's NFS mount parameters (fs/nfs/fs_context.c, nfs_fs_parameters, 6.1 and 6.12) and the generic ones mount(8)
# takes for every file system: "flag" no value, "flag_no" also as noNAME, "u32" a decimal number, a tuple: one of
# those words, "text" a value of the option grammar. The kernel refuses an unknown name ("Unknown parameter") and
# a value of another shape when the unit starts, after the file is written; minorversion 0-2 and nconnect 1-16 are the
# kernel's limits (NFS4_MAX_MINOR_VERSION, NFS_MAX_CONNECTIONS).
MOUNT_SHAPES = {
    "ac": "flag_no", "acl": "flag_no", "cto": "flag_no", "fsc": "flag_no", "lock": "flag_no", "migration": "flag_no",
    "posix": "flag_no", "rdirplus": "flag_no", "resvport": "flag_no", "sharecache": "flag_no", "intr": "flag_no",
    "trunkdiscovery": "flag_no",
    "bg": "flag", "fg": "flag", "hard": "flag", "soft": "flag", "softerr": "flag", "softreval": "flag",
    "acdirmax": "u32", "acdirmin": "u32", "acregmax": "u32", "acregmin": "u32", "actimeo": "u32", "bsize": "u32",
    "minorversion": ("0", "1", "2"), "namlen": "u32", "nconnect": tuple(str(n) for n in range(1, 17)), "retrans": "u32", "rsize": "u32", "wsize": "u32",
    "timeo": "u32", "retry": "u32", "mountport": "u32", "mountvers": "u32",
    "local_lock": ("all", "flock", "posix", "none"), "lookupcache": ("all", "none", "pos", "positive"),
    "vers": ("2", "3", "4", "4.0", "4.1", "4.2"), "nfsvers": ("2", "3", "4", "4.0", "4.1", "4.2"),
    "sec": "mount_flavors", "clientaddr": "ip", "mountaddr": "ip", "mounthost": "host", "v2": "flag", "v3": "flag", "v4": "flag",
    # mount(8)'s generic options
    "ro": "flag", "rw": "flag", "sync": "flag", "async": "flag", "atime": "flag", "noatime": "flag", "diratime": "flag",
    "nodiratime": "flag", "relatime": "flag", "norelatime": "flag", "strictatime": "flag", "nostrictatime": "flag",
    "lazytime": "flag", "nolazytime": "flag", "dev": "flag", "nodev": "flag", "exec": "flag", "noexec": "flag",
    "suid": "flag", "nosuid": "flag", "nofail": "flag",
}
MOUNT_FLAVORS = ("none", "null", "sys", "krb5", "krb5i", "krb5p", "lkey", "lkeyi", "lkeyp", "spkm3", "spkm3i", "spkm3p")
MOUNT_CONFLICTS = (
    ("hard", "soft", "softerr"), ("bg", "fg"), ("vers", "nfsvers", "v2", "v3", "v4"), ("ro", "rw"), ("sync", "async"),
    ("atime", "noatime"), ("diratime", "nodiratime"), ("relatime", "norelatime"), ("strictatime", "nostrictatime"),
    ("lazytime", "nolazytime"), ("dev", "nodev"), ("exec", "noexec"), ("suid", "nosuid"),
    ("noac", "actimeo"),
) + tuple((first, timer) for first in ("noac", "actimeo") for timer in ("acregmin", "acregmax", "acdirmin", "acdirmax")) + tuple(
    (name, "no" + name) for name, shape in MOUNT_SHAPES.items() if shape == "flag_no")
# TLS (xprtsec=tls/mtls) runs over TCP only: Linux refuses it with proto=rdma, and none is the default.
MOUNT_REFUSED = {"xprtsec": "TLS runs over TCP only: Linux refuses xprtsec=tls/mtls with proto=rdma, and none is the default"}
EXPORT_REFUSED = {"xprtsec": "TLS runs over TCP only, so an export that requires it cannot be mounted over RDMA "
                             "(and nfs-utils before 2.6.4 does not know xprtsec)"}
STATES = ("present", "absent")


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


def _value_problem(shape, name: str, value):
    """What is wrong with name=value (value None: no '=') for shape; None when it is right."""
    if isinstance(shape, tuple):
        return None if value in shape else f"{name} takes one of {', '.join(shape)}"
    if shape in ("flag", "flag_no"):
        return None if value is None else f"{name} takes no value"
    if shape.endswith("?"):
        if value is None:
            return None
        shape = shape[:-1]
    if value is None:
        return f"{name} needs a value"
    if shape in ("uint", "u32"):
        return None if value.isascii() and value.isdigit() and int(value) <= 0xFFFFFFFF else f"{name} takes a number 0-4294967295"
    if shape == "fsid":
        return None if fsid_key(value) is not None else f"{name} takes root, a number (16, 0x10, 020) or a UUID of 32 hex digits"
    if shape in ("flavors", "mount_flavors"):
        flavors = SEC_FLAVORS if shape == "flavors" else MOUNT_FLAVORS
        parts = value.split(":")
        if all(part in flavors for part in parts) and len(set(parts)) == len(parts):
            return None
        return f"{name} takes flavours of {', '.join(flavors)}, ':'-separated, each once"
    if shape == "path":
        return None if re.fullmatch(r"(/[A-Za-z0-9_.+@-]+)+/?|/", value) else f"{name} takes an absolute path"
    if shape == "locations":
        location = r"/[A-Za-z0-9_./+-]*@[A-Za-z0-9_.:-]+(\+[A-Za-z0-9_.:-]+)*"
        return None if re.fullmatch(f"{location}(:{location})*", value) else f"{name} takes path@host[+host][:path@host...]"
    if shape == "ip":
        try:
            ipaddress.ip_address(value)
            return None
        except ValueError:
            return f"{name} takes an IP address"
    return None if _HOSTNAME.fullmatch(value) else f"{name} takes a host name"


def option_list(value, option: str, shapes=None, refused=frozenset(), why: str = "", conflicts=(), forbidden=None,
                what: str = "an export option of exports(5)") -> list:
    """A list of export or mount options, each one item of the shape its consumer reads (shapes: {name: shape},
    None: any name), no two that set the same thing (conflicts: groups of names, of which at most one)."""
    if isinstance(value, str) or not isinstance(value, list):
        raise ValueError(f"{option}: {_shown(value)} is not a list; allowed: a list of options, each {OPTION_DESCRIPTION}")
    seen = {}
    for index, item in enumerate(value):
        where = f"{option}[{index}]"
        match = _OPTION.fullmatch(item) if isinstance(item, str) else None
        if match is None:
            raise ValueError(f"{where}: {_shown(item)} is not one option; allowed: {OPTION_DESCRIPTION}")
        name, argument = match.group(1), match.group(2)
        if name in refused:
            raise ValueError(f"{where}: {_shown(item)} is set by the role{why}; allowed: any other option")
        if forbidden and name in forbidden:
            raise ValueError(f"{where}: {_shown(item)} is refused: {forbidden[name]}; allowed: any other option")
        if shapes is not None:
            shape = shapes.get(name)
            if shape is None and name.startswith("no") and shapes.get(name[2:]) == "flag_no":
                shape = "flag"
            if shape is None:
                raise ValueError(f"{where}: {_shown(item)} is not {what}; allowed: "
                                 f"{', '.join(sorted(name for name in shapes))}")
            problem = _value_problem(shape, name, argument)
            if problem:
                raise ValueError(f"{where}: {_shown(item)} is refused: {problem}; allowed: {name} in that shape")
        if name in seen:
            raise ValueError(f"{where}: {_shown(item)} sets {name} again (first at {option}[{seen[name]}]); allowed: each option once")
        for group in conflicts:
            if name in group:
                other = next((seen[other] for other in group if other != name and other in seen), None)
                if other is not None:
                    raise ValueError(f"{where}: {_shown(item)} contradicts {value[other]!r} ({option}[{other}]); "
                                     f"allowed: one of {', '.join(group)}")
        seen[name] = index
    return list(value)


def fsid_key(value: str):
    """exportfs's reading of fsid=value: ('number', n) (root is 0; strtoul base 0) or ('uuid', 32 hex digits); None if neither."""
    if value == "root":
        return ("number", 0)
    text = value.lower()
    number = None
    if re.fullmatch(r"0x[0-9a-f]+", text):
        number = int(text, 16)
    elif re.fullmatch(r"0[0-7]*", text):
        number = int(text, 8)
    elif re.fullmatch(r"[1-9][0-9]*", text):
        number = int(text)
    if number is not None:
        return ("number", number) if number <= 0xFFFFFFFF else None
    digits = re.sub(r"[-:]", "", text)
    if re.fullmatch(r"[0-9a-f]{32}", digits) and re.fullmatch(r"[0-9a-f:-]+", text):
        return ("uuid", digits)
    return None


def address_text(address) -> str:
    """An address as Python 3.13's ipaddress prints it, on every Python: RFC 5952's dotted tail for an IPv4-mapped
    IPv6 address (::ffff:192.0.2.1), which Python 3.12 and earlier print in hex (::ffff:c000:201). The role's
    files are rendered on the controller; a controller's Python must not change them."""
    mapped = getattr(address, "ipv4_mapped", None)
    return f"::ffff:{mapped}" if mapped is not None else str(address)


def client_key(host: str) -> str:
    """One spelling per client: networks and addresses as ipaddress prints them (192.0.2.0/255.255.255.0 is
    192.0.2.0/24, 192.0.2.1/32 is 192.0.2.1), host names in lower case without a final dot."""
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        return host.lower().rstrip(".")
    base = address_text(network.network_address)
    return base if network.prefixlen == network.max_prefixlen else f"{base}/{network.prefixlen}"


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
            return f"[{address_text(address)}]" if address.version == 6 else str(address)
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
    """[{path, clients: [{host, options}], create, mode}] normalised; each path once, each client once per path (in any
    spelling), no fsid on two paths, options of exportfs's shapes without contradictions."""
    result, seen, fsids = [], {}, {}
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
            key = client_key(host)
            if key in hosts:
                first = entry["clients"][hosts[key]]["host"]
                raise ValueError(f"{at}.host: {host!r} is listed again (first at {where}.clients[{hosts[key]}] as {first!r}, "
                                 f"both {key}); allowed: each client once")
            hosts[key] = number
            options = option_list(item.get("options", ["rw", "sync", "no_subtree_check"]), f"{at}.options", EXPORT_SHAPES,
                                  conflicts=EXPORT_CONFLICTS, forbidden=EXPORT_REFUSED)
            for position, text in enumerate(options):
                if text.startswith("fsid="):
                    fsid = fsid_key(text[5:])
                    first = fsids.get(fsid)
                    if first is not None and first[0] != export_path:
                        raise ValueError(f"{at}.options[{position}]: {text!r} is the fsid of {first[0]!r} too ({first[1]}); "
                                         "allowed: a file system id of one exported path")
                    fsids.setdefault(fsid, (export_path, f"{at}.options[{position}]"))
            clients.append({"host": host, "options": options})
        if not clients:
            raise ValueError(f"{where}.clients: [] exports to no one; allowed: at least one client")
        create = _validate.boolean(entry.get("create", True), f"{where}.create")
        mode = entry.get("mode", "0755")
        if not isinstance(mode, str) or not re.fullmatch(r"0?[0-7]{3,4}", mode):
            raise ValueError(f"{where}.mode: {_shown(mode)} is not allowed; allowed: an octal mode as text, like '0755'")
        result.append({"path": export_path, "clients": clients, "create": create, "mode": mode})
    return result


def _minor_version_problem(options: list, option: str):
    """minorversion= with a version that already names its minor (vers=4.2) or is not 4: a contradiction."""
    names = {text.split("=", 1)[0]: (index, text) for index, text in enumerate(options)}
    if "minorversion" not in names:
        return
    index, text = names["minorversion"]
    version = next((names[name] for name in ("vers", "nfsvers", "v2", "v3", "v4") if name in names), None)
    if version is not None and version[1] not in ("vers=4", "nfsvers=4", "v4"):
        raise ValueError(f"{option}[{index}]: {text!r} contradicts {version[1]!r} ({option}[{version[0]}]); "
                         "allowed: minorversion only with vers=4 (or vers=4.N alone)")


def mounts(value, option: str = "nfs_rdma_mounts") -> list:
    """[{server, export, path, options, state}] normalised, with 'source' (server:export), 'proto' (rdma, or rdma6 for an
    IPv6 address) and 'unit' (its mount unit)."""
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
        options = option_list(entry.get("options", []), f"{where}.options", MOUNT_SHAPES, ROLE_MOUNT_OPTIONS,
                              " (proto=rdma,port=nfs_rdma_port)", MOUNT_CONFLICTS, MOUNT_REFUSED,
                              "an NFS mount option of Linux or mount(8)")
        _minor_version_problem(options, f"{where}.options")
        state = entry.get("state", "mounted")
        if state not in MOUNT_STATES:
            raise ValueError(f"{where}.state: {_shown(state)} is not allowed; allowed: {', '.join(MOUNT_STATES)}")
        result.append({"server": entry["server"], "export": export_path, "path": where_path, "options": options,
                       "state": state, "source": f"{host}:{export_path}", "proto": mount_proto(host),
                       "unit": mount_unit_name(where_path)})
    return result


def mount_proto(host: str) -> str:
    """The proto= of a mount of host (server()'s form): rdma6 for an IPv6 address ([..]), rdma for IPv4 and names.

    Linux picks the address family from proto= (nfs(5)): it refuses proto=rdma with an IPv6 address, and mount.nfs
    looks a name up in IPv4 for proto=rdma; /proc/mounts shows the proto= the mount used.
    """
    return "rdma6" if host.startswith("[") else "rdma"


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
    """Every nfs_rdma_* variable checked (ValueError naming the first bad one), normalised for the templates.

    nfs_rdma_state absent: every listed mount is taken away, whatever its own state says.
    """
    port = _validate.int_in_range(values.get("nfs_rdma_port", DEFAULT_PORT), 1, 65535, "nfs_rdma_port")
    threads = _validate.int_in_range(values.get("nfs_rdma_threads", 0), 0, THREADS_MAX, "nfs_rdma_threads")
    for name in ("nfs_rdma_server", "nfs_rdma_install"):
        _validate.boolean(values.get(name, False), name)
    state = values.get("nfs_rdma_state", "present")
    if state not in STATES:
        raise ValueError(f"nfs_rdma_state: {_shown(state)} is not allowed; allowed: {', '.join(STATES)}")
    normal_mounts = mounts(values.get("nfs_rdma_mounts", []))
    if state == "absent":
        normal_mounts = [dict(mount, state="absent") for mount in normal_mounts]
    return {
        "port": port,
        "threads": threads,
        "state": state,
        "exports": exports(values.get("nfs_rdma_exports", [])),
        "mounts": normal_mounts,
        "links": links(values.get("nfs_rdma_links", [])),
    }


def contradictions(values: dict) -> list:
    """Variables that contradict each other (each valid on its own): exports on a host that is no server, or
    anything to set up while nfs_rdma_state is absent. One line each, naming the variables."""
    problems = []
    try:
        server_on = _validate.boolean(values.get("nfs_rdma_server", False), "nfs_rdma_server")
    except ValueError:
        return problems
    state = values.get("nfs_rdma_state", "present")
    listed = values.get("nfs_rdma_exports", [])
    if isinstance(listed, list) and listed and not server_on:
        problems.append(f"nfs_rdma_exports: {len(listed)} export(s) on a host whose nfs_rdma_server is "
                        f"{values.get('nfs_rdma_server', False)!r}; allowed: exports only with nfs_rdma_server: true")
    if state == "absent" and server_on:
        problems.append("nfs_rdma_server: true contradicts nfs_rdma_state: absent (which removes the server's RDMA listener); "
                        "allowed: false with absent")
    return problems


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
    options = ",".join([f"proto={mount.get('proto', 'rdma')}", f"port={port}"] + list(mount["options"]))
    # mount.nfs retries a refused or unanswered mount for retry= minutes (2 by default, nfs(5)); systemd
    # would stop it after its own 90 s (DefaultTimeoutStartSec), so a client that boots before its server
    # (a whole cluster powered on at once) stayed unmounted. The unit waits as long as mount.nfs retries.
    retry = [int(option.split("=", 1)[1]) for option in mount["options"] if option.startswith("retry=")]
    timeout = max(90, (retry[-1] if retry else 2) * 60 + 30)
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
        + f"TimeoutSec={timeout}\n"
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
        "state": normal["state"],
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
    """One line per 'mounted' mount of wanted (normalised) that /proc/mounts does not show as NFS over RDMA on port:
    proto=rdma, or proto=rdma6 for a mount of an IPv6 address (the kernel shows the proto= of the mount's family).

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
        else:
            proto = mount.get("proto", "rdma")
            if row["fstype"] not in ("nfs", "nfs4") or f"proto={proto}" not in row["options"] or f"port={port}" not in row["options"]:
                problems.append(f"{mount['path']}: {row['source']} is mounted as {row['fstype']} {','.join(row['options'])}, "
                                f"not NFS with proto={proto},port={port}")
    return problems
