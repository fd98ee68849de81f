# tools/bench/probe: per-call cost of a function point on three kinds of
# probe site (run.sh, the first tables of make bench).  Included by
# tools/bench/bench.mk.

BENCH_BINS += $(BENCH_DIR)/bench-stepped $(BENCH_DIR)/bench-endbr \
	      $(BENCH_DIR)/bench-nop5

# The drivers: the same loop, linked with bench_fn built three ways.  Only
# the function's object carries the site's flags; the loop is plain -O2.
$(BENCH_DIR)/driver.o: tools/bench/probe/driver.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/driver-nopie.o: tools/bench/probe/driver.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie $(BENCH_WARN) -c $< -o $@

# (1) first instruction single-stepped: hand-written "mov %edi,%eax".
$(BENCH_DIR)/fn_stepped.o: tools/bench/probe/fn_stepped.S
	@mkdir -p $(@D)
	$(CC) -c $< -o $@

# (2) endbr64; push %rbp.
$(BENCH_DIR)/fn_endbr.o: tools/bench/probe/fn_endbr.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fcf-protection -fno-omit-frame-pointer \
		-falign-functions=64 \
		$(BENCH_WARN) -c $< -o $@

# (3) nop5 from -pg -mfentry -mnop-mcount; no CET so the NOP comes first,
# aligned so it cannot cross a page; non-PIE, linked without -pg.
$(BENCH_DIR)/fn_nop5.o: tools/bench/probe/fn_nop5.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie -pg -mfentry -mnop-mcount -fcf-protection=none \
		-falign-functions=64 $(BENCH_WARN) -c $< -o $@

$(BENCH_DIR)/bench-stepped: $(BENCH_DIR)/driver.o $(BENCH_DIR)/fn_stepped.o
	$(CC) -o $@ $^

$(BENCH_DIR)/bench-endbr: $(BENCH_DIR)/driver.o $(BENCH_DIR)/fn_endbr.o
	$(CC) -o $@ $^

$(BENCH_DIR)/bench-nop5: $(BENCH_DIR)/driver-nopie.o $(BENCH_DIR)/fn_nop5.o
	$(CC) -no-pie -o $@ $^

# ---- nocost: the idle guard and sds_copy() off, ns per call (run.sh) -------
# Built by tests/libsds/libsds.mk (libsds-test runs it for its decisions
# alone, with few calls); its 5-ns targets are measured here.
BENCH_BINS += $(BUILD)/test/libsds/nocost

# ---- the cost breakdown's variant loaders (run.sh, on the nop5 site) -------
include tools/bench/probe/variants/variants.mk
