# tools/bench/multilink: one session link per point (the loader's way) or
# one link for all the points of a binary (issue 14).  Included by
# tools/bench/bench.mk.

# The floor's program (tools/bench/baseline) on N of 64 nop5 functions of
# the bench binary itself (multilink.c, multilink_fns.c).
BENCH_BINS += $(BENCH_DIR)/bench-multilink

$(BENCH_DIR)/multilink_fns.o: tools/bench/multilink/multilink_fns.c tools/bench/multilink/multilink.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie -pg -mfentry -mnop-mcount -fcf-protection=none \
		-falign-functions=64 $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/bench-multilink: tools/bench/multilink/multilink.c tools/bench/multilink/multilink.h \
		common/upsession.h tools/bench/baseline/bench_probe.h \
		$(BENCH_DIR)/floor.skel.h $(BENCH_DIR)/multilink_fns.o common/preempt.c
	$(CC) -O2 -g -fno-pie -no-pie $(BENCH_WARN) -I$(BENCH_DIR) -Icommon \
		-Itools/bench/baseline -pthread -o $@ $< $(BENCH_DIR)/multilink_fns.o \
		common/preempt.c -lbpf -lelf -lz

# make multilink-bench: attach and detach time, fds and ns per call both
# ways, in the same rounds, and detach by threads closing the links at once
# (tools/bench/multilink/multilink.py).  Root; ~4 minutes;
# `tools/bench/multilink/multilink.py --only detach` runs the attach and
# detach rounds alone (~2 minutes).
.PHONY: multilink-bench
multilink-bench: $(BENCH_DIR)/bench-multilink
	$(PYTHON) tools/bench/multilink/multilink.py
