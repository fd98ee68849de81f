# Fail-fast through BPF LSM (issue 15): tests/failfast/run.py (root).
# Included by the root Makefile after tests/targets/targets.mk.
#
#   make failfast-tests   the suite, against build/bin/sds-bpf and
#                         build/test/targets/fftarget (an ordinary
#                         program: no libsds)

FF_TARGET := $(TT_DIR)/fftarget

$(FF_TARGET): $(TT_SRC)/fftarget.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -o $@ $<

EXTRA_TESTS += failfast-tests

.PHONY: failfast-tests
failfast-tests: all $(FF_TARGET)
	$(PYTHON) tests/failfast/run.py
