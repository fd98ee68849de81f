# tools/bench/split: what the split's scheduler tracepoints cost a
# context switch (split_bench.py; `make split-bench`, root: it attaches).
# Included by tools/bench/bench.mk.

BENCH_BINS += $(BENCH_DIR)/bench-split-pingpong $(BENCH_DIR)/bench-split-floor \
	      $(BENCH_DIR)/split-floor.bpf.o

$(BENCH_DIR)/bench-split-pingpong: tools/bench/split/pingpong.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) -D_GNU_SOURCE -o $@ $< -lpthread

# The floor: empty programs on the same tracepoints (floor.bpf.c, floor.c).
$(BENCH_DIR)/split-floor.bpf.o: tools/bench/split/floor.bpf.c $(GEN)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -I$(GEN) -c $< -o $@

$(BENCH_DIR)/bench-split-floor: tools/bench/split/floor.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) -o $@ $< -lbpf -lelf -lz

.PHONY: split-bench
split-bench: all $(BENCH_DIR)/bench-split-pingpong $(BENCH_DIR)/bench-split-floor \
		$(BENCH_DIR)/split-floor.bpf.o $(BUILD)/test/targets/splitapp
	$(PYTHON) tools/bench/split/split_bench.py
