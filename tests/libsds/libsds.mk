# Tests of libsds (tests/libsds/), included by libsds/libsds.mk.
# `make libsds-test` (`make test` runs them from tests/suites.py) builds them
# under build/test/libsds (tests/libsds/FOLDER/test_X.c into
# build/test/libsds/test_X; each folder's README says what it holds) and
# runs them:
#
#   test_guard     the decision logic on a region laid out by the test
#                  (ASan + UBSan)
#   test_limits    its exact limits: semaphore, token bucket (ASan + UBSan)
#   test_budget    exact trips' side of the decision: the visit claim,
#                  the exception mark, forgeries (ASan + UBSan)
#   test_drill     the drill part of that decision (ASan + UBSan)
#   test_balance   the balancing policies (libsds/balance.c): each
#                  against its definition, exact or within a stated
#                  statistical bound (ASan + UBSan)
#   test_balance_hash  the consistent hash and its ring
#                  (libsds/balance_hash.c), XXH64 (ASan + UBSan)
#   test_noloader  the whole library, real sites, no loader (ASan + UBSan)
#   test_client    the library against a stand-in loader, with counting
#                  sites in place of sites.S (ASan + UBSan)
#   test_client_life  the same, the loader's life: stale, dead, late,
#                  replaced; fork (ASan + UBSan)
#   test_lb        the balancing API of sds.h (libsds/lb.c) against
#                  the stand-in loader: picks on the published load,
#                  bad input (ASan + UBSan)
#   test_lb_call   the same API's retry helper: retries, budget,
#                  per-attempt timeout (ASan + UBSan)
#   test_lb_ext    the same API with policies of the extension registry:
#                  a plugin built here and named in a manifest, a
#                  wrapper, wrong answers refused (ASan + UBSan)
#   test_copy      sds_copy() against the stand-in loader and the
#                  loader's flags__set_copy(), counting sites (ASan + UBSan)
#   test_fork      the fork repair of the real sites: /proc/self/mem,
#                  mprotect, neither (ASan + UBSan)
#   test_sites     the built products: sites, notes, exports, and programs
#                  linked with them (PIE, non-PIE, gc-sections, stripped,
#                  shared through pkg-config)
#   nocost         the built library's decisions (-O2, real sites): no
#                  loader, passing, downgraded, sds_copy() off; run here
#                  with few calls, failing only on a wrong decision.  Its
#                  ns per call and 5-ns targets are make bench's
#                  (tools/bench/probe/run.sh), never a test's

LT_DIR     := $(TBUILD)/libsds
LT_SRC     := tests/libsds
LT_SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer \
	      -fno-sanitize-recover=all
LT_CFLAGS  := -O1 -g $(WARN) -std=gnu11 -pthread
# -I$(LT_SRC): the stand-in loader is included as "fake/fakeloader.h".
LT_CPP     := $(CPPFLAGS) -Ilibsds -I$(LT_SRC)
LT_DEPS    := $(LIBSDS_HDRS) $(wildcard $(LT_SRC)/*/*.h)

# The library's sources, built again with the sanitizers: each source
# (the library's, the stand-in loader's, the tests' mains) is compiled once
# into $(LT_DIR)/obj (-MMD -MP: a header change rebuilds what includes
# it) and linked by every test that uses it.
LT_LIB_SRCS := $(LIBSDS_CSRCS)
LT_OBJ      := $(LT_DIR)/obj
lt_objs      = $(patsubst %,$(LT_OBJ)/%.o,$(basename $(1)))

$(LT_OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(LT_CPP) $(LT_CFLAGS) $(LT_SAN) -MMD -MP -c $< -o $@

$(LT_OBJ)/%.o: %.S
	@mkdir -p $(@D)
	$(CC) $(LT_CPP) $(LT_CFLAGS) $(LT_SAN) -c $< -o $@

# $(filter %.o,$^): the objects, in the order the prerequisites name them.
$(LT_DIR)/test_guard $(LT_DIR)/test_limits $(LT_DIR)/test_budget $(LT_DIR)/test_drill: \
		$(LT_DIR)/%: $(LT_OBJ)/$(LT_SRC)/guard/%.o $(call lt_objs,libsds/guard.c loader/publish/flags.c)
	@mkdir -p $(@D)
	$(CC) $(LT_CFLAGS) $(LT_SAN) -o $@ $(filter %.o,$^) -lcmocka -lm -lbpf

$(LT_DIR)/test_balance $(LT_DIR)/test_balance_hash: $(LT_DIR)/%: $(LT_OBJ)/$(LT_SRC)/balance/%.o \
		$(call lt_objs,libsds/balance.c libsds/balance_hash.c)
	@mkdir -p $(@D)
	$(CC) $(LT_CFLAGS) $(LT_SAN) -o $@ $(filter %.o,$^) -lcmocka -lm -ldl

$(LT_DIR)/test_noloader $(LT_DIR)/test_fork: $(LT_DIR)/%: $(LT_OBJ)/$(LT_SRC)/sites/%.o \
		$(call lt_objs,$(LT_LIB_SRCS) libsds/sites.S)
	@mkdir -p $(@D)
	$(CC) $(LT_CFLAGS) $(LT_SAN) -o $@ $(filter %.o,$^) -lcmocka

# The tests against the stand-in loader (fake/): each its own binary, one
# fixture; client/'s and lb/'s alike.
LT_FAKE := $(LT_SRC)/fake/client_fixture.c $(LT_SRC)/fake/fakeloader.c \
	   $(LT_SRC)/fake/fake_sites.c loader/publish/flags.c
LT_FAKE_LINK = $(CC) $(LT_CFLAGS) $(LT_SAN) -o $@ $(filter %.o,$^) -lcmocka -lbpf -lm -ldl

$(LT_DIR)/test_client $(LT_DIR)/test_client_life $(LT_DIR)/test_copy: \
		$(LT_DIR)/%: $(LT_OBJ)/$(LT_SRC)/client/%.o $(call lt_objs,$(LT_FAKE) $(LT_LIB_SRCS))
	@mkdir -p $(@D)
	$(LT_FAKE_LINK)

$(LT_DIR)/test_lb $(LT_DIR)/test_lb_call $(LT_DIR)/test_lb_ext: \
		$(LT_DIR)/%: $(LT_OBJ)/$(LT_SRC)/lb/%.o $(call lt_objs,$(LT_FAKE) $(LT_LIB_SRCS))
	@mkdir -p $(@D)
	$(LT_FAKE_LINK)

-include $(patsubst %.o,%.d,$(call lt_objs,$(sort $(LT_LIB_SRCS) $(LT_FAKE) \
	$(wildcard $(LT_SRC)/*/test_*.c))))

# test_lb_ext builds its plugins from tests/unit/common/ext_plugin.c, as a
# user would.
$(LT_DIR)/test_lb_ext: tests/unit/common/ext_plugin.c libsds/sds_ext.h

# Programs linked with the products, as users link them.
LT_PC := PKG_CONFIG_PATH=$(BUILD)/lib/pkgconfig $(PKG_CONFIG)

$(LT_DIR)/linked_pie: $(LT_SRC)/sites/linked.c $(LIBSDS_A) $(LIBSDS_HEADER) $(LIBSDS_PC)
	@mkdir -p $(@D)
	$(CC) -O2 -g -fPIE -pie $$($(LT_PC) --cflags sds) -o $@ $< \
		$(LIBSDS_A) -lpthread

$(LT_DIR)/linked_nopie: $(LT_SRC)/sites/linked.c $(LIBSDS_A) $(LIBSDS_HEADER) $(LIBSDS_PC)
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-pie -no-pie $$($(LT_PC) --cflags sds) -o $@ $< \
		$(LIBSDS_A) -lpthread

$(LT_DIR)/linked_gc: $(LT_SRC)/sites/linked.c $(LIBSDS_A) $(LIBSDS_HEADER) $(LIBSDS_PC)
	@mkdir -p $(@D)
	$(CC) -O2 -g -ffunction-sections -fdata-sections -Wl,--gc-sections \
		$$($(LT_PC) --cflags sds) -o $@ $< $(LIBSDS_A) -lpthread

$(LT_DIR)/linked_stripped: $(LT_DIR)/linked_pie
	$(STRIP) -o $@ $<

# Through pkg-config, against libsds.so (its rpath is in Libs).
$(LT_DIR)/linked_shared: $(LT_SRC)/sites/linked.c $(LIBSDS_SO) $(LIBSDS_HEADER) $(LIBSDS_PC)
	@mkdir -p $(@D)
	$(CC) -O2 -g $$($(LT_PC) --cflags sds) -o $@ $< $$($(LT_PC) --libs sds)

LT_LINKED := $(LT_DIR)/linked_pie $(LT_DIR)/linked_nopie $(LT_DIR)/linked_gc \
	     $(LT_DIR)/linked_stripped $(LT_DIR)/linked_shared

$(LT_DIR)/test_sites: $(LT_SRC)/sites/test_sites.c $(LT_DEPS) $(LT_LINKED) \
		$(LIBSDS_A) $(LIBSDS_SO)
	@mkdir -p $(@D)
	$(CC) $(LT_CPP) $(LT_CFLAGS) $(LT_SAN) -o $@ $< \
		-DOBJDUMP='"$(OBJDUMP)"' \
		-DSDS_SO='"$(LIBSDS_SO0)"' -DSDS_A='"$(LIBSDS_A)"' \
		-DEXE_PIE='"$(LT_DIR)/linked_pie"' \
		-DEXE_NOPIE='"$(LT_DIR)/linked_nopie"' \
		-DEXE_GC='"$(LT_DIR)/linked_gc"' \
		-DEXE_STRIPPED='"$(LT_DIR)/linked_stripped"' \
		-DEXE_SHARED='"$(LT_DIR)/linked_shared"' \
		-lcmocka -lelf

$(LT_DIR)/nocost: $(LT_SRC)/sites/nocost.c $(LT_SRC)/fake/fakeloader.c loader/publish/flags.c \
		$(LIBSDS_A) $(LIBSDS_HEADER) $(LT_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I$(BUILD)/include -I$(LT_SRC) -O2 -g $(WARN) \
		-std=gnu11 -pthread -o $@ $< $(LT_SRC)/fake/fakeloader.c loader/publish/flags.c \
		$(LIBSDS_A) -lbpf

LT_TESTS := $(LT_DIR)/test_guard $(LT_DIR)/test_limits $(LT_DIR)/test_budget $(LT_DIR)/test_drill \
	    $(LT_DIR)/test_balance $(LT_DIR)/test_balance_hash $(LT_DIR)/test_noloader \
	    $(LT_DIR)/test_fork $(LT_DIR)/test_client $(LT_DIR)/test_client_life $(LT_DIR)/test_copy \
	    $(LT_DIR)/test_lb $(LT_DIR)/test_lb_call $(LT_DIR)/test_lb_ext \
	    $(LT_DIR)/test_sites

EXTRA_TESTS += libsds-test

.PHONY: libsds-test libsds-tests
libsds-tests: $(LT_TESTS) $(LT_DIR)/nocost

libsds-test: $(LIBSDS_HEADER) $(LIBSDS_A) $(LIBSDS_SO) $(LIBSDS_PC) libsds-tests
	@set -e; for t in $(LT_TESTS); do echo "== $$t"; $$t; done
	@echo "== $(LT_DIR)/nocost 100000"; $(LT_DIR)/nocost 100000
