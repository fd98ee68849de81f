# tools/bench/baseline: the probes sds-bpf's are measured against (the
# bare uprobe + uretprobe pair, two bare uprobes, the session floor).
# Included by tools/bench/bench.mk.

BENCH_BINS += $(BENCH_DIR)/bench-bare $(BENCH_DIR)/bench-floor \
	      $(BENCH_DIR)/bench-bare-up

# The bare uprobe + uretprobe pair: tiny BPF object, skeleton, loader.
$(BENCH_DIR)/bare.bpf.o: tools/bench/baseline/bare.bpf.c $(GEN)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -I$(GEN) -c $< -o $@

$(BENCH_DIR)/bare.skel.h: $(BENCH_DIR)/bare.bpf.o
	$(BPFTOOL) gen skeleton $< name bare_bpf > $@.tmp
	mv $@.tmp $@

$(BENCH_DIR)/bench-bare: tools/bench/baseline/bare.c tools/bench/baseline/bare_counts.h \
		tools/bench/baseline/bench_probe.h \
		$(BENCH_DIR)/bare.skel.h common/preempt.c
	$(CC) -O2 -g $(BENCH_WARN) -I$(BENCH_DIR) -Icommon -o $@ $< \
		common/preempt.c -lbpf -lelf -lz

# The session floor (issue 14): counter, two clock reads and a histogram
# on one uprobe session, nothing else (floor.bpf.c, floor.c).
$(BENCH_DIR)/floor.bpf.o: tools/bench/baseline/floor.bpf.c bpf/sds_common.bpf.h $(GEN)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -I$(GEN) -Ibpf -c $< -o $@

$(BENCH_DIR)/floor.skel.h: $(BENCH_DIR)/floor.bpf.o
	$(BPFTOOL) gen skeleton $< name floor_bpf > $@.tmp
	mv $@.tmp $@

$(BENCH_DIR)/bench-floor: tools/bench/baseline/floor.c common/upsession.h \
		tools/bench/baseline/bench_probe.h \
		$(BENCH_DIR)/floor.skel.h common/preempt.c
	$(CC) -O2 -g $(BENCH_WARN) -I$(BENCH_DIR) -Icommon -o $@ $< \
		common/preempt.c -lbpf -lelf -lz

# bench-bare-up: two bare uprobes, the programs of bare.bpf.c attached as
# plain uprobes to two of bench-guard's nop5 sites (tools/bench/guard).
$(BENCH_DIR)/bench-bare-up: tools/bench/baseline/bare_up.c tools/bench/baseline/bare_counts.h \
		tools/bench/baseline/bench_probe.h \
		$(BENCH_DIR)/bare.skel.h common/preempt.c
	$(CC) -O2 -g $(BENCH_WARN) -I$(BENCH_DIR) -Icommon -o $@ $< \
		common/preempt.c -lbpf -lelf -lz
