# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils import _roce

CONFIGFS = "/sys/kernel/config"


@pytest.mark.parametrize("mode, text", [("v1", "IB/RoCE v1"), ("v2", "RoCE v2")])
def test_mode_names(mode, text):
    assert _roce.mode_to_kernel(mode) == text
    assert _roce.mode_from_kernel(text) == mode
    assert _roce.mode_from_kernel(text + "\n") == mode


@pytest.mark.parametrize("mode", ["v3", "RoCE v2", "", None, 2])
def test_mode_to_kernel_refuses(mode):
    with pytest.raises(ValueError, match="mode: .* is not a RoCE mode; allowed: v1, v2"):
        _roce.mode_to_kernel(mode)


@pytest.mark.parametrize("text", ["RoCE v1", "roce v2", "", None, "IB/RoCE v1 "])
def test_mode_from_kernel_refuses(text):
    with pytest.raises(ValueError, match="default_roce_mode: unexpected value"):
        _roce.mode_from_kernel(text)


@pytest.mark.parametrize("text, value", [("0", 0), ("106\n", 106), ("255", 255)])
def test_parse_tos(text, value):
    assert _roce.parse_tos(text) == value


@pytest.mark.parametrize("text", ["256", "-1", "0x6a", "", None, "1 2"])
def test_parse_tos_refuses(text):
    with pytest.raises(ValueError, match="default_roce_tos: unexpected value"):
        _roce.parse_tos(text)


@pytest.mark.parametrize(
    "mounts, expected",
    [
        # as in the lab VMs: systemd mounts it
        ("sysfs /sys sysfs rw,nosuid 0 0\nconfigfs /sys/kernel/config configfs rw,nosuid,nodev,noexec,relatime 0 0\n", True),
        ("configfs /sys/kernel/config/ configfs rw 0 0\n", True),
        ("sysfs /sys sysfs rw,nosuid 0 0\n", False),
        ("none /sys/kernel/config tmpfs rw 0 0\n", False),
        ("configfs /mnt/config configfs rw 0 0\n", False),
        ("", False),
        ("garbage\n", False),
    ],
)
def test_configfs_mounted(mounts, expected):
    assert _roce.configfs_mounted(mounts, CONFIGFS) is expected


def test_configfs_mounted_unescapes_octal():
    assert _roce.configfs_mounted("configfs /tmp/a\\040b/kernel/config configfs rw 0 0\n", "/tmp/a b/kernel/config")


def test_gid_types():
    # rxe: 1024 slots, empty ones unreadable (None), all RoCE v2
    assert _roce.gid_types(["RoCE v2", "RoCE v2", None, None] + [None] * 1020) == ["RoCE v2"]
    # siw: one GID of type IB/RoCE v1
    assert _roce.gid_types(["IB/RoCE v1"]) == ["IB/RoCE v1"]
    # mlx5: both per address
    assert _roce.gid_types(["IB/RoCE v1", "RoCE v2", "IB/RoCE v1\n", "RoCE v2"]) == ["IB/RoCE v1", "RoCE v2"]
    assert _roce.gid_types([None, None]) == []


@pytest.mark.parametrize(
    "current, desired, writes",
    [
        ({"mode": "RoCE v2", "tos": 0}, {}, []),
        ({"mode": "RoCE v2", "tos": 0}, {"mode": "RoCE v2"}, []),
        ({"mode": "RoCE v2", "tos": 0}, {"tos": 106}, [("tos", "106")]),
        ({"mode": "IB/RoCE v1", "tos": 106}, {"mode": "RoCE v2", "tos": 106}, [("mode", "RoCE v2")]),
        ({"mode": "IB/RoCE v1", "tos": 0}, {"tos": 104, "mode": "RoCE v2"}, [("mode", "RoCE v2"), ("tos", "104")]),
        ({"mode": None, "tos": None}, {"mode": "RoCE v2", "tos": 0}, [("mode", "RoCE v2"), ("tos", "0")]),
    ],
)
def test_writes_needed(current, desired, writes):
    assert _roce.writes_needed(current, desired) == writes


def test_public_state():
    assert _roce.public_state({"mode": "RoCE v2", "tos": 106}) == {"mode": "v2", "tos": 106, "dscp": 26, "ecn": 2}
    assert _roce.public_state({"mode": None, "tos": None}) == {"mode": None, "tos": None, "dscp": None, "ecn": None}


def test_paths_follow_sysfs_root(host_paths):
    root = host_paths["SYSFS_ROOT"]
    assert _roce.rdma_cm_root() == f"{root}/kernel/config/rdma_cm"
    assert _roce.group_path("rxe0") == f"{root}/kernel/config/rdma_cm/rxe0"
    assert _roce.attr_path("rxe0", 1, "mode") == f"{root}/kernel/config/rdma_cm/rxe0/ports/1/default_roce_mode"
    assert _roce.attr_path("rxe0", 2, "tos") == f"{root}/kernel/config/rdma_cm/rxe0/ports/2/default_roce_tos"


# --- validation ---------------------------------------------------------------------
BASE = {"device": "rxe0", "port": 1, "mode": None, "tos": None, "dscp": None, "persistent": True}


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({}, {}),
        ({"mode": "v2", "tos": 106}, {"mode": "RoCE v2", "tos": 106}),
        ({"mode": "v1"}, {"mode": "IB/RoCE v1"}),
        ({"dscp": 26}, {"tos": 104}),
        ({"tos": 0}, {"tos": 0}),
    ],
)
def test_validate_params(changes, expected):
    result = _roce.validate_params(dict(BASE, **changes))
    assert result == {"device": "rxe0", "port": 1, "desired": expected, "persistent": True, "follow_rename": False}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"device": "../rxe0"}, "device: invalid RDMA device name '../rxe0'"),
        ({"device": "-rxe0"}, "device: invalid RDMA device name '-rxe0'"),
        ({"device": "rxe 0"}, "device: invalid RDMA device name 'rxe 0'"),
        ({"device": "rxe0\n"}, "device: invalid RDMA device name 'rxe0\\n'"),
        ({"device": ""}, "device: invalid RDMA device name ''"),
        ({"port": 0}, "port: 0 is out of range; allowed: 1-255"),
        ({"port": 256}, "port: 256 is out of range; allowed: 1-255"),
        ({"mode": "v3"}, "mode: 'v3' is not a RoCE mode; allowed: v1, v2"),
        ({"tos": 300}, "tos: 300 is out of range; allowed: 0-255"),
        ({"tos": -1}, "tos: -1 is out of range; allowed: 0-255"),
        ({"dscp": 64}, "dscp: 64 is out of range; allowed: 0-63"),
        ({"tos": 104, "dscp": 26}, "tos, dscp: give one of them, not both"),
        ({"device": "rxé0"}, "persistent: device name 'rxé0' cannot be used in a systemd unit name"),
    ],
)
def test_validate_params_errors(changes, message):
    with pytest.raises(ValueError) as err:
        _roce.validate_params(dict(BASE, **changes))
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_unit_unsafe_name_allowed_without_persistence():
    assert _roce.validate_params(dict(BASE, device="rxé0", persistent=False))["device"] == "rxé0"


# --- persistence --------------------------------------------------------------------------
RENDERED = (
    "# Managed by rdma.fabric.roce_mode: RDMA-CM defaults for rxe0, in tmpfiles.d(5) format.\n"
    "# Applied by rdma-fabric-roce@rxe0.service each time the device appears (udev rule /etc/udev/rules.d/91-rdma-fabric-roce-mode.rules).\n"
    "d /sys/kernel/config/rdma_cm/rxe0 - - - -\n"
    "w /sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_mode - - - - RoCE v2\n"
    "w /sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos - - - - 106\n"
    "w /sys/kernel/config/rdma_cm/rxe0/ports/2/default_roce_tos - - - - 0\n"
)


def test_render_persist():
    entries = {2: {"tos": 0}, 1: {"tos": 106, "mode": "RoCE v2"}}
    assert _roce.render_persist("rxe0", CONFIGFS, entries) == RENDERED
    assert _roce.render_persist("rxe0", CONFIGFS, {}) == ""
    assert _roce.render_persist("rxe0", CONFIGFS, {1: {}}) == ""


def test_parse_persist():
    assert _roce.parse_persist(RENDERED, "rxe0", CONFIGFS) == {1: {"mode": "RoCE v2", "tos": 106}, 2: {"tos": 0}}
    # other devices' paths, foreign lines, bad values are not ours
    text = (
        "w /sys/kernel/config/rdma_cm/rxe1/ports/1/default_roce_tos - - - - 5\n"
        "w /sys/kernel/config/rdma_cm/rxe0/ports/x/default_roce_tos - - - - 5\n"
        "w /sys/kernel/config/rdma_cm/rxe0/ports/1/other - - - - 5\n"
        "w /sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos - - - - 300\n"
        "w /sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_mode - - - - RoCE v3\n"
        "x /sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos - - - - 5\n"
    )
    assert _roce.parse_persist(text, "rxe0", CONFIGFS) == {}
    assert _roce.parse_persist("", "rxe0", CONFIGFS) == {}


@pytest.mark.parametrize(
    "entries, port, desired, persistent, expected",
    [
        ({}, 1, {"tos": 106}, True, {1: {"tos": 106}}),
        ({1: {"tos": 106}}, 1, {"mode": "RoCE v2"}, True, {1: {"tos": 106, "mode": "RoCE v2"}}),
        ({1: {"tos": 106}}, 1, {"tos": 0}, True, {1: {"tos": 0}}),
        ({1: {"tos": 106}}, 2, {"tos": 0}, True, {1: {"tos": 106}, 2: {"tos": 0}}),
        ({1: {"tos": 106}}, 1, {}, True, {1: {"tos": 106}}),
        ({1: {"tos": 106}, 2: {"tos": 0}}, 1, {"tos": 5}, False, {2: {"tos": 0}}),
        ({}, 1, {"tos": 5}, False, {}),
    ],
)
def test_update_persist(entries, port, desired, persistent, expected):
    assert _roce.update_persist(entries, port, desired, persistent) == expected


@pytest.mark.parametrize("old, new, expected", [
    ({1: {"tos": 106}}, {}, {1: {"tos": 106}}),
    ({}, {1: {"tos": 46}}, {1: {"tos": 46}}),
    ({1: {"tos": 106, "mode": "RoCE v2"}}, {1: {"tos": 46}}, {1: {"tos": 46, "mode": "RoCE v2"}}),
    ({1: {"tos": 106}, 2: {"mode": "IB/RoCE v1"}}, {2: {}}, {1: {"tos": 106}, 2: {"mode": "IB/RoCE v1"}}),
    ({1: {}}, {}, {}),
])
def test_carry_persist(old, new, expected):
    assert _roce.carry_persist(old, new) == expected


_ATTRS = st.dictionaries(st.sampled_from(["mode", "tos"]), st.integers(0, 255), max_size=2)


@given(old=st.dictionaries(st.integers(1, 4), _ATTRS, max_size=4), new=st.dictionaries(st.integers(1, 4), _ATTRS, max_size=4))
def test_carry_persist_keeps_every_value_and_the_new_name_wins(old, new):
    merged = _roce.carry_persist(old, new)
    for port, attrs in new.items():
        for attr, value in attrs.items():
            assert merged[port][attr] == value
    for port, attrs in old.items():
        for attr, value in attrs.items():
            assert merged[port][attr] == new.get(port, {}).get(attr, value)
    assert all(merged.values())
    assert old == _roce.carry_persist(old, {}) or not all(old.values())


def test_static_files():
    rule = _roce.render_udev_rule()
    assert (
        'ACTION=="add|move", SUBSYSTEM=="infiniband", TEST=="/etc/rdma-fabric/roce/%k.conf", '
        'TAG+="systemd", ENV{SYSTEMD_WANTS}+="rdma-fabric-roce@%k.service"\n'
    ) in rule
    unit = _roce.render_unit("/usr/sbin/modprobe", "/usr/bin/systemd-tmpfiles")
    assert "After=sys-kernel-config.mount\n" in unit
    assert "ExecStartPre=-/usr/sbin/modprobe rdma_cm\n" in unit
    assert "ExecStart=/usr/bin/systemd-tmpfiles --create /etc/rdma-fabric/roce/%i.conf\n" in unit
    assert "Type=oneshot\n" in unit
    # RemainAfterExit would keep the unit active and stop a second start when the device comes back
    assert "RemainAfterExit" not in unit


modes = st.sampled_from(sorted(_roce.KERNEL_MODES))
attrs = st.fixed_dictionaries({}, optional={"mode": modes, "tos": st.integers(0, 255)})


@given(st.dictionaries(st.integers(1, 255), attrs, max_size=4), st.sampled_from(["rxe0", "mlx5_0", "siw_eth1", "irdma-0.1"]))
def test_persist_round_trip(entries, device):
    text = _roce.render_persist(device, CONFIGFS, entries)
    assert _roce.parse_persist(text, device, CONFIGFS) == {port: attrs for port, attrs in entries.items() if attrs}
