# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_tool, _validate

# Recorded on the lab VM (iproute2 6.1.0, kernel 6.1.0-56): rxe0 and siw0 on eth1, siw2 on lo, siw3 on a dummy.
LAB_LINKS = (
    '[{"ifindex":0,"ifname":"rxe0","port":1,"state":"ACTIVE","physical_state":"LINK_UP","netdev":"eth1","netdev_index":3},'
    '{"ifindex":1,"ifname":"siw0","port":1,"state":"ACTIVE","physical_state":"LINK_UP","netdev":"eth1","netdev_index":3},'
    '{"ifindex":2,"ifname":"siw2","port":1,"state":"ACTIVE","physical_state":"LINK_UP","netdev":"lo","netdev_index":1},'
    '{"ifindex":3,"ifname":"siw3","port":1,"state":"DOWN","physical_state":"DISABLED","netdev":"dummy7","netdev_index":4}]\n'
)

# Recorded on the trixie lab VM (iproute2 6.15.0, kernel 6.12.118): the same keys.
LAB_LINKS_6_15 = '[{"ifindex":0,"ifname":"rxe0","port":1,"state":"ACTIVE","physical_state":"LINK_UP","netdev":"eth1","netdev_index":3}\n]\n'


def link(name, netdev, port=1, ifindex=0, state="ACTIVE", physical_state="LINK_UP", netdev_index=3):
    return {"name": name, "port": port, "ifindex": ifindex, "state": state, "physical_state": physical_state,
            "netdev": netdev, "netdev_index": netdev_index}


@pytest.mark.parametrize("text, expected", [
    ("", []),
    ("\n", []),
    ("[]\n", []),
    (None, []),
    (LAB_LINKS_6_15, [link("rxe0", "eth1")]),
    (LAB_LINKS, [
        link("rxe0", "eth1"), link("siw0", "eth1", ifindex=1), link("siw2", "lo", ifindex=2, netdev_index=1),
        link("siw3", "dummy7", ifindex=3, state="DOWN", physical_state="DISABLED", netdev_index=4),
    ]),
    # kernel-facts.md's form: 'rxe0/1' without a port key
    ('[{"ifindex":0,"ifname":"rxe0/1","state":"ACTIVE","physical_state":"LINK_UP","netdev":"eth1","netdev_index":3}]',
     [link("rxe0", "eth1")]),
    # both: the port key wins and the suffix goes
    ('[{"ifindex":0,"ifname":"rxe0/1","port":1,"state":"ACTIVE","physical_state":"LINK_UP","netdev":"eth1","netdev_index":3}]',
     [link("rxe0", "eth1")]),
    # an InfiniBand HCA: two ports, no netdev
    ('[{"ifindex":0,"ifname":"mlx5_0","port":1,"state":"ACTIVE","physical_state":"LINK_UP"},'
     '{"ifindex":0,"ifname":"mlx5_0","port":2,"state":"DOWN","physical_state":"DISABLED"}]',
     [link("mlx5_0", None, netdev_index=None),
      link("mlx5_0", None, port=2, state="DOWN", physical_state="DISABLED", netdev_index=None)]),
])
def test_parse_link_show(text, expected):
    assert _rdma_tool.parse_link_show(text) == expected


@pytest.mark.parametrize("text, message", [
    ("error: No such device", r"output is not JSON"),
    ('[{"ifname":"rxe0"', r"output is not JSON"),
    ('{"ifname":"rxe0"}', r"expected a JSON list, got dict"),
    ('[{"port":1}]', r"entry without an ifname"),
    ('[{"ifname":""}]', r"entry without an ifname"),
    ('["rxe0"]', r"entry without an ifname"),
    ('[{"ifname":"rxe0","port":"1"}]', r"rxe0: port '1' is not an integer"),
    ('[{"ifname":"rxe0","port":true}]', r"rxe0: port True is not an integer"),
])
def test_parse_link_show_rejects(text, message):
    with pytest.raises(ValueError, match=r"^rdma -j link show: .*" + message) as err:
        _rdma_tool.parse_link_show(text)
    assert "\n" not in str(err.value)


names = st.from_regex(r"[a-z][a-z0-9_]{0,14}", fullmatch=True)


@given(st.lists(st.tuples(names, st.integers(1, 4), st.one_of(st.none(), names),
                          st.sampled_from(["ACTIVE", "DOWN"]), st.integers(0, 9)), max_size=8))
def test_parse_link_show_round_trip(specs):
    entries = []
    for index, (name, port, netdev, state, nd_index) in enumerate(specs):
        entry = {"ifindex": index, "ifname": name, "port": port, "state": state, "physical_state": "LINK_UP"}
        if netdev:
            entry.update(netdev=netdev, netdev_index=nd_index)
        entries.append(entry)
    parsed = _rdma_tool.parse_link_show(json.dumps(entries))
    assert [(p["name"], p["port"], p["netdev"], p["state"]) for p in parsed] == [
        spec[:4] for spec in specs]


@given(st.text(max_size=40))
def test_parse_link_show_only_raises_value_error(text):
    try:
        result = _rdma_tool.parse_link_show(text)
    except ValueError as err:
        assert "\n" not in str(err)
    else:
        assert isinstance(result, list)


def test_find_link():
    links = _rdma_tool.parse_link_show(LAB_LINKS)
    assert _rdma_tool.find_link(links, "siw2")["netdev"] == "lo"
    assert _rdma_tool.find_link(links, "rxe9") is None


@pytest.mark.parametrize("action, argv", [
    (("add", "rxe0", "rxe", "eth1"), ["/usr/bin/rdma", "link", "add", "rxe0", "type", "rxe", "netdev", "eth1"]),
    (("delete", "rxe0"), ["/usr/bin/rdma", "link", "delete", "rxe0"]),
])
def test_action_argv(action, argv):
    assert _rdma_tool.action_argv("/usr/bin/rdma", action) == argv


def test_action_argv_rejects_unknown():
    with pytest.raises(ValueError, match="unknown action 'rename'"):
        _rdma_tool.action_argv("/usr/bin/rdma", ("rename", "a"))


def test_link_show_argv():
    assert _rdma_tool.link_show_argv("/sbin/rdma") == ["/sbin/rdma", "-j", "link", "show"]


@pytest.mark.parametrize("node_type, node_desc, parent, virtual, expected", [
    ("1: CA", "rxe", True, True, "rxe"),
    ("1: CA", "host1 rxe0", True, True, "rxe"),  # rdma-ndd rewrote node_desc: the parent attribute still tells
    ("4: RNIC", "Software iWARP stack", False, True, "siw"),
    ("4: RNIC", "host1 siw0", False, True, "siw"),
    ("4: RNIC", "Software iWARP stack", False, False, "siw"),  # older kernels gave siw a parent device
    ("4: RNIC", "cxgb4", False, False, "other"),  # hardware iWARP
    ("1: CA", "host1 mlx5_0", False, False, "other"),  # hardware HCA
    ("1: CA", "", False, True, "other"),
    ("", "", False, True, "other"),
    (None, None, False, False, "other"),
])
def test_type_from_sysfs(node_type, node_desc, parent, virtual, expected):
    assert _rdma_tool.type_from_sysfs(node_type, node_desc, parent, virtual) == expected


ALIASES = "alias rdma-link-rxe rdma_rxe\nalias rdma-link-siw siw\nalias net-pf-16-proto-20 ib_core\n"


@pytest.mark.parametrize("aliases, builtin, link_type, expected", [
    (ALIASES, "", "rxe", True),
    (ALIASES, "", "siw", True),
    ("alias rdma-link-rxe rdma_rxe\n", "", "siw", False),  # Debian's stock kernel: no siw
    ("", "kernel/drivers/infiniband/sw/siw/siw.ko\n", "siw", True),
    ("", "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko\n", "rxe", True),
    ("", "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko\n", "siw", False),
    ("alias rdma-link-siwx siwx\n# alias rdma-link-siw siw\n", "", "siw", False),
])
def test_alias_provided(aliases, builtin, link_type, expected):
    assert _rdma_tool.alias_provided(aliases, builtin, link_type) is expected


@given(st.lists(st.from_regex(r"alias [a-z0-9_:*-]{1,20} [a-z0-9_]{1,12}", fullmatch=True), max_size=20),
       st.sampled_from(["rxe", "siw"]), st.booleans())
def test_alias_provided_finds_the_alias_anywhere(lines, link_type, present):
    lines = [line for line in lines if not line.startswith(f"alias rdma-link-{link_type} ")]
    if present:
        lines.insert(len(lines) // 2, f"alias rdma-link-{link_type} {_rdma_tool.DRIVER_MODULES[link_type]}")
    assert _rdma_tool.alias_provided("\n".join(lines), "", link_type) is present


RXE_ETH1 = {"name": "rxe0", "type": "rxe", "netdev": "eth1"}


@pytest.mark.parametrize("current, desired, expected", [
    (None, None, []),
    (RXE_ETH1, None, [("delete", "rxe0")]),
    (None, RXE_ETH1, [("add", "rxe0", "rxe", "eth1")]),
    (RXE_ETH1, RXE_ETH1, []),
    (RXE_ETH1, dict(RXE_ETH1, netdev="lo"), [("delete", "rxe0"), ("add", "rxe0", "rxe", "lo")]),
    (RXE_ETH1, dict(RXE_ETH1, type="siw"), [("delete", "rxe0"), ("add", "rxe0", "siw", "eth1")]),
])
def test_plan(current, desired, expected):
    assert _rdma_tool.plan(current, desired) == expected


links_st = st.one_of(st.none(), st.fixed_dictionaries({
    "name": st.just("rxe0"), "type": st.sampled_from(["rxe", "siw"]), "netdev": st.sampled_from(["eth1", "lo", "d0"])}))


@given(links_st, links_st)
def test_plan_reaches_desired_and_is_idempotent(current, desired):
    state = dict(current) if current else None
    for action in _rdma_tool.plan(current, desired):
        if action[0] == "delete":
            assert state is not None
            state = None
        else:
            assert state is None  # never add over an existing link
            state = {"name": action[1], "type": action[2], "netdev": action[3]}
    assert state == desired
    assert _rdma_tool.plan(state, desired) == []


def test_conflicting():
    links = _rdma_tool.parse_link_show(LAB_LINKS)
    types = {"rxe0": "rxe", "siw0": "siw", "siw2": "siw", "siw3": "siw"}
    assert _rdma_tool.conflicting(links, types, "rxe1", "rxe", "eth1") == "rxe0"
    assert _rdma_tool.conflicting(links, types, "rxe0", "rxe", "eth1") is None  # itself
    assert _rdma_tool.conflicting(links, types, "rxe1", "rxe", "lo") is None  # siw2 is another type
    assert _rdma_tool.conflicting(links, types, "siw9", "siw", "lo") == "siw2"


ADD = ("add", "rxe1", "rxe", "eth1")
ADD_IN = ("add_in", "rxe1", "rxe", "eth1", "node01")
DELETE = ("delete", "rxe1")
MOVE = ("move", "rxe1", "node01")


@pytest.mark.parametrize("here, there, same, actions, expected", [
    # the module runs outside node01: a link this namespace lists moves as it is
    (True, False, False, [DELETE, ADD], ([MOVE], None)),
    (True, False, False, [], ([MOVE], None)),
    # only node01 lists it (exclusive mode): in place
    (False, True, False, [ADD], ([], "node01")),
    # nowhere: added from inside node01 (its netdev is there; the device appears here), then moved
    (False, False, False, [ADD], ([ADD_IN, MOVE], None)),
    # the module runs in node01 itself: the plan as it is, no move
    (False, False, True, [ADD], ([ADD], None)),
    (True, False, True, [], ([], "node01")),
    (True, False, True, [DELETE, ADD], ([DELETE, ADD], "node01")),
])
def test_plan_netns(here, there, same, actions, expected):
    assert _rdma_tool.plan_netns(here, there, same, actions, "rxe1", "rxe", "eth1", "node01") == expected


def test_move_argv_and_errors():
    assert _rdma_tool.action_argv("/usr/bin/rdma", MOVE) == ["/usr/bin/rdma", "dev", "set", "rxe1", "netns", "node01"]
    assert _rdma_tool.action_argv("/usr/bin/rdma", ADD_IN, "/usr/bin/ip") == [
        "/usr/bin/ip", "netns", "exec", "node01", "/usr/bin/rdma", "link", "add", "rxe1", "type", "rxe", "netdev", "eth1"]
    assert _rdma_tool.explain_error(ADD_IN, 255, "", "error: No such device\n") == (
        "netdev: eth1 does not exist (ENODEV from rdma link add rxe1 type rxe netdev eth1)")
    assert _rdma_tool.explain_error(MOVE, 1, "", "error: Operation not supported\n") == (
        "netns: the kernel refused to move rxe1 (EOPNOTSUPP from rdma dev set rxe1 netns node01): the RDMA subsystem is in "
        "shared netns mode, or the driver cannot change namespace")
    assert _rdma_tool.explain_error(MOVE, 1, "", 'Cannot open network namespace "node01": No such file or directory\n') == (
        'netns: no network namespace node01 (/run/netns/node01; rdma dev set rxe1 netns node01: Cannot open network '
        'namespace "node01": No such file or directory)')
    assert _rdma_tool.explain_error(MOVE, 1, "", "error: Device or resource busy\n") == (
        "rdma dev set rxe1 netns node01 failed (rc=1): error: Device or resource busy")


@pytest.mark.parametrize("value", ["node01", "ns-1", "a" * 255, "n.s", "\u00e9t\u00e9"])
def test_netns_names_taken(value):
    assert _validate.netns_name(value) == value


@pytest.mark.parametrize("value", ["", ".", "..", "a/b", "a b", "a\tb", "a\nb", "-n", "a" * 256, "\u00e9" * 128, "a\x1bb",
                                   "a\u200bb", 5, None])
def test_netns_names_refused(value):
    with pytest.raises(ValueError, match=r"^netns: "):
        _validate.netns_name(value)
