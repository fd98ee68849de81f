# Fault drill tests (tests/drill/run.py, issue 5).  Include from the root
# Makefile after libsds/libsds.mk (it needs LIBSDS_A and the
# header) and tests/targets/targets.mk:
#
#   make drill-tests    builds build/test/drill/drillapp and runs the tests
#                       (root: they load BPF)
#
# drillapp is linked with build/lib/libsds.a as users link it.

BUILD   ?= build
CC      ?= gcc
PYTHON  ?= python3

DRILL_DIR := $(BUILD)/test/drill

$(DRILL_DIR)/drillapp: tests/drill/drillapp.c $(BUILD)/lib/libsds.a $(BUILD)/include/sds.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -I$(BUILD)/include -o $@ $< \
		$(BUILD)/lib/libsds.a -lpthread

.PHONY: drill-tests
drill-tests: all $(DRILL_DIR)/drillapp
	$(PYTHON) tests/drill/run.py
