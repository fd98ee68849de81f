# "Do no harm" tests (tests/harm/run.py, issue 9).  Included by the root
# Makefile; BUILD, CC and PYTHON come from there.
#
#   make harm-bins    builds tests/harm/*.c (gcc), *.cc (g++) and *.rs
#                     (rustc -O) into build/test/harm/NAME
#   make harm-tests   builds them and runs the suite (root)
#
# Per-file flags by name: *_nop5.c (and .cc) are compiled -pg -mfentry -mnop-mcount
# non-PIE and linked without -pg (every function starts with a 5-byte NOP,
# no profiling runtime); *_clone.cc -fwhole-program; *_clones.cc
# -fipa-cp-clone.  Without rustc the .rs programs are not built and
# their tests fail saying so (they never skip).

BUILD   ?= build
CC      ?= gcc
CXX     ?= g++
PYTHON  ?= python3
RUSTC   ?= /usr/bin/rustc

HARM_DIR    := $(BUILD)/test/harm
HARM_CFLAGS := -O2 -g -Wall -Wextra -D_GNU_SOURCE
HARM_BINS   := $(patsubst tests/harm/%.c,$(HARM_DIR)/%,$(wildcard tests/harm/*.c)) \
	       $(patsubst tests/harm/%.cc,$(HARM_DIR)/%,$(wildcard tests/harm/*.cc)) \
	       $(patsubst tests/harm/%.rs,$(HARM_DIR)/%,$(wildcard tests/harm/*.rs)) \
	       $(patsubst tests/harm/%.go,$(HARM_DIR)/%,$(wildcard tests/harm/*.go))

# The shortest stem wins: %_nop5 before %.
$(HARM_DIR)/%_nop5: tests/harm/%_nop5.c
	@mkdir -p $(@D)
	$(CC) $(HARM_CFLAGS) -std=gnu11 -fno-pie -pg -mfentry -mnop-mcount \
		-c -o $@.o $<
	$(CC) -no-pie -o $@ $@.o -lpthread
	rm -f $@.o

# The same for C++ (fork_clones_nop5.cc: a function's clones on NOPs).
$(HARM_DIR)/%_nop5: tests/harm/%_nop5.cc
	@mkdir -p $(@D)
	$(CXX) $(HARM_CFLAGS) -std=gnu++17 -fno-pie -pg -mfentry -mnop-mcount \
		-c -o $@.o $<
	$(CXX) -no-pie -o $@ $@.o -lpthread
	rm -f $@.o

# *_clone.cc: -fwhole-program, so that g++ may clone a function and drop
# its original (names_clone.cc).
$(HARM_DIR)/%_clone: tests/harm/%_clone.cc
	@mkdir -p $(@D)
	$(CXX) $(HARM_CFLAGS) -fno-omit-frame-pointer -fwhole-program -std=gnu++17 -o $@ $<

# *_clones.cc: -fipa-cp-clone (-O3's), so that g++ makes one clone of a
# function per constant its callers pass (names_clones.cc).
$(HARM_DIR)/%_clones: tests/harm/%_clones.cc
	@mkdir -p $(@D)
	$(CXX) $(HARM_CFLAGS) -fno-omit-frame-pointer -fipa-cp-clone -std=gnu++17 -o $@ $<

$(HARM_DIR)/%: tests/harm/%.c
	@mkdir -p $(@D)
	$(CC) $(HARM_CFLAGS) -std=gnu11 -o $@ $< -lpthread

$(HARM_DIR)/%: tests/harm/%.cc
	@mkdir -p $(@D)
	$(CXX) $(HARM_CFLAGS) -fno-omit-frame-pointer -std=gnu++17 -o $@ $< -lpthread

$(HARM_DIR)/%: tests/harm/%.rs
	@mkdir -p $(@D)
	@if [ -x "$(RUSTC)" ]; then \
		echo "$(RUSTC) -O -o $@ $<"; MAKEFLAGS= $(RUSTC) -O -o $@ $<; \
	else \
		echo "harm.mk: no $(RUSTC) (Debian package rustc: make deps): $@ not built, its test will fail"; \
	fi

# Go (Debian's golang-go, from make deps), its cache inside the build dir:
# $(BUILD)/gocache, the one tests/bindings' go test and go build use too
# (bindings_lib.py), so the standard library and cgo are compiled once.
$(HARM_DIR)/%: tests/harm/%.go
	@mkdir -p $(@D)
	cd $(<D) && GOCACHE=$(abspath $(BUILD))/gocache GOFLAGS=-buildvcs=false \
		MAKEFLAGS= go build -o $(abspath $@) $(<F)

.PHONY: harm-bins harm-tests
harm-bins: $(HARM_BINS)
harm-tests: all test-targets harm-bins
	$(PYTHON) tests/harm/run.py
