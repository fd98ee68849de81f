# Fail-fast through BPF LSM (issue 15): tests/failfast/run.py (root).
# Included by the root Makefile after tests/targets/targets.mk.
#
#   make failfast-tests   the suite, against build/bin/sds-bpf and
#                         build/test/targets/fftarget (an ordinary
#                         program: no libsds) and ffexec, which
#                         its exec command runs

FF_TARGET := $(TT_DIR)/fftarget
# What fftarget's exec command runs (t_ffexec.py): beside it.
FF_EXEC   := $(TT_DIR)/ffexec

$(FF_TARGET): $(TT_SRC)/fftarget.c $(FF_EXEC)
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -o $@ $<

# The limits' target (t_fflimit.py): threads held inside a point.
FF_LIMIT  := $(TT_DIR)/fflimit

$(FF_LIMIT): $(TT_SRC)/fflimit.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -pthread -fPIE -pie -o $@ $<

$(FF_EXEC): $(TT_SRC)/ffexec.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie -o $@ $<

EXTRA_TESTS += failfast-tests

.PHONY: failfast-tests
failfast-tests: all $(FF_TARGET) $(FF_LIMIT)
	$(PYTHON) tests/failfast/run.py
