# Harm tests (tests/harm/run.py, issue 9: a probe never crashes, and never
# overloads, the program it watches).  Include from the root Makefile.
# (The unwind helper's minimal copy, until the fork helper's is merged:
# tests/harm/*.c with gcc, *.cc with g++, *.rs with rustc -O, each into
# build/test/harm/NAME.)
#
#   make harm-tests   builds the programs and runs the suite (root)
#
# C++ is built with frame pointers, so its functions start with push %rbp
# (an emulated probe site, as most C++ built for profiling does).  The
# Rust programs are left out when there is no rustc (in PATH or
# ~/.cargo/bin): their tests then fail, saying so.

BUILD   ?= build
CC      ?= gcc
CXX     ?= g++
PYTHON  ?= python3
RUSTC   ?= $(shell command -v rustc 2>/dev/null || \
	     { test -x $(HOME)/.cargo/bin/rustc && echo $(HOME)/.cargo/bin/rustc; })

HARM_DIR  := $(BUILD)/test/harm
HARM_BINS := $(patsubst tests/harm/%.c,$(HARM_DIR)/%,$(wildcard tests/harm/*.c)) \
	     $(patsubst tests/harm/%.cc,$(HARM_DIR)/%,$(wildcard tests/harm/*.cc))
ifneq ($(RUSTC),)
HARM_BINS += $(patsubst tests/harm/%.rs,$(HARM_DIR)/%,$(wildcard tests/harm/*.rs))
endif

$(HARM_DIR)/%: tests/harm/%.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -o $@ $<

$(HARM_DIR)/%: tests/harm/%.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -Wall -Wextra -fno-omit-frame-pointer -o $@ $<

$(HARM_DIR)/%: tests/harm/%.rs
	@mkdir -p $(@D)
	$(RUSTC) -O -o $@ $<

.PHONY: harm-bins harm-tests
harm-bins: $(HARM_BINS)
harm-tests: all harm-bins
	$(PYTHON) tests/harm/run.py
