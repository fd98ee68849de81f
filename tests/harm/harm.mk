# Harm tests (tests/harm/run.py, issue 9: a probe never crashes, and never
# overloads, the program it watches).  Include from the root Makefile.
# (The budget helper's minimal copy, until the fork helper's is merged:
# every tests/harm/*.c into build/test/harm/NAME.)
#
#   make harm-tests   builds the programs and runs the suite (root)

BUILD   ?= build
CC      ?= gcc
PYTHON  ?= python3

HARM_DIR  := $(BUILD)/test/harm
HARM_SRCS := $(wildcard tests/harm/*.c)
HARM_BINS := $(patsubst tests/harm/%.c,$(HARM_DIR)/%,$(HARM_SRCS))

$(HARM_DIR)/%: tests/harm/%.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -o $@ $<

.PHONY: harm-bins harm-tests
harm-bins: $(HARM_BINS)
harm-tests: all harm-bins
	$(PYTHON) tests/harm/run.py
