# tools/bench/split: what the split's scheduler tracepoints cost a
# context switch (split_bench.py; `make split-bench`, root: it attaches).
# Included by tools/bench/bench.mk.

BENCH_BINS += $(BENCH_DIR)/bench-split-pingpong

$(BENCH_DIR)/bench-split-pingpong: tools/bench/split/pingpong.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) -D_GNU_SOURCE -o $@ $< -lpthread

.PHONY: split-bench
split-bench: all $(BENCH_DIR)/bench-split-pingpong $(BUILD)/test/targets/splitapp
	$(PYTHON) tools/bench/split/split_bench.py
