# tests/deb: the Debian packages and the one version (packaging/deb.mk,
# packaging/version.mk).  Included by the root Makefile.
#
#   make deb-tests   make deb, then tests/deb/run.py (root): --version and
#                    sds.pc, tools/version.sh's cases, lintian (no error,
#                    no warning), the packages' fields, and dpkg -i / -r /
#                    -P on this host (never over files it did not install)

EXTRA_TESTS += deb-tests

.PHONY: deb-tests
deb-tests: deb
	$(PYTHON) tests/deb/run.py
