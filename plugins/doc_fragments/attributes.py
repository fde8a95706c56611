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
