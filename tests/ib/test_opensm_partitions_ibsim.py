# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The consumer decides: partitions.conf files under real OpenSM 3.3.23 on ibsim (issue 33, classes 1 and 2).

- a property: whatever normalize_partitions() accepts, render_partitions() writes a file that OpenSM
  reads without PARSE ERROR and without falling back to its default config, and the ports get
  exactly the P_Keys the canonical partitions mean (read back with smpquery by directed route);
- what OpenSM does with the values the role now refuses or writes differently: a zero GUID and a
  line past its 4096-byte buffer discard the whole file; sl without QoS is SL 0; a limited Default
  without SELF=full cuts limited hosts off the SM; 16 and 010 are strtoul numbers; a port's later
  listing wins. Each of these is checked against what the collection's parser and model say.

OpenSM runs in once mode (-o, about 0.1 s) where the SA is not needed, as a service where it is
(saquery, sminfo -G). Every test fails, never skips, without the tools.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ibsim_fabric
from ibsim_fabric import PORT_GUIDS, Fabric

from ansible_collections.rdma.fabric.plugins.plugin_utils import _ib_agreement
from ansible_collections.rdma.fabric.plugins.plugin_utils import _opensm_partitions as P

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SM = "hca1"
HOSTS = sorted(PORT_GUIDS)
FALLBACK = re.compile(r"PARSE ERROR|retrying with default config")


@pytest.fixture(autouse=True)
def tools_present():
    missing = ibsim_fabric.missing_tools()
    assert not missing, f"missing: {', '.join(missing)} (tools/bootstrap installs opensm infiniband-diags ibsim-utils libumad2sim0)"


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    with Fabric(tmp_path_factory.mktemp("fabric")) as started:
        yield started


def expected_tables(partitions: list, allow_both: bool) -> dict:
    """{host: P_Keys} the canonical partitions mean, by the model the agreement uses (a port's later listing wins,
    both = full and limited with allow_both_pkeys, the 0x7fff baseline: every port limited, the SM's own full)."""
    tables = {host: set() for host in HOSTS}
    for partition in partitions:
        number = int(partition["pkey"], 16)
        for host in HOSTS:
            guid = PORT_GUIDS[host]
            level = _ib_agreement.membership(partition, [guid], {PORT_GUIDS[SM]})
            last = [m["membership"] for m in partition["members"]
                    if m["guid"] in ("ALL", "ALL_CAS", guid) or (m["guid"] == "SELF" and host == SM)]
            if level is None:
                continue
            if last and last[-1] == "both" and allow_both:
                tables[host] |= {f"0x{number | 0x8000:04x}", f"0x{number:04x}"}
            else:
                tables[host].add(f"0x{number | 0x8000:04x}" if level == "full" else f"0x{number:04x}")
    return tables


def tables(fabric) -> dict:
    return {host: fabric.pkeys_direct(host) for host in HOSTS}


def no_fallback(log: str) -> None:
    assert not FALLBACK.search(log), [line for line in log.splitlines() if FALLBACK.search(line)]


# --- the property ------------------------------------------------------------------------------

OTHER_GUIDS = st.integers(1, 2**64 - 1).map(lambda n: f"0x{n:016x}")  # ports not in the fabric: parsed, not programmed
MEMBER_GUIDS = st.one_of(st.sampled_from(sorted(PORT_GUIDS.values())), st.sampled_from(P.KEYWORDS), OTHER_GUIDS,
                         st.sampled_from(sorted(PORT_GUIDS.values())).map(str.upper).map(lambda g: "0x" + g[2:]))
MEMBER = st.fixed_dictionaries({"guid": MEMBER_GUIDS}, optional={"membership": st.sampled_from(P.MEMBERSHIPS)})
PKEY_TEXT = st.integers(1, 0x7FFF).flatmap(lambda n: st.sampled_from([n, f"0x{n:04x}", f"0x{n:X}", str(n), f"0X{n:x}"]))


@st.composite
def inputs(draw):
    """(partitions as a user writes them, allow_both, qos), drawn to be mostly valid (the rest is refused and rejected)."""
    allow_both, qos = draw(st.booleans()), draw(st.booleans())
    member = MEMBER if allow_both else MEMBER.filter(lambda m: m.get("membership") != "both")
    members = st.lists(member, min_size=1, max_size=12, unique_by=lambda m: m["guid"].lower())
    count = draw(st.integers(0, 5))
    partitions = []
    for index in range(count):
        entry = {"name": draw(st.sampled_from(["storage", "compute", "p.x-1", "N" * 62, "Default", "t_16"])) + str(index),
                 "pkey": draw(PKEY_TEXT), "members": draw(members)}
        if draw(st.booleans()):
            entry["ipoib"] = True
            for key, low, high in (("mtu", 1, 5), ("rate", 2, 22), ("sl", 0, 15 if qos else 0)):
                if draw(st.booleans()):
                    entry[key] = draw(st.integers(low, high))
        partitions.append(entry)
    if draw(st.booleans()):  # an own default partition, sometimes with limited members (SELF=full is then added)
        partitions.insert(0, {"name": "Default", "pkey": "0x7fff", "ipoib": draw(st.booleans()),
                              "members": draw(st.lists(member.filter(lambda m: m["guid"] != "SELF"), min_size=1, max_size=6,
                                                       unique_by=lambda m: m["guid"].lower()))})
    return partitions, allow_both, qos


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(inputs())
def test_whatever_the_role_accepts_opensm_reads_and_programs(fabric, drawn):
    value, allow_both, qos = drawn
    try:
        partitions = P.normalize_partitions(value, allow_both=allow_both, qos=qos)
    except ValueError:
        partitions = None  # refused before anything is written: not this property's concern (unit tests cover the messages)
    assume(partitions is not None)
    text = P.render_partitions(partitions)
    options = ("allow_both_pkeys TRUE\n" if allow_both else "") + ("qos TRUE\n" if qos else "")
    log = fabric.once("prop", text, options)
    no_fallback(log)
    assert tables(fabric) == expected_tables(partitions, allow_both), text
    assert P.parse_partitions(text) == partitions  # and the collection reads its own file back as written


# --- the parser's property: a hand-written file reads as OpenSM reads it ------------------------------------------

def _number_texts(number: int) -> st.SearchStrategy:
    """The ways a file may write a number, all of which OpenSM reads with strtoul(..., 0)."""
    return st.sampled_from([str(number), f"0x{number:x}", f"0X{number:04X}", f"0{number:o}"])


KEYWORD_TEXTS = st.sampled_from(["ALL", "A", "AL", "ALL_CAS", "ALL_C", "ALL_", "ALL_SWITCHES", "ALL_S", "ALL_ROUTERS", "SELF", "S", "SEL"])
PORT_TEXTS = st.one_of(KEYWORD_TEXTS, st.sampled_from(sorted(PORT_GUIDS.values())),
                       st.sampled_from(sorted(PORT_GUIDS.values())).map(lambda g: hex(int(g, 16))),  # 0x2c90300002001
                       st.sampled_from(sorted(PORT_GUIDS.values())).map(lambda g: str(int(g, 16))),  # decimal
                       st.integers(1, 2**63).map(hex))
FLAG_TEXTS = st.sampled_from(["", "=full", "=f", "=fu", "=limited", "=l", "=lim", "=x"])


@st.composite
def hand_written(draw):
    """A partitions.conf as a person might write it: numbers in any base, abbreviations, repeated ports, members over lines."""
    lines = []
    pkeys = draw(st.lists(st.integers(1, 0x7FFE), min_size=1, max_size=4, unique=True))
    if draw(st.booleans()):
        pkeys.insert(0, 0x7FFF)
    for index, number in enumerate(pkeys):
        shown = draw(_number_texts(number | (0x8000 if draw(st.booleans()) else 0)))
        flags = draw(st.lists(st.sampled_from(["ipoib", "i", "defmember=full", "defmember=l", "mtu=4", "rate=0x3", "sl=0"]),
                              max_size=3))
        ports = draw(st.lists(st.tuples(PORT_TEXTS, FLAG_TEXTS), min_size=1, max_size=8))
        members = [f"{port}{flag}" for port, flag in ports]
        separator = draw(st.sampled_from([", ", ",\n  ", " ,\t"]))
        lines.append(f"p{index}={shown}{''.join(', ' + flag for flag in flags)} : {separator.join(members)};")
    return "# hand-written\n" + "\n".join(lines) + "\n"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hand_written())
def test_a_hand_written_file_reads_as_opensm_reads_it(fabric, text):
    """Whatever parse_partitions() reads, OpenSM reads without a fallback and programs what the parsed partitions mean."""
    try:
        parsed = P.parse_partitions(text)
    except ValueError:
        parsed = None  # refused with its line (e.g. a P_Key listed twice once the 0x8000 bit is cleared)
    assume(parsed is not None)
    no_fallback(fabric.once("hand", text))
    assert tables(fabric) == expected_tables(parsed, False), (text, parsed)


# --- each value OpenSM discards or reads differently ---------------------------------------------

def test_many_members_one_line_falls_back_over_lines_is_read(fabric):
    """400 members: on one line OpenSM's 4096-byte buffer cuts a GUID and the file is discarded; as rendered, it is read."""
    members = [{"guid": PORT_GUIDS["hca2"], "membership": "full"}, {"guid": PORT_GUIDS["hca3"], "membership": "limited"}] + \
        [{"guid": f"0x0002c9031{n:07x}", "membership": "full"} for n in range(398)]
    partitions = P.normalize_partitions([{"name": "big", "pkey": "0x0003", "members": members}])
    text = P.render_partitions(partitions)
    assert max(len(line) for line in text.splitlines()) < 400
    no_fallback(fabric.once("rendered", text))
    expected = {"hca1": {"0xffff"}, "hca2": {"0xffff", "0x8003"}, "hca3": {"0xffff", "0x0003"}, "hca4": {"0xffff"}, "hca5": {"0xffff"}}
    assert tables(fabric) == expected == expected_tables(partitions, False)
    one_line = "".join(P.render_partition(p).replace(",\n    ", ", ") + "\n" for p in partitions)
    assert max(len(line) for line in one_line.splitlines()) > 4096
    assert "retrying with default config" in fabric.once("one-line", one_line)
    assert tables(fabric) == {host: {"0xffff"} for host in HOSTS}  # isolation lost: every port a full member of 0xffff only
    with pytest.raises(ValueError, match=r"line 2: \d+ characters; OpenSM reads at most 4093 per line"):
        P.parse_partitions(one_line)


def test_zero_guid_discards_the_file_and_is_refused(fabric):
    text = f"Default=0x7fff, ipoib : ALL=full;\nstorage=0x0002 : {PORT_GUIDS['hca2']}=full, 0x0000000000000000=full;\n"
    log = fabric.once("zero", text)
    assert "bad PortGUID" in log and "retrying with default config" in log
    assert tables(fabric) == {host: {"0xffff"} for host in HOSTS}
    with pytest.raises(ValueError, match=r"line 2: bad PortGUID '0x0000000000000000'"):
        P.parse_partitions(text)
    with pytest.raises(ValueError, match=r"members\[1\]\.guid: '0x0000000000000000' is not a port GUID"):
        P.normalize_partitions([{"name": "storage", "pkey": 2, "members": [{"guid": PORT_GUIDS["hca2"]}, {"guid": "0x" + "0" * 16}]}])


def test_pkey_numbers_and_later_listings_as_opensm_reads_them(fabric):
    """16 is 0x0010 and 010 is 0x0008 (strtoul base 0); a port's later listing wins, keywords included."""
    text = (f"Default=0x7fff, ipoib : ALL=full;\n"
            f"tenant16=16 : {PORT_GUIDS['hca2']}=full;\n"
            f"legacy=010 : {PORT_GUIDS['hca2']}=limited;\n"
            f"later=0x0004 : {PORT_GUIDS['hca3']}=full, {PORT_GUIDS['hca3']}=limited, ALL_CAS=full, {PORT_GUIDS['hca4']}=limited,\n"
            f"  {PORT_GUIDS['hca5']}=limited, {PORT_GUIDS['hca5']}=full;\n")
    no_fallback(fabric.once("numbers", text))
    seen = tables(fabric)
    assert seen == {"hca1": {"0xffff", "0x8004"}, "hca2": {"0xffff", "0x8010", "0x0008", "0x8004"},
                    "hca3": {"0xffff", "0x8004"}, "hca4": {"0xffff", "0x0004"}, "hca5": {"0xffff", "0x8004"}}
    parsed = P.parse_partitions(text)
    assert [p["pkey"] for p in parsed] == ["0x7fff", "0x0010", "0x0008", "0x0004"]
    assert seen == expected_tables(parsed, False)


def _sl_of_group(fabric, mgid: str) -> int:
    out = fabric.run("hca5", "saquery", "-g").stdout
    blocks = out.split("MCMemberRecord member:")
    block = next(block for block in blocks if f"MGID....................{mgid}" in block)
    return int(re.search(r"SL\.+(0x[0-9a-f]+)", block).group(1), 16)


@pytest.mark.parametrize("qos, sl", [(False, 0), (True, 3)])
def test_sl_is_used_only_with_qos(tmp_path, qos, sl):
    """OpenSM gives the IPoIB group SL 0 without QoS (said at debug level only): the role refuses sl then."""
    text = "Default=0x7fff, ipoib : ALL=full;\nstorage=0x0002, ipoib, sl=3 : ALL=full;\n"
    part = tmp_path / "partitions.conf"
    part.write_text(text)
    conf = tmp_path / "opensm.conf"
    conf.write_text(f"force_log_flush TRUE\nqos {'TRUE' if qos else 'FALSE'}\npartition_config_file {part}\n")
    with Fabric(tmp_path / "fabric") as fabric:
        fabric.start_opensm("sm", SM, str(conf))
        fabric.wait_for_sm(guid=PORT_GUIDS[SM])
        assert _sl_of_group(fabric, "ff12:401b:8002::ffff:ffff") == sl
    value = [{"name": "storage", "pkey": 2, "ipoib": True, "sl": 3, "members": [{"guid": "ALL", "membership": "full"}]}]
    if qos:
        assert P.render_partitions(P.normalize_partitions(value, qos=True)) == P.HEADER + text
    else:
        with pytest.raises(ValueError, match=r"^subnet_manager_partitions\[0\]\.sl: 3 needs subnet_manager_options\.qos: true"):
            P.normalize_partitions(value, qos=False)


def test_limited_default_keeps_the_sm_reachable(tmp_path):
    """Default ALL=limited by hand: limited hosts cannot resolve the SM; as the role writes it (SELF=full last) they can."""
    value = [{"name": "Default", "pkey": "0x7fff", "ipoib": True, "members": [{"guid": "ALL", "membership": "limited"}]}]
    rendered = P.render_partitions(P.normalize_partitions(value))
    assert "Default=0x7fff, ipoib : ALL=limited, SELF=full;" in rendered
    for text, reachable in (("Default=0x7fff, ipoib : ALL=limited;\n", False), (rendered, True)):
        part = tmp_path / f"partitions-{reachable}.conf"
        part.write_text(text)
        conf = tmp_path / f"opensm-{reachable}.conf"
        conf.write_text(f"force_log_flush TRUE\npartition_config_file {part}\n")
        with Fabric(tmp_path / f"fabric-{reachable}") as fabric:
            fabric.start_opensm("sm", SM, str(conf))
            if reachable:
                assert fabric.wait_for_sm(guid=PORT_GUIDS[SM]).endswith("SMINFO_MASTER")
                assert fabric.pkeys_direct(SM) == {"0xffff"} and fabric.pkeys_direct("hca5") == {"0x7fff"}
            else:
                with pytest.raises(AssertionError, match="can't resolve destination port"):
                    fabric.wait_for_sm(guid=PORT_GUIDS[SM], timeout=3)
                assert fabric.pkeys_direct(SM) == {"0x7fff"}  # the SM's own port demoted


# --- the role's check before it installs a partitions.conf (roles/subnet_manager/vars/main.yml) ----------------

def _role_check(path: str, env_path: str = ibsim_fabric.PATH) -> subprocess.CompletedProcess:
    """The role's validate command, as copy runs it: the %s replaced by the file, split like a command line."""
    with open(os.path.join(REPO, "roles", "subnet_manager", "vars", "main.yml"), encoding="utf-8") as handle:
        command = yaml.safe_load(handle)["__subnet_manager_partitions_check"]
    return subprocess.run(shlex.split(command % path), capture_output=True, text=True, timeout=60, check=False,
                          env=dict(os.environ, PATH=env_path))


@pytest.mark.parametrize("text, refused", [
    (P.render_partitions(P.normalize_partitions([{"name": "s", "pkey": "16", "members": [{"guid": PORT_GUIDS["hca2"]}]}])), None),
    ("Default=0x7fff, ipoib : ALL=full;\ns=0x2 : 0x0000000000000000=full;\n", "bad PortGUID"),
    ("Default=0x7fff, ipoib : ALL=full;\ns=0xZZ : ALL=full;\n", "bad partition definition"),
    ("Default=0x7fff, ipoib : ALL=full;\ns=0x2 : " + ", ".join(f"0x{n:016x}=full" for n in range(1, 200)) + ";\n",
     "retrying with default config"),
])
def test_the_roles_check_runs_opensm_before_the_file_is_installed(tmp_path, text, refused):
    path = tmp_path / "partitions.conf"
    path.write_text(text)
    proc = _role_check(str(path))
    if refused:
        assert proc.returncode == 1 and "OpenSM would discard this partitions.conf" in proc.stdout and refused in proc.stdout, proc
    else:
        assert proc.returncode == 0 and "read it without a parse error" in proc.stdout, proc


def test_the_roles_check_passes_without_the_simulator(tmp_path):
    """A real host has no ibsim: the file is then valid by construction (the property above)."""
    path = tmp_path / "partitions.conf"
    path.write_text("s=0x2 : 0x0000000000000000=full;\n")
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "ls", "head", "mktemp"):
        os.symlink(shutil.which(tool), bare / tool)
    proc = _role_check(str(path), str(bare))
    assert proc.returncode == 0 and "not run under OpenSM" in proc.stdout, proc


# --- the role's handler after a SIGHUP: detect the fallback, put the previous file back ---------------------------

HANDLER_PLAY = """
- name: The subnet_manager role's handlers against OpenSM on ibsim (systemctl is a stand-in that sends SIGHUP by PID)
  hosts: localhost
  gather_facts: false
  vars_files: ["{repo}/roles/subnet_manager/vars/main.yml"]
  vars:
    subnet_manager_manage_service: true
    __subnet_manager_run_ports: ["{guid}"]
    __subnet_manager_dir: "{etc}"
  tasks:
    - name: The OS family the handler picks the unit name by
      ansible.builtin.set_fact:
        ansible_facts: {{os_family: Debian}}
    - name: Where OpenSM's log ends now
      ansible.builtin.stat:
        path: "{{{{ item }}}}"
        get_checksum: false
      loop: ["{log}"]
      register: __subnet_manager_log_stat
    - name: Write the new partitions.conf as the role does (backup of the old one), unchecked
      ansible.builtin.copy:
        dest: "{etc}/partitions.conf"
        src: "{new}"
        mode: "0644"
        backup: true
      register: __subnet_manager_partitions_written
      notify: subnet_manager partitions changed
  handlers:
    - name: The role's handlers
      ansible.builtin.import_tasks: "{repo}/roles/subnet_manager/handlers/main.yml"
"""


def test_handler_puts_the_previous_file_back_after_a_fallback(tmp_path):
    etc = tmp_path / "etc"
    etc.mkdir()
    good = "Default=0x7fff, ipoib : ALL=full;\nstorage=0x0002 : " + PORT_GUIDS["hca2"] + "=full, " + PORT_GUIDS["hca3"] + "=limited;\n"
    (etc / "partitions.conf").write_text(good)
    bad = tmp_path / "new.conf"  # what a hand edit or an older role could install: a zero GUID, the whole file discarded
    bad.write_text("Default=0x7fff, ipoib : ALL=full;\nstorage=0x0002 : 0x0000000000000000=full;\n")
    conf = tmp_path / "opensm.conf"
    conf.write_text(f"force_log_flush TRUE\npartition_config_file {etc}/partitions.conf\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    with Fabric(tmp_path / "fabric") as fabric:
        proc = fabric.start_opensm("sm", SM, str(conf))
        fabric.wait_for_sm(guid=PORT_GUIDS[SM])
        before = {"hca2": {"0xffff", "0x8002"}, "hca3": {"0xffff", "0x0002"}}
        assert fabric.wait_for_pkeys(before) == before
        (bin_dir / "systemctl").write_text(f"#!/bin/sh\n[ \"$1\" = kill ] && [ \"$2\" = --signal=HUP ] && exec kill -HUP {proc.pid}\nexit 1\n")
        (bin_dir / "systemctl").chmod(0o755)
        play = tmp_path / "play.yml"
        play.write_text(HANDLER_PLAY.format(repo=REPO, guid=PORT_GUIDS[SM], etc=etc, log=fabric.log_path("sm"), new=bad))
        env = dict(os.environ, PATH=os.pathsep.join([str(bin_dir), ibsim_fabric.PATH]), ANSIBLE_NOCOLOR="1",
                   ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
                   ANSIBLE_COLLECTIONS_PATH=os.environ.get("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections")))
        run = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
                              "-e", f"ansible_python_interpreter={sys.executable}", str(play)],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False)
        output = run.stdout + run.stderr
        assert run.returncode == 2, output
        assert "OpenSM could not read its configuration and fell back to its default partition" in output, output
        assert "bad PortGUID" in output and "the previous partitions.conf was put back and re-read" in output, output
        assert (etc / "partitions.conf").read_text() == good  # the previous file, in place
        assert fabric.log("sm").count("retrying with default config") == 1  # the bad file once, then the restored one read
        assert fabric.wait_for_pkeys(before) == before  # and OpenSM programs its partitions again
