# tools/bench/exact: exact trips (issue 14), the budget's cost per guarded
# call and the overshoot beyond visit_threshold with the budget off and on
# (exact_bench.py; `make exact-bench`, root: it attaches).  Included by
# tools/bench/bench.mk.

BENCH_BINS += $(BENCH_DIR)/bench-exact-cost $(BENCH_DIR)/bench-exact-decide

# The decision alone, on a region laid out in memory (no loader, no probes).
# Both share the thread harness (bench_threads.c).
$(BENCH_DIR)/bench-exact-decide: tools/bench/exact/exact_decide.c libsds/guard.c \
		loader/publish/flags.c tools/bench/exact/bench_threads.c \
		tools/bench/exact/bench_threads.h \
		$(wildcard libsds/*.h bpf/*.h loader/publish/flags.h)
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) $(CPPFLAGS) -Ilibsds -o $@ $< \
		libsds/guard.c loader/publish/flags.c tools/bench/exact/bench_threads.c \
		-lbpf -lpthread

$(BENCH_DIR)/bench-exact-cost: tools/bench/exact/exact_cost.c tools/bench/exact/bench_threads.c \
		tools/bench/exact/bench_threads.h $(BUILD)/include/sds.h $(BUILD)/lib/libsds.a
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) -I$(BUILD)/include -o $@ $< \
		tools/bench/exact/bench_threads.c $(BUILD)/lib/libsds.a -lpthread

.PHONY: exact-bench
exact-bench: all $(BENCH_DIR)/bench-exact-cost $(BENCH_DIR)/bench-exact-decide \
		$(BUILD)/test/targets/exactapp
	$(PYTHON) tools/bench/exact/exact_bench.py
