# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_partitions: OpenSM's partitions.conf and opensm.conf, validated, rendered and parsed back.

The real syntax recorded here comes from OpenSM 3.3.23 (Debian 12's opensm 3.3.23-2+b1):
the PARTITION CONFIGURATION section of opensm(8) and `opensm --create-config` output.
tests/ib/test_subnet_manager_ibsim.py runs what render_partitions() writes through a real
OpenSM on ibsim's simulated fabric.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.plugin_utils import _opensm_partitions as P
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_inputs

GUID2 = "0x0002c90300002001"
GUID3 = "0x0002c90300003001"

# opensm(8), PARTITION CONFIGURATION, "Examples" and the note at its end (OpenSM 3.3.23)
MAN_PAGE_DEFAULT = "Default=0x7fff,ipoib:ALL=full;"
MAN_PAGE_EXAMPLES = """\
 Default=0x7fff : ALL, SELF=full ;
 YetAnotherOne = 0x300 : SELF=full ;
"""
# the file the ibsim trial (ibsim-facts.md section 3) ran through OpenSM 3.3.23
TRIAL_FILE = """\
Default=0x7fff, ipoib : ALL=full;
storage=0x8002, ipoib : 0x0002c90300002001=full, 0x0002c90300003001=full, 0x0002c90300004001=limited;
"""
# `opensm --create-config` (3.3.23) lines for the options render_options() writes: name, one space, value
CREATE_CONFIG_LINES = ["guid 0x0000000000000000", "subnet_prefix 0xfe80000000000000", "lmc 0", "sm_priority 0",
                       "sminfo_polling_timeout 10000", "polling_retry_number 4", "log_flags 0x03", "force_log_flush FALSE",
                       "part_enforce both", "allow_both_pkeys FALSE", "partition_config_file /etc/opensm/partitions.conf"]


def part(**changes):
    entry = {"name": "storage", "pkey": "0x0002", "members": [{"guid": GUID2, "membership": "full"}]}
    entry.update(changes)
    return entry


# --- validation ------------------------------------------------------------------------------

def test_default_partition_is_added_first():
    result = P.normalize_partitions([part()])
    assert [p["pkey"] for p in result] == ["0x7fff", "0x0002"]
    assert P.render_partition(result[0]) == "Default=0x7fff, ipoib : ALL=full;"


def test_users_default_partition_is_kept_and_put_first():
    own = {"name": "Default", "pkey": 0x7FFF, "members": [{"guid": "ALL", "membership": "limited"}, {"guid": "SELF", "membership": "full"}]}
    result = P.normalize_partitions([part(), own])
    assert [p["pkey"] for p in result] == ["0x7fff", "0x0002"]
    assert P.render_partition(result[0]) == "Default=0x7fff : ALL=limited, SELF=full;"


@pytest.mark.parametrize("entry, expected", [
    (part(pkey=2), "storage=0x0002 : 0x0002c90300002001=full;"),
    (part(pkey="0x7ffe"), "storage=0x7ffe : 0x0002c90300002001=full;"),
    (part(pkey="12"), "storage=0x000c : 0x0002c90300002001=full;"),  # decimal: the collection's one P_Key rule
    (part(pkey="16"), "storage=0x0010 : 0x0002c90300002001=full;"),
    (part(pkey="0X10"), "storage=0x0010 : 0x0002c90300002001=full;"),
    (part(ipoib=True, mtu=5, rate=7, sl=3), "storage=0x0002, ipoib, mtu=5, rate=7, sl=3 : 0x0002c90300002001=full;"),
    (part(ipoib=True, mtu="4"), "storage=0x0002, ipoib, mtu=4 : 0x0002c90300002001=full;"),
    (part(ipoib=True, mtu="0x4", sl="0xf"), "storage=0x0002, ipoib, mtu=4, sl=15 : 0x0002c90300002001=full;"),
    (part(members=[{"guid": "0x0002C90300002001"}]), "storage=0x0002 : 0x0002c90300002001=limited;"),
    (part(members=[{"guid": "ALL_CAS", "membership": "limited"}, {"guid": "SELF", "membership": "full"},
                   {"guid": "ALL_SWITCHES", "membership": "full"}]),
     "storage=0x0002 : ALL_CAS=limited, SELF=full, ALL_SWITCHES=full;"),
    (part(members=[{"guid": GUID3, "membership": "both"}]), "storage=0x0002 : 0x0002c90300003001=both;"),
])
def test_render_one_partition(entry, expected):
    assert P.render_partition(P.normalize_partitions([entry])[1]) == expected


@pytest.mark.parametrize("value, message", [
    ("x", r"^subnet_manager_partitions: 'x' is not a list"),
    (["x"], r"^subnet_manager_partitions\[0\]: 'x' is not a dictionary"),
    ([part(color="red")], r"^subnet_manager_partitions\[0\]\.color: unknown option; allowed: name, pkey, ipoib, mtu, rate, sl, members$"),
    ([{"name": "x", "pkey": 2}], r"^subnet_manager_partitions\[0\]\.members: missing"),
    ([part(name="a b")], r"^subnet_manager_partitions\[0\]\.name: 'a b' is not a partition name"),
    ([part(name="a=b")], r"^subnet_manager_partitions\[0\]\.name: 'a=b' is not a partition name"),
    ([part(name="x;y")], r"^subnet_manager_partitions\[0\]\.name: 'x;y'"),
    ([part(name="")], r"^subnet_manager_partitions\[0\]\.name: '' is not a partition name"),
    ([part(name="n" * 65)], r"^subnet_manager_partitions\[0\]\.name: 'n{65}' is not a partition name; allowed: 1-64"),
    ([part(pkey=0)], r"^subnet_manager_partitions\[0\]\.pkey: 0x0000 is out of range; allowed: 0x0001-0x7fff"),
    ([part(pkey="0x8002")], r"^subnet_manager_partitions\[0\]\.pkey: 0x8002 is out of range; allowed: 0x0001-0x7fff \(membership"),
    ([part(pkey=0x10000)], r"^subnet_manager_partitions\[0\]\.pkey: 65536 is out of range"),
    ([part(pkey="0xZZ")], r"^subnet_manager_partitions\[0\]\.pkey: '0xZZ' is not a P_Key; allowed: 0x0001-0x7fff"),
    ([part(pkey=True)], r"^subnet_manager_partitions\[0\]\.pkey: True is not a P_Key"),
    ([part(pkey=2.5)], r"^subnet_manager_partitions\[0\]\.pkey: 2\.5 is not a P_Key"),
    ([part(pkey="010")], r"^subnet_manager_partitions\[0\]\.pkey: '010' is ambiguous: with its leading zero OpenSM reads it as octal "
                         r"\(0x0008\)"),
    ([part(pkey=" 2")], r"^subnet_manager_partitions\[0\]\.pkey: ' 2' is not a P_Key"),
    ([part(pkey="32770")], r"^subnet_manager_partitions\[0\]\.pkey: 0x8002 is out of range"),
    ([part(members=[{"guid": "0x0000000000000000", "membership": "full"}])],
     r"^subnet_manager_partitions\[0\]\.members\[0\]\.guid: '0x0000000000000000' is not a port GUID; allowed: a port GUID "
     r"\(0x and 16 hex digits, not all zero\)"),
    ([part(ipoib=True, sl=3)], r"^subnet_manager_partitions\[0\]\.sl: 3 needs subnet_manager_options\.qos: true \(without QoS "
                               r"OpenSM gives the partition SL 0\)"),
    ([{"name": "Default", "pkey": "0x7fff", "members": [{"guid": "ALL", "membership": "limited"}, {"guid": "SELF"}]}],
     r"^subnet_manager_partitions\[0\]\.members\[1\]\.membership: limited would make the SM's own port a limited member"),
    ([{"name": "Default", "pkey": "0x7fff", "members": [{"guid": GUID2, "membership": "full"}, {"guid": "ALL", "membership": "both"}]}],
     r"^subnet_manager_partitions\[0\]\.members\[1\]\.membership: both in the default partition: OpenSM keeps 0xffff"),
    ([{"name": "Default", "pkey": "0x7fff", "members": [{"guid": "SELF", "membership": "full"}, {"guid": "ALL"}]}],
     r"^subnet_manager_partitions\[0\]\.members\[0\]\.guid: SELF must be listed after the limited members"),
    ([part(ipoib="yes")], r"^subnet_manager_partitions\[0\]\.ipoib: 'yes' is not a boolean"),
    ([part(ipoib=True, mtu=6)], r"^subnet_manager_partitions\[0\]\.mtu: 6 is out of range; allowed: 1-5 \(IBTA codes"),
    ([part(ipoib=True, mtu=0)], r"^subnet_manager_partitions\[0\]\.mtu: 0 is out of range"),
    # the module kit's one integer form: no white space, leading zero (OpenSM's strtoul reads 04 as octal) or fraction
    ([part(ipoib=True, mtu=" 4")], r"^subnet_manager_partitions\[0\]\.mtu: ' 4' is not an integer; allowed: 1-5 \(IBTA codes"),
    ([part(ipoib=True, mtu="04")], r"^subnet_manager_partitions\[0\]\.mtu: '04' is not an integer"),
    ([part(ipoib=True, mtu=4.0)], r"^subnet_manager_partitions\[0\]\.mtu: 4\.0 is not an integer"),
    ([part(ipoib=True, mtu=4096)], r"^subnet_manager_partitions\[0\]\.mtu: 4096 is out of range; allowed: 1-5 \(IBTA codes: .*5=4096\)"),
    ([part(ipoib=True, rate=1)], r"^subnet_manager_partitions\[0\]\.rate: 1 is out of range; allowed: 2-22"),
    ([part(ipoib=True, rate=23)], r"^subnet_manager_partitions\[0\]\.rate: 23 is out of range"),
    ([part(ipoib=True, sl=16)], r"^subnet_manager_partitions\[0\]\.sl: 16 is out of range; allowed: 0-15$"),
    ([part(mtu=5)], r"^subnet_manager_partitions\[0\]\.mtu: OpenSM sets mtu only on the IPoIB broadcast group; allowed: with ipoib: true$"),
    ([part(members=[])], r"^subnet_manager_partitions\[0\]\.members: \[\] is not a list of members"),
    ([part(members="ALL")], r"^subnet_manager_partitions\[0\]\.members: 'ALL' is not a list of members"),
    ([part(members=["ALL"])], r"^subnet_manager_partitions\[0\]\.members\[0\]: 'ALL' is not a dictionary"),
    ([part(members=[{"membership": "full"}])], r"^subnet_manager_partitions\[0\]\.members\[0\]\.guid: missing"),
    ([part(members=[{"guid": "0x2c90300002001"}])], r"^subnet_manager_partitions\[0\]\.members\[0\]\.guid: '0x2c90300002001' is not a port GUID"),
    ([part(members=[{"guid": "all"}])], r"^subnet_manager_partitions\[0\]\.members\[0\]\.guid: 'all' is not a port GUID; allowed: a port GUID"),
    ([part(members=[{"guid": 12345}])], r"^subnet_manager_partitions\[0\]\.members\[0\]\.guid: 12345 is not a port GUID"),
    ([part(members=[{"guid": "ALL", "membership": "half"}])],
     r"^subnet_manager_partitions\[0\]\.members\[0\]\.membership: 'half' is not allowed; allowed: full, limited, both$"),
    ([part(members=[{"guid": GUID2}, {"guid": GUID2.upper().replace("0X", "0x"), "membership": "full"}])],
     r"^subnet_manager_partitions\[0\]\.members\[1\]\.guid: 0x0002c90300002001 is listed twice \(also subnet_manager_partitions\[0\]\.members\[0\]\)"),
    ([part(), part(pkey=3)], r"^subnet_manager_partitions\[1\]\.name: storage is listed twice \(also subnet_manager_partitions\[0\]\)"),
    ([part(), part(name="other", pkey="0x2")], r"^subnet_manager_partitions\[1\]\.pkey: 0x0002 is listed twice \(also subnet_manager_partitions\[0\]\)"),
    ([part(name="Default")], r"^subnet_manager_partitions\[0\]\.name: 'Default' is the name of the default partition"),
])
def test_bad_partitions(value, message):
    with pytest.raises(ValueError, match=message) as err:
        P.normalize_partitions(value, qos=False)
    assert "\n" not in str(err.value)


def test_both_needs_allow_both_pkeys():
    value = [part(members=[{"guid": GUID2, "membership": "both"}])]
    with pytest.raises(ValueError, match=r"^subnet_manager_partitions\[0\]\.members\[0\]\.membership: both needs "
                                         r"subnet_manager_options\.allow_both_pkeys: true"):
        P.normalize_partitions(value, allow_both=False)
    assert P.normalize_partitions(value, allow_both=True)[1]["members"][0]["membership"] == "both"


def test_every_rendered_line_ends_with_a_semicolon():
    text = P.render_partitions(P.normalize_partitions([part(ipoib=True, mtu=5), part(name="b", pkey=3, members=[{"guid": "ALL"}])]))
    assert text.startswith("#")
    assert all(line.endswith(";") for line in text.splitlines()[1:])


# --- parsing ---------------------------------------------------------------------------------

def test_parse_the_trial_file():
    # 0x8002 in a file: OpenSM clears the 0x8000 bit (osm_prtn_make_new), so this reads as 0x0002
    parsed = P.parse_partitions(TRIAL_FILE)
    assert parsed == P.parse_partitions(TRIAL_FILE.replace("0x8002", "0x0002"))
    assert parsed == P.normalize_partitions([
        {"name": "Default", "pkey": "0x7fff", "ipoib": True, "members": [{"guid": "ALL", "membership": "full"}]},
        {"name": "storage", "pkey": "0x0002", "ipoib": True, "members": [
            {"guid": "0x0002c90300002001", "membership": "full"}, {"guid": "0x0002c90300003001", "membership": "full"},
            {"guid": "0x0002c90300004001", "membership": "limited"}]},
    ])


def test_parse_the_man_page_forms():
    assert P.parse_partitions(MAN_PAGE_DEFAULT) == [P.DEFAULT_PARTITION]
    parsed = P.parse_partitions(MAN_PAGE_EXAMPLES)
    # "ALL" without a membership is limited, as OpenSM reads it
    assert parsed[0]["members"] == [{"guid": "ALL", "membership": "limited"}, {"guid": "SELF", "membership": "full"}]
    assert parsed[1] == {"name": "YetAnotherOne", "pkey": "0x0300", "ipoib": False, "mtu": None, "rate": None, "sl": None,
                         "members": [{"guid": "SELF", "membership": "full"}]}


def test_parse_comments_multiline_and_defmember():
    text = ("# a comment\n"
            "storage = 0x2 , ipoib, mtu=5 ,defmember=full :   # the definition\n"
            "   0x0002c90300002001,\n"
            "   0x0002C90300003001=limited ;\n")
    parsed = P.parse_partitions(text)
    assert parsed[1]["mtu"] == 5
    assert parsed[1]["members"] == [{"guid": GUID2, "membership": "full"}, {"guid": GUID3, "membership": "limited"}]


@pytest.mark.parametrize("text, message", [
    # each of these makes OpenSM 3.3.23 log PARSE ERROR and discard the whole file (osm_prtn_config.c)
    ("storage=0xZZZZ : ALL=full;", r"^partitions\.conf: line 1: bad partition definition: P_Key '0xZZZZ' is not a number"),
    ("storage=0x : ALL=full;", r"^partitions\.conf: line 1: bad partition definition: P_Key '0x' is not a number"),
    ("storage=08 : ALL=full;", r"^partitions\.conf: line 1: bad partition definition: P_Key '08' is not a number"),
    ("garbage", r"^partitions\.conf: line 1: no partition definition found"),
    ("storage=0x2 ALL=full;", r"^partitions\.conf: line 1: no partition definition found"),
    ("storage=0x2,\n ipoib : ALL=full;", r"^partitions\.conf: line 1: no partition definition found"),
    ("x=0x2 : 0x0000000000000000=full;", r"^partitions\.conf: line 1: bad PortGUID '0x0000000000000000'"),
    ("x=0x2 : 0x0002c903000020zz=full;", r"^partitions\.conf: line 1: bad PortGUID '0x0002c903000020zz'"),
    ("x=0x2 : BOGUS=full;", r"^partitions\.conf: line 1: bad PortGUID 'BOGUS'"),
    ("x=0x2 : " + ", ".join(f"0x{n:016x}=full" for n in range(1, 200)) + ";",
     r"^partitions\.conf: line 1: 4982 characters; OpenSM reads at most 4093 per line"),
    ("# only a comment\n", r"^partitions\.conf: no partition definition; OpenSM treats such a file as an error"),
    # what OpenSM reads but this parser does not model
    ("storage : ALL=full;", r"^partitions\.conf: line 1: partition 'storage' has no P_Key"),
    ("storage=0 : ALL=full;", r"^partitions\.conf: line 1: P_Key '0' is 0 to OpenSM, which then generates one"),
    ("storage=0x2, ipoib : mgid=ff12:401b::0707,sl=1 ALL=full;", r"^partitions\.conf: line 1: multicast groups \(mgid=\) are not read"),
    ("storage=0x2, ipoib, scope=2 : ALL=full;", r"^partitions\.conf: line 1: partition flag 'scope' \(scope\) is not read here"),
    ("a=0x2 : ALL=full;\nb=0x2 : ALL=full;", r"^partitions\.conf: line 2: 0x0002 is listed twice"),
    ("x=0x2, ipoib, mtu=9 : ALL;", r"^partitions\.conf: line 1: 9 is out of range; allowed: 1-5"),
])
def test_parse_errors_name_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        P.parse_partitions(text)


def test_diff_partitions():
    before = P.normalize_partitions([part(), part(name="old", pkey=5)])
    after = P.normalize_partitions([part(members=[{"guid": GUID3, "membership": "full"}]), part(name="new", pkey=6)])
    diff = P.diff_partitions(before, after)
    assert [p["name"] for p in diff["added"]] == ["new"]
    assert [p["name"] for p in diff["removed"]] == ["old"]
    assert [(c["pkey"], c["before"]["members"][0]["guid"], c["after"]["members"][0]["guid"]) for c in diff["changed"]] == [
        ("0x0002", GUID2, GUID3)]
    assert P.diff_partitions(after, after) == {"added": [], "removed": [], "changed": []}


# --- properties ------------------------------------------------------------------------------

GUIDS = st.one_of(st.sampled_from(P.KEYWORDS),
                  st.integers(1, 2**64 - 1).map(lambda n: f"0x{n:016x}"),
                  st.integers(1, 2**64 - 1).map(lambda n: f"0x{n:016X}"))
MEMBERS = st.lists(st.fixed_dictionaries({"guid": GUIDS}, optional={"membership": st.sampled_from(P.MEMBERSHIPS)}),
                   min_size=1, max_size=5, unique_by=lambda m: m["guid"].lower())
NAMES = st.from_regex(r"[A-Za-z0-9_.-]{1,64}", fullmatch=True)


@st.composite
def partition_lists(draw):
    count = draw(st.integers(0, 5))
    names = draw(st.lists(NAMES.filter(lambda n: n != "Default"), min_size=count, max_size=count, unique=True))
    pkeys = draw(st.lists(st.integers(1, 0x7FFE), min_size=count, max_size=count, unique=True))
    result = []
    for name, pkey in zip(names, pkeys):
        entry = {"name": name, "pkey": draw(st.sampled_from([pkey, f"0x{pkey:x}", f"0x{pkey:04X}", str(pkey)])), "members": draw(MEMBERS)}
        if draw(st.booleans()):
            entry["ipoib"] = True
            for key, low, high in (("mtu", 1, 5), ("rate", 2, 22), ("sl", 0, 15)):
                if draw(st.booleans()):
                    entry[key] = draw(st.integers(low, high))
        result.append(entry)
    return result


@settings(max_examples=200, deadline=None)
@given(partition_lists())
def test_render_parse_round_trip(value):
    partitions = P.normalize_partitions(value)
    text = P.render_partitions(partitions)
    assert P.parse_partitions(text) == partitions
    assert P.render_partitions(P.parse_partitions(text)) == text
    assert all(line.endswith(";") for line in text.splitlines() if not line.startswith("#"))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="=,:;# \n0x7fALLSEfuliptd", max_size=80))
def test_parse_never_raises_anything_but_value_error(text):
    try:
        parsed = P.parse_partitions(text)
    except ValueError as err:
        assert "\n" not in str(err) and str(err).startswith("partitions.conf: ")
    else:
        assert parsed[0]["pkey"] == "0x7fff"


# --- opensm.conf -----------------------------------------------------------------------------

def test_render_options_in_opensm_syntax():
    options = P.normalize_options({"sm_priority": 10, "guid": "0x0002C90300001001", "force_log_flush": True, "log_flags": 3,
                                   "sminfo_polling_timeout": 1000, "polling_retry_number": 2, "routing_engine": ["updn", "minhop"],
                                   "part_enforce": "both",
                                   "allow_both_pkeys": False, "subnet_prefix": "0xfe80000000000000", "lmc": "0", "qos": None})
    text = P.render_options(options, "/etc/opensm/partitions.conf")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines == ["guid 0x0002c90300001001", "subnet_prefix 0xfe80000000000000", "lmc 0",
                     "part_enforce both", "allow_both_pkeys FALSE", "routing_engine updn,minhop", "sm_priority 10",
                     "sminfo_polling_timeout 1000", "polling_retry_number 2", "log_flags 0x03", "force_log_flush TRUE",
                     "partition_config_file /etc/opensm/partitions.conf"]
    # the same shape as opensm --create-config's lines for these options
    shape = re.compile(r"[a-z_0-9]+ \S+")
    assert all(shape.fullmatch(line) for line in lines + CREATE_CONFIG_LINES)
    assert {line.split()[0] for line in CREATE_CONFIG_LINES} <= set(P.OPTIONS) | {"partition_config_file"}


def test_no_options_no_lines():
    assert [line for line in P.render_options(P.normalize_options({})).splitlines() if not line.startswith("#")] == []


@pytest.mark.parametrize("value, message", [
    ([], r"^subnet_manager_options: \[\] is not a dictionary"),
    ({"bogus_option": 1}, r"^subnet_manager_options\.bogus_option: not an option this role sets; allowed: guid, "),
    ({"sm_priority": 16}, r"^subnet_manager_options\.sm_priority: 16 is out of range; allowed: 0-15$"),
    ({"sm_priority": "notanumber"}, r"^subnet_manager_options\.sm_priority: 'notanumber' is not an integer"),
    ({"sm_priority": True}, r"^subnet_manager_options\.sm_priority: True is not an integer"),
    # str.isdigit() takes these; int() refuses the first and reads the second: both must name the option
    ({"sm_priority": "\u00b2"}, r"^subnet_manager_options\.sm_priority: '\u00b2' is not an integer"),
    ({"lmc": "\u0663"}, r"^subnet_manager_options\.lmc: '\u0663' is not an integer"),
    ({"lmc": 99}, r"^subnet_manager_options\.lmc: 99 is out of range; allowed: 0-7$"),
    ({"guid": "0x0000000000000000"}, r"^subnet_manager_options\.guid: '0x0000000000000000' is not a port GUID"),
    ({"guid": "2c90300001001"}, r"^subnet_manager_options\.guid: '2c90300001001' is not a port GUID"),
    ({"subnet_prefix": "fe80::"}, r"^subnet_manager_options\.subnet_prefix: 'fe80::' is not a 64-bit value"),
    ({"force_log_flush": "TRUE"}, r"^subnet_manager_options\.force_log_flush: 'TRUE' is not a boolean"),
    ({"log_file": "opensm.log"}, r"^subnet_manager_options\.log_file: 'opensm\.log' is not an absolute path"),
    ({"log_file": "/var/log/x\nsm_priority 15"}, r"^subnet_manager_options\.log_file: '/var/log/x\\nsm_priority 15' is not an absolute path"),
    ({"routing_engine": "fastest"}, r"^subnet_manager_options\.routing_engine: 'fastest' is not a list of routing engines"),
    ({"routing_engine": []}, r"^subnet_manager_options\.routing_engine: \[\] is not a list"),
    ({"part_enforce": "strict"}, r"^subnet_manager_options\.part_enforce: 'strict' is not allowed; allowed: both, in, out, off$"),
    ({"sminfo_polling_timeout": 0}, r"^subnet_manager_options\.sminfo_polling_timeout: 0 is out of range"),
])
def test_bad_options(value, message):
    with pytest.raises(ValueError, match=message):
        P.normalize_options(value)


def test_partition_config_file_is_the_roles():
    with pytest.raises(ValueError, match=r"^subnet_manager_options\.partition_config_file: not an option this role sets"):
        P.normalize_options({"partition_config_file": "/x"})


def test_ib_port_guids_from_gid_facts():
    devices = {"mlx5_0": {"ports": {"1": {"link_layer": "InfiniBand"}, "2": {"link_layer": "Ethernet"}}},
               "rxe0": {"ports": {"1": {"link_layer": "Ethernet"}}}}
    gids = [{"device": "mlx5_0", "port": 1, "index": 0, "gid": "fe80:0000:0000:0000:0002:c903:0000:1001"},
            {"device": "mlx5_0", "port": 1, "index": 1, "gid": "fe80:0000:0000:0000:0002:c903:0000:9999"},
            {"device": "mlx5_0", "port": 2, "index": 0, "gid": "fe80:0000:0000:0000:0002:c903:0000:1002"},
            {"device": "rxe0", "port": 1, "index": 0, "gid": "fe80:0000:0000:0000:5054:00ff:fe77:0001"}]
    assert P.ib_port_guids(devices, gids) == ["0x0002c90300001001"]
    assert P.ib_port_guids({}, []) == []
    assert P.ib_port_guids(None, None) == []


def test_ib_port_guids_from_the_ib_facts_without_a_gid_table():
    """gid_facts' ports.N.ib.port_guid answers with gid_table: false (rdma_gids empty); a port without it falls back."""
    devices = {"ibsim0": {"ports": {"1": {"link_layer": None, "ib": {"port_guid": "0x0002C90300002001"}}}},
               "mlx5_0": {"ports": {"1": {"link_layer": "InfiniBand", "ib": {"port_guid": None}},
                                    "2": {"link_layer": "Ethernet"}}}}
    gids = [{"device": "mlx5_0", "port": 1, "index": 0, "gid": "fe80:0000:0000:0000:0002:c903:0000:1001"},
            {"device": "mlx5_0", "port": 2, "index": 0, "gid": "fe80:0000:0000:0000:0002:c903:0000:1002"}]
    assert P.ib_port_guids(devices) == ["0x0002c90300002001"]
    assert P.ib_port_guids(devices, []) == ["0x0002c90300002001"]
    assert P.ib_port_guids(devices, gids) == ["0x0002c90300002001", "0x0002c90300001001"]


# --- the role's input check (role_input_errors('subnet_manager')) ------------------------------

ROLE_DEFAULTS = {"subnet_manager_partitions": [], "subnet_manager_options": {}, "subnet_manager_ports": [],
                 "subnet_manager_install": True, "subnet_manager_manage_service": True, "subnet_manager_config_dir": "",
                 "subnet_manager_validate": True}


@pytest.mark.parametrize("changes, expected", [
    ({}, []),
    ({"subnet_manager_partitions": [part()], "subnet_manager_options": {"sm_priority": 14},
      "subnet_manager_ports": [GUID2, GUID3]}, []),
    ({"subnet_manager_manage_service": False, "subnet_manager_config_dir": "/srv/opensm"}, []),
    ({"subnet_manager_partitions": [part(pkey="0x8002")], "subnet_manager_options": {"sm_priority": 16}},
     ["subnet_manager_options.sm_priority: 16 is out of range; allowed: 0-15",
      "subnet_manager_partitions[0].pkey: 0x8002 is out of range; allowed: 0x0001-0x7fff (membership is set per member, "
      "not with the 0x8000 bit), as an integer, 0x and 1-4 hex digits (0x8002), or decimal digits without a leading zero (32770)"]),
    ({"subnet_manager_partitions": [part(ipoib=True, sl=2)]},
     ["subnet_manager_partitions[0].sl: 2 needs subnet_manager_options.qos: true (without QoS OpenSM gives the partition SL 0); "
      "allowed: 0 or no sl, or set subnet_manager_options.qos: true"]),
    ({"subnet_manager_partitions": [part(ipoib=True, sl=2)], "subnet_manager_options": {"qos": True}}, []),
    ({"subnet_manager_partitions": [part(ipoib=True, sl=0)]}, []),
    ({"subnet_manager_partitions": [part(members=[{"guid": "ALL", "membership": "both"}])]},
     ["subnet_manager_partitions[0].members[0].membership: both needs subnet_manager_options.allow_both_pkeys: true; allowed: full or limited"]),
    ({"subnet_manager_partitions": [part(members=[{"guid": "ALL", "membership": "both"}])],
      "subnet_manager_options": {"allow_both_pkeys": True}}, []),
    ({"subnet_manager_ports": [GUID2, GUID2.upper().replace("0X", "0x")]},
     ["subnet_manager_ports[1]: 0x0002c90300002001 is listed twice (also subnet_manager_ports[0]); allowed: each port GUID once"]),
    ({"subnet_manager_ports": ["ALL"]}, ["subnet_manager_ports[0]: 'ALL' is not a port GUID; allowed: 0x and 16 hex digits, not all zero"]),
    ({"subnet_manager_ports": "0x0002c90300002001"}, ["subnet_manager_ports: '0x0002c90300002001' is not a list"]),
    ({"subnet_manager_config_dir": "/srv/opensm"},
     ["subnet_manager_config_dir: '/srv/opensm' would not be read: the OpenSM service reads only its own directory (/etc/opensm, "
      "/etc/rdma on RHEL); allowed: '' while subnet_manager_manage_service is true"]),
    ({"subnet_manager_config_dir": "etc x", "subnet_manager_install": "maybe"},
     ["subnet_manager_install: 'maybe' is not a boolean; allowed: true or false",
      "subnet_manager_config_dir: 'etc x' cannot be written into a unit or a command line; allowed: an absolute path of letters, "
      "digits and '_', '.', '+', '-', '/'"]),
])
def test_role_input_errors(changes, expected):
    assert _role_inputs.errors("subnet_manager", dict(ROLE_DEFAULTS, **changes)) == expected


# --- issue 33: what OpenSM 3.3.23 discards or reads differently (opensm/osm_prtn_config.c, osm_prtn.c at tag 3.3.23) ---

@pytest.mark.parametrize("text, pkey", [
    # P_Keys are strtoul(text, NULL, 0): decimal, 0x hex, a leading 0 octal; the 0x8000 bit is cleared
    ("tenant16=16 : ALL=full;", "0x0010"), ("legacy=010 : ALL=full;", "0x0008"), ("h=0x10 : ALL=full;", "0x0010"),
    ("h=0X1f : ALL=full;", "0x001f"), ("f=0x8010 : ALL=full;", "0x0010"), ("d=32784 : ALL=full;", "0x0010"),
    ("w=0x18010 : ALL=full;", "0x0010"),  # (uint16_t) strtoul()
    ("16 : ALL=full;", "0x0010"),  # a name that starts with a digit and no '=' is the P_Key (the name is then '0010')
])
def test_parse_reads_pkeys_as_opensm(text, pkey):
    parsed = P.parse_partitions(text)
    assert parsed[1]["pkey"] == pkey


def test_parse_reads_flags_and_keywords_as_opensm():
    """OpenSM compares with strncmp(text, word, strlen(text)): abbreviations are read; an unknown flag is ignored."""
    text = ("p=0x2, i, m=0x5, r=07, sl=3, bogus : A=f, ALL_C=l, S, N, 0x2c90300002001=b,\n"
            "  0x0002c90300003001=x;\n")
    parsed = P.parse_partitions(text)[1]
    assert (parsed["ipoib"], parsed["mtu"], parsed["rate"], parsed["sl"]) == (True, 5, 7, 3)
    assert parsed["members"] == [{"guid": "ALL", "membership": "full"}, {"guid": "ALL_CAS", "membership": "limited"},
                                 {"guid": "SELF", "membership": "limited"}, {"guid": GUID2, "membership": "both"},
                                 {"guid": GUID3, "membership": "limited"}]  # an unknown port flag is 'limited'
    # sl above 15 or with junk is skipped (OpenSM keeps its default); mtu=0 is skipped
    assert [P.parse_partitions(f"p=0x2, ipoib, {flag} : ALL;")[1][key] for flag, key in (("sl=16", "sl"), ("sl=3x", "sl"),
                                                                                         ("mtu=0", "mtu"), ("mtu=4x", "mtu"))] \
        == [None, None, None, 4]


def test_parse_a_ports_later_listing_wins():
    parsed = P.parse_partitions(f"p=0x2 : {GUID2}=full, ALL=limited, {GUID2}=limited, {GUID3}=limited, {GUID3.upper()[2:].join(['0x', ''])}=full;")
    assert parsed[1]["members"] == [{"guid": "ALL", "membership": "limited"}, {"guid": GUID2, "membership": "limited"},
                                    {"guid": GUID3, "membership": "full"}]


def test_parse_a_file_without_default_as_opensm_has_it():
    """Without a 0x7fff line OpenSM's default partition has every port limited, its own full, and no IPoIB group."""
    assert P.parse_partitions("p=0x2 : ALL=full;")[0] == P.OPENSM_DEFAULT_PARTITION
    # a last partition without its ';' is applied, a partition without members is dropped
    assert [p["pkey"] for p in P.parse_partitions("a=0x3 : ;\nb=0x2 : ALL=full")] == ["0x7fff", "0x0002"]


def test_the_default_partition_is_named_default():
    """OpenSM makes 0x7fff as 'Default' before it reads the file; a later 0x7fff line keeps that name (osm_prtn_make_new)."""
    assert P.parse_partitions("def=0x7fff, ipoib : ALL=full;")[0]["name"] == "Default"
    with pytest.raises(ValueError, match=r"^subnet_manager_partitions\[0\]\.name: 'def' for P_Key 0x7fff: OpenSM names the default "
                                         r"partition 'Default' whatever the file says; allowed: Default$"):
        P.normalize_partitions([{"name": "def", "pkey": "0x7fff", "members": [{"guid": "ALL", "membership": "full"}]}])


def test_zero_guid_is_refused():
    with pytest.raises(ValueError, match=r"members\[1\]\.guid: '0x0000000000000000' is not a port GUID"):
        P.normalize_partitions([part(members=[{"guid": GUID2}, {"guid": "0x0000000000000000"}])])


@pytest.mark.parametrize("count", [1, 8, 9, 150, 400, 2000])
def test_many_members_are_written_over_lines_far_below_opensms_buffer(count):
    members = [{"guid": f"0x{n:016x}", "membership": "limited"} for n in range(1, count + 1)]
    partitions = P.normalize_partitions([part(name="n" * 64, pkey=0x7FFE, ipoib=True, mtu=5, rate=22, sl=15, members=members)])
    text = P.render_partitions(partitions)
    assert max(len(line) for line in text.split("\n")) < 400
    assert len(text.split("\n")) == 1 + 1 + -(-count // P.MEMBERS_PER_LINE) + 1  # header, Default, the partition's lines, ''
    assert P.parse_partitions(text) == partitions


def test_default_partition_keeps_the_sm_full():
    limited = [{"name": "Default", "pkey": "0x7fff", "ipoib": True, "members": [{"guid": "ALL", "membership": "limited"}]}]
    result = P.normalize_partitions(limited)[0]
    assert P.render_partition(result) == "Default=0x7fff, ipoib : ALL=limited, SELF=full;"
    assert P.parse_partitions(P.render_partitions([result]))[0] == result
    full = [{"name": "Default", "pkey": "0x7fff", "members": [{"guid": "ALL", "membership": "full"}]}]
    assert P.normalize_partitions(full)[0]["members"] == [{"guid": "ALL", "membership": "full"}]
    own = [{"name": "Default", "pkey": 32767, "members": [{"guid": GUID2}, {"guid": "SELF", "membership": "full"}]}]
    assert P.normalize_partitions(own)[0]["members"] == [{"guid": GUID2, "membership": "limited"}, {"guid": "SELF", "membership": "full"}]


@pytest.mark.parametrize("text, expected", [
    ("16", (16, "")), ("010", (8, "")), ("0x1F", (31, "")), ("08", (0, "8")), ("0x", (0, "x")), ("5x", (5, "x")),
    ("-1", (2**64 - 1, "")), ("  7", (7, "")), ("abc", (0, "abc")), ("", (0, "")), ("99999999999999999999999", (2**64 - 1, "")),
])
def test_c_strtoul(text, expected):
    assert P.c_strtoul(text) == expected
