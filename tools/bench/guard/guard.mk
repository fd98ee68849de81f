# tools/bench/guard: what a libsds guarded call costs, how fast a window
# strategy reacts, whether the exact limits are exact (guard.sh, run by
# make bench after the function points).  Included by tools/bench/bench.mk.

# bench-guard: libsds linked in statically (-O2, PIE, as users build), plus
# four bare nop5 sites; its baseline, bench-bare-up, is tools/bench/baseline's.
BENCH_BINS += $(BENCH_DIR)/bench-guard

# guard.c: options and main; one mode in each of guard_cost.c,
# guard_react.c, guard_exact.c (conc and token).
BENCH_GUARD_SRCS := tools/bench/guard/guard.c tools/bench/guard/guard_cost.c \
	tools/bench/guard/guard_react.c tools/bench/guard/guard_exact.c \
	tools/bench/guard/guard_sites.S
$(BENCH_DIR)/bench-guard: $(BENCH_GUARD_SRCS) tools/bench/guard/bench_guard.h \
		$(LIBSDS_A) $(LIBSDS_HEADER)
	@mkdir -p $(@D)
	$(CC) -O2 -g -D_GNU_SOURCE $(BENCH_WARN) -I$(BUILD)/include -pthread \
		-o $@ $(BENCH_GUARD_SRCS) $(LIBSDS_A)
