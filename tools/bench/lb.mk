# tools/bench/lb.mk: ns per pick of the balancing policies
# (userspace/balance.c), included by the root Makefile next to bench.mk.
#
#   make lb-bench    each policy over 3, 16 and 128 providers, one thread
#                    and two, beside rand() % n: medians of alternating
#                    rounds, as a table (docs/BALANCE.md); not (yet) part
#                    of make bench
#
# Linked with build/lib/libsds.a, so it times the library's own objects
# (their symbols are hidden from the .so, not from a static link).

LB_BENCH := $(BUILD)/bench/lb_pick

$(LB_BENCH): tools/bench/lb_pick.c $(LIBSDS_A) userspace/balance.h
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Iuserspace -O2 -g $(WARN) -std=gnu11 -pthread \
		-o $@ $< $(LIBSDS_A)

.PHONY: lb-bench
lb-bench: $(LB_BENCH)
	$(LB_BENCH)
