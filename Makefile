# sds-bpf: `make` builds everything into build/; see README.md.
#
#   make          build/bin/sds-bpf and the BPF skeleton (and every product:
#                 libsds, sds-admin, sds-copy, the man pages in build/man)
#   make deps     install the Debian packages (idempotent)
#   make test     deps + one build + every suite in parallel lanes
#                 (tests/suites.py, tests/lanes.py); make test-inventory
#   make bench    deps + build + benchmarks (tools/bench)
#   make demo     deps + build + the demo (tools/demo)
#   make install  [PREFIX=/usr/local] [DESTDIR=]; make uninstall (docs/INSTALL.md)

BUILD      ?= build
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
PYTHON     ?= python3

GEN        := $(BUILD)/gen
OBJ        := $(BUILD)/obj
BIN        := $(BUILD)/bin
TBUILD     := $(BUILD)/test

WARN       := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
CFLAGS     ?= -O2 -g
CPPFLAGS   += -D_GNU_SOURCE -I$(GEN) -Ibpf -Icommon -Iloader
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11
# -liberty: libiberty's C++ and Rust demangler (loader/target/demangle.c);
# -lcapstone: the x86 decoder that finds a function's exits (loader/target/exits.c).
LOADER_LIBS := -lbpf -lelf -lz -ljansson -lcurl -lpthread -lm -liberty -lcapstone

COMMON_SRCS := $(wildcard common/*.c common/*/*.c)
LOADER_SRCS := $(wildcard loader/*/*.c)
# The balancing policies and their registry (--admin-policy, `ext list`).
LOADER_USRC := libsds/balance.c libsds/balance_hash.c libsds/ext_balancer.c
# Pure modules the unit tests link (no BPF, no sockets; not common/hbpost.c,
# libcurl's).
PURE_SRCS   := $(filter-out common/hbpost.c,$(COMMON_SRCS)) loader/pointspec/pointspec.c loader/pointspec/probe.c loader/pointspec/copy.c loader/pointspec/failfast.c loader/pointspec/key.c loader/pointspec/number.c loader/target/site.c loader/target/elfsym.c loader/target/elfaddr.c loader/decide/chain.c loader/decide/budget.c loader/decide/pressure.c loader/decide/keylimit.c loader/decide/drill_stop.c \
	       loader/target/demangle.c loader/target/lang.c loader/target/exits.c loader/target/entry.c loader/target/nothrow.c loader/kernel/calib.c loader/target/debuginfo.c \
	       loader/report/backlog.c loader/report/backlog_load.c loader/target/buildid.c \
	       loader/kernel/counters.c loader/kernel/counters_split.c loader/kernel/snapshot.c loader/decide/engine_eval.c loader/decide/halfopen.c loader/decide/exact.c loader/decide/adaptive.c loader/decide/enforce.c \
	       loader/kernel/stuck.c

# The loader's sources (and the unit tests' mains) under ASan/UBSan, each
# compiled once into $(ASAN_OBJ) and linked by every unit test that uses
# it and by the ASan loader (tests/hostile/hostile.mk): $(call asan_objs,SRCS).
ASAN_OBJ    := $(BUILD)/test/asan
asan_objs    = $(patsubst %.c,$(ASAN_OBJ)/%.o,$(1))

.PHONY: all deps test unit integration bench demo demo-admin clean
# Each part's .mk adds its products to PRODUCTS and its suites' goals to
# EXTRA_TESTS (each builds what its suite needs and runs it alone; `make
# test` runs them all from tests/suites.py instead).
# `include`, never `-include`: a renamed or missing .mk is an error, not a
# suite that silently stops running.
PRODUCTS    := $(BIN)/sds-bpf $(BIN)/sds-copy
EXTRA_TESTS :=
all: products

include packaging/version.mk
include libsds/libsds.mk admin/admin.mk tests/drill/drill.mk tests/hostile/hostile.mk
include tests/crash/crash.mk
include tests/harm/harm.mk
include tests/bindings/bindings.mk
include tests/deploy/deploy.mk
include tests/debuginfo/debuginfo.mk
include copy/copy.mk
include man/man.mk tests/man/man.mk
# After every .mk that adds to PRODUCTS: install's prerequisites.
include packaging/install.mk tests/install/install.mk
include packaging/deb.mk tests/deb/deb.mk tests/cleanroot/cleanroot.mk

deps:
	@sh tools/install-deps.sh

# ---- BPF ------------------------------------------------------------------
$(GEN)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp
	mv $@.tmp $@

# SDS_BPF_VARIANT: bench-only -D switches of bpf/sds.bpf.c, set only by
# tools/bench/probe/variants/variants.mk on the command line of a build of its
# own (under build/bench/variants/); empty in every other build.
SDS_BPF_VARIANT :=
$(GEN)/sds.bpf.o: bpf/sds.bpf.c $(wildcard bpf/*.h) $(GEN)/vmlinux.h
	$(CLANG) -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(GEN) -Ibpf \
		$(SDS_BPF_VARIANT) -c $< -o $@

$(GEN)/sds.skel.h: $(GEN)/sds.bpf.o
	$(BPFTOOL) gen skeleton $< name sds_bpf > $@.tmp
	mv $@.tmp $@

# Traffic copy (bpf/copy.bpf.c): its own object, loaded only when a point
# captures (loader/capture/capture.c).
$(GEN)/copy.bpf.o: bpf/copy.bpf.c bpf/sds_types.h bpf/sds_common.bpf.h $(GEN)/vmlinux.h
	$(CLANG) -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(GEN) -Ibpf \
		-c $< -o $@

$(GEN)/copy.skel.h: $(GEN)/copy.bpf.o
	$(BPFTOOL) gen skeleton $< name sds_copy_bpf > $@.tmp
	mv $@.tmp $@

# Fail-fast (bpf/failfast.bpf.c): BPF LSM programs, loaded only when a
# point has :failfast= (loader/publish/failfast.c).
$(GEN)/failfast.bpf.o: bpf/failfast.bpf.c bpf/sds_types.h bpf/sds_failfast.h bpf/sds_common.bpf.h bpf/sds_frameread.bpf.h $(GEN)/vmlinux.h
	$(CLANG) -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(GEN) -Ibpf \
		-c $< -o $@

$(GEN)/failfast.skel.h: $(GEN)/failfast.bpf.o
	$(BPFTOOL) gen skeleton $< name sds_ff_bpf > $@.tmp
	mv $@.tmp $@

# Delay drills at function points (bpf/delay.bpf.c): cgroup connect hooks
# that mark sockets and a tc egress program that delays their packets,
# loaded only when a point can be drilled so (loader/publish/delaydrill.c).
$(GEN)/delay.bpf.o: bpf/delay.bpf.c bpf/sds_types.h bpf/sds_delay.h bpf/sds_common.bpf.h bpf/sds_frameread.bpf.h $(GEN)/vmlinux.h
	$(CLANG) -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(GEN) -Ibpf \
		-c $< -o $@

$(GEN)/delay.skel.h: $(GEN)/delay.bpf.o
	$(BPFTOOL) gen skeleton $< name sds_dl_bpf > $@.tmp
	mv $@.tmp $@

# Dependencies found by themselves (bpf/deps.bpf.c): cgroup connect hooks,
# a sock_ops program and the sock_send_length raw tracepoint counting each
# point's peers, loaded only by attach --deps (loader/deps/deps.c).
$(GEN)/deps.bpf.o: bpf/deps.bpf.c bpf/sds_types.h bpf/sds_deps.h bpf/sds_common.bpf.h bpf/sds_frameread.bpf.h $(GEN)/vmlinux.h
	$(CLANG) -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(GEN) -Ibpf \
		-c $< -o $@

$(GEN)/deps.skel.h: $(GEN)/deps.bpf.o
	$(BPFTOOL) gen skeleton $< name sds_dp_bpf > $@.tmp
	mv $@.tmp $@

# ---- sds-bpf ----------------------------------------------------------------
LOADER_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(COMMON_SRCS) $(LOADER_SRCS) $(LOADER_USRC))

$(OBJ)/%.o: %.c $(GEN)/sds.skel.h $(GEN)/copy.skel.h $(GEN)/failfast.skel.h $(GEN)/delay.skel.h $(GEN)/deps.skel.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BIN)/sds-bpf: $(LOADER_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LOADER_LIBS)

-include $(LOADER_OBJS:.o=.d)

# ---- tests ------------------------------------------------------------------
SAN        := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# tests/unit/<concept>/test_X.c (its README says what the folder holds)
# is built into $(TBUILD)/unit/test_X, whatever its folder: the binaries'
# names are the sources' (tests/suites.py counts them so).
UNIT_SRCS  := $(wildcard tests/unit/*/test_*.c)
unit_bin    = $(TBUILD)/unit/$(basename $(notdir $(1)))
UNIT_BINS  := $(foreach s,$(UNIT_SRCS),$(call unit_bin,$(s)))

# A unit that links one loader module beside fakes of what it reads
# names the module here: UNIT_EXTRA_<test> (its object is then linked in).
UNIT_EXTRA_test_uplink := loader/report/uplink.c loader/report/uplink_split.c loader/report/uplink_pick.c loader/report/hostid.c $(LOADER_USRC)
UNIT_EXTRA_test_hostid := loader/report/hostid.c
UNIT_EXTRA_test_uplink_split := loader/report/uplink_split.c
UNIT_EXTRA_test_lbpub := loader/publish/lbpub.c
UNIT_EXTRA_test_metrics := loader/report/metrics_text.c
UNIT_EXTRA_test_psi := loader/host/psi.c
UNIT_EXTRA_test_keys_period := loader/keys/keys_period.c
UNIT_EXTRA_test_uplink_pick := loader/report/uplink_pick.c $(LOADER_USRC)
# The registry's first user, the balancing policies; the test builds its
# plugins from tests/unit/common/ext_plugin.c.
UNIT_EXTRA_test_ext := libsds/ext_balancer.c libsds/balance.c libsds/balance_hash.c
$(TBUILD)/unit/test_ext: libsds/ext_balancer.h libsds/sds_ext.h libsds/balance.h \
	tests/unit/common/ext_plugin.c
$(foreach t,$(UNIT_BINS),$(eval $(t): $(call asan_objs,$(UNIT_EXTRA_$(notdir $(t))))))

# One rule for every ASan object: the flags the unit tests always had;
# -MMD -MP: a header change rebuilds what includes it.  The loader's own
# modules include the skeletons and the version header, which must exist
# before their first build (the .d files name them after).
ASAN_OBJS := $(call asan_objs,$(sort $(COMMON_SRCS) $(LOADER_SRCS) $(LOADER_USRC) $(UNIT_SRCS)))
$(ASAN_OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -O1 -g $(WARN) -std=gnu11 $(SAN) -MMD -MP -c $< -o $@
$(call asan_objs,$(filter-out $(PURE_SRCS),$(LOADER_SRCS))): | \
	$(GEN)/sds.skel.h $(GEN)/copy.skel.h $(GEN)/failfast.skel.h $(GEN)/delay.skel.h $(GEN)/deps.skel.h $(SDS_VERSION_H)
-include $(ASAN_OBJS:.o=.d)
# Kept, not deleted as intermediates: the next build relinks nothing.
.SECONDARY: $(ASAN_OBJS)

UNIT_PURE_OBJS := $(call asan_objs,$(PURE_SRCS))
# One rule a unit (its object is under its folder, its binary is not);
# not the copy server's units, which copy/copy.mk builds.
define unit_rule
$(call unit_bin,$(1)): $(call asan_objs,$(1)) $(UNIT_PURE_OBJS)
	@mkdir -p $$(@D)
	$$(CC) -O1 -g $$(SAN) -o $$@ $$< $$(call asan_objs,$$(UNIT_EXTRA_$$(@F))) $$(UNIT_PURE_OBJS) \
		-lcmocka -lelf -lz -ljansson -lm -liberty -lcapstone
endef
$(foreach s,$(filter-out tests/unit/copy/test_copy_%.c,$(UNIT_SRCS)),$(eval $(call unit_rule,$(s))))

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

# Test target programs (tests/targets/Makefile.inc lists them).
include tests/targets/targets.mk
include tests/backlog/backlog.mk
include tests/balance/balance.mk
include tests/capture/capture.mk
include tests/failfast/failfast.mk
include tests/delaydrill/delaydrill.mk
include tests/deps/deps.mk
include tests/exact/exact.mk
include tests/stuck/stuck.mk
include tests/lib/testlib.mk
include tests/probepath/probepath.mk
include tests/split/split.mk
include tests/metrics/metrics.mk

integration: all $(TEST_TARGETS)
	$(PYTHON) tests/integration/run.py

# Guards and strategies (libsds + loader), and loader <-> sds-admin.
.PHONY: guard-tests e2e
guard-tests: all $(TEST_TARGETS)
	$(PYTHON) tests/guard/run.py

e2e: all $(TEST_TARGETS)
	$(PYTHON) tests/e2e/run.py

# Everything any suite's runner needs, built in one make (-j2) so that the
# runners can then be run without re-entering make: the products, every
# test binary and target, the ASan loader and admin, the fuzz binary, the
# demo programs.  Not the .deb or the install staging (their own goals).
.PHONY: test-bins
test-bins: products test-targets $(UNIT_BINS) $(ADMIN_UNIT_BINS) libsds-tests \
	hostile-bins harm-bins bindings-bins deploy-bins $(LOADER_ASAN) $(ADMIN_ASAN) \
	$(FUZZ_BIN) $(DRILL_DIR)/drillapp $(CRASH_DIR)/crashapp $(FF_TARGET) $(FF_LIMIT) $(DL_TARGET) \
	$(GEN)/copy.bpf.o demo-bins

# One build (-j2), then every suite of tests/suites.py in its lane, side
# by side (tests/lanes.py, docs/TESTING.md "Lanes"): no suite re-enters
# make, each runs to its end, and one table at the end says what passed.
.PHONY: test-inventory
test: deps
	$(MAKE) -j2 test-bins deb install-stage
	BUILD=$(BUILD) $(PYTHON) tests/lanes.py

# Every suite and its test count; fails when a runner is in no suite.
test-inventory:
	@BUILD=$(BUILD) $(PYTHON) tests/lanes.py --inventory

.PHONY: products
products: $(PRODUCTS)

# tools/bench/bench.mk includes each benchmark folder's rules (lb/lb.mk too).
include tools/bench/bench.mk tools/demo/demo.mk

# Each run's tables and rounds go to tools/bench/results/<UTC time>/
# (BENCH_OUT); `python3 tools/bench/results.py readme` then writes the
# latest into docs/BENCHMARKS.md's marked sections and the README's summary.
bench: deps
	$(MAKE) all bench-bins demo-bins
	BENCH_OUT=$$($(PYTHON) tools/bench/results.py new) && export BENCH_OUT && \
		sh tools/bench/probe/run.sh && \
		$(MAKE) -s admin-bench | tee $$BENCH_OUT/admin.md && \
		$(MAKE) -s push-bench | tee $$BENCH_OUT/push.md && \
		$(MAKE) -s copy-bench | tee $$BENCH_OUT/copy.txt && \
		$(MAKE) -s exact-bench | tee $$BENCH_OUT/exact.txt && \
		$(MAKE) -s lb-bench | tee $$BENCH_OUT/lb.txt && \
		$(MAKE) -s site-census | tee $$BENCH_OUT/census.md && \
		$(MAKE) -s overload-bench | tee $$BENCH_OUT/overload.md && \
		$(MAKE) -s split-bench | tee $$BENCH_OUT/split.md && \
		$(PYTHON) tools/bench/keys/keys_bench.py && \
		$(PYTHON) tools/bench/failfast/ff_limit.py

demo: deps
	$(MAKE) all demo-bins
	sh tools/demo/run.sh

# The dashboard with live data from the demo service, until Ctrl-C.
demo-admin: deps
	$(MAKE) all demo-bins
	sh tools/demo/admin.sh

.PHONY: bench-bins demo-bins
bench-bins: $(BENCH_BINS)
demo-bins: $(DEMO_BINS)

# tests/cleanroot binds /dev and /proc into roots under $(BUILD)/cleanroot
# and undoes it whatever happens; should one stay (its LEAK line), rm
# must not go through it into the host's /dev.
clean:
	@! grep -qF " $(abspath $(BUILD))/" /proc/self/mountinfo || \
		{ echo "make clean: something is mounted under $(BUILD) (see /proc/self/mountinfo): umount it first" >&2; exit 1; }
	rm -rf --one-file-system $(BUILD)
