# Target programs for the integration tests (tests/integration/run.py).
# Included by the root Makefile; BUILD, CC and PYTHON come from there.
#
#   target_pie       PIE (-fPIE -pie)
#   target_nopie     non-PIE (-fno-pie -no-pie)
#   target_lib       PIE linked to libsdstarget.so (rpath $ORIGIN), has `libwork`
#   libsdstarget.so  the shared library holding lib_work()
#   target_stripped  target_pie run through strip: no .symtab
#   target_nop5      non-PIE built with -pg -mfentry -mnop-mcount (linked
#                    without -pg): every function starts with a 5-byte NOP
#   target_endbr     PIE built with -fcf-protection -fno-omit-frame-pointer:
#                    functions start `endbr64; push %rbp`
#   guarded_static   guarded.c linked with libsds.a (tests/guard/run.py)
#   guarded_shared   guarded.c linked with libsds.so through pkg-config,
#                    rpath $ORIGIN then build/lib
#   guarded_shared2  a second copy of guarded_shared, for a second app
#   lbtarget         lbtarget.c linked with libsds.a: a balancer over the
#                    providers of one dependency (tests/balance/run.py)
#   copytarget       handle_request(req, len) called on demand with distinct
#                    bodies (tests/capture: traffic copy)
#   httpsvc          httpsvc.c linked with libsds.a: an HTTP service whose
#                    build b answers one field differently for every tenth
#                    id (tests/copy/t_diff.py: responses and replay --diff)
#   exactapp         exactapp.c linked with libsds.a: numbered calls of one
#                    point at a rate from threads and processes
#                    (tests/exact/run.py, tools/bench/exact)
#   fnexact          fn_point() called on a schedule, the entry time of
#                    each call recorded (tests/exact/fn_run.py)
#   overload         overload.c linked with libsds.a: a guarded service in
#                    front of a dependency of fixed capacity, offered an
#                    open-loop load (tests/adaptive, tools/bench/overload)
#   stucktarget      stuck_call() hangs on a pipe until the test lets it
#                    go (tests/stuck/run.py)
#   keytarget        keyed calls: users at fixed rates by integer, string
#                    and buffer keys, unreadable keys, many keys, a key
#                    file (tests/keys/run.py)
#   keyguard         keyguard.c linked with libsds.a: keyed guard calls
#                    (sds_enter_key) of string keys (tests/keys/run.py)
#   keyrate          keyrate.c linked with libsds.a: keyed calls, users at
#                    50/s and user 7 at 5,000/s, through a guard point or a
#                    :failfast= function (tests/keys/limits.py)
#   depsguard        depsguard.c linked with libsds.a: guarded calls that
#                    connect to local servers, and the same outside any
#                    guard (tests/deps)
#   capsvc           capsvc.c linked with libsds.a: a line service of a fixed
#                    capacity (a rate limit), its guard point's latency
#                    growing with the load above it (tests/capture/t_capramp.py)
#   target_many      1,024 functions f0000..f1023 with nop5 entries (as
#                    target_nop5), C generated under build/ by
#                    tests/integration/gen_many.py (the 1,024-point test)

BUILD   ?= build
CC      ?= gcc
STRIP   ?= strip
PYTHON  ?= python3

TT_DIR        := $(BUILD)/test/targets
TT_SRC        := tests/targets
TARGET_CFLAGS := -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE
TARGET_LIBS   := -lpthread

TEST_TARGETS := $(TT_DIR)/target_pie $(TT_DIR)/target_nopie \
		$(TT_DIR)/target_lib $(TT_DIR)/libsdstarget.so \
		$(TT_DIR)/target_stripped $(TT_DIR)/target_nop5 \
		$(TT_DIR)/target_endbr \
		$(TT_DIR)/guarded_static $(TT_DIR)/guarded_shared \
		$(TT_DIR)/guarded_shared2 $(TT_DIR)/target_many \
		$(TT_DIR)/copytarget $(TT_DIR)/lbtarget $(TT_DIR)/exactapp \
		$(TT_DIR)/fnexact $(TT_DIR)/overload $(TT_DIR)/stucktarget \
		$(TT_DIR)/keytarget $(TT_DIR)/keyguard $(TT_DIR)/keyrate $(TT_DIR)/depsguard \
		$(TT_DIR)/httpsvc $(TT_DIR)/capsvc

# Non-PIE, every function starting with a 5-byte NOP (as target_nop5): ~55,000
# probed calls a second cost the test a few % of a CPU, not a stepped
# site's half of one.
$(TT_DIR)/keytarget.o: $(TT_SRC)/keytarget.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -pg -mfentry -mnop-mcount -fno-pie -c -o $@ $<

$(TT_DIR)/keytarget: $(TT_DIR)/keytarget.o
	$(CC) -no-pie -o $@ $<

$(TT_DIR)/copytarget: $(TT_SRC)/copytarget.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -o $@ $<

$(TT_DIR)/fnexact: $(TT_SRC)/fnexact.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -o $@ $<

$(TT_DIR)/stucktarget: $(TT_SRC)/stucktarget.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -o $@ $< -lpthread

$(TT_DIR)/target_pie: $(TT_SRC)/target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -o $@ $< $(TARGET_LIBS)

$(TT_DIR)/target_nopie: $(TT_SRC)/target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fno-pie -no-pie -o $@ $< $(TARGET_LIBS)

$(TT_DIR)/libsdstarget.so: $(TT_SRC)/libsdstarget.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIC -shared -o $@ $<

$(TT_DIR)/target_lib: $(TT_SRC)/target.c $(TT_DIR)/libsdstarget.so
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -DWITH_LIB -fPIE -pie -o $@ $< \
		-L$(TT_DIR) -lsdstarget -Wl,-rpath,'$$ORIGIN' $(TARGET_LIBS)

$(TT_DIR)/target_stripped: $(TT_DIR)/target_pie
	$(STRIP) -o $@ $<

# -pg only when compiling: -mnop-mcount makes the entry a NOP, and linking
# without -pg keeps the profiling runtime out.
$(TT_DIR)/target_nop5.o: $(TT_SRC)/target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fno-pie -pg -mfentry -mnop-mcount -c -o $@ $<

$(TT_DIR)/target_nop5: $(TT_DIR)/target_nop5.o
	$(CC) -no-pie -o $@ $< $(TARGET_LIBS)

$(TT_DIR)/target_endbr: $(TT_SRC)/target.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fcf-protection -fno-omit-frame-pointer \
		-fPIE -pie -o $@ $< $(TARGET_LIBS)

# The guarded targets link the libsds products as users do.
GT_LIBDIR := $(BUILD)/lib
GT_PC     := PKG_CONFIG_PATH=$(GT_LIBDIR)/pkgconfig $(or $(PKG_CONFIG),pkg-config)
GT_SRCS   := $(TT_SRC)/guarded.c $(TT_SRC)/guarded_harm.c $(TT_SRC)/guarded_copy.c
GT_DEPS   := $(GT_SRCS) $(TT_SRC)/guarded.h $(BUILD)/include/sds.h $(GT_LIBDIR)/libsds.a \
	     $(GT_LIBDIR)/libsds.so $(GT_LIBDIR)/pkgconfig/sds.pc

# Keyed guard calls (tests/keys): libsds.a, as guarded_static.
$(TT_DIR)/keyguard: $(TT_SRC)/keyguard.c $(BUILD)/include/sds.h $(GT_LIBDIR)/libsds.a
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -I$(BUILD)/include -o $@ $< \
		$(GT_LIBDIR)/libsds.a $(TARGET_LIBS)

# The response-diff service (tests/copy/t_diff.py): libsds.a, a guard point
# with sds_copy_response() and a :copy_ret= function.
# The ramp tests' shadow of a fixed capacity (tests/capture/t_capramp.py).
$(TT_DIR)/capsvc: $(TT_SRC)/capsvc.c $(BUILD)/include/sds.h $(GT_LIBDIR)/libsds.a
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -I$(BUILD)/include -o $@ $< \
		$(GT_LIBDIR)/libsds.a $(TARGET_LIBS)

$(TT_DIR)/httpsvc: $(TT_SRC)/httpsvc.c $(BUILD)/include/sds.h $(GT_LIBDIR)/libsds.a
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -I$(BUILD)/include -o $@ $< \
		$(GT_LIBDIR)/libsds.a $(TARGET_LIBS)

$(TT_DIR)/guarded_static: $(GT_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -I$(BUILD)/include -o $@ $(GT_SRCS) \
		$(GT_LIBDIR)/libsds.a $(TARGET_LIBS)

$(TT_DIR)/lbtarget: $(TT_SRC)/lbtarget.c $(BUILD)/include/sds.h $(GT_LIBDIR)/libsds.a
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -I$(BUILD)/include -o $@ $< \
		$(GT_LIBDIR)/libsds.a $(TARGET_LIBS)

$(TT_DIR)/overload: $(TT_SRC)/overload.c $(BUILD)/include/sds.h $(GT_LIBDIR)/libsds.a
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -I$(BUILD)/include -o $@ $< \
		$(GT_LIBDIR)/libsds.a $(TARGET_LIBS)

$(TT_DIR)/depsguard: $(TT_SRC)/depsguard.c $(BUILD)/include/sds.h $(GT_LIBDIR)/libsds.a
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -I$(BUILD)/include -o $@ $< \
		$(GT_LIBDIR)/libsds.a $(TARGET_LIBS)

$(TT_DIR)/keyrate: $(TT_SRC)/keyrate.c $(BUILD)/include/sds.h $(GT_LIBDIR)/libsds.a
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -I$(BUILD)/include -o $@ $< \
		$(GT_LIBDIR)/libsds.a $(TARGET_LIBS)

$(TT_DIR)/exactapp: $(TT_SRC)/exactapp.c $(BUILD)/include/sds.h $(GT_LIBDIR)/libsds.a
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -I$(BUILD)/include -o $@ $< \
		$(GT_LIBDIR)/libsds.a $(TARGET_LIBS)

# $ORIGIN first: a copy staged beside its own libsds.so.0 (sdstest.stage,
# in a dir nobody can reach when the checkout is under a 0700 dir) runs
# that one; the build's copy runs build/lib's (pkg-config's rpath).
$(TT_DIR)/guarded_shared $(TT_DIR)/guarded_shared2: $(GT_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie $$($(GT_PC) --cflags sds) -o $@ $(GT_SRCS) \
		-Wl,-rpath,'$$ORIGIN' $$($(GT_PC) --libs sds) $(TARGET_LIBS)

.PHONY: test-targets
test-targets: $(TEST_TARGETS)

# The root Makefile's `integration` rule runs the tests; this only adds
# the targets to what it needs.
integration: $(TEST_TARGETS)

$(TT_DIR)/many.c: tests/integration/gen_many.py
	@mkdir -p $(@D)
	$(PYTHON) $< 1024 > $@.tmp
	mv $@.tmp $@

# nop5 entries (as target_nop5): 1,024 points of cheap probes.
$(TT_DIR)/target_many: $(TT_DIR)/many.c
	$(CC) $(TARGET_CFLAGS) -fno-pie -pg -mfentry -mnop-mcount -c -o $@.o $<
	$(CC) -no-pie -o $@ $@.o
