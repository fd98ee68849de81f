# Crash-only tests (tests/crash/run.py, issue 11): loaders killed with
# SIGKILL, stopped with --keep, their pins adopted, stale or detached.
# Include from the root Makefile after libsds/libsds.mk:
#
#   make crash-tests    builds build/test/crash/crashapp and runs the tests
#                       (root: they load BPF and pin under bpffs)

BUILD   ?= build
CC      ?= gcc
PYTHON  ?= python3

CRASH_DIR := $(BUILD)/test/crash

$(CRASH_DIR)/crashapp: tests/crash/crashapp.c $(BUILD)/lib/libsds.a $(BUILD)/include/sds.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -I$(BUILD)/include -o $@ $< \
		$(BUILD)/lib/libsds.a -lpthread

EXTRA_TESTS += crash-tests

.PHONY: crash-tests
crash-tests: all $(CRASH_DIR)/crashapp
	$(PYTHON) tests/crash/run.py
