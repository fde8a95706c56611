# rdma.fabric: the two entry points are `make demo` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

TOP       := $(CURDIR)
VENV      := $(TOP)/.venv
export PATH := $(VENV)/bin:$(PATH)
export ANSIBLE_COLLECTIONS_PATH := $(TOP)/.build/collections
export ANSIBLE_CONFIG := $(TOP)/ansible.cfg
export PYTHONPATH := $(TOP)/.build/collections
COLL      := $(TOP)/.build/test/ansible_collections/rdma/fabric
PYVER      = $$($(VENV)/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')

.PHONY: help demo test bootstrap bootstrap-nolab sanity lint units molecule lab-up lab-down lab-status lab-image collection build docs-check

help:
	@echo "make demo    boot the lab VMs, provision them with rdma.fabric, check the fabric, print a report"
	@echo "make test    sanity + lint + unit tests + the lab's molecule scenario"
	@echo "more: lab-up lab-down lab-status lab-image sanity lint units molecule build"

bootstrap:
	@tools/bootstrap

bootstrap-nolab:
	@tools/bootstrap --no-lab

# --- the collection, copied where ansible-test wants it ------------------------
collection: bootstrap-nolab
	@rm -rf $(COLL) && mkdir -p $(COLL)
	@git ls-files -z --cached --others --exclude-standard | \
	  while IFS= read -r -d '' f; do [[ -e $$f ]] && printf '%s\0' "$$f"; done | \
	  tar --null -T - -cf - | tar -xf - -C $(COLL)
	@# ansible-test lists files with git; the copy is its own repository so that it sees them.
	@cd $(COLL) && git init -q && git add -A

# --- tests ---------------------------------------------------------------------
test: bootstrap
	@tools/timed "sanity" $(MAKE) --no-print-directory sanity
	@tools/timed "lint" $(MAKE) --no-print-directory lint
	@tools/timed "units" $(MAKE) --no-print-directory units
	@tools/timed "molecule" $(MAKE) --no-print-directory molecule

sanity: collection
	cd $(COLL) && ansible-test sanity --venv --python $(PYVER) --color no

units: collection
	cd $(COLL) && ansible-test units --venv --python $(PYVER) --color no --num-workers 2

lint: bootstrap-nolab
	ansible-lint --profile production --offline

molecule: bootstrap
	cd $(TOP) && molecule test

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
