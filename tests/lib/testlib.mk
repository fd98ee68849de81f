# The test library's own checks (tests/lib/selftest.py), included by the
# root Makefile: KernelSnapshot sees only its own test's programs and pins.
EXTRA_TESTS += testlib-test

.PHONY: testlib-test
testlib-test: $(GEN)/copy.bpf.o
	$(PYTHON) tests/lib/selftest.py
