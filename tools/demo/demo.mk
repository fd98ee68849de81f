# tools/demo: the demo service sds-bpf attaches to (make demo).
# Included by the root Makefile; defines DEMO_BINS and their rules.

BUILD ?= build
CC    ?= gcc

DEMO_BINS := $(BUILD)/demo/demo

# An ordinary build of an ordinary program: -O2 -g, the distribution's
# defaults (PIE), nothing done for the probes' sake.
$(BUILD)/demo/demo: tools/demo/demo.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Wno-unused-parameter -pthread -o $@ $<
