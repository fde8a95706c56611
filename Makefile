# rdma.fabric: the two entry points are `make demo` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

TOP       := $(CURDIR)
comma     := ,
VENV      := $(TOP)/.venv
export PATH := $(VENV)/bin:$(PATH)
export ANSIBLE_COLLECTIONS_PATH := $(TOP)/.build/collections
export ANSIBLE_CONFIG := $(TOP)/ansible.cfg
# Every pytest session of a make target keeps its temporary directories under .build/tmp, not /tmp/pytest-of-USER:
# pytest deletes a user's older sessions' directories when a session ends, so trees that any other run left in /tmp
# (a developer's unit runs: over 200,000 files each) would be deleted inside make test, on its clock.
export PYTEST_DEBUG_TEMPROOT := $(TOP)/.build/tmp
$(shell mkdir -p $(TOP)/.build/tmp)
PYVER      = $$($(VENV)/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# sanity and units run with the ansible-core of CORE_VENV: .venv has the newest line the
# Python allows, .venv-core-oldest the oldest supported one (sanity-oldest, units-oldest).
CORE_VENV ?= $(VENV)
OLDEST    := $(TOP)/.venv-core-oldest

# mitogen for the test scenario that drives the lab (about 4x fewer seconds per task against
# emulated guests; benchmarks/README.md). tools/bootstrap installs it under .build/mitogen.
# ansible.cfg keeps Ansible's default strategy, and so do `make demo` and the first-run test of
# it: ansible-core deprecates third-party strategy plugins, and a first-time user should see no
# warning that is ours (issue 34). RDMA_FABRIC_STRATEGY=linear runs molecule without mitogen too.
LAB_TARGETS := molecule molecule-scale netns
$(LAB_TARGETS): export ANSIBLE_STRATEGY_PLUGINS := $(TOP)/.build/mitogen
$(LAB_TARGETS): export ANSIBLE_STRATEGY := $(or $(RDMA_FABRIC_STRATEGY),mitogen_linear)

# make test's timing record: tools/timed (each part), lab/labctl (boots, image build, container
# import) and the phase_timer callback (playbooks, plays, long tasks) append to timing.jsonl,
# pytest writes verify-*.xml; tools/timing-table turns them into .build/logs/timing.md.
LOGS := $(TOP)/.build/logs
TIMED_TARGETS := first-run molecule molecule-containers molecule-scale netns
$(TIMED_TARGETS): export RDMA_FABRIC_TIMING := $(LOGS)/timing.jsonl
$(TIMED_TARGETS): export ANSIBLE_CALLBACK_PLUGINS := $(TOP)/tools/callback_plugins
$(TIMED_TARGETS): export ANSIBLE_CALLBACKS_ENABLED := phase_timer

.PHONY: help check demo test bootstrap bootstrap-nolab sanity lint units sanity-oldest units-oldest units-ansible-test ee ecosystem ib topology firmware first-run netns molecule molecule-containers molecule-scale lab-up lab-down lab-status lab-image build bench scale

help:
	@echo "make demo    boot the lab VMs, provision them with rdma.fabric, check the fabric, print a report"
	@echo "make test    sanity + lint + unit tests (ansible-core 2.21 and 2.19) + the EE + the ecosystem's tools + OpenSM on ibsim + topology (slurmctld, lldpd) + firmware (the real mstconfig) + netns (both RDMA netns modes on trixie-backports) + the first-run test (tools/demo) + both molecule scenarios"
	@echo "make check   the fast loop: sanity + lint + unit tests (no lab)"
	@echo "more: lab-up lab-down lab-status lab-image sanity lint units sanity-oldest units-oldest ee ecosystem ib topology firmware first-run netns molecule molecule-containers build bench scale"

bootstrap:
	@tools/bootstrap

bootstrap-nolab:
	@tools/bootstrap --no-lab

# --- tests ---------------------------------------------------------------------
test: bootstrap
	@mkdir -p $(LOGS) && rm -f $(LOGS)/timing.jsonl $(LOGS)/timing.md $(LOGS)/verify-*.xml
	@tools/make-test

# Target Pythons (modules run on 3.9+): compile and import run on every one found,
# through links in .build/pythons; pyenv's shims stay out of ansible-test's PATH.
PYTHONS   := $(TOP)/.build/pythons
NO_SHIMS  := $(shell printf '%s' "$(PATH)" | tr ':' '\n' | grep -v '/shims$$' | paste -sd: -)

# the fast loop for developers: sanity, lint and the unit tests, no lab
check: bootstrap-nolab
	@tools/timed "check-sanity" $(MAKE) --no-print-directory sanity
	@tools/timed "check-lint" $(MAKE) --no-print-directory lint
	@tools/timed "check-units" $(MAKE) --no-print-directory units

sanity: bootstrap-nolab
	@tools/target-pythons $(PYTHONS) | tr '\n' ' ' | sed 's/^/target pythons: /'; echo
	@echo "sanity with $$($(CORE_VENV)/bin/python -c 'import ansible.release as r; print("ansible-core", r.__version__)')"
	PATH="$(CORE_VENV)/bin:$(PYTHONS):$(NO_SHIMS)" tools/ansible-test-run sanity --venv --color no

# The unit tests run under pytest itself, in CORE_VENV, on two workers, with the collection importable from
# .build/collections. `ansible-test units` runs the same files with the same pytest, but it adds its ansible_forked
# plugin unconditionally: a fork per test, and every module- or session-scoped fixture rebuilt per test. Measured
# on this 2-CPU machine, idle: all 4,879 tests in 120 s this way, against 511-690 s (units) and 879 s
# (units-oldest) under ansible-test in make test's niced lane, where they were most of that lane's time.
# `make units-ansible-test` still runs them the ansible-test way (not part of make test).
# The tests' sysfs, configfs and /etc trees (over 200,000 files a run) go to a directory of their own, removed when the
# run ends. Under /tmp/pytest-of-root, pytest's default, a later pytest session (pytest keeps the last three sessions'
# directories and deletes older ones at exit) would delete them in whatever lane it runs: in r21 first-run's pytest
# spent over ten minutes in rmdir after its last test, on trees that earlier unit runs had left there.
UNITS_TMP = $(TOP)/.build/tmp/units$(if $(filter $(OLDEST),$(CORE_VENV)),-oldest)
units: bootstrap-nolab
	@echo "units with $$($(CORE_VENV)/bin/python -c 'import ansible.release as r; print("ansible-core", r.__version__)')"
	mkdir -p $(LOGS) && cd $(ANSIBLE_COLLECTIONS_PATH)/ansible_collections/rdma/fabric && rc=0 && PATH="$(CORE_VENV)/bin:$(PATH)" \
		PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$(ANSIBLE_COLLECTIONS_PATH) $(CORE_VENV)/bin/python -m pytest -p no:cacheprovider -q -r a \
		-n 2 --strict-markers --basetemp=$(UNITS_TMP) --junitxml=$(LOGS)/units$(if $(filter $(OLDEST),$(CORE_VENV)),-oldest).xml \
		$(or $(UNIT_TARGETS),tests/unit) || rc=$$?; rm -rf $(UNITS_TMP); exit $$rc

units-ansible-test: bootstrap-nolab
	PATH="$(CORE_VENV)/bin:$(PATH)" tools/ansible-test-run units --venv --python $(PYVER) --color no --num-workers 2 $(UNIT_TARGETS)

# the same on the oldest supported ansible-core line, in .venv-core-oldest (Python 3.11 where the machine has it,
# see tools/bootstrap); units-oldest runs the unit test files that load ansible-core or run its programs and the
# pure tests of the collection's code (tools/core-tests --oldest), not those of make test's own tools
sanity-oldest: bootstrap-nolab
	@$(MAKE) --no-print-directory sanity CORE_VENV=$(OLDEST)

units-oldest: bootstrap-nolab
	@$(MAKE) --no-print-directory units CORE_VENV=$(OLDEST) UNIT_TARGETS="$$(tools/core-tests --oldest | paste -sd' ' -)"

lint: bootstrap-nolab
	ansible-lint --profile production --offline

# the execution environment: the collection's tarball, ansible-builder create on ee/execution-environment.yml, introspect on the collection
ee: bootstrap-nolab
	ansible-galaxy collection build --force --output-path $(TOP)/.build >/dev/null
	mkdir -p $(LOGS) && $(VENV)/bin/python -m pytest -p no:cacheprovider -q --junitxml=$(LOGS)/verify-ee.xml tests/ee

# the ecosystem's own tools on the collection, no container engine (tests/ecosystem; tools from .venv-ecosystem):
# antsibull-docs lint-collection-docs and a docs site with every page checked, antsibull-changelog lint/generate and a
# trial release, the built tarball installed into a venv with only ansible-core (ansible-doc for everything, collection
# verify, a facts play on localhost), galaxy-importer on the tarball with no warning
ecosystem: bootstrap-nolab
	mkdir -p $(LOGS) && $(VENV)/bin/python -m pytest -p no:cacheprovider -q -n 2 --dist loadgroup --junitxml=$(LOGS)/verify-ecosystem.xml tests/ecosystem

# the subnet_manager role's files under real OpenSM on ibsim's simulated fabric (tests/ib; about a minute, no root, no VM)
ib: bootstrap-nolab
	mkdir -p $(LOGS) && $(VENV)/bin/python -m pytest -p no:cacheprovider -q -n 2 --junitxml=$(LOGS)/verify-ib.xml tests/ib

# the topology role against the programs that read its output, on this machine (tests/topology, tests/slurm,
# tests/lldp; about two minutes, root): OpenSM and ibnetdiscover on ibsim fabrics, the real slurmctld of Debian 12
# and of Debian 13 (in a root filesystem that tests/support/trixie_root.py builds once and keeps in LAB_CACHE)
# loading the Slurm files, lldpd in network namespaces
topology: bootstrap-nolab
	mkdir -p $(LOGS) && $(VENV)/bin/python -m pytest -p no:cacheprovider -q -n 2 --dist loadfile --junitxml=$(LOGS)/verify-topology.xml \
		tests/slurm tests/lldp tests/topology

# nic_firmware against the real mstconfig (Debian's mstflint) on this machine, which has no Mellanox device (tests/firmware)
firmware: bootstrap-nolab
	mkdir -p $(LOGS) && $(VENV)/bin/python -m pytest -p no:cacheprovider -q --junitxml=$(LOGS)/verify-firmware.xml tests/firmware

molecule: bootstrap
	mkdir -p $(LOGS) && cd $(TOP) && PYTEST_ADDOPTS="--junitxml=$(LOGS)/verify-default.xml" molecule test

# the containers scenario, against the Docker engines of two lab VMs of their own
# (.lab-containers, SSH ports 2722-2723)
molecule-containers: bootstrap
	mkdir -p $(LOGS) && PYTEST_ADDOPTS="--junitxml=$(LOGS)/verify-containers.xml" tools/molecule-containers

# the scale scenario: 16 RDMA hosts (namespaces around an sshd and an rxe of their own, lab/hosts.sh)
# on two VMs with the kernel of trixie-backports (.lab-scale, SSH ports 2522-2523)
molecule-scale: bootstrap
	mkdir -p $(LOGS) && cd $(TOP) && PYTEST_ADDOPTS="--junitxml=$(LOGS)/verify-scale.xml" molecule test -s scale

# the path a new user takes first: labctl's output contract on an empty image cache
# (a stand-in recipe) and tools/demo end to end on the VMs it boots (.lab-firstrun,
# SSH ports 2822-2823); tests/firstrun/test_first_run.py
first-run: bootstrap
	mkdir -p $(LOGS) && python -m pytest -p no:cacheprovider -v -rA --junitxml=$(LOGS)/verify-first-run.xml tests/firstrun

# the RDMA netns modes on the kernel of trixie-backports: two namespace hosts (lab/hosts.sh) on one VM, RDMA-CM and verbs
# between them in shared mode, then exclusive mode (persisted, one reboot): each host sees only its own device, verbs
# pass, rping's failure is reported as the known kernel limit; removing a namespace removes its device
# (.lab-netns, SSH port 2922); tests/netns/test_netns.py
netns: bootstrap
	mkdir -p $(LOGS) && python -m pytest -p no:cacheprovider -v -rA --junitxml=$(LOGS)/verify-netns.xml tests/netns

build: bootstrap-nolab
	ansible-galaxy collection build --force --output-path $(TOP)/.build

# --- the lab -------------------------------------------------------------------
lab-image: bootstrap
	@lab/labctl image

lab-up: bootstrap
	@lab/labctl up

lab-down:
	@lab/labctl down

lab-status:
	@lab/labctl status

demo: bootstrap
	@tools/demo

# every benchmark of benchmarks/README.md (about an hour; not part of `make test`)
bench: bootstrap
	@tools/bench

# the fleet at 2 to 32 hosts of the scale lab (hours here; not part of `make test`): the table and plot of
# benchmarks/README.md, the figures in benchmarks/scale.json. SCALE_HOSTS=2,4,8 for fewer.
scale: bootstrap
	@$(VENV)/bin/python benchmarks/scale_bench.py --hosts $(or $(SCALE_HOSTS),2$(comma)4$(comma)8$(comma)16$(comma)32) \
		--json benchmarks/scale.json --readme benchmarks/README.md
