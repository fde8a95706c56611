# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_ib_agreement: hosts' IPoIB interfaces against the SM's partitions and the SMs, a table of cases (each mismatch
named) and Hypothesis properties."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.plugin_utils import _ib_agreement, _opensm_partitions

GUID = {n: f"0x0002c9030000{n}001" for n in range(1, 6)}
STORAGE = {"name": "storage", "pkey": "0x0002", "ipoib": True, "mtu": 5,
           "members": [{"guid": GUID[2], "membership": "full"}, {"guid": GUID[3], "membership": "full"},
                       {"guid": GUID[4], "membership": "limited"}]}
COMPUTE = {"name": "compute", "pkey": "0x0010", "ipoib": True, "members": [{"guid": "ALL_CAS", "membership": "limited"},
                                                                           {"guid": "SELF", "membership": "full"}]}
RAW = {"name": "raw", "pkey": "0x0020", "members": [{"guid": "ALL", "membership": "full"}]}
PARTITIONS = [STORAGE, COMPUTE, RAW]
SMS = [{"name": "hca1", "guid": GUID[1], "priority": 10, "state": "MASTER"}, {"name": "hca5", "guid": GUID[5], "priority": 5, "state": "STANDBY"}]


def child(pkey, mtu=None, mode=None, parent="ib0"):
    entry = {"name": f"c{pkey}", "parent": parent, "pkey": pkey}
    entry.update({key: value for key, value in (("mtu", mtu), ("transport_mode", mode)) if value is not None})
    return entry


def host(n, *ipoib, guids=True):
    return {"name": f"hca{n}", "guids": [GUID[n]] if guids else None, "ipoib": [{"name": "ib0", "ifname": "ib0"}, *ipoib]}


AGREE = [host(2, child("0x8002", 4092, "datagram")), host(3, child("0x8002")), host(4, child("0x8002", 65520, "connected")),
         host(1, child("0x8010"))]


def names(found):
    return sorted(item["name"] for item in found)


def test_hosts_and_sm_agree():
    assert _ib_agreement.agreement(AGREE, PARTITIONS, SMS) == []


def test_a_partitions_conf_text_reads_as_the_list_it_was_rendered_from():
    text = _opensm_partitions.render_partitions(_opensm_partitions.normalize_partitions(PARTITIONS))
    assert _ib_agreement.agreement(AGREE, text, SMS) == []
    bad = [host(5, child("0x8002"))]
    assert _ib_agreement.agreement(bad, text, SMS) == [
        dict(m, message=m["message"]) for m in _ib_agreement.agreement(bad, PARTITIONS, SMS)]


# (id, hosts, partitions, sms, expected names, a part of the message that names both sides)
CASES = [
    ("P_Key not in partitions.conf", [host(2, child("0x8005"))], PARTITIONS, SMS, ["ib_pkey_undefined"],
     "hca2 ib0.8005 (P_Key 0x8005) uses a P_Key that partitions.conf does not define (it defines Default=0x7fff, storage=0x0002, "
     "compute=0x0010, raw=0x0020)"),
    ("partition without ipoib", [host(2, child("0x8020"))], PARTITIONS, SMS, ["ib_partition_not_ipoib"],
     "hca2 ib0.8020 (P_Key 0x8020): partitions.conf raw=0x0020 has no ipoib flag"),
    ("port not a member", [host(5, child("0x8002"))], PARTITIONS, SMS, ["ib_port_not_member"],
     f"hca5 ib0.8002 (P_Key 0x8002): partitions.conf storage=0x0002 does not list the host's port ({GUID[5]})"),
    ("two limited members", [host(4, child("0x8002")), host(5, child("0x8010")), host(3, child("0x8010"))], PARTITIONS, SMS,
     ["ib_limited_members"], "hca3 ib0.8010, hca5 ib0.8010 are limited members of partitions.conf compute=0x0010"),
    ("one limited member with a full one talks", [host(4, child("0x8002")), host(2, child("0x8002"))], PARTITIONS, SMS, [], ""),
    ("SELF is the SM's port: full", [host(1, child("0x8010")), host(3, child("0x8010"))], PARTITIONS, SMS, [], ""),
    ("datagram 4092 on the default MTU code 4", [host(2, child("0x8010", 4092, "datagram"))], PARTITIONS, SMS, ["ib_mtu_too_large"],
     "hca2 ib0.8010 (P_Key 0x8010): datagram MTU 4092 needs the partition's IPoIB MTU code 5 (4096 bytes, 4092 after the IPoIB "
     "header); partitions.conf compute=0x0010 has no mtu=, so OpenSM's 4 (2048)"),
    ("datagram 2044 fits code 4", [host(2, child("0x8010", 2044))], PARTITIONS, SMS, [], ""),
    ("datagram 2045 does not", [host(2, child("0x8010", 2045))], PARTITIONS, SMS, ["ib_mtu_too_large"], "needs the partition's IPoIB MTU code 5"),
    ("connected 65520 is not bounded by the partition", [host(2, child("0x8010", 65520, "connected"))], PARTITIONS, SMS, [], ""),
    ("default P_Key needs the default partition with ipoib",
     [host(2)], [dict(_opensm_partitions.DEFAULT_PARTITION, ipoib=False)], SMS, ["ib_partition_not_ipoib"],
     "hca2 ib0 (P_Key 0xffff): partitions.conf Default=0x7fff has no ipoib flag"),
    ("unknown ports are not compared", [host(5, child("0x8002"), guids=False)], PARTITIONS, SMS, [], ""),
    ("an absent connection is not compared", [host(2, dict(child("0x8005"), state="absent"))], PARTITIONS, SMS, [], ""),
    ("no SM", AGREE, PARTITIONS, [], ["ib_no_sm"], "no subnet manager"),
    ("two SMs share the highest priority", AGREE, PARTITIONS, [dict(SMS[0]), dict(SMS[1], priority=10)], ["ib_sm_priority_tie"],
     "SMs hca1, hca5 share the highest priority 10"),
    ("the MASTER is not the highest priority", AGREE, PARTITIONS, [dict(SMS[0], priority=3), SMS[1]], ["ib_sm_master_not_highest"],
     "SM hca1 is MASTER with priority 3, but hca5 (STANDBY) has priority 5"),
    ("SMs not known", AGREE, PARTITIONS, None, [], ""),
    ("two SMs run different partitions", AGREE, {"hca1:/etc/opensm/partitions.conf": PARTITIONS,
                                                 "hca5:/etc/opensm/partitions.conf": PARTITIONS[:2]}, SMS, ["ib_partitions_differ"],
     "hca1:/etc/opensm/partitions.conf and hca5:/etc/opensm/partitions.conf differ on P_Key 0x0020: only "
     "hca1:/etc/opensm/partitions.conf defines it (raw)"),
    ("a partition's members differ", AGREE, {"a": PARTITIONS, "b": [dict(STORAGE, members=STORAGE["members"][:2]), COMPUTE, RAW]},
     SMS, ["ib_partitions_differ", "ib_port_not_member"], f"a and b differ on P_Key 0x0002: members [{GUID[2]}=full, {GUID[3]}=full, {GUID[4]}=limited] vs"),
    ("a partitions.conf that does not parse", AGREE, {"sm:/etc/opensm/partitions.conf": "storage=0x0002 : 0x0=full;\n"}, SMS,
     ["ib_partitions_unreadable"], "sm:/etc/opensm/partitions.conf: line 1: bad PortGUID '0x0'"),
]


@pytest.mark.parametrize("case_id, hosts, partitions, sms, expected, text", CASES, ids=[case[0] for case in CASES])
def test_mismatches_are_named(case_id, hosts, partitions, sms, expected, text):
    found = _ib_agreement.agreement(hosts, partitions, sms)
    assert names(found) == expected, (case_id, found)
    for item in found:
        assert item["name"] in _ib_agreement.NAMES
        assert item["message"].startswith(item["name"] + ": ") and "\n" not in item["message"]
    if text:
        assert any(text in item["message"] for item in found), (text, found)


def test_identical_partitions_of_two_sms_are_compared_once_naming_both():
    found = _ib_agreement.agreement([host(5, child("0x8002"))], {"hca1:a": PARTITIONS, "hca5:b": copy.deepcopy(PARTITIONS)}, SMS)
    assert [item["message"] for item in found] == [
        f"ib_port_not_member: hca5 ib0.8002 (P_Key 0x8002): hca1:a and hca5:b storage=0x0002 does not list the host's port "
        f"({GUID[5]}); its members: {GUID[2]}=full, {GUID[3]}=full, {GUID[4]}=limited"]


@pytest.mark.parametrize("hosts, partitions, sms, message", [
    ("hca1", PARTITIONS, SMS, "_input: 'hca1' is not a list of hosts"),
    ([{"name": "h", "port": 1}], PARTITIONS, SMS, "_input[0]: expected a dictionary with name, guids"),
    ([host(2, child("0x8000"))], PARTITIONS, SMS, "_input[0].ipoib[1].pkey: '0x8000' is not a valid P_Key"),
    ([host(2, child("0x8002", 9000, "datagram"))], PARTITIONS, SMS, "_input[0].ipoib[1].mtu: 9000 is too large for datagram mode"),
    ([{"name": "h", "guids": ["0x2c90300001001"]}], PARTITIONS, SMS, "_input[0].guids[0]: '0x2c90300001001' is not a port GUID"),
    (AGREE, [dict(STORAGE, pkey="0x8002")], SMS, "partitions.conf[0].pkey: 0x8002 is out of range"),
    (AGREE, 7, SMS, "partitions: partitions.conf: 7 is neither a list of partitions nor the text of a partitions.conf"),
    (AGREE, PARTITIONS, [{"name": "sm", "priority": 16}], "sms[0].priority: 16 is not an SM priority; allowed: 0-15"),
    (AGREE, PARTITIONS, {"name": "sm"}, "sms: {'name': 'sm'} is not a list of SMs"),
])
def test_bad_input_is_refused_naming_it(hosts, partitions, sms, message):
    with pytest.raises(ValueError) as err:
        _ib_agreement.agreement(hosts, partitions, sms)
    assert str(err.value).startswith(message), str(err.value)


# --- properties ---------------------------------------------------------------------------------

PKEYS = st.integers(1, 0x7FFE)
MEMBERSHIPS = st.sampled_from(["full", "limited", "both"])


@st.composite
def fabrics(draw):
    """Hosts 1-5, each using a few partitions; every partition used lists its users' ports, with ipoib and mtu=5."""
    count = draw(st.integers(1, 6))
    pkeys = draw(st.lists(PKEYS, min_size=count, max_size=count, unique=True))
    users = {pkey: draw(st.lists(st.integers(1, 5), min_size=1, max_size=5, unique=True)) for pkey in pkeys}
    memberships = {(pkey, n): draw(MEMBERSHIPS) for pkey, hosts in users.items() for n in hosts}
    partitions = [{"name": f"p{pkey:x}", "pkey": pkey, "ipoib": True, "mtu": 5,
                   "members": [{"guid": GUID[n], "membership": memberships[(pkey, n)]} for n in hosts]} for pkey, hosts in users.items()]
    hosts = [{"name": f"hca{n}", "guids": [GUID[n]],
              "ipoib": [child(f"0x{pkey | 0x8000:04x}", draw(st.sampled_from([None, 2044, 4092]))) for pkey in pkeys if n in users[pkey]]}
             for n in range(1, 6)]
    return hosts, partitions, memberships, users


@given(fabrics())
def test_property_limited_pairs_are_the_only_mismatch_of_a_consistent_fabric(fabric):
    hosts, partitions, memberships, users = fabric
    found = _ib_agreement.agreement(hosts, partitions, None)
    expected = sorted(pkey for pkey, members in users.items() if sum(memberships[(pkey, n)] == "limited" for n in members) >= 2)
    assert names(found) == ["ib_limited_members"] * len(expected)
    assert sorted(int(item["message"].split("=0x")[1][:4], 16) for item in found) == expected


@given(fabrics(), st.data())
def test_property_a_port_left_out_of_a_partition_is_named(fabric, data):
    hosts, partitions, _memberships, _users = fabric
    partition = data.draw(st.sampled_from(partitions))
    member = data.draw(st.sampled_from(partition["members"]))
    if len(partition["members"]) == 1:
        return  # a partition needs a member; leaving the only one out is another input
    partition["members"].remove(member)
    user = f"hca{next(n for n, guid in GUID.items() if guid == member['guid'])}"
    found = [item for item in _ib_agreement.agreement(hosts, partitions, None) if item["name"] == "ib_port_not_member"]
    assert len(found) == 1
    assert found[0]["message"].startswith(f"ib_port_not_member: {user} ib0.{partition['pkey'] | 0x8000:04x} ")
    assert f"{partition['name']}=0x{partition['pkey']:04x} does not list the host's port ({member['guid']})" in found[0]["message"]


@given(st.lists(st.integers(0, 15), min_size=1, max_size=6), st.data())
def test_property_sm_priorities(priorities, data):
    master = data.draw(st.integers(0, len(priorities) - 1))
    sms = [{"name": f"sm{index}", "priority": priority, "state": "MASTER" if index == master else "STANDBY"}
           for index, priority in enumerate(priorities)]
    found = names(_ib_agreement.agreement([], None, sms))
    top = max(priorities)
    assert ("ib_sm_priority_tie" in found) == (priorities.count(top) > 1)
    assert ("ib_sm_master_not_highest" in found) == (priorities[master] < top)


def test_a_ports_later_listing_wins_as_in_opensm():
    """ALL=full then the host's GUID as limited: OpenSM leaves the port limited (verified on ibsim, see tests/ib)."""
    later = "Default=0x7fff, ipoib : ALL=full;\np=0x0002, ipoib : ALL=full, 0x0002c90300002001=limited, 0x0002c90300003001=limited;\n"
    hosts = [{"name": f"h{n}", "guids": [f"0x0002c9030000{n}001"], "ipoib": [{"name": "c", "parent": "ib0", "pkey": "0x0002"}]}
             for n in (2, 3)]
    assert [m["name"] for m in _ib_agreement.agreement(hosts, later)] == ["ib_limited_members"]
    earlier = later.replace("ALL=full, 0x0002c90300002001=limited, 0x0002c90300003001=limited",
                            "0x0002c90300002001=limited, 0x0002c90300003001=limited, ALL=full")
    assert _ib_agreement.agreement(hosts, earlier) == []


def test_default_partition_starts_as_opensm_builds_it():
    """Every port is a limited member of 0x7fff before OpenSM reads the file, the SM's own port a full one."""
    text = "Default=0x7fff, ipoib : 0x0002c90300005001=full;\n"
    hosts = [{"name": "h2", "guids": ["0x0002c90300002001"], "ipoib": [{"name": "ib0", "ifname": "ib0"}]}]
    sms = [{"name": "sm", "guid": "0x0002c90300002001", "priority": 1, "state": "MASTER"}]
    assert _ib_agreement.membership(_ib_agreement.partition_sources(text)[0][1][0], ["0x0002c90300002001"], set()) == "limited"
    assert _ib_agreement.membership(_ib_agreement.partition_sources(text)[0][1][0], ["0x0002c90300002001"],
                                    {"0x0002c90300002001"}) == "full"
    assert _ib_agreement.agreement(hosts, text, sms) == []
