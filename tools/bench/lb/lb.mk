# tools/bench/lb/lb.mk: ns per pick of the balancing policies
# (libsds/balance.c) and of the API (libsds/lb.c), included by
# tools/bench/bench.mk.
#
#   make lb-bench    each policy over 3, 16 and 128 providers, one thread
#                    and two, beside rand() % n: medians of alternating
#                    rounds, as two tables, the core's and the API's
#                    (docs/BALANCE.md); make bench runs it too
#
# Linked with build/lib/libsds.a, so it times the library's own objects
# (their symbols are hidden from the .so, not from a static link).

LB_BENCH := $(BUILD)/bench/lb_pick

# The API's rows read a flags region that the tests' stand-in loader
# serves (tests/libsds/fake/fakeloader.c, with the loader's writer flags.c).
$(LB_BENCH): tools/bench/lb/lb_pick.c $(LIBSDS_A) libsds/balance.h libsds/sds.h \
		tests/libsds/fake/fakeloader.c tests/libsds/fake/fakeloader.h loader/publish/flags.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilibsds -Itests/libsds/fake -O2 -g $(WARN) -std=gnu11 -pthread \
		-o $@ $< tests/libsds/fake/fakeloader.c loader/publish/flags.c $(LIBSDS_A) -lbpf

.PHONY: lb-bench
lb-bench: $(LB_BENCH)
	$(LB_BENCH)
