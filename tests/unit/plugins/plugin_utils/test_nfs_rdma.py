# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_nfs_rdma: the nfs_rdma role's inputs checked and normalised, and the files it writes.

The mount unit names were recorded from `systemd-escape --path --suffix=mount PATH` (systemd 252, Debian 12's
252.38-1~deb12u1); the test does not run systemd-escape. The filter plugins/filter/nfs_rdma.py and the role's input
check (_role_inputs.errors('nfs_rdma', ...)) are tested here too.
"""

from __future__ import annotations

import ipaddress
import re

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.filter import nfs_rdma as plugin
from ansible_collections.rdma.fabric.plugins.plugin_utils import _nfs_rdma as N
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_inputs

HEADER = "# Managed by rdma.fabric.nfs_rdma; changes here are overwritten."
SERVER = "169.254.77.1"
NETWORK = "169.254.77.0/24"


def export(**changes):
    entry = {"path": "/srv/rdma", "clients": [{"host": NETWORK}]}
    entry.update(changes)
    return entry


def mount(**changes):
    entry = {"server": SERVER, "export": "/srv/rdma", "path": "/mnt/rdma", "options": ["vers=4.2", "hard"]}
    entry.update(changes)
    return entry


def one_line_error(err, option, value=None) -> str:
    """The message of err, after checking that it is one line naming option (and showing value's repr)."""
    message = str(err.value)
    assert len(message.splitlines()) == 1 and "\n" not in message, message
    assert message.startswith(f"{option}: "), message
    if value is not None:
        assert repr(value) in message, message
    assert "allowed:" in message, message
    return message


# --- path() ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("/srv/rdma", "/srv/rdma"),
    ("/srv/rdma/", "/srv/rdma"),
    ("/mnt/rdma", "/mnt/rdma"),
    ("/a", "/a"),
    ("/srv/nfs-rdma/a.b", "/srv/nfs-rdma/a.b"),
    ("/mnt/.x/y+z@w", "/mnt/.x/y+z@w"),
    ("/.hidden/", "/.hidden"),
    ("/x/..y/a..b/...", "/x/..y/a..b/..."),
    ("/-x/_/+/@", "/-x/_/+/@"),
    ("/" + "a/" * 511 + "a", "/" + "a/" * 511 + "a"),
])
def test_path_good(value, expected):
    assert N.path(value, "nfs_rdma_exports[0].path") == expected


@pytest.mark.parametrize("value", [
    "srv/rdma",
    "",
    "/",
    "//",
    "/srv//rdma",
    "/srv/rdma//",
    "/srv/../etc",
    "/srv/rdma/..",
    "/..",
    "/srv/./rdma",
    "/.",
    "/srv/rdma x",
    " /srv/rdma",
    "/srv/rdma,x",
    "/srv/rdma\n/etc *(rw)",
    "/srv/rdma\n",
    "/srv/\trdma",
    "/srv/rdma(rw)",
    "/srv/rdma%i",
    "/srv/rdma:x",
    "/srv/rdm\u00e4",
    "/srv/rdma\x00",
    "/" + "a" * 1024,
    "/" + "a/" * 512,
    5,
    ["/srv/rdma"],
    None,
    b"/srv/rdma",
])
def test_path_refused(value):
    with pytest.raises(ValueError) as err:
        N.path(value, "nfs_rdma_mounts[3].path")
    one_line_error(err, "nfs_rdma_mounts[3].path", value)


def test_path_types_are_named():
    with pytest.raises(ValueError, match=r"^x: 5 \(int\) is not allowed; allowed: "):
        N.path(5, "x")
    with pytest.raises(ValueError, match=r"^x: None \(NoneType\) is not allowed; allowed: "):
        N.path(None, "x")


# --- option_list() -----------------------------------------------------------------------------------

@pytest.mark.parametrize("value, known, refused", [
    ([], N.EXPORT_SHAPES, frozenset()),
    (["rw", "sync", "no_subtree_check"], N.EXPORT_SHAPES, frozenset()),
    (["ro", "no_root_squash", "anonuid=1000", "anongid=1000", "sec=krb5p:sys", "fsid=0", "refer=/a@host+other"], N.EXPORT_SHAPES, frozenset()),
    (["vers=4.2", "hard", "nconnect=4", "timeo=600", "clientaddr=fe80::1", "rsize=1048576"], None, N.ROLE_MOUNT_OPTIONS),
    (["vers=4.2", "hard", "nconnect=4", "timeo=600", "clientaddr=fe80::1", "rsize=1048576", "noac", "nosharecache"],
     N.MOUNT_SHAPES, N.ROLE_MOUNT_OPTIONS),
])
def test_option_list_good(value, known, refused):
    assert N.option_list(value, "opts", known, refused) == value


def test_option_list_returns_a_copy():
    value = ["rw"]
    result = N.option_list(value, "opts")
    assert result == value and result is not value


@pytest.mark.parametrize("value, known, message", [
    ("rw", None, r"^opts: 'rw' is not a list; allowed: a list of options, each 'name' or 'name=value'"),
    ("rw,sync", N.EXPORT_SHAPES, r"^opts: 'rw,sync' is not a list"),
    ({"rw": True}, None, r"^opts: \{'rw': True\} \(dict\) is not a list"),
    (None, None, r"^opts: None \(NoneType\) is not a list"),
    (("rw",), None, r"^opts: \('rw',\) \(tuple\) is not a list"),
    (["rw,no_root_squash"], N.EXPORT_SHAPES, r"^opts\[0\]: 'rw,no_root_squash' is not one option; allowed: 'name' or 'name=value'"),
    (["rw", "sync no_root_squash"], N.EXPORT_SHAPES, r"^opts\[1\]: 'sync no_root_squash' is not one option"),
    (["sec="], N.EXPORT_SHAPES, r"^opts\[0\]: 'sec=' is not one option"),
    (["=sys"], N.EXPORT_SHAPES, r"^opts\[0\]: '=sys' is not one option"),
    (["a=b=c"], None, r"^opts\[0\]: 'a=b=c' is not one option"),
    (["rw\nno_root_squash"], N.EXPORT_SHAPES, r"^opts\[0\]: 'rw\\nno_root_squash' is not one option"),
    (["rw\n"], N.EXPORT_SHAPES, r"^opts\[0\]: 'rw\\n' is not one option"),
    (["rw)"], N.EXPORT_SHAPES, r"^opts\[0\]: 'rw\)' is not one option"),
    (["rw", "sync(", "x"], N.EXPORT_SHAPES, r"^opts\[1\]: 'sync\(' is not one option"),
    (["RW"], N.EXPORT_SHAPES, r"^opts\[0\]: 'RW' is not one option"),
    (["hard", ""], None, r"^opts\[1\]: '' is not one option"),
    (["hard", 4], None, r"^opts\[1\]: 4 \(int\) is not one option"),
    ([None], None, r"^opts\[0\]: None \(NoneType\) is not one option"),
    ([["rw"]], None, r"^opts\[0\]: \['rw'\] \(list\) is not one option"),
    (["rw", "sync", "rw"], N.EXPORT_SHAPES, r"^opts\[2\]: 'rw' sets rw again \(first at opts\[0\]\); allowed: each option once$"),
    (["fsid=1", "rw", "fsid=2"], N.EXPORT_SHAPES, r"^opts\[2\]: 'fsid=2' sets fsid again \(first at opts\[0\]\)"),
    (["vers=4.2", "hard", "vers=3"], None, r"^opts\[2\]: 'vers=3' sets vers again \(first at opts\[0\]\)"),
    (["rw", "norootsquash"], N.EXPORT_SHAPES,
     r"^opts\[1\]: 'norootsquash' is not an export option of exports\(5\); allowed: acl, all_squash, anongid, anonuid, "),
    (["proto=tcp"], N.EXPORT_SHAPES, r"^opts\[0\]: 'proto=tcp' is not an export option of exports\(5\)"),
])
def test_option_list_refused(value, known, message):
    with pytest.raises(ValueError, match=message) as err:
        N.option_list(value, "opts", known)
    one_line_error(err, re.match(r"opts(\[\d+\])?", str(err.value)).group(0))


@pytest.mark.parametrize("item", ["proto=tcp", "proto=rdma", "port=2049", "port=20049", "rdma", "tcp", "udp", "mountproto=tcp",
                                  "transport=tcp"])
def test_mount_options_the_role_sets_are_refused(item):
    with pytest.raises(ValueError, match=rf"^nfs_rdma_mounts\[0\]\.options\[1\]: {re.escape(repr(item))} is set by the role "
                                         r"\(proto=rdma,port=nfs_rdma_port\); allowed: any other option$"):
        N.mounts([mount(options=["vers=4.2", item])])


# one value of each shape that its reader takes (exportfs's parseopts(), Linux's nfs_fs_parameters)
SAMPLE_VALUES = {"flag": None, "flag_no": None, "uint": "1000", "u32": "600", "fsid": "17", "flavors": "sys", "mount_flavors": "sys",
                 "path?": "/srv/rdma", "locations": "/srv/rdma@192.0.2.1", "ip": "192.0.2.1", "host": "server.example"}


def sample(name, shapes):
    shape = shapes[name]
    value = SAMPLE_VALUES[shape] if isinstance(shape, str) else shape[-1]
    return name if value is None else f"{name}={value}"


def test_every_listed_export_option_is_accepted():
    items = [sample(name, N.EXPORT_SHAPES) for name in sorted(N.EXPORT_SHAPES)]
    assert N.option_list(items, "opts", N.EXPORT_SHAPES) == items


# --- client() and server() ---------------------------------------------------------------------------

@pytest.mark.parametrize("value", [
    "192.0.2.0/24", "192.0.2.7", "2001:db8::/64", "2001:db8::1", "host.example.com", "host", "host.example.com.", "*.example.com",
    "node?.example.com", "*", "@netgroup", "@rdma_clients.lab-1", "169.254.77.0/24", "192.0.2.0/255.255.255.0", "::/0",
])
def test_client_good(value):
    assert N.client(value, "c") == value


@pytest.mark.parametrize("value", [
    "a b", "host(rw)", "a,b", "", "192.0.2.0/33", "192.0.2.0/24\n", "host\n", "host\n/etc *(rw)", "*\n", " 192.0.2.7", "192.0.2.7 ",
    "a\tb", "-host", "host-", "h_st", "@", "@net group", "*.example.com(rw)", "2001:db8::/129", "192.0.2.0/24/1",
    "h" * 64, "a." * 127 + "a", "host;reboot", "host)", 7, None, ["host"],
    # an IPv6 zone: ipaddress takes any text after '%', parentheses, spaces and newlines included
    "fe80::1%x(rw,no_root_squash) 192.0.2.7", "fe80::1%x\n192.0.2.7", "fe80::1%eth0", "fe80::%eth0/64", "fe80::1%eth0 *",
])
def test_client_refused(value):
    with pytest.raises(ValueError, match=r"is not an NFS client; allowed: a host name, ") as err:
        N.client(value, "nfs_rdma_exports[0].clients[1].host")
    one_line_error(err, "nfs_rdma_exports[0].clients[1].host", value)


@pytest.mark.parametrize("value, expected", [
    ("169.254.77.1", "169.254.77.1"),
    ("192.0.2.7", "192.0.2.7"),
    ("2001:db8::1", "[2001:db8::1]"),
    ("2001:DB8:0:0::1", "[2001:db8::1]"),
    ("nfs1", "nfs1"),
    ("nfs1.example.com", "nfs1.example.com"),
    ("nfs1.example.com.", "nfs1.example.com."),
])
def test_server_good(value, expected):
    assert N.server(value, "s") == expected


@pytest.mark.parametrize("value", [
    "", "1.2.3", "1.2.3.4.", "999.1.1.1", "a b", "x;y", "host\n", "nfs1:/srv", "[2001:db8::1]", "2001:db8::/64", "192.0.2.0/24",
    "-nfs", "nfs_1", "*", "@netgroup", 7, None,
    # an IPv6 zone: ipaddress takes any text after '%', newlines included, and systemd reads '%e' in What= as a specifier
    "fe80::1%eth0", "fe80::1%x\nOptions=proto=tcp\nX", "fe80::1%x y",
])
def test_server_refused(value):
    with pytest.raises(ValueError, match=r"is not an NFS server; allowed: a host name or an IPv4/IPv6 address") as err:
        N.server(value, "nfs_rdma_mounts[0].server")
    one_line_error(err, "nfs_rdma_mounts[0].server", value)


# --- exports() and mounts() --------------------------------------------------------------------------

def test_exports_defaults():
    assert N.exports([export()]) == [{"path": "/srv/rdma", "clients": [{"host": NETWORK, "options": ["rw", "sync", "no_subtree_check"]}],
                                      "create": True, "mode": "0755"}]
    assert N.exports([]) == []


def test_exports_as_given():
    value = [export(path="/srv/rdma/", create="no", mode="750",
                    clients=[{"host": "192.0.2.7", "options": ["ro"]}, {"host": "*.example.com", "options": []}])]
    assert N.exports(value) == [{"path": "/srv/rdma", "clients": [{"host": "192.0.2.7", "options": ["ro"]},
                                                                  {"host": "*.example.com", "options": []}],
                                 "create": False, "mode": "750"}]


@pytest.mark.parametrize("value, message", [
    ("x", r"^nfs_rdma_exports: 'x' is not a list$"),
    ({"path": "/srv/rdma"}, r"^nfs_rdma_exports: \{'path': '/srv/rdma'\} \(dict\) is not a list$"),
    (["/srv/rdma"], r"^nfs_rdma_exports\[0\]: '/srv/rdma' is not a dictionary; allowed: a dictionary with path, clients, create, mode$"),
    ([export(owner="root")], r"^nfs_rdma_exports\[0\]: unknown key\(s\) owner; allowed: path, clients, create, mode$"),
    ([export(options=["rw"])], r"^nfs_rdma_exports\[0\]: unknown key\(s\) options; allowed: path, clients, create, mode$"),
    ([{"clients": [{"host": "*"}]}], r"^nfs_rdma_exports\[0\]\.path: missing; allowed: path, clients, create, mode \(path, clients required\)$"),
    ([{"path": "/srv/rdma"}], r"^nfs_rdma_exports\[0\]\.clients: missing"),
    ([export(path="/srv/../etc")], r"^nfs_rdma_exports\[0\]\.path: '/srv/\.\./etc' is not allowed; allowed: an absolute path"),
    ([export(path="/")], r"^nfs_rdma_exports\[0\]\.path: '/' is not allowed; allowed: .*not '/' itself"),
    ([export(), export(path="/srv/rdma/")],
     r"^nfs_rdma_exports\[1\]\.path: '/srv/rdma' is exported again \(first at nfs_rdma_exports\[0\]\); allowed: each path once"),
    ([export(), export(path="/srv/other"), export()],
     r"^nfs_rdma_exports\[2\]\.path: '/srv/rdma' is exported again \(first at nfs_rdma_exports\[0\]\)"),
    ([export(clients=[])], r"^nfs_rdma_exports\[0\]\.clients: \[\] exports to no one; allowed: at least one client$"),
    ([export(clients="*")], r"^nfs_rdma_exports\[0\]\.clients: '\*' is not a list$"),
    ([export(clients=["*"])], r"^nfs_rdma_exports\[0\]\.clients\[0\]: '\*' is not a dictionary; allowed: a dictionary with host, options$"),
    ([export(clients=[{"options": ["rw"]}])], r"^nfs_rdma_exports\[0\]\.clients\[0\]\.host: missing; allowed: host, options \(host required\)$"),
    ([export(clients=[{"host": "*", "mode": "0755"}])], r"^nfs_rdma_exports\[0\]\.clients\[0\]: unknown key\(s\) mode; allowed: host, options$"),
    ([export(clients=[{"host": "a b"}])], r"^nfs_rdma_exports\[0\]\.clients\[0\]\.host: 'a b' is not an NFS client"),
    ([export(clients=[{"host": "*"}, {"host": NETWORK}, {"host": "*"}])],
     r"^nfs_rdma_exports\[0\]\.clients\[2\]\.host: '\*' is listed again \(first at nfs_rdma_exports\[0\]\.clients\[0\] as '\*', "
     r"both \*\); allowed: each client once$"),
    ([export(), export(path="/srv/b", clients=[{"host": "*", "options": ["rw", "sync", "bogus"]}])],
     r"^nfs_rdma_exports\[1\]\.clients\[0\]\.options\[2\]: 'bogus' is not an export option of exports\(5\)"),
    ([export(clients=[{"host": "*", "options": ["rw,no_root_squash"]}])],
     r"^nfs_rdma_exports\[0\]\.clients\[0\]\.options\[0\]: 'rw,no_root_squash' is not one option"),
    ([export(clients=[{"host": "*", "options": "rw"}])], r"^nfs_rdma_exports\[0\]\.clients\[0\]\.options: 'rw' is not a list"),
    ([export(create="maybe")], r"^nfs_rdma_exports\[0\]\.create: 'maybe' is not a boolean; allowed: true or false$"),
    ([export(mode=755)], r"^nfs_rdma_exports\[0\]\.mode: 755 \(int\) is not allowed; allowed: an octal mode as text, like '0755'$"),
    ([export(mode="0789")], r"^nfs_rdma_exports\[0\]\.mode: '0789' is not allowed"),
    ([export(mode="u+rwx")], r"^nfs_rdma_exports\[0\]\.mode: 'u\+rwx' is not allowed"),
    ([export(mode="0755\n")], r"^nfs_rdma_exports\[0\]\.mode: '0755\\n' is not allowed"),
])
def test_exports_refused(value, message):
    with pytest.raises(ValueError, match=message) as err:
        N.exports(value)
    assert len(str(err.value).splitlines()) == 1


def test_unknown_keys_are_one_line():
    with pytest.raises(ValueError) as err:
        N.exports([export(**{"owner\nroot": 1})])
    message = str(err.value)
    assert len(message.splitlines()) == 1 and message.startswith("nfs_rdma_exports[0]: unknown key(s) ")
    with pytest.raises(ValueError) as err:
        N.mounts([mount(**{"x\ny": 1})])
    assert len(str(err.value).splitlines()) == 1


def test_mounts_defaults_and_normal_form():
    assert N.mounts([{"server": SERVER, "export": "/srv/rdma/", "path": "/mnt/rdma/"}]) == [{
        "server": SERVER, "export": "/srv/rdma", "path": "/mnt/rdma", "options": [], "state": "mounted",
        "source": "169.254.77.1:/srv/rdma", "proto": "rdma", "unit": "mnt-rdma.mount"}]
    result = N.mounts([mount(), mount(server="2001:db8::7", path="/mnt/v6", state="absent"), mount(server="nfs1.example.com", path="/mnt/a-b")])
    assert [(m["source"], m["unit"], m["state"]) for m in result] == [
        ("169.254.77.1:/srv/rdma", "mnt-rdma.mount", "mounted"),
        ("[2001:db8::7]:/srv/rdma", "mnt-v6.mount", "absent"),
        ("nfs1.example.com:/srv/rdma", "mnt-a\\x2db.mount", "mounted"),
    ]
    assert result[1]["server"] == "2001:db8::7"
    assert N.mounts([]) == []


@pytest.mark.parametrize("value, message", [
    ("x", r"^nfs_rdma_mounts: 'x' is not a list$"),
    ([None], r"^nfs_rdma_mounts\[0\]: None \(NoneType\) is not a dictionary"),
    ([mount(fstype="nfs4")], r"^nfs_rdma_mounts\[0\]: unknown key\(s\) fstype; allowed: server, export, path, options, state$"),
    ([mount(create=True, dump=0)], r"^nfs_rdma_mounts\[0\]: unknown key\(s\) create, dump; allowed: "),
    ([{"server": SERVER, "path": "/mnt/rdma"}],
     r"^nfs_rdma_mounts\[0\]\.export: missing; allowed: server, export, path, options, state \(server, export, path required\)$"),
    ([{"export": "/srv/rdma", "path": "/mnt/rdma"}], r"^nfs_rdma_mounts\[0\]\.server: missing"),
    ([{"server": SERVER, "export": "/srv/rdma"}], r"^nfs_rdma_mounts\[0\]\.path: missing"),
    ([mount(path="/")], r"^nfs_rdma_mounts\[0\]\.path: '/' is not allowed"),
    ([mount(path="mnt/rdma")], r"^nfs_rdma_mounts\[0\]\.path: 'mnt/rdma' is not allowed"),
    ([mount(export="/srv/rdma x")], r"^nfs_rdma_mounts\[0\]\.export: '/srv/rdma x' is not allowed"),
    ([mount(server="a b")], r"^nfs_rdma_mounts\[0\]\.server: 'a b' is not an NFS server"),
    ([mount(), mount(path="/mnt/rdma/", export="/srv/other")],
     r"^nfs_rdma_mounts\[1\]\.path: '/mnt/rdma' is a mount point again \(first at nfs_rdma_mounts\[0\]\); allowed: each mount point once$"),
    ([mount(options=["vers=4.2", "proto=tcp"])], r"^nfs_rdma_mounts\[0\]\.options\[1\]: 'proto=tcp' is set by the role"),
    ([mount(options=["vers=4.2,proto=tcp"])], r"^nfs_rdma_mounts\[0\]\.options\[0\]: 'vers=4\.2,proto=tcp' is not one option"),
    ([mount(options="vers=4.2")], r"^nfs_rdma_mounts\[0\]\.options: 'vers=4\.2' is not a list"),
    ([mount(state="present")], r"^nfs_rdma_mounts\[0\]\.state: 'present' is not allowed; allowed: mounted, absent$"),
    ([mount(state=True)], r"^nfs_rdma_mounts\[0\]\.state: True \(bool\) is not allowed"),
])
def test_mounts_refused(value, message):
    with pytest.raises(ValueError, match=message) as err:
        N.mounts(value)
    assert len(str(err.value).splitlines()) == 1


@pytest.mark.parametrize("value, message", [
    (["rxe0", "siw0", "mlx5_0", "a.b", "x@y", "l" * 63], None),
    ("rxe0", r"^nfs_rdma_links: 'rxe0' is not a list$"),
    (["../x"], r"^nfs_rdma_links\[0\]: '\.\./x' is not an RDMA link name; allowed: 1-63 letters"),
    (["rxe0", ".."], r"^nfs_rdma_links\[1\]: '\.\.' is not an RDMA link name"),
    (["."], r"^nfs_rdma_links\[0\]: '\.' is not an RDMA link name"),
    ([""], r"^nfs_rdma_links\[0\]: '' is not an RDMA link name"),
    (["rxe 0"], r"^nfs_rdma_links\[0\]: 'rxe 0' is not an RDMA link name"),
    (["rxe0\nsiw0"], r"^nfs_rdma_links\[0\]: 'rxe0\\nsiw0' is not an RDMA link name"),
    (["rxe/0"], r"^nfs_rdma_links\[0\]: 'rxe/0' is not an RDMA link name"),
    (["l" * 64], r"^nfs_rdma_links\[0\]: 'l{64}' is not an RDMA link name"),
    ([0], r"^nfs_rdma_links\[0\]: 0 \(int\) is not an RDMA link name"),
])
def test_links(value, message):
    if message is None:
        assert N.links(value) == value
    else:
        with pytest.raises(ValueError, match=message):
            N.links(value)


# --- mount_unit_name(): systemd-escape --path --suffix=mount, systemd 252 --------------------------------

SYSTEMD_ESCAPE = [
    ("/mnt/rdma", "mnt-rdma.mount"),
    ("/srv/nfs-rdma/a.b", "srv-nfs\\x2drdma-a.b.mount"),
    ("/mnt/.x/y+z@w", "mnt-.x-y\\x2bz\\x40w.mount"),
    ("/.hidden", "\\x2ehidden.mount"),
    ("/srv/rdma/", "srv-rdma.mount"),
    ("/x/..y", "x-..y.mount"),
    ("/x/.y./z", "x-.y.-z.mount"),
    ("/x/a@b/-c", "x-a\\x40b-\\x2dc.mount"),
    ("/mnt/rdma2/data_01", "mnt-rdma2-data_01.mount"),
    ("/x/y.mount", "x-y.mount.mount"),
    ("/-x", "\\x2dx.mount"),
    ("/x/a..b", "x-a..b.mount"),
    ("/srv/+/@/-/_", "srv-\\x2b-\\x40-\\x2d-_.mount"),
]


@pytest.mark.parametrize("where, expected", SYSTEMD_ESCAPE)
def test_mount_unit_name_is_systemd_escapes(where, expected):
    assert N.mount_unit_name(N.path(where, "p")) == expected


def test_mount_unit_name_of_the_root():
    # systemd-escape --path --suffix=mount / (path() refuses '/' itself)
    assert N.mount_unit_name("/") == "-.mount"


def unescape(name: str) -> str:
    """systemd-escape --unescape --path of a unit name without its suffix."""
    body = name[:-len(".mount")]
    text = re.sub(r"\\x([0-9a-f]{2})", lambda match: chr(int(match.group(1), 16)), body.replace("-", "/"))
    return "/" + text


# --- the files ---------------------------------------------------------------------------------------

NFS_CONF = f"""\
{HEADER}
[nfsd]
rdma=y
rdma-port=20049
"""

EXPORTS = f"""\
{HEADER}
/srv/rdma {NETWORK}(rw,sync,no_subtree_check)
"""

MOUNT_UNIT = f"""\
{HEADER}
[Unit]
Description=NFS over RDMA: 169.254.77.1:/srv/rdma on /mnt/rdma (rdma.fabric)
Wants=network-online.target rdma-fabric-link@rxe0.service
After=network-online.target rdma-fabric-link@rxe0.service

[Mount]
What=169.254.77.1:/srv/rdma
Where=/mnt/rdma
Type=nfs
Options=proto=rdma,port=20049,vers=4.2,hard
TimeoutSec=150

[Install]
WantedBy=remote-fs.target
"""

SERVER_DROPIN = HEADER + """
[Service]
ExecStartPost=/bin/sh -c 'grep -qx "rdma 20049" /proc/fs/nfsd/portlist || echo "rdma 20049" >/proc/fs/nfsd/portlist'
"""

TYPICAL = {"nfs_rdma_exports": [export()], "nfs_rdma_mounts": [mount()], "nfs_rdma_links": ["rxe0"], "nfs_rdma_port": 20049}


def test_render_nfs_conf():
    assert N.render_nfs_conf(20049) == NFS_CONF
    assert N.render_nfs_conf(20049, 0) == NFS_CONF
    assert N.render_nfs_conf(2050, 64) == NFS_CONF.replace("20049", "2050") + "threads=64\n"


def test_render_server_dropin():
    assert N.render_server_dropin(20049) == SERVER_DROPIN
    assert N.render_server_dropin(2050) == SERVER_DROPIN.replace("20049", "2050")


def test_render_exports():
    assert N.render_exports(N.exports([export()])) == EXPORTS
    assert N.render_exports([]) == HEADER + "\n"
    two = N.exports([export(clients=[{"host": "192.0.2.7", "options": ["ro"]}, {"host": "@rdma", "options": []}]),
                     export(path="/srv/b", clients=[{"host": "*", "options": ["rw", "no_root_squash", "fsid=0"]}])])
    assert N.render_exports(two).splitlines()[1:] == ["/srv/rdma 192.0.2.7(ro) @rdma()", "/srv/b *(rw,no_root_squash,fsid=0)"]


def test_render_mount_unit():
    normal = N.mounts([mount()])[0]
    assert N.render_mount_unit(normal, 20049, ["rxe0"]) == MOUNT_UNIT
    text = N.render_mount_unit(normal, 2050)
    assert "Wants=network-online.target\n" in text and "After=network-online.target\n" in text
    assert "Options=proto=rdma,port=2050,vers=4.2,hard\n" in text
    # an IPv6 server: proto=rdma6 (Linux refuses proto=rdma with an IPv6 address)
    text = N.render_mount_unit(N.mounts([mount(options=[], server="2001:db8::1")])[0], 20049, ["rxe0", "siw0"])
    assert "Options=proto=rdma6,port=20049\n" in text
    assert "What=[2001:db8::1]:/srv/rdma\n" in text
    assert "After=network-online.target rdma-fabric-link@rxe0.service rdma-fabric-link@siw0.service\n" in text


@pytest.mark.parametrize("options, timeout", [
    ([], 150),  # mount.nfs retries for 2 minutes by default (nfs(5)); systemd would stop it at 90 s
    (["retry=0"], 90), (["retry=1"], 90), (["retry=5"], 330), (["vers=4.2", "retry=10"], 630),
])
def test_the_mount_unit_waits_as_long_as_mount_nfs_retries(options, timeout):
    text = N.render_mount_unit(N.mounts([mount(options=options)])[0], 20049)
    assert f"\nTimeoutSec={timeout}\n" in text


def test_files_of_the_typical_case():
    result = N.files(TYPICAL)
    assert result == {
        "nfs_conf": NFS_CONF,
        "server_dropin": SERVER_DROPIN,
        "exports": EXPORTS,
        "export_dirs": [{"path": "/srv/rdma", "mode": "0755"}],
        "mounts": [{"server": SERVER, "export": "/srv/rdma", "path": "/mnt/rdma", "options": ["vers=4.2", "hard"], "state": "mounted",
                    "source": "169.254.77.1:/srv/rdma", "proto": "rdma", "unit": "mnt-rdma.mount", "content": MOUNT_UNIT}],
        "port": 20049,
        "state": "present",
    }


def test_files_threads_and_create():
    result = N.files(dict(TYPICAL, nfs_rdma_threads=16, nfs_rdma_exports=[export(create=False), export(path="/srv/b", mode="0700")]))
    assert result["nfs_conf"].endswith("rdma-port=20049\nthreads=16\n")
    assert result["export_dirs"] == [{"path": "/srv/b", "mode": "0700"}]
    assert "threads" not in N.files(dict(TYPICAL, nfs_rdma_threads=0))["nfs_conf"]


def test_files_of_nothing():
    result = N.files({})
    assert result == {"nfs_conf": NFS_CONF, "server_dropin": SERVER_DROPIN, "exports": HEADER + "\n", "export_dirs": [], "mounts": [], "port": N.DEFAULT_PORT,
                      "state": "present"}


# --- settings() ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, port, threads", [
    ({}, 20049, 0),
    ({"nfs_rdma_port": "20049"}, 20049, 0),
    ({"nfs_rdma_port": 1, "nfs_rdma_threads": 8192}, 1, 8192),
    ({"nfs_rdma_port": 65535, "nfs_rdma_threads": "8"}, 65535, 8),
])
def test_settings_numbers(values, port, threads):
    normal = N.settings(values)
    assert (normal["port"], normal["threads"]) == (port, threads)


@pytest.mark.parametrize("values, message", [
    ({"nfs_rdma_port": 0}, r"^nfs_rdma_port: 0 is out of range; allowed: 1-65535$"),
    ({"nfs_rdma_port": 65536}, r"^nfs_rdma_port: 65536 is out of range; allowed: 1-65535$"),
    ({"nfs_rdma_port": True}, r"^nfs_rdma_port: True is not an integer; allowed: 1-65535$"),
    ({"nfs_rdma_port": "nfsrdma"}, r"^nfs_rdma_port: 'nfsrdma' is not an integer"),
    ({"nfs_rdma_port": 20049.5}, r"^nfs_rdma_port: 20049\.5 is not an integer"),
    ({"nfs_rdma_port": None}, r"^nfs_rdma_port: None is not an integer"),
    ({"nfs_rdma_threads": -1}, r"^nfs_rdma_threads: -1 is out of range; allowed: 0-8192$"),
    ({"nfs_rdma_threads": 8193}, r"^nfs_rdma_threads: 8193 is out of range; allowed: 0-8192$"),
    ({"nfs_rdma_server": "maybe"}, r"^nfs_rdma_server: 'maybe' is not a boolean; allowed: true or false$"),
    ({"nfs_rdma_install": 2}, r"^nfs_rdma_install: 2 is not a boolean"),
    ({"nfs_rdma_exports": None}, r"^nfs_rdma_exports: None \(NoneType\) is not a list$"),
    ({"nfs_rdma_mounts": {}}, r"^nfs_rdma_mounts: \{\} \(dict\) is not a list$"),
    ({"nfs_rdma_links": "rxe0"}, r"^nfs_rdma_links: 'rxe0' is not a list$"),
])
def test_settings_refused(values, message):
    with pytest.raises(ValueError, match=message):
        N.settings(values)


# --- the filter ----------------------------------------------------------------------------------------

FILTERS = plugin.FilterModule().filters()


def test_filter_returns_the_files():
    assert "nfs_rdma_files" in FILTERS
    assert FILTERS["nfs_rdma_files"](TYPICAL) == N.files(TYPICAL)


@pytest.mark.parametrize("value, message", [
    ([], r"^nfs_rdma_files: expects a dictionary of the nfs_rdma_\* variables, got list$"),
    (None, r"^nfs_rdma_files: expects a dictionary of the nfs_rdma_\* variables, got NoneType$"),
    (dict(TYPICAL, nfs_rdma_port=0), r"^nfs_rdma_files: nfs_rdma_port: 0 is out of range"),
    (dict(TYPICAL, nfs_rdma_mounts=[mount(options=["proto=tcp"])]), r"^nfs_rdma_files: nfs_rdma_mounts\[0\]\.options\[0\]: 'proto=tcp' is set"),
    (dict(TYPICAL, nfs_rdma_exports=[export(path="/srv/rdma\n/ *(rw)")]), r"^nfs_rdma_files: nfs_rdma_exports\[0\]\.path: '/srv/rdma\\n/ \*\(rw\)'"),
])
def test_filter_errors(value, message):
    with pytest.raises(AnsibleFilterError, match=message) as err:
        FILTERS["nfs_rdma_files"](value)
    assert len(str(err.value).splitlines()) == 1


# --- the role's input check (role_input_errors('nfs_rdma')) -----------------------------------------------

ROLE_SETTINGS = {
    "nfs_rdma_server": True,
    "nfs_rdma_exports": [export()],
    "nfs_rdma_port": 20049,
    "nfs_rdma_threads": 0,
    "nfs_rdma_mounts": [mount(options=["vers=4.2"])],
    "nfs_rdma_links": ["rxe0"],
    "nfs_rdma_install": True,
    "nfs_rdma_state": "present",
}


@pytest.mark.parametrize("changes, expected", [
    ({}, []),
    ({"nfs_rdma_server": False, "nfs_rdma_exports": [], "nfs_rdma_mounts": [], "nfs_rdma_links": [], "nfs_rdma_install": "no"}, []),
    ({"nfs_rdma_port": "20049", "nfs_rdma_threads": 32}, []),
    ({"nfs_rdma_port": 0}, ["nfs_rdma_port: 0 is out of range; allowed: 1-65535"]),
    ({"nfs_rdma_port": 0, "nfs_rdma_mounts": [mount(path="/")]},
     ["nfs_rdma_port: 0 is out of range; allowed: 1-65535",
      f"nfs_rdma_mounts[0].path: '/' is not allowed; allowed: {N.PATH_DESCRIPTION}, not '/' itself, at most 1024 characters"]),
    ({"nfs_rdma_exports": [export(clients=[{"host": "a b"}])], "nfs_rdma_links": ["../x"]},
     [f"nfs_rdma_exports[0].clients[0].host: 'a b' is not an NFS client; allowed: {N.CLIENT_DESCRIPTION}",
      "nfs_rdma_links[0]: '../x' is not an RDMA link name; allowed: 1-63 letters, digits and '_', '.', '@', '-'"]),
    ({"nfs_rdma_server": "maybe", "nfs_rdma_threads": -1},
     ["nfs_rdma_server: 'maybe' is not a boolean; allowed: true or false", "nfs_rdma_threads: -1 is out of range; allowed: 0-8192"]),
    ({"nfs_rdma_install": None}, ["nfs_rdma_install: None is not a boolean; allowed: true or false"]),
])
def test_role_input_errors(changes, expected):
    assert _role_inputs.errors("nfs_rdma", dict(ROLE_SETTINGS, **changes)) == expected


def test_role_input_errors_are_one_line():
    found = _role_inputs.errors("nfs_rdma", dict(ROLE_SETTINGS, nfs_rdma_exports=[export(path="/srv/rdma\n/ *(rw)")],
                                                 nfs_rdma_mounts=[mount(options=["hard\nproto=tcp"])]))
    assert len(found) == 2
    assert found[0].startswith("nfs_rdma_exports[0].path: ") and found[1].startswith("nfs_rdma_mounts[0].options[0]: ")
    assert all("\n" not in line for line in found)


def test_role_input_errors_want_all_seven_variables():
    settings_without_one = dict(ROLE_SETTINGS)
    del settings_without_one["nfs_rdma_links"]
    with pytest.raises(ValueError, match=r"^_input: give exactly the variables of nfs_rdma .*missing: nfs_rdma_links; unknown: none$"):
        _role_inputs.errors("nfs_rdma", settings_without_one)


# --- properties ------------------------------------------------------------------------------------------

COMPONENTS = st.from_regex(r"[A-Za-z0-9_.+@-]{1,24}", fullmatch=True).filter(lambda part: part not in (".", ".."))
PATHS = st.lists(COMPONENTS, min_size=1, max_size=10).map(lambda parts: "/" + "/".join(parts))
UNIT_NAME = re.compile(r"[A-Za-z0-9:_.\\-]+\.mount")


@settings(max_examples=300, deadline=None)
@given(PATHS)
def test_safe_paths_are_kept_and_named_as_systemd_does(where):
    assert N.path(where, "p") == where
    assert N.path(where + "/", "p") == where
    name = N.mount_unit_name(where)
    assert UNIT_NAME.fullmatch(name), name
    assert not name.startswith(".")
    # systemd-escape --unescape gives the path back: no two mount points share a unit
    assert unescape(name) == where


BAD_CHARS = st.sampled_from([",", " ", "\n", "("])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20), BAD_CHARS, st.text(max_size=20), st.sampled_from([None, N.EXPORT_SHAPES]))
def test_an_option_with_a_separator_is_refused(before, bad, after, known):
    item = before + bad + after
    with pytest.raises(ValueError) as err:
        N.option_list(["rw" if known else "hard", item], "opts", known, N.ROLE_MOUNT_OPTIONS if known is None else frozenset())
    message = str(err.value)
    assert message.startswith("opts[1]: ") and len(message.splitlines()) == 1


OPTIONS = st.sampled_from(["vers=4.2", "hard", "noatime", "nconnect=4", "rsize=1048576", "timeo=600", "noac", "lookupcache=none",
                           "sec=sys", "local_lock=none", "nosharecache", "retrans=3"])


CLIENT_LISTS = st.lists(st.sampled_from(["*", "192.0.2.0/24", "2001:db8::/64", "@rdma", "nfs1.example.com"]), min_size=1, max_size=4, unique=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(PATHS, CLIENT_LISTS), max_size=5, unique_by=lambda entry: entry[0]),
       st.lists(OPTIONS, max_size=4, unique_by=lambda item: item.split("=")[0]))
def test_rendered_files_have_one_line_per_export_and_a_fixed_unit_shape(entries, mount_options):
    value = [{"path": where, "clients": [{"host": host} for host in hosts]} for where, hosts in entries]
    text = N.render_exports(N.exports(value))
    lines = text.splitlines()
    assert len(lines) == 1 + len(entries)
    for line, (where, hosts) in zip(lines[1:], entries):
        assert line.split(" ") == [where] + [f"{host}(rw,sync,no_subtree_check)" for host in hosts]
    mount_options = [item for item in mount_options if item.split("=")[0] not in N.ROLE_MOUNT_OPTIONS]
    for where, _hosts in entries:
        normal = N.mounts([mount(path=where, export=where, options=mount_options)])[0]
        unit = N.render_mount_unit(normal, 20049, ["rxe0"]).splitlines()
        assert len(unit) == MOUNT_UNIT.count("\n")
        assert unit[10] == "Options=" + ",".join(["proto=rdma", "port=20049"] + mount_options)
        assert unit[8] == f"Where={where}"


# /proc/mounts of the lab's client (Debian 12, 6.1, nfs-common 2.6.2) with the export mounted over RDMA by the role's
# unit, and the same export mounted with mount -t nfs4 -o proto=tcp,vers=4.2 on the same VM (recorded on /mnt/tcp,
# written here on /mnt/rdma).
PROC_MOUNTS_RDMA = (
    "/dev/vda / ext4 rw,relatime 0 0\n"
    "169.254.77.1:/srv/rdma /mnt/rdma nfs4 rw,relatime,vers=4.2,rsize=65536,wsize=65536,namlen=255,hard,proto=rdma,"
    "port=20049,timeo=600,retrans=2,sec=sys,clientaddr=169.254.77.2,local_lock=none,addr=169.254.77.1 0 0\n")
PROC_MOUNTS_TCP = (
    "169.254.77.1:/srv/rdma /mnt/rdma nfs4 rw,relatime,vers=4.2,rsize=65536,wsize=65536,namlen=255,hard,proto=tcp,"
    "timeo=600,retrans=2,sec=sys,clientaddr=169.254.77.2,local_lock=none,addr=169.254.77.1 0 0\n")
MOUNTED = N.mounts([{"server": "169.254.77.1", "export": "/srv/rdma", "path": "/mnt/rdma"}])


@pytest.mark.parametrize("text, port, expected", [
    (PROC_MOUNTS_RDMA, 20049, []),
    (PROC_MOUNTS_RDMA, 20050, ["/mnt/rdma: 169.254.77.1:/srv/rdma is mounted as nfs4 rw,relatime,vers=4.2,rsize=65536,"
                               "wsize=65536,namlen=255,hard,proto=rdma,port=20049,timeo=600,retrans=2,sec=sys,"
                               "clientaddr=169.254.77.2,local_lock=none,addr=169.254.77.1, not NFS with proto=rdma,port=20050"]),
    (PROC_MOUNTS_TCP, 20049, ["/mnt/rdma: 169.254.77.1:/srv/rdma is mounted as nfs4 rw,relatime,vers=4.2,rsize=65536,"
                              "wsize=65536,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,"
                              "clientaddr=169.254.77.2,local_lock=none,addr=169.254.77.1, not NFS with proto=rdma,port=20049"]),
    ("/dev/vda / ext4 rw 0 0\n", 20049, ["/mnt/rdma: not mounted"]),
    # a later mount on the same point hides the earlier one: the last row counts
    (PROC_MOUNTS_RDMA + "tmpfs /mnt/rdma tmpfs rw 0 0\n", 20049,
     ["/mnt/rdma: tmpfs is mounted as tmpfs rw, not NFS with proto=rdma,port=20049"]),
    (PROC_MOUNTS_TCP + PROC_MOUNTS_RDMA, 20049, []),
])
def test_mount_problems(text, port, expected):
    assert N.mount_problems(text, MOUNTED, port) == expected


def test_mount_problems_skips_absent_mounts_and_reads_octal_escapes():
    absent = N.mounts([{"server": "169.254.77.1", "export": "/srv/rdma", "path": "/mnt/rdma", "state": "absent"}])
    assert N.mount_problems("", absent, 20049) == []
    rows = N.parse_proc_mounts("server:/a\\040b /mnt/a\\040b nfs4 rw,proto=rdma 0 0\nshort line\n")
    assert rows == [{"source": "server:/a b", "path": "/mnt/a b", "fstype": "nfs4", "options": ["rw", "proto=rdma"]}]


# --- issue 33: contradictions, shapes, removal, IPv6 ------------------------------------------------------
# Shapes and pairs from nfs-utils' support/nfs/exports.c parseopts() (read via the search tool, nfs-utils 2.x: a later
# option of a pair silently wins; an unknown keyword or "anonuid=" without a number is "bad option" after the file is
# written) and Linux's fs/nfs/fs_context.c nfs_fs_parameters (6.1/6.12: fsparam_flag_no, fsparam_u32, enums).

@pytest.mark.parametrize("options, message", [
    (["rw", "ro"], r"\[1\]: 'ro' contradicts 'rw' \(.*\[0\]\); allowed: one of rw, ro$"),
    (["sync", "no_subtree_check", "async"], r"\[2\]: 'async' contradicts 'sync' \(.*\[0\]\); allowed: one of sync, async$"),
    (["secure", "insecure"], r"\[1\]: 'insecure' contradicts 'secure'"),
    (["root_squash", "no_root_squash"], r"\[1\]: 'no_root_squash' contradicts 'root_squash'"),
    (["all_squash", "no_all_squash"], r"'no_all_squash' contradicts"),
    (["hide", "nohide"], r"'nohide' contradicts"),
    (["crossmnt", "nocrossmnt"], r"'nocrossmnt' contradicts"),
    (["wdelay", "no_wdelay"], r"'no_wdelay' contradicts"),
    (["subtree_check", "no_subtree_check"], r"'no_subtree_check' contradicts"),
    (["secure_locks", "no_auth_nlm"], r"'no_auth_nlm' contradicts 'secure_locks'"),
    (["auth_nlm", "insecure_locks"], r"'insecure_locks' contradicts 'auth_nlm'"),
    (["acl", "no_acl"], r"'no_acl' contradicts"),
    (["pnfs", "no_pnfs"], r"'no_pnfs' contradicts"),
    (["mp", "mountpoint=/srv"], r"'mountpoint=/srv' contradicts 'mp'"),
    (["refer=/a@h", "replicas=/a@g"], r"'replicas=/a@g' contradicts 'refer=/a@h'"),
    (["rw=1"], r"\[0\]: 'rw=1' is refused: rw takes no value; allowed: "),
    (["anonuid"], r"\[0\]: 'anonuid' is refused: anonuid needs a value"),
    (["anonuid=x"], r"'anonuid=x' is refused: anonuid takes a number 0-4294967295"),
    (["anongid=-1"], r"'anongid=-1' is refused: anongid takes a number"),
    (["anonuid=4294967296"], r"'anonuid=4294967296' is refused"),
    (["fsid=abc"], r"'fsid=abc' is refused: fsid takes root, a number"),
    (["fsid=08"], r"'fsid=08' is refused"),
    (["sec=sys:foo"], r"'sec=sys:foo' is refused: sec takes flavours of none, sys, krb5, krb5i, krb5p"),
    (["sec=sys:sys"], r"'sec=sys:sys' is refused"),
    (["refer=nowhere"], r"'refer=nowhere' is refused: refer takes path@host"),
    (["mountpoint=rel"], r"'mountpoint=rel' is refused: mountpoint takes an absolute path"),
    (["xprtsec=tls"], r"'xprtsec=tls' is refused: TLS runs over TCP only"),
    (["xprtsec=none"], r"'xprtsec=none' is refused: TLS runs over TCP only"),
    (["norootsquash"], r"'norootsquash' is not an export option of exports\(5\); allowed: acl, all_squash"),
])
def test_export_options_of_the_wrong_shape_or_contradicting_are_refused(options, message):
    prefix = r"^nfs_rdma_exports\[0\]\.clients\[0\]\.options" + ("" if message.startswith("\\[") else r"\[\d+\]: ")
    with pytest.raises(ValueError, match=prefix + message) as err:
        N.exports([export(clients=[{"host": NETWORK, "options": options}])])
    one_line_error(err, re.match(r"[^:]*", str(err.value)).group(0))


@pytest.mark.parametrize("options", [
    ["ro", "async", "insecure", "no_root_squash", "all_squash", "anonuid=65534", "anongid=0", "fsid=0x10"],
    ["rw", "sync", "fsid=root", "sec=krb5p:krb5i:sys", "crossmnt", "no_wdelay", "mp", "no_acl", "nordirplus"],
    ["fsid=d5b0a0c9-1e6a-4b0f-9a4b-1234567890ab", "refer=/a@192.0.2.1+192.0.2.2:/b@h", "mountpoint=/srv", "security_label"],
])
def test_export_options_of_the_right_shape_are_kept(options):
    assert N.exports([export(clients=[{"host": NETWORK, "options": options}])])[0]["clients"][0]["options"] == options


@pytest.mark.parametrize("first, second, key", [
    ("192.0.2.0/24", "192.0.2.0/255.255.255.0", "192.0.2.0/24"),
    ("192.0.2.7", "192.0.2.7/32", "192.0.2.7"),
    ("192.0.2.0/24", "192.0.2.9/24", "192.0.2.0/24"),
    ("2001:db8::/64", "2001:0db8:0:0::/64", "2001:db8::/64"),
    ("2001:db8::1", "2001:db8:0::1/128", "2001:db8::1"),
    ("nfs1.example.com", "NFS1.Example.com.", "nfs1.example.com"),
    # IPv4-mapped: the dotted tail on every Python (3.12 and earlier print ::ffff:c000:207 on their own)
    ("::ffff:192.0.2.7", "::ffff:c000:207", "::ffff:192.0.2.7"),
    ("::ffff:192.0.2.0/120", "::FFFF:C000:200/120", "::ffff:192.0.2.0/120"),
])
def test_one_client_in_two_spellings_is_refused(first, second, key):
    with pytest.raises(ValueError, match=rf"^nfs_rdma_exports\[0\]\.clients\[1\]\.host: {re.escape(repr(second))} is listed again "
                                         rf"\(first at nfs_rdma_exports\[0\]\.clients\[0\] as {re.escape(repr(first))}, both "
                                         rf"{re.escape(key)}\); allowed: each client once$"):
        N.exports([export(clients=[{"host": first}, {"host": second}])])
    assert N.client_key(first) == N.client_key(second) == key


def test_two_networks_that_differ_are_two_clients():
    assert len(N.exports([export(clients=[{"host": "192.0.2.0/24"}, {"host": "192.0.2.0/25"}, {"host": "192.0.3.0/24"}])])[0]["clients"]) == 3


@pytest.mark.parametrize("first, second", [("fsid=1", "fsid=1"), ("fsid=root", "fsid=0"), ("fsid=16", "fsid=0x10"), ("fsid=8", "fsid=010"),
                                           ("fsid=d5b0a0c91e6a4b0f9a4b1234567890ab", "fsid=D5B0A0C9-1E6A-4B0F-9A4B-1234567890AB")])
def test_one_fsid_on_two_paths_is_refused(first, second):
    value = [export(clients=[{"host": NETWORK, "options": ["rw", first]}]),
             export(path="/srv/other", clients=[{"host": NETWORK, "options": ["ro", second]}])]
    with pytest.raises(ValueError, match=rf"^nfs_rdma_exports\[1\]\.clients\[0\]\.options\[1\]: {re.escape(repr(second))} is the fsid "
                                         rf"of '/srv/rdma' too \(nfs_rdma_exports\[0\]\.clients\[0\]\.options\[1\]\); allowed: "):
        N.exports(value)


def test_one_fsid_for_two_clients_of_one_path_is_kept():
    value = [export(clients=[{"host": NETWORK, "options": ["rw", "fsid=1"]}, {"host": "*", "options": ["ro", "fsid=1"]}]),
             export(path="/srv/other", clients=[{"host": NETWORK, "options": ["fsid=2"]}])]
    assert len(N.exports(value)) == 2


@pytest.mark.parametrize("options, message", [
    (["vers=4.2", "nfsvers=3"], r"\[1\]: 'nfsvers=3' contradicts 'vers=4.2' \(nfs_rdma_mounts\[0\]\.options\[0\]\); allowed: one of vers, nfsvers"),
    (["v3", "vers=4.2"], r"\[1\]: 'vers=4.2' contradicts 'v3'"),
    (["hard", "soft"], r"\[1\]: 'soft' contradicts 'hard'.*allowed: one of hard, soft, softerr$"),
    (["softerr", "hard"], r"\[1\]: 'hard' contradicts 'softerr'"),
    (["ac", "noac"], r"'noac' contradicts 'ac'"),
    (["nocto", "cto"], r"'cto' contradicts 'nocto'"),
    (["lock", "nolock"], r"'nolock' contradicts 'lock'"),
    (["sharecache", "nosharecache"], r"'nosharecache' contradicts"),
    (["resvport", "noresvport"], r"'noresvport' contradicts"),
    (["rdirplus", "nordirplus"], r"'nordirplus' contradicts"),
    (["bg", "fg"], r"'fg' contradicts 'bg'"),
    (["ro", "rw"], r"'rw' contradicts 'ro'"),
    (["noatime", "atime"], r"'atime' contradicts 'noatime'"),
    (["actimeo=30", "acregmin=3"], r"'acregmin=3' contradicts 'actimeo=30'"),
    (["noac", "acdirmax=3"], r"'acdirmax=3' contradicts 'noac'"),
    (["noac", "actimeo=3"], r"'actimeo=3' contradicts 'noac'"),
    (["vers=4.2", "minorversion=1"], r"\[1\]: 'minorversion=1' contradicts 'vers=4.2' \(nfs_rdma_mounts\[0\]\.options\[0\]\); allowed: "),
    (["minorversion=1", "vers=3"], r"\[0\]: 'minorversion=1' contradicts 'vers=3'"),
    (["xprtsec=tls"], r"\[0\]: 'xprtsec=tls' is refused: TLS runs over TCP only: Linux refuses xprtsec=tls/mtls with proto=rdma"),
    (["xprtsec=mtls"], r"'xprtsec=mtls' is refused"),
    (["vers=5"], r"'vers=5' is refused: vers takes one of 2, 3, 4, 4.0, 4.1, 4.2"),
    (["hard=1"], r"'hard=1' is refused: hard takes no value"),
    (["nconnect=17"], r"'nconnect=17' is refused: nconnect takes one of 1, 2, "),
    (["vers=4", "minorversion=3"], r"'minorversion=3' is refused: minorversion takes one of 0, 1, 2"),
    (["rsize=1M"], r"'rsize=1M' is refused: rsize takes a number"),
    (["lookupcache=some"], r"'lookupcache=some' is refused: lookupcache takes one of all, none, pos, positive"),
    (["clientaddr=host"], r"'clientaddr=host' is refused: clientaddr takes an IP address"),
    (["sec=sys:bogus"], r"'sec=sys:bogus' is refused"),
    (["hardd"], r"\[0\]: 'hardd' is not an NFS mount option of Linux or mount\(8\); allowed: "),
    (["nohard"], r"'nohard' is not an NFS mount option"),
])
def test_mount_options_of_the_wrong_shape_or_contradicting_are_refused(options, message):
    prefix = r"^nfs_rdma_mounts\[0\]\.options" + ("" if message.startswith("\\[") else r"\[\d+\]: ")
    with pytest.raises(ValueError, match=prefix + message) as err:
        N.mounts([mount(options=options)])
    one_line_error(err, re.match(r"[^:]*", str(err.value)).group(0))


@pytest.mark.parametrize("options", [
    ["vers=4", "minorversion=2", "hard", "noac", "nocto", "nolock", "nconnect=4"],
    ["nfsvers=3", "soft", "timeo=600", "retrans=3", "noresvport", "lookupcache=positive", "local_lock=all", "sec=krb5:sys"],
    ["v4", "softerr", "actimeo=60", "noatime", "nodiratime", "nosuid", "nodev", "noexec", "nofail", "clientaddr=fe80::1"],
    ["minorversion=1"],
    ["vers=4.1", "ac", "cto", "acregmin=3", "acregmax=60", "acdirmin=30", "acdirmax=60", "norelatime", "lazytime", "async"],
])
def test_mount_options_of_the_right_shape_are_kept(options):
    assert N.mounts([mount(options=options)])[0]["options"] == options


def test_every_mount_option_alone_is_accepted():
    for name in N.MOUNT_SHAPES:
        item = sample(name, N.MOUNT_SHAPES)
        assert N.mounts([mount(options=[item])])[0]["options"] == [item]
        if N.MOUNT_SHAPES[name] == "flag_no":
            assert N.mounts([mount(options=["no" + name])])[0]["options"] == ["no" + name]


@pytest.mark.parametrize("server, proto, source", [
    ("169.254.77.1", "rdma", "169.254.77.1:/srv/rdma"),
    ("nfs1.example.com", "rdma", "nfs1.example.com:/srv/rdma"),
    ("fd77::1", "rdma6", "[fd77::1]:/srv/rdma"),
    ("FD77:0::1", "rdma6", "[fd77::1]:/srv/rdma"),
    ("::ffff:169.254.77.1", "rdma6", "[::ffff:169.254.77.1]:/srv/rdma"),
    ("::ffff:a9fe:4d01", "rdma6", "[::ffff:169.254.77.1]:/srv/rdma"),
])
def test_the_proto_follows_the_server_s_address_family(server, proto, source):
    normal = N.mounts([mount(server=server, options=[])])[0]
    assert (normal["proto"], normal["source"]) == (proto, source)
    assert f"Options=proto={proto},port=20049\n" in N.render_mount_unit(normal, 20049)


# /proc/mounts of an NFSv4.2 mount over RDMA of an IPv6 server, recorded on the lab (Debian 12, 6.1.0-56, nfs-common 2.6.2;
# tests/lab/nfs_rdma_consumer.yml, the role's mount unit Options=proto=rdma6,port=20049,vers=4.2).
PROC_MOUNTS_RDMA6 = (
    "[fd77::1]:/srv/rdma /mnt/rdma6 nfs4 rw,relatime,vers=4.2,rsize=65536,wsize=65536,namlen=255,hard,proto=rdma6,port=20049,"
    "timeo=600,retrans=2,sec=sys,clientaddr=fd77::2,local_lock=none,addr=fd77::1 0 0\n")


def test_mount_problems_reads_rdma6_for_an_ipv6_server_and_only_there():
    six = N.mounts([{"server": "fd77::1", "export": "/srv/rdma", "path": "/mnt/rdma6"}])
    assert N.mount_problems(PROC_MOUNTS_RDMA6, six, 20049) == []
    four = N.mounts([{"server": "169.254.77.1", "export": "/srv/rdma", "path": "/mnt/rdma6"}])
    assert N.mount_problems(PROC_MOUNTS_RDMA6, four, 20049) == [
        "/mnt/rdma6: [fd77::1]:/srv/rdma is mounted as nfs4 " + PROC_MOUNTS_RDMA6.split(" ")[3] + ", not NFS with proto=rdma,port=20049"]
    assert N.mount_problems(PROC_MOUNTS_RDMA.replace("/mnt/rdma ", "/mnt/rdma6 "), six, 20049)[0].endswith(
        "not NFS with proto=rdma6,port=20049")


@pytest.mark.parametrize("state, expected", [("present", ["mounted", "absent"]), ("absent", ["absent", "absent"])])
def test_state_absent_takes_every_mount_away(state, expected):
    value = {"nfs_rdma_state": state, "nfs_rdma_mounts": [mount(), mount(path="/mnt/b", state="absent")]}
    assert [item["state"] for item in N.files(value)["mounts"]] == expected
    assert N.files(value)["state"] == state


@pytest.mark.parametrize("state", ["gone", "", None, True, ["absent"]])
def test_state_refused(state):
    with pytest.raises(ValueError, match=r"^nfs_rdma_state: .* is not allowed; allowed: present, absent$"):
        N.settings({"nfs_rdma_state": state})


@pytest.mark.parametrize("changes, expected", [
    ({"nfs_rdma_server": False},
     ["nfs_rdma_exports: 1 export(s) on a host whose nfs_rdma_server is False; allowed: exports only with nfs_rdma_server: true"]),
    ({"nfs_rdma_server": "no"},
     ["nfs_rdma_exports: 1 export(s) on a host whose nfs_rdma_server is 'no'; allowed: exports only with nfs_rdma_server: true"]),
    ({"nfs_rdma_state": "absent"},
     ["nfs_rdma_server: true contradicts nfs_rdma_state: absent (which removes the server's RDMA listener); allowed: false with absent"]),
    ({"nfs_rdma_state": "absent", "nfs_rdma_server": False, "nfs_rdma_exports": []}, []),
    ({"nfs_rdma_server": "maybe"}, ["nfs_rdma_server: 'maybe' is not a boolean; allowed: true or false"]),
    ({"nfs_rdma_state": "gone"}, ["nfs_rdma_state: 'gone' is not allowed; allowed: present, absent"]),
])
def test_role_input_contradictions_between_variables(changes, expected):
    assert _role_inputs.errors("nfs_rdma", dict(ROLE_SETTINGS, **changes)) == expected


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(N.EXPORT_CONFLICTS + N.MOUNT_CONFLICTS), st.data())
def test_any_two_of_a_group_are_refused_in_either_order(group, data):
    first, second = data.draw(st.permutations(group))[:2]
    export_group = group in N.EXPORT_CONFLICTS
    shapes = N.EXPORT_SHAPES if export_group else N.MOUNT_SHAPES

    def item(name):
        if name in shapes:
            return sample(name, shapes)
        return name  # noNAME of a flag_no, or noac
    items = [item(first), item(second)]
    with pytest.raises(ValueError, match=r"^opts\[1\]: .* contradicts .*\(opts\[0\]\); allowed: one of "):
        N.option_list(items, "opts", shapes, conflicts=N.EXPORT_CONFLICTS if export_group else N.MOUNT_CONFLICTS)


@given(st.ip_addresses(v=6))
def test_address_text_is_rfc_5952_s_on_every_python(address):
    text = N.address_text(address)
    assert ipaddress.IPv6Address(text) == address
    if address.ipv4_mapped is None:
        assert text == address.compressed
    else:
        # what Python 3.13's ipaddress prints; 3.11 and 3.12 print the last 32 bits in hex
        assert text == f"::ffff:{address.ipv4_mapped}"


@settings(max_examples=200, deadline=None)
@given(st.ip_addresses(v=4), st.integers(min_value=0, max_value=32))
def test_a_network_as_prefix_and_as_netmask_is_one_client(address, prefix):
    network = ipaddress.ip_network(f"{address}/{prefix}", strict=False)
    as_prefix, as_mask = f"{network.network_address}/{prefix}", f"{network.network_address}/{network.netmask}"
    assert N.client_key(as_prefix) == N.client_key(as_mask)
    with pytest.raises(ValueError, match=r"^nfs_rdma_exports\[0\]\.clients\[1\]\.host: .* is listed again"):
        N.exports([export(clients=[{"host": as_prefix}, {"host": as_mask}])])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(sorted(N.MOUNT_SHAPES)), min_size=1, max_size=6, unique=True))
def test_accepted_mount_options_have_no_two_of_one_group(names):
    items = [sample(name, N.MOUNT_SHAPES) for name in names]
    try:
        N.mounts([mount(options=items)])
    except ValueError as err:
        assert "contradicts" in str(err), err
        return
    for group in N.MOUNT_CONFLICTS:
        assert len(set(group) & set(names)) <= 1, (group, names)
