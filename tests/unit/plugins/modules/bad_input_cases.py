# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The bad-input corpus as data: malformed arguments for every module.

Plain Python with no imports, shared by the unit test (test_bad_input_corpus.py, each
case through main() on an empty fake host) and the lab test
(molecule/default/tests/test_bad_input_lab.py, each case on a real VM). A case's
arguments replace or extend the module's BASE arguments; None removes an option,
NULL passes it as null.
"""

LIMITS_D = "etc/security/limits.d"
HOST_DIR_MARK = "@HOST@"  # replaced by the fake host's root in memlock dest cases
NULL = "@NULL@"  # an option given as null (YAML ~, or a template that yields None): not the same as leaving it out

# Valid arguments for each module; a case replaces or adds the bad option(s).
BASE = {
    "rdma_link": {"name": "rxe0", "type": "rxe", "netdev": "eth1", "persistent": False},
    "roce_mode": {"device": "rxe0", "persistent": False},
    "gid_facts": {},
    "memlock": {"domain": "@rdma", "value": "unlimited"},
    "ipoib_connection": {"name": "ib0"},
    "tc_rule": {"device": "mlx5_0"},
    "dcb_qos": {"netdev": "eth1"},
    "counter_facts": {},
    "nic_firmware": {"device": "0000:19:00.0", "settings": {"SRIOV_EN": True, "NUM_OF_VFS": 8}},
    "rdma_system": {"netns_mode": "exclusive"},
    "rdma_cgroup": {"cgroup": "rdma-jobs", "device": "rxe0", "hca_handle": "1", "persistent": False},
    "roce_enable": {"pci": "0000:08:00.0", "enabled": False},
}


# (label, value) pairs; every value is refused by _validate.netdev_name (and by the kernel).
BAD_NETDEVS = [
    ("slash", "eth/0"),
    ("dotdot", ".."),
    ("dot", "."),
    ("leading-dash", "-x"),
    ("space", "eth 0"),
    ("leading-space", " eth0"),
    ("tab", "eth\t0"),
    ("newline", "eth0\nlo"),
    ("trailing-newline", "eth0\n"),
    ("cr", "eth0\r"),
    ("nul", "eth\x000"),
    ("empty", ""),
    ("colon", "eth0:1"),
    ("16-bytes", "e" * 16),
    ("16-bytes-utf8", "\u00e9" * 8),
] + [(label, f"eth{char}0") for label, char in (
    ("esc", "\x1b"), ("csi", "\x9b"), ("del", "\x7f"), ("bel", "\x07"), ("c1-nel", "\x85"), ("zero-width-space", "\u200b"),
    ("rlo", "\u202e"), ("bom", "\ufeff"), ("nbsp", "\u00a0"),
    ("a-grave", "\u00e0"),  # UTF-8 c3 a0: the kernel's isspace() takes the byte 0xa0 for white space
    ("dagger", "\u2020"),  # UTF-8 e2 80 a0
)]

# Refused by _validate.rdma_device_name.
BAD_RDMA_NAMES = [
    ("slash", "rxe/0"),
    ("dotdot", ".."),
    ("dot", "."),
    ("dotdot-path", "../rxe0"),
    ("leading-dash", "-x"),
    ("space", "rxe 0"),
    ("leading-space", " rxe0"),
    ("tab", "rxe\t0"),
    ("newline", "rxe0\nsiw0"),
    ("trailing-newline", "rxe0\n"),
    ("percent", "rxe%d"),
    ("nul", "rxe\x000"),
    ("empty", ""),
    ("64-bytes", "r" * 64),
    ("64-bytes-utf8", "\u00e9" * 32),
] + [(label, f"rxe{char}0") for label, char in (
    ("esc", "\x1b"), ("ansi-color", "\x1b[31m"), ("csi", "\x9b"), ("del", "\x7f"), ("bel", "\x07"), ("c1-nel", "\x85"),
    ("zero-width-space", "\u200b"), ("rlo", "\u202e"), ("bom", "\ufeff"), ("nbsp", "\u00a0"), ("line-separator", "\u2028"),
)]

# Not a PCI function's name (domain:bus:device.function): refused by nic_firmware's device and roce_enable's pci.
BAD_PCI_FUNCTIONS = [
    ("empty", ""), ("short", "19:00"), ("function-missing", "0000:19:00"), ("trailing", "0000:19:00.0x"), ("not-hex", "0000:zz:00.0"),
    ("function-8", "0000:19:00.8"), ("space", " 0000:19:00.0"), ("newline", "0000:19:00.0\n"), ("rdma-name", "mlx5_0"),
    ("mst-outside", "/dev/mst/../../etc/passwd"), ("path", "/sys/bus/pci/devices/0000:19:00.0"), ("number", 1900),
]

# Refused by _validate.port_number (1-255), by _args (the one integer form) for the last two.
BAD_PORTS = [("zero", 0), ("256", 256), ("minus-1", -1), ("65536", 65536), ("bool", True), ("fraction", 1.5), ("word", "one")]

# Values for any int option that are not in the one integer form (an int, or decimal digit text: _validate.INT_FORMS).
# ansible-core 2.19 and 2.21 crash on the first four (OverflowError), turn '1e4301' into an int of 4,302 digits and
# read most of the others as numbers (test_args.py records what each becomes); _args refuses them all first.
BAD_INT_FORMS = [
    ("inf", "inf"), ("minus-inf", "-inf"), ("infinity", "Infinity"), ("plus-inf", "+inf"), ("1e4301", "1e4301"), ("nan", "nan"),
    ("exponent", "1e3"), ("float-text", "1.0"), ("trailing-dot", "5."), ("hex", "0x10"), ("leading-space", " 5"),
    ("trailing-space", "5 "), ("trailing-newline", "5\n"), ("plus", "+5"), ("underscore", "5_0"), ("arabic-indic-digit", "\u0663"),
    ("fullwidth-digit", "\uff15"), ("superscript-digit", "\u00b2"), ("leading-zero", "05"), ("empty", ""), ("escape", "\x1b[31m1"),
    ("csi", "1\x9b"), ("41-digits", "1" * 41), ("true", True), ("float-whole", 1.0), ("float-fraction", 2.5),
]
# Enough of BAD_INT_FORMS for the int options after a module's first (which gets them all): the lab runs every case.
SOME_LABELS = ("inf", "1e4301", "nan", "float-text", "leading-space", "arabic-indic-digit", "escape", "true", "float-whole")
SOME_INT_FORMS = [pair for pair in BAD_INT_FORMS if pair[0] in SOME_LABELS]
# A scalar where a list is expected: ansible-core makes 5 into ['5'] and splits 'a,b' at the comma.
BAD_LIST_SCALARS = [("number", 5), ("string", "x"), ("comma-string", "x,y"), ("true", True), ("float", 1.5)]

# memlock domain: refused by _limits.validate_domain (a user, @group, %group, '*' or a uid/gid range only).
BAD_DOMAINS = [
    ("empty", ""),
    ("space", "alice bob"),
    ("leading-space", " alice"),
    ("tab", "alice\t"),
    ("newline-injection", "alice\n*\thard\tmemlock\t0"),
    ("cr", "alice\r"),
    ("nul", "alice\x00"),
    ("hash", "#alice"),
    ("hash-inside", "alice#x"),
    ("slash", "a/b"),
    ("dotdot", ".."),
    ("dot", "."),
    ("leading-dash", "-x"),
    ("percent-inside", "a%b"),
    ("at-only", "@"),
    ("at-space", "@ rdma"),
    ("star-suffix", "*x"),
    ("double-star", "**"),
    ("colon-only", ":"),
    ("reversed-range", "2000:1000"),
    ("percent-open-range", "%:"),
    ("percent-low-range", "%1:"),
]

# memlock value: refused by _limits.validate_value ('unlimited', 'infinity', '-1' or KiB 0-MAX_KIB only).
BAD_MEMLOCK_VALUES = [
    ("newline-injection", "unlimited\n* hard memlock 0"),
    ("number-newline-injection", "64\n*\thard\tmemlock\t0"),
    ("negative", "-2"),
    ("negative-large", "-1024"),
    ("word", "lots"),
    ("typo", "unlimted"),
    ("dash", "-"),
    ("fraction", "1.5"),
    ("exponent", "1e3"),
    ("hex", "0x10"),
    ("unit-suffix", "64k"),
    ("plus", "+64"),
    ("inner-space", "64 64"),
    ("two-words", "unlimited unlimited"),
    ("hash", "64#"),
    ("tab-inside", "un\tlimited"),
    ("nul", "64\x00"),
    ("empty", ""),
    ("blank", "  "),
    ("fullwidth-digits", "\uff16\uff14"),
    ("too-large", "18014398509481983"),  # _limits.MAX_KIB + 1 (test_corpus_size checks)
]

# tc_rule rules[].src_ip: one IPv4 or IPv6 address, no mask, no scope, not IPv4-mapped.
BAD_SRC_IPS = [
    ("with-mask", "10.0.0.1/32"),
    ("octet-300", "300.1.1.1"),
    ("three-octets", "10.0.0"),
    ("five-octets", "1.2.3.4.5"),
    ("word", "abc"),
    ("empty", ""),
    ("trailing-space", "10.0.0.1 "),
    ("newline", "10.0.0.1\n"),
    ("comma-injection", "10.0.0.1,tclass=0"),
    ("nul", "10.0.0.1\x00"),
    ("ipv6-scope", "fe80::1%eth0"),
    ("ipv6-bad-group", "::g"),
    ("ipv6-nine-groups", "1:2:3:4:5:6:7:8:9"),
    ("ipv4-mapped", "::ffff:10.0.0.1"),
]

# tc_rule rules[].dst_ip: IPv4 with an optional /1-/32 in ASCII digits, or IPv6 without a mask.
BAD_DST_IPS = [
    ("mask-33", "10.0.0.1/33"),
    ("mask-0", "10.0.0.0/0"),
    ("mask-negative", "10.0.0.0/-1"),
    ("mask-empty", "10.0.0.0/"),
    ("mask-word", "10.0.0.0/abc"),
    ("mask-dotted", "10.0.0.0/255.255.255.0"),
    ("double-mask", "10.0.0.0/24/1"),
    ("mask-superscript-digit", "10.0.0.0/\u00b2"),
    ("mask-arabic-indic-digits", "10.0.0.0/\u0662\u0664"),
    ("octet-300", "300.1.1.1"),
    ("octet-300-masked", "300.1.1.0/24"),
    ("ipv6-mask", "2001:db8::1/64"),
    ("ipv6-mask-129", "::1/129"),
    ("word", "abc"),
    ("empty", ""),
    ("tab", "10.0.0.1\t"),
    ("comma-injection", "10.0.0.1,src_ip=10.0.0.2"),
    ("ipv6-scope", "fe80::1%eth0"),
    ("ipv4-mapped", "::ffff:10.0.0.1"),
]


def corpus():
    """The cases: (module, the arguments that replace or extend BASE, the option the message must name, a unique id)."""
    cases = []

    def case(module_name, option, label, args):
        cases.append((module_name, args, option, f"{module_name}-{option}-{label}"))

    # rdma_link ------------------------------------------------------------------------------------
    for label, value in BAD_RDMA_NAMES:
        case("rdma_link", "name", label, {"name": value})
        case("rdma_link", "name", f"{label}-absent", {"name": value, "state": "absent", "type": None, "netdev": None})
    for label, value in BAD_NETDEVS:
        case("rdma_link", "netdev", label, {"netdev": value})
    # persistent=true writes the names into a udev rule and a unit name: stricter character sets
    for label, value in (("colon", "rxe:0"), ("plus", "rxe+0"), ("hash", "rxe#0"), ("quote", 'rxe"0'), ("dollar", "rxe$0"),
                         ("non-ascii", "rx\u00e90")):
        case("rdma_link", "name", f"persistent-{label}", {"name": value, "persistent": True})
    for label, value in (("percent", "eth%0"), ("hash", "eth#0"), ("quote", 'eth"0'), ("equals", "eth=0"), ("dollar", "eth$0"),
                         ("non-ascii", "eth\u00e9")):
        case("rdma_link", "netdev", f"persistent-{label}", {"netdev": value, "persistent": True})
    case("rdma_link", "type", "unknown", {"type": "roce"})
    case("rdma_link", "netdev", "missing-with-present", {"netdev": None})
    case("rdma_link", "netdev", "null-with-present", {"netdev": NULL})
    case("rdma_link", "type", "null-with-present", {"type": NULL})
    case("rdma_link", "state", "unknown", {"state": "gone"})
    # netns: a file name in /run/netns, and only for a link that lives there for this boot
    for label, value in (("slash", "a/b"), ("dotdot", ".."), ("dot", "."), ("empty", ""), ("space", "ns 1"),
                         ("newline", "ns1\n"), ("leading-dash", "-n"), ("256-bytes", "n" * 256), ("esc", "ns\x1b1"),
                         ("zero-width-space", "ns\u200b1"), ("nul", "ns\x001")):
        case("rdma_link", "netns", label, {"netns": value})
    case("rdma_link", "netns", "with-persistent", {"netns": "node01", "persistent": True})
    case("rdma_link", "netns", "with-absent", {"netns": "node01", "state": "absent"})

    # roce_mode -------------------------------------------------------------------------------------
    for label, value in BAD_RDMA_NAMES:
        case("roce_mode", "device", label, {"device": value})
    for label, value in BAD_PORTS:
        case("roce_mode", "port", label, {"port": value})
    for label, value in (("256", 256), ("minus-1", -1), ("1000", 1000), ("bool", True), ("word", "high")):
        case("roce_mode", "tos", label, {"tos": value})
    for label, value in (("64", 64), ("minus-1", -1), ("255", 255), ("bool", True)):
        case("roce_mode", "dscp", label, {"dscp": value})
    case("roce_mode", "tos", "with-dscp", {"tos": 106, "dscp": 26})
    case("roce_mode", "mode", "v3", {"mode": "v3"})
    for label, value in (("plus", "rxe+0"), ("at", "rxe@0"), ("hash", "rxe0#"), ("non-ascii", "rx\u00e90")):
        case("roce_mode", "device", f"persistent-{label}", {"device": value, "persistent": True})

    # gid_facts -------------------------------------------------------------------------------------
    for label, value in BAD_RDMA_NAMES:
        case("gid_facts", "device[0]", label, {"device": [value]})
    for label, value in (("slash", "rxe/0"), ("dotdot", ".."), ("newline", "siw0\n"), ("empty", "")):
        case("gid_facts", "device[1]", label, {"device": ["rxe0", value]})
    for label, value in BAD_PORTS:
        case("gid_facts", "port", label, {"port": value})
    for option in ("roce_defaults", "gid_table"):
        for label, value in (("word", "sometimes"), ("number", 2), ("list", [True])):
            case("gid_facts", option, label, {option: value})

    # memlock ---------------------------------------------------------------------------------------
    for label, value in BAD_DOMAINS:
        case("memlock", "domain", label, {"domain": value})
    for label, value in (("newline-injection", "alice\n* hard memlock 0"), ("space", "alice bob"), ("hash", "#alice")):
        case("memlock", "domain", f"{label}-absent", {"domain": value, "state": "absent", "value": None})
    for label, value in BAD_MEMLOCK_VALUES:
        case("memlock", "value", label, {"value": value})
    case("memlock", "value", "missing-with-present", {"value": None})
    case("memlock", "value", "null-with-present", {"value": NULL})
    case("memlock", "dest", "empty", {"dest": ""})
    case("memlock", "dest", "trailing-slash", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/x.conf/"})
    case("memlock", "dest", "directory", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}"})
    case("memlock", "dest", "missing-directory", {"dest": f"{HOST_DIR_MARK}/etc/security/nowhere/90-x.conf"})
    case("memlock", "dest", "nul", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/90-x\x00.conf"})
    case("memlock", "limit_type", "unknown", {"limit_type": "all"})

    # ipoib_connection ------------------------------------------------------------------------------
    for label, value in (("leading-dash", "-x"), ("dash-only", "-"), ("leading-space", " ib0"), ("leading-tab", "\tib0"),
                         ("newline", "ib0\nib1"), ("cr", "ib0\r"), ("nul", "ib\x000"), ("del", "ib\x7f0"), ("escape", "ib0\x1b[31m"),
                         ("empty", ""), ("256-chars", "n" * 256)):
        case("ipoib_connection", "name", label, {"name": value})
    for label, value in BAD_NETDEVS:
        case("ipoib_connection", "ifname", label, {"ifname": value})
        case("ipoib_connection", "parent", label, {"parent": value, "pkey": "0x8002"})
    case("ipoib_connection", "parent", "child-name-too-long", {"parent": "ib0123456789a", "pkey": "0x8002"})
    case("ipoib_connection", "ifname", "not-the-child-name", {"ifname": "ib0.8003", "parent": "ib0", "pkey": "0x8002"})
    case("ipoib_connection", "pkey", "without-parent", {"pkey": "0x8002"})
    case("ipoib_connection", "pkey", "null-with-parent", {"parent": "ib0", "pkey": NULL})
    case("ipoib_connection", "parent", "null-with-pkey", {"parent": NULL, "pkey": "0x8002"})
    for label, value in (("zero", "0x0000"), ("full-bit-only", "0x8000"), ("decimal-zero", "0"), ("decimal-32768", "32768"),
                         ("17-bits", "0x10000"), ("decimal-65536", "65536"), ("decimal-6-digits", "100000"), ("negative", "-1"),
                         ("non-hex", "0xg001"), ("word", "abc"), ("empty", ""), ("prefix-only", "0x"), ("fraction", "1.5"),
                         ("newline-inside", "0x80\n02"), ("space-inside", "0x 8002")):
        case("ipoib_connection", "pkey", label, {"parent": "ib0", "pkey": value})
    for label, args in (("negative", {"mtu": -1}), ("above-65520", {"mtu": 65521}), ("70000", {"mtu": 70000}),
                        ("datagram-4093", {"mtu": 4093, "transport_mode": "datagram"}),
                        ("connected-65521", {"mtu": 65521, "transport_mode": "connected"}), ("bool", {"mtu": True}),
                        ("word", {"mtu": "jumbo"})):
        case("ipoib_connection", "mtu", label, args)
    case("ipoib_connection", "transport_mode", "unknown", {"transport_mode": "ud"})
    for label, value in (("prefix-33", "10.0.0.1/33"), ("octet-300", "300.1.1.1/24"), ("double-prefix", "10.0.0.0/24/1"),
                         ("negative-prefix", "10.0.0.1/-1"), ("empty-prefix", "10.0.0.1/"), ("three-octets", "10.0.0/24"),
                         ("word", "abc"), ("empty", ""), ("blank", " "), ("ipv6", "2001:db8::1/64")):
        case("ipoib_connection", "ipv4.addresses", label, {"ipv4": {"method": "manual", "addresses": [value]}})
    case("ipoib_connection", "ipv4.addresses", "second-bad", {"ipv4": {"method": "manual", "addresses": ["10.0.0.1/24", "abc"]}})
    case("ipoib_connection", "ipv4.addresses", "with-method-disabled", {"ipv4": {"method": "disabled", "addresses": ["10.0.0.1/24"]}})
    case("ipoib_connection", "ipv4.addresses", "manual-empty", {"ipv4": {"method": "manual", "addresses": []}})
    for label, value in (("octet-300", "300.1.1.1"), ("with-prefix", "10.0.0.1/24"), ("word", "abc"), ("ipv6", "2001:db8::1")):
        case("ipoib_connection", "ipv4.gateway", label, {"ipv4": {"method": "manual", "addresses": ["10.0.0.5/24"], "gateway": value}})
    for label, value in (("octet-300", "300.1.1.1"), ("word", "abc"), ("empty", ""), ("ipv6", "::1")):
        case("ipoib_connection", "ipv4.dns", label, {"ipv4": {"dns": [value]}})
    case("ipoib_connection", "method", "unknown", {"ipv4": {"method": "static"}})
    for label, value in (("prefix-129", "::1/129"), ("bad-group", "2001:db8::g/64"), ("nine-groups", "1:2:3:4:5:6:7:8:9/64"),
                         ("two-double-colons", "2001::db8::1/64"), ("ipv4", "10.0.0.1/24"), ("word", "abc"), ("empty", "")):
        case("ipoib_connection", "ipv6.addresses", label, {"ipv6": {"method": "manual", "addresses": [value]}})
    case("ipoib_connection", "ipv6.addresses", "with-method-ignore", {"ipv6": {"method": "ignore", "addresses": ["2001:db8::1/64"]}})
    for label, value in (("bad-group", "2001:db8::g"), ("ipv4", "10.0.0.1"), ("with-prefix", "2001:db8::1/64")):
        case("ipoib_connection", "ipv6.gateway", label, {"ipv6": {"method": "manual", "addresses": ["2001:db8::5/64"], "gateway": value}})
    for label, value in (("bad-group", "2001:db8::g"), ("ipv4", "10.0.0.1")):
        case("ipoib_connection", "ipv6.dns", label, {"ipv6": {"dns": [value]}})

    # tc_rule ----------------------------------------------------------------------------------------
    for label, value in BAD_RDMA_NAMES:
        case("tc_rule", "device", label, {"device": value})
    for label, value in BAD_PORTS:
        case("tc_rule", "port", label, {"port": value})
    for label, value in (("256", 256), ("minus-2", -2), ("1000", 1000), ("bool", True)):
        case("tc_rule", "traffic_class", label, {"traffic_class": value})
    for label, value in (("64", 64), ("minus-1", -1), ("bool", True)):
        case("tc_rule", "dscp", label, {"dscp": value})
    case("tc_rule", "traffic_class", "with-dscp", {"traffic_class": 106, "dscp": 26})
    case("tc_rule", "traffic_class", "set-with-absent", {"traffic_class": 106, "state": "absent"})
    case("tc_rule", "dscp", "with-absent", {"dscp": 26, "state": "absent"})
    case("tc_rule", "exclusive", "with-absent", {"exclusive": True, "state": "absent"})
    for label, value in (("256", 256), ("minus-1", -1), ("bool", True)):
        case("tc_rule", "ttl", label, {"ttl": value})
    for label, value in BAD_SRC_IPS:
        case("tc_rule", "rules[0].src_ip", label, {"rules": [{"src_ip": value, "tclass": 106}]})
    for label, value in BAD_DST_IPS:
        case("tc_rule", "rules[0].dst_ip", label, {"rules": [{"dst_ip": value, "tclass": 106}]})
    case("tc_rule", "rules[1].dst_ip", "second-rule", {"rules": [{"dst_ip": "10.0.0.0/24", "tclass": 106}, {"dst_ip": "10.0.0.1/33", "tclass": 1}]})
    rule = {"dst_ip": "10.0.0.0/24"}
    for label, extra in (("256", {"tclass": 256}), ("minus-1", {"tclass": -1}), ("bool", {"tclass": True})):
        case("tc_rule", "rules[0].tclass", label, {"rules": [dict(rule, **extra)]})
    for label, extra in (("64", {"dscp": 64}), ("minus-1", {"dscp": -1})):
        case("tc_rule", "rules[0].dscp", label, {"rules": [dict(rule, **extra)]})
    case("tc_rule", "rules[0].tclass", "with-dscp", {"rules": [dict(rule, tclass=106, dscp=26)]})
    case("tc_rule", "rules[0]", "no-address", {"rules": [{"tclass": 106}]})
    case("tc_rule", "rules[0]", "no-tclass", {"rules": [dict(rule)]})
    case("tc_rule", "rules[0]", "mixed-families", {"rules": [{"src_ip": "10.0.0.1", "dst_ip": "2001:db8::1", "tclass": 106}]})
    case("tc_rule", "rules[1]", "duplicate", {"rules": [dict(rule, tclass=106), {"dst_ip": "10.0.0.0/16", "tclass": 104}]})
    case("tc_rule", "rules", "41-rules", {"rules": [{"dst_ip": f"10.0.{index}.0/24", "tclass": 106} for index in range(41)]})
    case("tc_rule", "state", "unknown", {"state": "gone"})

    # dcb_qos ------------------------------------------------------------------------------------------
    for label, value in BAD_NETDEVS:
        case("dcb_qos", "netdev", label, {"netdev": value})
    for label, value in (("8", [8]), ("minus-1", [-1]), ("twice", [3, 3]), ("bool", [True]), ("word", ["three"])):
        case("dcb_qos", "pfc", label, {"pfc": value})
    ets_tsa = ["ets"] * 8
    for label, ets in (("prio_tc-7-values", {"prio_tc": [0] * 7}), ("prio_tc-9-values", {"prio_tc": [0] * 9}),
                       ("prio_tc-8", {"prio_tc": [0, 0, 0, 8, 0, 0, 0, 0]}), ("prio_tc-minus-1", {"prio_tc": [-1] + [0] * 7}),
                       ("tc_tsa-7-values", {"tc_tsa": ets_tsa[:7]}),
                       ("tc_bw-sum-90", {"tc_bw": [50, 40, 0, 0, 0, 0, 0, 0]}), ("tc_bw-101", {"tc_bw": [101] + [0] * 7}),
                       ("tc_bw-minus-1", {"tc_bw": [-1, 101, 0, 0, 0, 0, 0, 0]}), ("tc_bw-9-values", {"tc_bw": [100] + [0] * 8})):
        option = "ets." + label.split("-", maxsplit=1)[0]
        case("dcb_qos", option, label.split("-", 1)[1], {"ets": ets})
    # Ansible's choices check names the suboption without its parent: "value of tc_tsa must be one or more of: ..."
    case("dcb_qos", "tc_tsa", "unknown", {"ets": {"tc_tsa": ["wfq"] + ets_tsa[1:]}})
    for option, label, entries in (
        ("dscp_prio[0].dscp", "64", [{"dscp": 64, "priority": 3}]),
        ("dscp_prio[0].dscp", "minus-1", [{"dscp": -1, "priority": 3}]),
        ("dscp_prio[0].priority", "8", [{"dscp": 26, "priority": 8}]),
        ("dscp_prio[0].priority", "minus-1", [{"dscp": 26, "priority": -1}]),
        ("dscp_prio[1].dscp", "twice", [{"dscp": 26, "priority": 3}, {"dscp": 26, "priority": 4}]),
        ("priority", "missing", [{"dscp": 26}]),  # Ansible's required check: "missing required arguments: priority found in dscp_prio"
    ):
        case("dcb_qos", option, label, {"dscp_prio": entries})
    for option, label, ecn in (
        ("ecn.priorities[0]", "8", {"priorities": [8]}),
        ("ecn.priorities[0]", "minus-1", {"priorities": [-1]}),
        ("ecn.priorities", "twice", {"priorities": [3, 3]}),
        ("ecn.cnp_dscp", "64", {"cnp_dscp": 64}),
        ("ecn.cnp_dscp", "minus-1", {"cnp_dscp": -1}),
        ("ecn.cnp_priority", "8", {"cnp_priority": 8}),
        ("ecn.cnp_priority", "minus-1", {"cnp_priority": -1}),
    ):
        case("dcb_qos", option, label, {"ecn": ecn})
    case("dcb_qos", "unsupported", "unknown", {"unsupported": "ignore"})

    # nic_firmware: refused before the tool is looked for or run (what needs the card's query is in test_nic_firmware.py)
    for label, value in BAD_PCI_FUNCTIONS:
        case("nic_firmware", "device", label, {"device": value})
    for key, label, value in (("NUM_OF_VFS", "128", 128), ("NUM_OF_VFS", "minus-1", -1), ("NUM_OF_VFS", "word", "many"),
                              ("NUM_OF_VFS", "bool", True), ("NUM_OF_VFS", "fraction", 1.5), ("SRIOV_EN", "maybe", "maybe"),
                              ("SRIOV_EN", "2", 2), ("LINK_TYPE_P1", "fc", "FC"), ("LINK_TYPE_P2", "4", 4),
                              ("CNP_DSCP_P1", "64", 64), ("ROCE_CC_PRIO_MASK_P1", "256", 256), ("CNP_802P_PRIO_P2", "8", 8),
                              ("ATS_ENABLED", "list", [True]), ("BOGUS_KEY", "unknown", 1), ("PCI_WR_ORDERING", "dangerous", 1)):
        case("nic_firmware", f"settings.{key}", label, {"settings": {key: value}})
    for key, label, value in (("PCI_WR_ORDERING", "not-allowed", 1), ("INTERNAL_CPU_MODEL", "not-allowed", "EMBEDDED_CPU"),
                              ("NUM_OF_PF", "not-allowed", 2), ("X_FLAG", "bool", True), ("X_FLAG", "fraction", 1.5),
                              ("X_FLAG", "two-words", "a b"), ("X_FLAG", "list", [1]), ("X_FLAG", "semicolon", "A;B")):
        case("nic_firmware", f"raw_settings.{key}", label, {"raw_settings": {key: value}})
    case("nic_firmware", "raw_settings", "first-class-as-raw", {"raw_settings": {"NUM_OF_VFS": 4}})
    case("nic_firmware", "raw_settings", "lower-case-name", {"raw_settings": {"num_of_vfs": 4}})
    case("nic_firmware", "raw_settings", "option-injection", {"raw_settings": {"-y": 1}})
    case("nic_firmware", "allow[0]", "not-dangerous", {"allow": ["SRIOV_EN"]})
    case("nic_firmware", "allow[1]", "unknown", {"allow": ["PCI_WR_ORDERING", "EVERYTHING"]})
    case("nic_firmware", "tool", "unknown", {"tool": "flint"})

    # rdma_system: refused before RDMA netlink is opened or a file read
    for label, value in (("unknown", "isolated"), ("empty", ""), ("capital", "Shared"), ("trailing-space", "exclusive "),
                         ("number", 1), ("true", True), ("list", ["shared"]), ("newline", "shared\n"), ("two", "shared;exclusive")):
        case("rdma_system", "netns_mode", label, {"netns_mode": value})
    for label, value in (("word", "maybe"), ("two", 2), ("phrase", "yes please"), ("list", [True]), ("dict", {"on": True})):
        case("rdma_system", "privileged_qkey", label, {"privileged_qkey": value})
    for label, value in (("word", "sometimes"), ("three", 3), ("list", ["x"])):
        case("rdma_system", "persistent", label, {"persistent": value})
    for label, value in (("unknown", "wait"), ("empty", ""), ("capital", "Reboot"), ("number", 0)):
        case("rdma_system", "when_busy", label, {"when_busy": value})
    case("rdma_system", "when_busy", "reboot-without-persistence", {"when_busy": "reboot", "persistent": False})
    case("rdma_system", "unsupported", "unknown", {"unsupported": "ignore"})

    # rdma_cgroup: refused before sysfs or the cgroup tree is read
    for label, value in (("empty", ""), ("space", "rxe 0"), ("slash", "rxe/0"), ("dotdot", ".."), ("newline", "rxe0\n"),
                         ("too-long", "r" * 65)):
        case("rdma_cgroup", "device", label, {"device": value})
    for option in ("hca_handle", "hca_object"):
        for label, value in (("negative", "-1"), ("capital-max", "MAX"), ("leading-zero", "01"), ("fraction", "1.5"), ("hex", "0x10"),
                             ("too-large", "2147483648"), ("arabic-indic-digit", "\u0661"), ("word", "unlimited"), ("list", [1])):
            case("rdma_cgroup", option, label, {option: value})
    for label, value in (("dotdot", ".."), ("escape", "a/../../etc"), ("space", "a b"), ("empty", ""), ("root", "/"), ("dot", "a/./b"),
                         ("semicolon", "a;b")):
        case("rdma_cgroup", "cgroup", label, {"cgroup": value})
    for label, value in (("no-type", "containerd"), ("socket", "containerd.socket"), ("path", "../x.service"), ("space", "a b.service"),
                         ("leading-dash", "-x.service"), ("root-slice", "-.slice")):
        case("rdma_cgroup", "unit", label, {"cgroup": None, "unit": value, "persistent": False})
    case("rdma_cgroup", "cgroup", "with-unit", {"unit": "containerd.service"})
    case("rdma_cgroup", "cgroup", "neither", {"cgroup": None})
    case("rdma_cgroup", "persistent", "with-cgroup", {"persistent": True})
    case("rdma_cgroup", "persistent", "with-scope", {"cgroup": None, "unit": "docker-4f2a.scope", "persistent": True})
    case("rdma_cgroup", "state", "unknown", {"state": "gone"})

    # roce_enable: refused before sysfs is read or devlink looked for; exactly one of pci, device and netdev
    for label, value in BAD_PCI_FUNCTIONS + [("upper-newline", "0000:AF:00.0\n"), ("true", True), ("list", ["0000:08:00.0"])]:
        case("roce_enable", "pci", label, {"pci": value})
    for label, value in BAD_RDMA_NAMES + [("number", 5), ("list", ["mlx5_0"])]:
        case("roce_enable", "device", label, {"pci": None, "device": value})
    for label, value in BAD_NETDEVS + [("number", 1), ("true", True)]:
        case("roce_enable", "netdev", label, {"pci": None, "netdev": value})
    case("roce_enable", "device", "with-pci", {"device": "mlx5_0"})
    case("roce_enable", "netdev", "with-device", {"pci": None, "device": "mlx5_0", "netdev": "eth1"})
    case("roce_enable", "pci", "none-of-three", {"pci": None})
    case("roce_enable", "pci", "null", {"pci": NULL})
    case("roce_enable", "enabled", "missing", {"enabled": None})
    case("roce_enable", "enabled", "null", {"enabled": NULL})
    for label, value in (("word", "sometimes"), ("two", 2), ("list", [True]), ("dict", {"on": True})):
        case("roce_enable", "enabled", label, {"enabled": value})
    for label, value in (("unknown", "ethtool"), ("empty", ""), ("capital", "SYSFS"), ("true", True), ("list", ["sysfs"])):
        case("roce_enable", "method", label, {"method": value})
    for label, value in (("word", "later"), ("list", [True])):
        case("roce_enable", "reload", label, {"reload": value})
    case("roce_enable", "unsupported", "unknown", {"unsupported": "ignore"})
    cases.extend(round_two())
    cases.extend(case[1:] for case in round_three_cases())
    return cases


# Issue 26, input hardening round two: (class, module, args, option, label). Every one runs on the lab too.
def round_two_cases():
    out = []

    def case(kind, module_name, option, label, args):
        out.append((kind, module_name, args, option, f"{module_name}-{option}-{label}"))

    # 1. over-long fields in limits files (Linux-PAM 1.5 reads 1023 bytes at a time)
    for label, value in (("256-bytes", "a" * 256), ("1100-bytes", "a" * 1100), ("group-1100-bytes", "@" + "g" * 1099),
                         ("range-300-digits", "1" * 150 + ":" + "2" * 150)):
        case("long-fields", "memlock", "domain", label, {"domain": value})
    case("long-fields", "memlock", "domain", "1100-bytes-absent", {"domain": "a" * 1100, "state": "absent", "value": None})
    for label, value in (("100000-digits", "1" * 100000), ("5000-digits", "9" * 5000), ("33-zeros", "0" * 33),
                         ("leading-zeros-then-1", "0" * 40 + "1"), ("long-word", "unlimited" * 20)):
        case("long-fields", "memlock", "value", label, {"value": value})

    # 2. paths that are not what they look like
    for label, value in (("dotdot-over-missing", f"{HOST_DIR_MARK}/{LIMITS_D}/missing/../90-x.conf"),
                         ("relative", "90-x.conf"), ("relative-dir", LIMITS_D + "/90-x.conf"), ("dot-relative", "./90-x.conf"),
                         ("name-256-bytes", f"{HOST_DIR_MARK}/{LIMITS_D}/" + "x" * 251 + ".conf"),
                         ("char-device", "/dev/null"), ("through-char-device", "/dev/null/90-x.conf"),
                         ("trailing-dot", f"{HOST_DIR_MARK}/{LIMITS_D}/."), ("trailing-dotdot", f"{HOST_DIR_MARK}/{LIMITS_D}/..")):
        case("paths", "memlock", "dest", label, {"dest": value})

    # 3. values the tool behind the module refuses
    for label, value in (("prefix-0", "10.0.0.1/0"), ("comma-two-addresses", "10.0.0.1/24,10.0.0.2/24"),
                         ("semicolon", "10.0.0.1/24;10.0.0.2/24"), ("space-two-addresses", "10.0.0.1/24 10.0.0.2/24")):
        case("tool-refuses", "ipoib_connection", "ipv4.addresses", label, {"ipv4": {"method": "manual", "addresses": [value]}})
    for label, value in (("prefix-0", "2001:db8::1/0"), ("zone", "fe80::1%ib0/64"), ("zone-comma", "fe80::1%ib0,2001:db8::1/64"),
                         ("zone-no-prefix", "fe80::1%ib0")):
        case("tool-refuses", "ipoib_connection", "ipv6.addresses", label, {"ipv6": {"method": "manual", "addresses": [value]}})
    case("tool-refuses", "ipoib_connection", "ipv6.gateway", "zone",
         {"ipv6": {"method": "manual", "addresses": ["fe80::5/64"], "gateway": "fe80::1%ib0"}})
    case("tool-refuses", "ipoib_connection", "ipv6.dns", "zone", {"ipv6": {"dns": ["fe80::53%ib0"]}})
    case("tool-refuses", "ipoib_connection", "ipv4.dns", "comma", {"ipv4": {"dns": ["10.0.0.53,10.0.0.54"]}})
    for label, value in (("c1-nel", "ib\x850"), ("c1-csi", "ib0\x9b31m"), ("c1-first", "\x80ib0"), ("c1-last", "ib0\x9f")):
        case("tool-refuses", "ipoib_connection", "name", label, {"name": value})
    for label, tsa, bw in (("strict-in-sum", ["ets", "ets", "strict"] + ["ets"] * 5, [50, 30, 20, 0, 0, 0, 0, 0]),
                           ("ets-sum-40", ["strict"] * 6 + ["ets", "ets"], [10, 10, 10, 10, 10, 10, 20, 20])):
        case("tool-refuses", "dcb_qos", "ets.tc_bw", label, {"ets": {"tc_tsa": tsa, "tc_bw": bw}})

    # 4. YAML types silently turned into strings
    for label, value in (("true", True), ("false", False), ("number", 1000), ("float", 1.5), ("list", ["alice"])):
        case("yaml-types", "memlock", "domain", label, {"domain": value})
    for label, value in (("list", [f"{HOST_DIR_MARK}/{LIMITS_D}/90-x.conf"]), ("true", True), ("number", 90), ("dict", {"a": 1})):
        case("yaml-types", "memlock", "dest", label, {"dest": value})
    case("yaml-types", "memlock", "value", "list", {"value": ["unlimited"]})
    case("yaml-types", "memlock", "value", "true", {"value": True})
    for label, value in (("true", True), ("false", False), ("number", 0), ("list", ["rxe0"])):
        case("yaml-types", "rdma_link", "name", label, {"name": value})
        case("yaml-types", "ipoib_connection", "name", label, {"name": value})
        case("yaml-types", "roce_mode", "device", label, {"device": value})
        case("yaml-types", "tc_rule", "device", label, {"device": value})
    for label, value in (("true", True), ("number", 1), ("list", ["eth1"])):
        case("yaml-types", "rdma_link", "netdev", label, {"netdev": value})
        case("yaml-types", "dcb_qos", "netdev", label, {"netdev": value})
        case("yaml-types", "ipoib_connection", "ifname", label, {"ifname": value})
        case("yaml-types", "ipoib_connection", "parent", label, {"parent": value, "pkey": "0x8002"})
    case("yaml-types", "ipoib_connection", "pkey", "true", {"parent": "ib0", "pkey": True})
    case("yaml-types", "ipoib_connection", "pkey", "list", {"parent": "ib0", "pkey": ["0x8002"]})
    case("yaml-types", "gid_facts", "device[0]", "true", {"device": [True]})
    case("yaml-types", "gid_facts", "device[0]", "number", {"device": [0]})
    case("yaml-types", "gid_facts", "device[1]", "list", {"device": ["rxe0", ["rxe1"]]})
    case("yaml-types", "tc_rule", "rules[0].src_ip", "number", {"rules": [{"src_ip": 167772161, "tclass": 106}]})
    case("yaml-types", "tc_rule", "rules[0].dst_ip", "true", {"rules": [{"dst_ip": True, "tclass": 106}]})
    case("yaml-types", "ipoib_connection", "ipv4.gateway", "number",
         {"ipv4": {"method": "manual", "addresses": ["10.0.0.5/24"], "gateway": 167772161}})
    case("yaml-types", "ipoib_connection", "ipv4.addresses[0]", "true", {"ipv4": {"method": "manual", "addresses": [True]}})
    case("yaml-types", "rdma_link", "type", "true", {"type": True})
    case("yaml-types", "memlock", "state", "true", {"state": True})

    # 5. inputs ansible-core's argument handling crashes on or answers without naming the option
    for label, value in (("5000-digit-text", "1" * 5000), ("100000-digit-text", "7" * 100000), ("list", [1]), ("dict", {"a": 1})):
        case("core-crashes", "roce_mode", "port", label, {"port": value})
        case("core-crashes", "tc_rule", "ttl", label, {"ttl": value})
    case("core-crashes", "ipoib_connection", "mtu", "5000-digit-text", {"mtu": "9" * 5000})
    case("core-crashes", "dcb_qos", "pfc[0]", "5000-digit-text", {"pfc": ["3" * 5000]})
    for option in ("ipv4", "ipv6"):
        for label, value in (("list", ["method=manual"]), ("list-of-dicts", [{"method": "manual"}]), ("string", "method=manual"),
                             ("word", "manual"), ("true", True), ("number", 4)):
            case("core-crashes", "ipoib_connection", option, label, {option: value})
    for option in ("ets", "ecn"):
        for label, value in (("list", [1]), ("list-of-dicts", [{"tc_bw": [100] + [0] * 7}]), ("string", "tc_bw=100"), ("true", True)):
            case("core-crashes", "dcb_qos", option, label, {option: value})
    for label, value in (("number", [1]), ("string", ["dscp=26"]), ("list", [[26, 3]]), ("true", [True])):
        case("core-crashes", "dcb_qos", "dscp_prio[0]", label, {"dscp_prio": value})
    for label, value in (("number", [1]), ("string", ["10.0.0.0/24"]), ("list", [["10.0.0.0/24", 106]])):
        case("core-crashes", "tc_rule", "rules[0]", label, {"rules": value})
    case("core-crashes", "tc_rule", "rules", "dict", {"rules": {"dst_ip": "10.0.0.0/24", "tclass": 106}})
    return out


# Issue 33, class 6: (class, module, args, option, case id). Every int option of every module with each value of
# BAD_INT_FORMS, every list option with each of BAD_LIST_SCALARS, and the fact modules' device filters with names
# the kernel or a one-line message could not carry. Every one runs on the lab too.
INT_OPTIONS = [
    # (module, the option as the message names it, how the value goes into the arguments)
    ("roce_mode", "port", lambda v: {"port": v}),
    ("roce_mode", "tos", lambda v: {"tos": v}),
    ("roce_mode", "dscp", lambda v: {"dscp": v}),
    ("gid_facts", "port", lambda v: {"port": v}),
    ("counter_facts", "port", lambda v: {"port": v}),
    ("ipoib_connection", "mtu", lambda v: {"mtu": v}),
    ("tc_rule", "port", lambda v: {"port": v}),
    ("tc_rule", "traffic_class", lambda v: {"traffic_class": v}),
    ("tc_rule", "dscp", lambda v: {"dscp": v}),
    ("tc_rule", "ttl", lambda v: {"ttl": v}),
    ("tc_rule", "rules[0].tclass", lambda v: {"rules": [{"dst_ip": "10.0.0.0/24", "tclass": v}]}),
    ("tc_rule", "rules[0].dscp", lambda v: {"rules": [{"dst_ip": "10.0.0.0/24", "dscp": v}]}),
    ("dcb_qos", "pfc[1]", lambda v: {"pfc": [3, v]}),
    ("dcb_qos", "ets.prio_tc[0]", lambda v: {"ets": {"prio_tc": [v] + [0] * 7}}),
    ("dcb_qos", "ets.tc_bw[7]", lambda v: {"ets": {"tc_bw": [100] + [0] * 6 + [v]}}),
    ("dcb_qos", "dscp_prio[0].dscp", lambda v: {"dscp_prio": [{"dscp": v, "priority": 3}]}),
    ("dcb_qos", "dscp_prio[0].priority", lambda v: {"dscp_prio": [{"dscp": 26, "priority": v}]}),
    ("dcb_qos", "ecn.priorities[0]", lambda v: {"ecn": {"priorities": [v]}}),
    ("dcb_qos", "ecn.cnp_dscp", lambda v: {"ecn": {"cnp_dscp": v}}),
    ("dcb_qos", "ecn.cnp_priority", lambda v: {"ecn": {"cnp_priority": v}}),
]
LIST_OPTIONS = [
    ("gid_facts", "device", lambda v: {"device": v}),
    ("counter_facts", "device", lambda v: {"device": v}),
    ("dcb_qos", "pfc", lambda v: {"pfc": v}),
    ("dcb_qos", "ets.prio_tc", lambda v: {"ets": {"prio_tc": v}}),
    ("dcb_qos", "ets.tc_tsa", lambda v: {"ets": {"tc_tsa": v}}),
    ("dcb_qos", "ets.tc_bw", lambda v: {"ets": {"tc_bw": v}}),
    ("dcb_qos", "ecn.priorities", lambda v: {"ecn": {"priorities": v}}),
    ("dcb_qos", "dscp_prio", lambda v: {"dscp_prio": v}),
    ("ipoib_connection", "ipv4.addresses", lambda v: {"ipv4": {"method": "manual", "addresses": v}}),
    ("ipoib_connection", "ipv4.dns", lambda v: {"ipv4": {"dns": v}}),
    ("ipoib_connection", "ipv6.addresses", lambda v: {"ipv6": {"method": "manual", "addresses": v}}),
    ("ipoib_connection", "ipv6.dns", lambda v: {"ipv6": {"dns": v}}),
    ("tc_rule", "rules", lambda v: {"rules": v}),
    ("nic_firmware", "allow", lambda v: {"allow": v}),
]


def round_three_cases():
    out = []

    def case(kind, module_name, option, label, args):
        out.append((kind, module_name, args, option, f"{module_name}-{option}-{label}-i33"))

    first = set()
    for module_name, option, put in INT_OPTIONS:
        for label, value in (SOME_INT_FORMS if module_name in first else BAD_INT_FORMS):
            case("int-forms", module_name, option, label, put(value))
        first.add(module_name)
    for module_name, option, put in LIST_OPTIONS:
        for label, value in BAD_LIST_SCALARS:
            case("list-scalars", module_name, option, label, put(value))
    # gid_facts has BAD_RDMA_NAMES (control characters among them) and BAD_PORTS in corpus() already
    for label, value in BAD_RDMA_NAMES:
        case("names", "counter_facts", "device[0]", label, {"device": [value]})
    for module_name in ("gid_facts", "counter_facts"):
        for label, value in (("esc", "rxe\x1b0"), ("csi", "\x9b2J"), ("number", 5), ("true", True), ("list", ["rxe0"])):
            case("names", module_name, "device[1]", label, {"device": ["rxe0", value]})
    for label, value in BAD_PORTS:
        case("names", "counter_facts", "port", label, {"port": value})
    for label, value in (("word", "sometimes"), ("number", 2), ("list", [True])):
        case("names", "counter_facts", "common_only", label, {"common_only": value})
    return out


def round_two():
    """The round-two cases in corpus() form."""
    return [(module_name, args, option, case_id) for _kind, module_name, args, option, case_id in round_two_cases()]


# Cases the lab cannot run: values that YAML and the controller cannot carry to the module (non-finite floats,
# integers beyond Python's 4,300-digit limit, surrogate-escaped bytes), and paths that need a file made on
# the host first. (class, module, args, option, label, setup): setup names a host preparation in
# test_bad_input_corpus.py (None for none); {HOST_DIR_MARK} paths are under the fake host.
def unit_only_cases():
    out = []

    def case(kind, module_name, option, label, args, setup=None):
        out.append((kind, module_name, args, option, f"{module_name}-{option}-{label}-unit", setup))

    case("paths", "memlock", "dest", "fifo", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/90-fifo.conf"}, "fifo")
    case("paths", "memlock", "dest", "fifo-check-mode", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/90-fifo.conf", "_ansible_check_mode": True},
         "fifo")
    case("paths", "memlock", "dest", "symlink-loop", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/90-loop.conf"}, "symlink-loop")
    case("paths", "memlock", "dest", "symlink-to-directory", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/90-dir.conf"}, "symlink-to-directory")
    case("paths", "memlock", "dest", "symlink-to-fifo", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/90-tofifo.conf"}, "symlink-to-fifo")
    case("paths", "memlock", "dest", "through-regular-file", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/file/90-x.conf"}, "regular-file")
    case("paths", "memlock", "dest", "dotdot-over-regular-file", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/file/../90-x.conf"}, "regular-file")
    for label, value in (("inf", float("inf")), ("minus-inf", float("-inf")), ("nan", float("nan")),
                         ("5000-digit-int", int("1" * 4000) * 10 ** 1000)):
        case("core-crashes", "roce_mode", "port", label, {"port": value})
        case("core-crashes", "ipoib_connection", "mtu", label, {"mtu": value})
        case("core-crashes", "dcb_qos", "ecn.cnp_dscp", label, {"ecn": {"cnp_dscp": value}})
        case("core-crashes", "tc_rule", "rules[0].tclass", label, {"rules": [{"dst_ip": "10.0.0.0/24", "tclass": value}]})
    case("core-crashes", "memlock", "value", "5000-digit-int", {"value": int("1" * 4000) * 10 ** 1000})
    case("core-crashes", "memlock", "value", "inf", {"value": float("inf")})
    for module_name, option, args in (("memlock", "domain", {"domain": "alice\udcff"}), ("rdma_link", "name", {"name": "rxe\udc800"}),
                                      ("ipoib_connection", "name", {"name": "ib\udcff"}), ("roce_mode", "device", {"device": "\udcffrxe0"}),
                                      ("tc_rule", "device", {"device": "mlx5\udc80"}), ("dcb_qos", "netdev", {"netdev": "eth\udcff"}),
                                      ("gid_facts", "device[0]", {"device": ["rxe\udcff"]}),
                                      ("roce_enable", "pci", {"pci": "0000:08:00.\udcff"}),
                                      ("memlock", "dest", {"dest": f"{HOST_DIR_MARK}/{LIMITS_D}/\udcff.conf"}),
                                      ("ipoib_connection", "ipv4.addresses[0]", {"ipv4": {"method": "manual", "addresses": ["10.0.0.1\udcff/24"]}})):
        case("core-crashes", module_name, option, "surrogate", args)
    return out
