# tools/bench/keys: what a hot key costs a function point and a guarded
# call, and how exact a point's top keys are (keys_bench.py, make
# keys-bench, part of make bench).  Included by tools/bench/bench.mk.

BENCH_BINS += $(BENCH_DIR)/bench-keys

# kb_fn on a nop5 site, as ../probe/fn_nop5.c; the rest plain -O2, non-PIE
# to match, libsds linked in statically (the guard mode).
$(BENCH_DIR)/keys_fn.o: tools/bench/keys/keys_fn.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie -pg -mfentry -mnop-mcount -fcf-protection=none \
		-falign-functions=64 $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/bench-keys: tools/bench/keys/keys_target.c $(BENCH_DIR)/keys_fn.o \
		$(LIBSDS_A) $(LIBSDS_HEADER)
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie -no-pie -D_GNU_SOURCE $(BENCH_WARN) \
		-I$(BUILD)/include -pthread -o $@ $< $(BENCH_DIR)/keys_fn.o \
		$(LIBSDS_A) -lm

.PHONY: keys-bench
keys-bench: all $(BENCH_DIR)/bench-keys
	$(PYTHON) tools/bench/keys/keys_bench.py
