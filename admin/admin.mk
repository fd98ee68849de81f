# admin/admin.mk - sds-admin, its tests, fuzzing and benchmark.
# Included by the root Makefile, which defines BUILD, CC, CPPFLAGS, WARN,
# ALL_CFLAGS, PRODUCTS and EXTRA_TESTS.
#
#   make                     build/bin/sds-admin
#   make admin-unit          cmocka units (ASan/UBSan) of the codec, validation, store
#   make admin-integration   the API, heartbeats and dashboard against a real sds-admin
#   make admin-unit-pg, admin-integration-pg   the same on PostgreSQL (docs/ADMIN.md)
#   make admin-fuzz-smoke    the libFuzzer target for FUZZ_SMOKE_SECONDS (60) from the corpus
#   make fuzz                the same for FUZZ_SECONDS (default 600)
#   make admin-bench         heartbeats/s, p50, p99 on loopback
#   make push-bench          the push channel: PUT to state, 10,000 idle loaders
#   make admin-bench-sustain three admins on PostgreSQL, open loop at 2,000/s
#                            for SUSTAIN_SECONDS (600), the verdict per interval

ADMIN_SRCS   := $(wildcard admin/*.c admin/api/*.c admin/gameday/*.c admin/store/*.c admin/store/*/*.c)
ADMIN_COMMON := common/strategy.c common/pressure.c common/names.c common/errnames.c common/window.c common/heartbeat/heartbeat.c common/heartbeat/heartbeat_copy.c common/heartbeat/heartbeat_drill.c common/heartbeat/heartbeat_pressure.c common/heartbeat/heartbeat_split.c common/heartbeat/heartbeat_refused.c common/heartbeat/heartbeat_keys.c common/heartbeat/heartbeat_deps.c common/sdsjson.c \
		common/ext/ext.c common/ext/ext_load.c common/ext/ext_print.c common/tokfile.c common/trust.c \
		copy/diff/diff.c
ADMIN_LIBS   := -lmicrohttpd -ljansson -lsqlite3 -lpq -lpthread -lm
ADMIN_OBJ    := $(BUILD)/obj/admin
ADMIN_OBJS   := $(patsubst %.c,$(ADMIN_OBJ)/%.o,$(ADMIN_SRCS) $(ADMIN_COMMON))
ADMIN_WEB    := $(CURDIR)/admin/web
ADMIN_CPP    := $(CPPFLAGS) -Iadmin -Icopy/diff -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) -DSDS_ADMIN_WEB_DIR='"$(ADMIN_WEB)"'
ATEST        := $(BUILD)/test/admin
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 60

PRODUCTS    += $(BUILD)/bin/sds-admin
EXTRA_TESTS += admin-unit admin-integration admin-unit-pg admin-integration-pg admin-fuzz-smoke

$(ADMIN_OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ADMIN_CPP) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/bin/sds-admin: $(ADMIN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(ADMIN_LIBS)

-include $(ADMIN_OBJS:.o=.d)

# ---- units: everything but main.c and http.c, with sanitizers -------------
ADMIN_UNIT_SRCS := $(wildcard tests/admin/unit/test_*.c)
ADMIN_UNIT_BINS := $(patsubst tests/admin/unit/%.c,$(ATEST)/%,$(ADMIN_UNIT_SRCS))
# The store: store/ext.c (the registry that picks one by --db's scheme),
# the shared query files (store/query/), SQLite (store/sqlite/) and
# PostgreSQL (store/pg/).
ADMIN_LIB_SRCS  := $(wildcard admin/store/*.c admin/store/*/*.c) \
		   admin/api/aggregate.c admin/cluster.c $(ADMIN_COMMON)

# Each source is compiled once under ASan/UBSan into $(ATEST)/obj (-MMD
# -MP: a header change rebuilds what includes it), and linked by every
# unit test and by the ASan sds-admin below.
ADMIN_ASAN_OBJ   := $(ATEST)/obj
admin_asan_objs   = $(patsubst %.c,$(ADMIN_ASAN_OBJ)/%.o,$(1))
ADMIN_ASAN_OBJS  := $(call admin_asan_objs,$(ADMIN_SRCS) $(ADMIN_COMMON) $(ADMIN_UNIT_SRCS))
$(ADMIN_ASAN_OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ADMIN_CPP) -O1 -g $(WARN) -std=gnu11 \
		-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
		-MMD -MP -c $< -o $@
# The first build has no .d files yet.
$(ADMIN_ASAN_OBJ)/admin/main.o: | $(SDS_VERSION_H)
-include $(ADMIN_ASAN_OBJS:.o=.d)
# Kept, not deleted as intermediates: the next build relinks nothing.
.SECONDARY: $(ADMIN_ASAN_OBJS)

$(ATEST)/test_%: $(ADMIN_ASAN_OBJ)/tests/admin/unit/test_%.o $(call admin_asan_objs,$(ADMIN_LIB_SRCS))
	@mkdir -p $(@D)
	$(CC) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
		-o $@ $^ -lcmocka $(ADMIN_LIBS)

.PHONY: admin-unit admin-integration admin-fuzz-smoke fuzz admin-bench admin-bench-sustain push-bench
admin-unit: $(ADMIN_UNIT_BINS)
	@set -e; for t in $(ADMIN_UNIT_BINS); do echo "== $$t"; $$t; done

# The suite runs against an ASan/UBSan build (bad inputs must never crash
# or leak): the product's code, so every assertion holds for the product
# too, which e2e, drill, crash and the other suites run.
ADMIN_ASAN := $(ATEST)/sds-admin-asan
$(ADMIN_ASAN): $(call admin_asan_objs,$(ADMIN_SRCS) $(ADMIN_COMMON))
	@mkdir -p $(@D)
	$(CC) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
		-o $@ $^ $(ADMIN_LIBS)

admin-integration: $(BUILD)/bin/sds-admin $(ADMIN_ASAN)
	SDS_ADMIN=$(ADMIN_ASAN) $(PYTHON) tests/admin/run.py

# ---- libFuzzer -------------------------------------------------------------
FUZZ_BIN := $(BUILD)/fuzz/fuzz_parsers
$(FUZZ_BIN): tests/admin/fuzz/fuzz_parsers.c $(ADMIN_COMMON) $(wildcard common/*.h common/*/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $< $(ADMIN_COMMON) -ljansson -lm

# The committed corpus is read only; new inputs go to a scratch dir.
define run_fuzz
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/artifacts
	$(FUZZ_BIN) -max_total_time=$(1) -max_len=8192 -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix=$(BUILD)/fuzz/artifacts/ -print_final_stats=1 \
		$(BUILD)/fuzz/corpus tests/admin/fuzz/corpus
endef

admin-fuzz-smoke: $(FUZZ_BIN)
	$(call run_fuzz,$(FUZZ_SMOKE_SECONDS))

fuzz: $(FUZZ_BIN)
	$(call run_fuzz,$(FUZZ_SECONDS))

# ---- benchmark ---------------------------------------------------------------
ADMIN_BENCH := $(BUILD)/bench/admin-bench
$(ADMIN_BENCH): tools/bench/admin/hb_bench.c tools/bench/admin/hb_open.c tools/bench/admin/hb_bench.h \
		$(ADMIN_COMMON) $(wildcard common/*.h common/*/*.h)
	@mkdir -p $(@D)
	$(CC) $(ADMIN_CPP) $(ALL_CFLAGS) -o $@ tools/bench/admin/hb_bench.c tools/bench/admin/hb_open.c \
		$(ADMIN_COMMON) -ljansson -lpthread -lm

admin-bench: $(BUILD)/bin/sds-admin $(ADMIN_BENCH)
	$(PYTHON) tools/bench/admin/run.py

# The push channel (docs/PUSH.md): PUT to state at 2-1,000 loaders, 10,000 idle.
push-bench: $(BUILD)/bin/sds-admin $(ADMIN_BENCH)
	$(PYTHON) tools/bench/admin/push_bench.py

# Issue 16's sustained run (tools/bench/admin/run.py --sustain): needs postgresql-15.
SUSTAIN_SECONDS ?= 600
admin-bench-sustain: $(BUILD)/bin/sds-admin $(ADMIN_BENCH)
	$(PYTHON) tools/bench/admin/run.py --sustain $(SUSTAIN_SECONDS)

# ---- PostgreSQL ----------------------------------------------------------------
# The store's units and the integration suite again, on a PostgreSQL server
# the runner starts in a temp dir and removes after (tests/lib/pgtest.py).
.PHONY: admin-unit-pg admin-integration-pg
admin-unit-pg: $(ADMIN_UNIT_BINS)
	$(PYTHON) tests/admin/with_pg.py $(ADMIN_UNIT_BINS)

admin-integration-pg: $(BUILD)/bin/sds-admin $(ADMIN_ASAN)
	SDS_TEST_STORE=pg SDS_ADMIN=$(ADMIN_ASAN) $(PYTHON) tests/admin/run.py
