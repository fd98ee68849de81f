# The guards of C++, Rust and Go (tests/bindings/run.py, issue 10).
# Included by the root Makefile; BUILD, CXX and PYTHON come from there.
#
#   make bindings-bins    the C++ example (bindings/cpp/example.cc, g++
#                         -std=c++17 -Werror, libsds.a) in build/test/bindings
#   make bindings-tests   it, then the suite (root): the C/C++ type names,
#                         sds.hpp, the Rust crate's `cargo test --offline`
#                         and the Go package's `go test`, and each example
#                         under a real `sds-bpf attach` with exact counts
#
# The suite builds the Rust and Go examples itself, with Debian's
# /usr/bin/cargo, /usr/bin/rustc and go, their caches under
# build/bindings, and Go's build cache in build/gocache, the one
# tests/harm/harm.mk builds with (nothing written outside the tree); a
# missing toolchain fails its tests, never skips them.

BUILD   ?= build
CXX     ?= g++
PYTHON  ?= python3

BINDINGS_DIR  := $(BUILD)/test/bindings
BINDINGS_BINS := $(BINDINGS_DIR)/cpp_example

$(BINDINGS_DIR)/cpp_example: bindings/cpp/example.cc $(BUILD)/include/sds.hpp \
		$(BUILD)/include/sds.h $(BUILD)/lib/libsds.a
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -pedantic -I$(BUILD)/include \
		-o $@ $< $(BUILD)/lib/libsds.a -lpthread

.PHONY: bindings-bins bindings-tests
bindings-bins: $(BINDINGS_BINS)
bindings-tests: all bindings-bins
	$(PYTHON) tests/bindings/run.py
