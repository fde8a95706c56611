# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment:
    """Attributes shared by every rdma.fabric module."""

    # Standard documentation fragment
    DOCUMENTATION = r"""
options: {}
notes:
  - Arguments are checked as they arrive, before ansible-core converts them. A YAML boolean, number, list or dictionary
    given for a string option is refused rather than turned into text (quote a name such as C("1000")); so are text
    that is not valid UTF-8, C(inf) and C(nan), integers of more than 128 bits and integer text longer than 40
    characters, and anything but a dictionary for an option that takes suboptions. Each fails with a one-line message
    naming the option, before anything on the host is read or changed.
  - An integer option (and each integer of a list) takes an integer or its decimal digits as text (C(4096) or
    C("4096"); C(0-9) with an optional leading C(-)). A float (C(1.0)), a boolean, and text such as C("1e3"),
    C("1.0"), C(" 5"), C("+5"), C("05"), C("5_0"), C("0x10"), C("inf") or non-ASCII digits are refused, where ansible-core
    would read them as numbers or crash on them.
  - "A list option takes a YAML list only; a single value (C(device: mlx5_0), C(pfc: 3)) is refused rather than read
    as a one-item list (ansible-core also splits text at commas). Write C(device: [mlx5_0])."
  - Device and interface names with a control character (ESC, CSI, DEL, other C0 and C1 codes), a Unicode format
    character (U+200B, U+202E) or a separator other than the space are refused; an interface name also may not
    contain a byte the kernel counts as white space (its UTF-8 may not hold the byte 0xa0, as C(à) does).
    Messages and warnings show any such character of a host's or a user's text escaped (C(\x1b)), on one line.
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
"""

    PLATFORM = r"""
options: {}
attributes:
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
"""

    # Should be used together with the standard fragment
    ACTIONGROUP = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/rdma.fabric.rdma) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - rdma.fabric.rdma
"""

    # Should be used together with the standard fragment
    FACTS = r"""
options: {}
attributes:
  facts:
    description: Action returns an C(ansible_facts) dictionary that will update existing host facts.
    support: full
"""
