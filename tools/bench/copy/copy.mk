# tools/bench/copy: what traffic copy costs a call (copy_cost.py) and the
# rate sds-copy dispatches at (copy.py; its copy_load is built by the root
# copy/copy.mk, make copy-bench).  Included by tools/bench/bench.mk.

# The copy-cost benchmark's target: the loop plain -O2, handle_request
# built for a nop5 site as tools/bench/probe/fn_nop5.c is.
BENCH_BINS += $(BENCH_DIR)/bench-copy-target

$(BENCH_DIR)/copy_fn.o: tools/bench/copy/copy_fn.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie -pg -mfentry -mnop-mcount -fcf-protection=none \
		-falign-functions=64 $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/copy_target.o: tools/bench/copy/copy_target.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/bench-copy-target: $(BENCH_DIR)/copy_target.o $(BENCH_DIR)/copy_fn.o
	$(CC) -no-pie -o $@ $^

# make copy-cost-bench: what copying a function point's request costs per
# call (tools/bench/copy/copy_cost.py, also run by tools/bench/probe/run.sh).
# Root.
.PHONY: copy-cost-bench
copy-cost-bench: $(BENCH_DIR)/bench-copy-target
	python3 tools/bench/copy/copy_cost.py
