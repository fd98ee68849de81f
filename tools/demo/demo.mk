# tools/demo: the demo service sds-bpf attaches to, and its load generator
# (make demo).  Included by the root Makefile; defines DEMO_BINS and their
# rules.  LIBSDS_A and LIBSDS_HEADER come from libsds/libsds.mk.

BUILD ?= build
CC    ?= gcc

DEMO_BINS := $(BUILD)/demo/demo $(BUILD)/demo/demo-load $(BUILD)/demo/lb-demo
DEMO_WARN := -Wall -Wextra -Wno-unused-parameter

# An ordinary build of an ordinary program: -O2 -g, the distribution's
# defaults (PIE), nothing done for the probes' sake; libsds linked in
# statically, so the guard points are in the executable itself.
$(BUILD)/demo/demo: tools/demo/demo.c $(LIBSDS_A) $(LIBSDS_HEADER)
	@mkdir -p $(@D)
	$(CC) -O2 -g -D_GNU_SOURCE $(DEMO_WARN) -I$(BUILD)/include -pthread \
		-o $@ $< $(LIBSDS_A)

# The balancing demo's service and its three providers (make demo-lb).
$(BUILD)/demo/lb-demo: tools/demo/lb_demo.c $(LIBSDS_A) $(LIBSDS_HEADER)
	@mkdir -p $(@D)
	$(CC) -O2 -g -D_GNU_SOURCE $(DEMO_WARN) -I$(BUILD)/include -pthread \
		-o $@ $< $(LIBSDS_A)

$(BUILD)/demo/demo-load: tools/demo/load.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -D_GNU_SOURCE $(DEMO_WARN) -pthread -o $@ $<

# Traffic copy, live (tools/demo/copy_demo.py): a source and a shadow
# instance of the demo, sds-copy sending each captured request 3 times.
# Needs root (BPF), like make demo.
.PHONY: demo-copy
demo-copy: deps
	$(MAKE) all demo-bins
	python3 tools/demo/copy_demo.py

# The same from the dashboard (tools/demo/copy_admin_demo.py): sds-admin,
# sds-copy and the source's loader take their plans from it; the operator
# starts the copy, records and replays.  demo-copy-check scripts those
# steps and checks every count (make test runs the same check, tests/suites.py).
#
# The checks (demo-copy-check, demo-lb-check) take what they run from
# prerequisites (all demo-bins: make test's build phase makes them) and
# never call make; each runs copies of the demo binaries in its temp dir
# and pins under its own SDS_PIN_ROOT (tools/demo/demo_lib.py), so they
# run beside the suites and beside a developer's demo.
EXTRA_TESTS += demo-copy-check
.PHONY: demo-copy-admin demo-copy-check
demo-copy-admin: deps
	$(MAKE) all demo-bins
	python3 tools/demo/copy_admin_demo.py

demo-copy-check: all demo-bins
	python3 tools/demo/copy_admin_demo.py --check

# Balancing (tools/demo/lb_demo.py, docs/BALANCE.md "The demo"): a service
# balancing "pay" over three providers, one made slow and one failing,
# then healed; a table per second.  demo-lb-check asserts the shares and
# that every call is accounted for, exactly (make test runs it, tests/suites.py: 28 s).
# Needs root (BPF).
EXTRA_TESTS += demo-lb-check
.PHONY: demo-lb demo-lb-check
demo-lb: deps
	$(MAKE) all demo-bins
	python3 tools/demo/lb_demo.py

demo-lb-check: all demo-bins
	python3 tools/demo/lb_demo.py --check

# Fail-fast inside Debian's nginx (tools/demo/ff_demo.py, docs/FAILFAST.md
# "The nginx demo"): a reverse proxy to an upstream that never answers,
# its connect failed fast under the kill switch (502 at once), then the
# kill switch off.  demo-failfast-check asserts every count exactly
# (~7 s); make test runs the same check once, as tests/failfast's
# nginx_demo, not here a second time.  Needs root (BPF) and nginx (make
# deps).
.PHONY: demo-failfast demo-failfast-check
demo-failfast: deps
	$(MAKE) all
	python3 tools/demo/ff_demo.py

demo-failfast-check: all
	python3 tools/demo/ff_demo.py --check

# Several admins on one PostgreSQL (tools/demo/cluster_demo.py, docs/ADMIN.md
# "Several admins"): three sds-admin, two loader hosts, one admin killed and
# restarted mid-run, no period lost; each admin's dashboard shows the same
# data.  demo-cluster-check exits non-zero on any mismatch (~85 s; the same
# scenario is e2e's cluster_admin_killed, so make test does not run it
# twice).  Needs root (BPF) and PostgreSQL 15 (make deps).
.PHONY: demo-cluster demo-cluster-check
demo-cluster: deps
	$(MAKE) all $(TEST_TARGETS)
	python3 tools/demo/cluster_demo.py

demo-cluster-check: deps
	$(MAKE) all $(TEST_TARGETS)
	python3 tools/demo/cluster_demo.py --check
