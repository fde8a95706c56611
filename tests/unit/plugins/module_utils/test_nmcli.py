# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _nmcli

# Recorded from NetworkManager 1.42.4 (Debian bookworm lab VM)
LIST_OUTPUT = (
    "lo:12746830-2369-4f9a-9e4e-86cfb99d62e9:loopback:lo:activated\n"
    "mgmt:d6bfc80c-833f-3e62-b347-65bba3d20336:802-3-ethernet:eth0:activated\n"
    "t\\:e\\\\st:fc285419-d0cc-4e4f-b93f-329fc9e95ed2:infiniband::\n"
)
DETAIL_OUTPUT = (
    "connection.id:t:e\\st\n"
    "connection.uuid:fc285419-d0cc-4e4f-b93f-329fc9e95ed2\n"
    "connection.type:infiniband\n"
    "connection.interface-name:\n"
    "connection.autoconnect:yes\n"
    "infiniband.transport-mode:connected\n"
    "infiniband.mtu:65520\n"
    "infiniband.p-key:default\n"
    "infiniband.parent:\n"
    "ipv4.method:manual\n"
    "ipv4.addresses:10.1.0.1/24, 10.1.0.2/16\n"
    "ipv4.gateway:10.1.0.254\n"
    "ipv4.dns:10.1.0.53,10.1.0.54\n"
)

# Recorded from NetworkManager 1.52.1 (Debian trixie lab VM): the same forms; the loopback profile comes after
# mgmt, and a profile of the same name as above, made with the same nmcli command, reads back the same.
LIST_OUTPUT_1_52 = (
    "mgmt:d6bfc80c-833f-3e62-b347-65bba3d20336:802-3-ethernet:eth0:activated\n"
    "lo:a13bc714-a381-4501-89af-e26968a1d685:loopback:lo:activated\n"
    "lab-ib0:dd4799ff-4631-40bf-a97a-1e177adfbd0b:infiniband::\n"
    "t\\:e\\\\st:78e0211c-4023-4d55-a076-199488e8a154:infiniband::\n"
)
DETAIL_OUTPUT_1_52 = (
    DETAIL_OUTPUT.replace("fc285419-d0cc-4e4f-b93f-329fc9e95ed2", "78e0211c-4023-4d55-a076-199488e8a154")
    .replace("infiniband.p-key:default\ninfiniband.parent:\n", "infiniband.parent:\ninfiniband.p-key:default\n")
    + "ipv6.method:auto\nipv6.addresses:\nipv6.gateway:\nipv6.dns:\n"
)


@pytest.mark.parametrize("line, fields", [
    ("a:b:c", ["a", "b", "c"]),
    ("t\\:e\\\\st:uuid", ["t:e\\st", "uuid"]),
    ("::", ["", "", ""]),
    ("a\\\\:b", ["a\\", "b"]),
    ("a\\\\\\:b", ["a\\:b"]),
    ("trailing\\", ["trailing\\"]),
    ("", [""]),
])
def test_split_terse(line, fields):
    assert _nmcli.split_terse(line) == fields


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",))), min_size=1, max_size=6))
def test_escape_split_round_trip(values):
    line = ":".join(_nmcli.escape_terse(value) for value in values)
    assert _nmcli.split_terse(line) == values


def test_parse_list_recorded():
    rows = _nmcli.parse_list(LIST_OUTPUT)
    assert rows[2] == {"NAME": "t:e\\st", "UUID": "fc285419-d0cc-4e4f-b93f-329fc9e95ed2", "TYPE": "infiniband", "DEVICE": "", "STATE": ""}
    assert [row["NAME"] for row in rows] == ["lo", "mgmt", "t:e\\st"]
    assert _nmcli.find_by_name(rows, "t:e\\st") == [rows[2]]
    assert _nmcli.find_by_name(rows, "t") == []


def test_parse_list_recorded_1_52():
    rows = _nmcli.parse_list(LIST_OUTPUT_1_52)
    assert [row["NAME"] for row in rows] == ["mgmt", "lo", "lab-ib0", "t:e\\st"]
    assert rows[3] == {"NAME": "t:e\\st", "UUID": "78e0211c-4023-4d55-a076-199488e8a154", "TYPE": "infiniband", "DEVICE": "", "STATE": ""}
    assert _nmcli.find_by_name(rows, "t:e\\st") == [rows[3]]


@pytest.mark.parametrize("text", [DETAIL_OUTPUT, DETAIL_OUTPUT_1_52], ids=["nm-1.42", "nm-1.52"])
def test_parse_detail_recorded_in_both_versions(text):
    detail = _nmcli.parse_detail(text)
    assert detail["connection.id"] == "t:e\\st"
    assert detail["ipv4.addresses"] == "10.1.0.1/24, 10.1.0.2/16"
    assert detail["infiniband.mtu"] == "65520" and detail["infiniband.p-key"] == "default"


def test_parse_list_refuses_wrong_field_count():
    with pytest.raises(ValueError, match="unexpected terse line 'a:b': 2 fields, expected 5"):
        _nmcli.parse_list("a:b\n")


def test_parse_list_tolerates_crlf_and_blank_lines():
    assert _nmcli.parse_list("\na:b:c:d:e\r\n\n") == [{"NAME": "a", "UUID": "b", "TYPE": "c", "DEVICE": "d", "STATE": "e"}]


def test_parse_detail_recorded_values_are_not_escaped():
    detail = _nmcli.parse_detail(DETAIL_OUTPUT)
    assert detail["connection.id"] == "t:e\\st"
    assert detail["infiniband.p-key"] == "default"
    assert detail["ipv4.addresses"] == "10.1.0.1/24, 10.1.0.2/16"
    assert detail["connection.interface-name"] == ""


def test_parse_detail_refuses_garbage():
    with pytest.raises(ValueError, match="no ':'"):
        _nmcli.parse_detail("Error without colon\n")


def test_argv():
    assert _nmcli.list_argv("/usr/bin/nmcli") == ["/usr/bin/nmcli", "-t", "-f", "NAME,UUID,TYPE,DEVICE,STATE", "connection", "show"]
    assert _nmcli.show_argv("nmcli", "U", ["a.b", "c.d"]) == ["nmcli", "-t", "-f", "a.b,c.d", "connection", "show", "uuid", "U"]
    assert _nmcli.add_argv("nmcli", "infiniband", "a:b", [("infiniband.mtu", "4092"), ("ipv4.addresses", "")]) == [
        "nmcli", "connection", "add", "type", "infiniband", "con-name", "a:b", "infiniband.mtu", "4092", "ipv4.addresses", ""]
    assert _nmcli.modify_argv("nmcli", "U", [("infiniband.mtu", "0")]) == ["nmcli", "connection", "modify", "uuid", "U", "infiniband.mtu", "0"]
    assert _nmcli.delete_argv("nmcli", "U") == ["nmcli", "connection", "delete", "uuid", "U"]
    assert _nmcli.up_argv("nmcli", "U") == ["nmcli", "connection", "up", "uuid", "U"]
    assert _nmcli.down_argv("nmcli", "U") == ["nmcli", "connection", "down", "uuid", "U"]


def test_added_uuid():
    out = "Connection 't:e\\st' (fc285419-d0cc-4e4f-b93f-329fc9e95ed2) successfully added.\n"
    assert _nmcli.added_uuid(out) == "fc285419-d0cc-4e4f-b93f-329fc9e95ed2"
    assert _nmcli.added_uuid("") is None


@pytest.mark.parametrize("rc, err, expected", [
    (8, "Error: NetworkManager is not running.\n",
     "listing: NetworkManager is not running (nmcli rc 8); start it with 'systemctl start NetworkManager'"),
    (4, "Error: Connection activation failed: No suitable device found for this connection (device lo not available).\n",
     "listing failed (nmcli rc 4): Error: Connection activation failed: No suitable device found for this connection (device lo not available)."
     " [no InfiniBand device (or P_Key parent) on this host fits the profile]"),
    (4, "Error: Connection activation failed: failed to determine interface name: error determine name for infiniband\n",
     "listing failed (nmcli rc 4): Error: Connection activation failed: failed to determine interface name: error determine name for infiniband"
     " [no InfiniBand device (or P_Key parent) on this host fits the profile]"),
    (4, "Error: Connection activation failed: Failed to find a compatible device for this connection\n",
     "listing failed (nmcli rc 4): Error: Connection activation failed: Failed to find a compatible device for this connection"
     " [no InfiniBand device (or P_Key parent) on this host fits the profile]"),
    (1, "", "listing failed (nmcli rc 1): no message"),
    (2, "line one\n  line two\n", "listing failed (nmcli rc 2): line one line two"),
])
def test_error_message(rc, err, expected):
    message = _nmcli.error_message("listing", rc, "", err)
    assert message == expected
    assert "\n" not in message
