# Deploy tests (tests/deploy/run.py, issue 11: a TARGET replaced by `mv`
# while attached).  Included by the root Makefile.
#
#   make deploy-tests   builds four builds of tests/deploy/svc.c into
#                       build/test/deploy/ (and the test targets: a
#                       guarded one) and runs the suite (root) with
#                       the loader's ASan build
#
# The builds differ in code before work() (its offset moves) and in
# whether other() exists (a vanished symbol); each has a build-id.

BUILD   ?= build
CC      ?= gcc
PYTHON  ?= python3

DEPLOY_DIR   := $(BUILD)/test/deploy
DEPLOY_BINS  := $(DEPLOY_DIR)/svc $(DEPLOY_DIR)/svc.v1 $(DEPLOY_DIR)/svc.v2 \
		$(DEPLOY_DIR)/svc.v3
DEPLOY_CFLAGS := -O2 -g -Wall -Wextra -std=gnu11 -Wl,--build-id=sha1

$(DEPLOY_DIR)/svc: tests/deploy/svc.c
	@mkdir -p $(@D)
	$(CC) $(DEPLOY_CFLAGS) -DVARIANT=0 -o $@ $<

$(DEPLOY_DIR)/svc.v%: tests/deploy/svc.c
	@mkdir -p $(@D)
	$(CC) $(DEPLOY_CFLAGS) -DVARIANT=$* -o $@ $<

EXTRA_TESTS += deploy-tests

.PHONY: deploy-tests deploy-bins
deploy-bins: $(DEPLOY_BINS)
# Once, under ASan/LSan/UBSan (hostile.mk's build of the loader): a
# deploy allocates and frees a build's points and links.  The ASan build
# is the same code as the product, so its pass checks every assertion of
# the suite and memory besides; the product loader runs in every other
# suite.
deploy-tests: all test-targets $(DEPLOY_BINS) $(BUILD)/test/sds-bpf-asan
	SDS_DEPLOY_LOADER=$(BUILD)/test/sds-bpf-asan $(PYTHON) tests/deploy/run.py
