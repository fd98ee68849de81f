# tools/bench: per-call cost of a function point (make bench).
# Included by the root Makefile; defines BENCH_BINS and their rules.

BUILD   ?= build
GEN     ?= $(BUILD)/gen
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool

BENCH_DIR  := $(BUILD)/bench
BENCH_WARN := -Wall -Wextra -Wno-unused-parameter
BENCH_BINS := $(BENCH_DIR)/bench-bare $(BENCH_DIR)/bench-stepped \
	      $(BENCH_DIR)/bench-endbr $(BENCH_DIR)/bench-nop5

# The bare uprobe + uretprobe pair: tiny BPF object, skeleton, loader.
$(BENCH_DIR)/bare.bpf.o: tools/bench/bare.bpf.c $(GEN)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -I$(GEN) -c $< -o $@

$(BENCH_DIR)/bare.skel.h: $(BENCH_DIR)/bare.bpf.o
	$(BPFTOOL) gen skeleton $< name bare_bpf > $@.tmp
	mv $@.tmp $@

$(BENCH_DIR)/bench-bare: tools/bench/bare.c tools/bench/bare_counts.h \
		tools/bench/bench_probe.h \
		$(BENCH_DIR)/bare.skel.h common/preempt.c
	$(CC) -O2 -g $(BENCH_WARN) -I$(BENCH_DIR) -Icommon -o $@ $< \
		common/preempt.c -lbpf -lelf -lz

# The session floor (issue 14): counter, two clock reads and a histogram
# on one uprobe session, nothing else (floor.bpf.c, floor.c).
BENCH_BINS += $(BENCH_DIR)/bench-floor

$(BENCH_DIR)/floor.bpf.o: tools/bench/floor.bpf.c bpf/sds_common.bpf.h $(GEN)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -I$(GEN) -Ibpf -c $< -o $@

$(BENCH_DIR)/floor.skel.h: $(BENCH_DIR)/floor.bpf.o
	$(BPFTOOL) gen skeleton $< name floor_bpf > $@.tmp
	mv $@.tmp $@

$(BENCH_DIR)/bench-floor: tools/bench/floor.c common/upsession.h \
		tools/bench/bench_probe.h \
		$(BENCH_DIR)/floor.skel.h common/preempt.c
	$(CC) -O2 -g $(BENCH_WARN) -I$(BENCH_DIR) -Icommon -o $@ $< \
		common/preempt.c -lbpf -lelf -lz

# One session link per point (the loader's way) or one link for all the
# points of a binary (issue 14): the floor's program on N of 64 nop5
# functions of the bench binary itself (multilink.c, multilink_fns.c).
BENCH_BINS += $(BENCH_DIR)/bench-multilink

$(BENCH_DIR)/multilink_fns.o: tools/bench/multilink_fns.c tools/bench/multilink.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie -pg -mfentry -mnop-mcount -fcf-protection=none \
		-falign-functions=64 $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/bench-multilink: tools/bench/multilink.c tools/bench/multilink.h \
		common/upsession.h tools/bench/bench_probe.h \
		$(BENCH_DIR)/floor.skel.h $(BENCH_DIR)/multilink_fns.o common/preempt.c
	$(CC) -O2 -g -fno-pie -no-pie $(BENCH_WARN) -I$(BENCH_DIR) -Icommon \
		-pthread -o $@ $< $(BENCH_DIR)/multilink_fns.o common/preempt.c \
		-lbpf -lelf -lz

# make multilink-bench: attach and detach time, fds and ns per call both
# ways, in the same rounds, and detach by threads closing the links at once
# (tools/bench/multilink.py).  Root; ~4 minutes; `tools/bench/multilink.py
# --only detach` runs the attach and detach rounds alone (~2 minutes).
.PHONY: multilink-bench
multilink-bench: $(BENCH_DIR)/bench-multilink
	$(PYTHON) tools/bench/multilink.py

# The drivers: the same loop, linked with bench_fn built three ways.  Only
# the function's object carries the site's flags; the loop is plain -O2.
$(BENCH_DIR)/driver.o: tools/bench/driver.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/driver-nopie.o: tools/bench/driver.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie $(BENCH_WARN) -c $< -o $@

# (1) first instruction single-stepped: hand-written "mov %edi,%eax".
$(BENCH_DIR)/fn_stepped.o: tools/bench/fn_stepped.S
	@mkdir -p $(@D)
	$(CC) -c $< -o $@

# (2) endbr64; push %rbp.
$(BENCH_DIR)/fn_endbr.o: tools/bench/fn_endbr.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fcf-protection -fno-omit-frame-pointer \
		-falign-functions=64 \
		$(BENCH_WARN) -c $< -o $@

# (3) nop5 from -pg -mfentry -mnop-mcount; no CET so the NOP comes first,
# aligned so it cannot cross a page; non-PIE, linked without -pg.
$(BENCH_DIR)/fn_nop5.o: tools/bench/fn_nop5.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie -pg -mfentry -mnop-mcount -fcf-protection=none \
		-falign-functions=64 $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/bench-stepped: $(BENCH_DIR)/driver.o $(BENCH_DIR)/fn_stepped.o
	$(CC) -o $@ $^

$(BENCH_DIR)/bench-endbr: $(BENCH_DIR)/driver.o $(BENCH_DIR)/fn_endbr.o
	$(CC) -o $@ $^

$(BENCH_DIR)/bench-nop5: $(BENCH_DIR)/driver-nopie.o $(BENCH_DIR)/fn_nop5.o
	$(CC) -no-pie -o $@ $^

# The copy-cost benchmark's target (tools/bench/copy_cost.py): the loop
# plain -O2, handle_request built for a nop5 site as fn_nop5.o is.
BENCH_BINS += $(BENCH_DIR)/bench-copy-target

$(BENCH_DIR)/copy_fn.o: tools/bench/copy_fn.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie -pg -mfentry -mnop-mcount -fcf-protection=none \
		-falign-functions=64 $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/copy_target.o: tools/bench/copy_target.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/bench-copy-target: $(BENCH_DIR)/copy_target.o $(BENCH_DIR)/copy_fn.o
	$(CC) -no-pie -o $@ $^

# make copy-cost-bench: what copying a function point's request costs per
# call (tools/bench/copy_cost.py, also run by tools/bench/run.sh).  Root.
.PHONY: copy-cost-bench
copy-cost-bench: $(BENCH_DIR)/bench-copy-target
	python3 tools/bench/copy_cost.py

# ---- the guard benchmark (tools/bench/guard.sh, run by run.sh) -------------
# bench-guard: libsds linked in statically (-O2, PIE, as users build), plus
# four bare nop5 sites; bench-bare-up: two bare uprobes, the programs of
# bare.bpf.c attached as plain uprobes to two of those sites.
BENCH_BINS += $(BENCH_DIR)/bench-guard $(BENCH_DIR)/bench-bare-up
# The loader-cost benchmark's target (tools/bench/loader_cost.py).
BENCH_BINS += $(BUILD)/test/targets/target_many

$(BENCH_DIR)/bench-bare-up: tools/bench/bare_up.c tools/bench/bare_counts.h \
		tools/bench/bench_probe.h \
		$(BENCH_DIR)/bare.skel.h common/preempt.c
	$(CC) -O2 -g $(BENCH_WARN) -I$(BENCH_DIR) -Icommon -o $@ $< \
		common/preempt.c -lbpf -lelf -lz

# guard.c: options and main; one mode in each of guard_cost.c,
# guard_react.c, guard_exact.c (conc and token).
BENCH_GUARD_SRCS := tools/bench/guard.c tools/bench/guard_cost.c \
	tools/bench/guard_react.c tools/bench/guard_exact.c tools/bench/guard_sites.S
$(BENCH_DIR)/bench-guard: $(BENCH_GUARD_SRCS) tools/bench/bench_guard.h \
		$(LIBSDS_A) $(LIBSDS_HEADER)
	@mkdir -p $(@D)
	$(CC) -O2 -g -D_GNU_SOURCE $(BENCH_WARN) -I$(BUILD)/include -pthread \
		-o $@ $(BENCH_GUARD_SRCS) $(LIBSDS_A)

# ---- nocost: the idle guard and sds_copy() off, ns per call (run.sh) -------
# Built by tests/libsds/libsds.mk (libsds-test runs it for its decisions
# alone, with few calls); its 5-ns targets are measured here.
BENCH_BINS += $(BUILD)/test/libsds/nocost

# ---- tick lateness under hostile clients (tools/bench/hostile.py) ----------
# Its TARGET and victim is the hostile suite's loop_victim (hostile.mk).
BENCH_BINS += $(BUILD)/test/hostile/loop_victim

# ---- the cost breakdown's variant loaders (run.sh, on the nop5 site) -------
include tools/bench/variants/variants.mk

# Exact trips (issue 14): the budget's cost per guarded call, and the
# overshoot beyond visit_threshold with the budget off and on
# (tools/bench/exact_bench.py; `make exact-bench`, root: it attaches).
BENCH_BINS += $(BENCH_DIR)/bench-exact-cost $(BENCH_DIR)/bench-exact-decide

# The decision alone, on a region laid out in memory (no loader, no probes).
# Both share the thread harness (bench_threads.c).
$(BENCH_DIR)/bench-exact-decide: tools/bench/exact_decide.c libsds/guard.c \
		loader/publish/flags.c tools/bench/bench_threads.c tools/bench/bench_threads.h \
		$(wildcard libsds/*.h bpf/*.h loader/publish/flags.h)
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) $(CPPFLAGS) -Ilibsds -o $@ $< \
		libsds/guard.c loader/publish/flags.c tools/bench/bench_threads.c -lbpf -lpthread

$(BENCH_DIR)/bench-exact-cost: tools/bench/exact_cost.c tools/bench/bench_threads.c \
		tools/bench/bench_threads.h $(BUILD)/include/sds.h $(BUILD)/lib/libsds.a
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) -I$(BUILD)/include -o $@ $< \
		tools/bench/bench_threads.c $(BUILD)/lib/libsds.a -lpthread

.PHONY: exact-bench
exact-bench: all $(BENCH_DIR)/bench-exact-cost $(BENCH_DIR)/bench-exact-decide \
		$(BUILD)/test/targets/exactapp
	$(PYTHON) tools/bench/exact_bench.py

# ---- fail-fast's cgroup programs on connect(2) (tools/bench/ff_connect.py) --
BENCH_BINS += $(BENCH_DIR)/bench-ff-connect

$(BENCH_DIR)/bench-ff-connect: tools/bench/ff_connect.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) -o $@ $<

# The hook alone: an empty cgroup/connect4 program, attached by the script.
BENCH_BINS += $(BENCH_DIR)/ff_empty.bpf.o

$(BENCH_DIR)/ff_empty.bpf.o: tools/bench/ff_empty.bpf.c $(GEN)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -I$(GEN) -c $< -o $@
