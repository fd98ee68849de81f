# tests/deb: the Debian packages and the one version (packaging/deb.mk,
# packaging/version.mk).  Included by the root Makefile.
#
#   make deb-tests   make deb, then tests/deb/run.py (root): --version and
#                    sds.pc, tools/version.sh's cases, lintian (no error,
#                    no warning, no hardening-no-* tag: one run), the
#                    packages' fields, and dpkg -i / -r / -P in a chroot of
#                    its own (an overlay of this host's /: the host's /usr,
#                    /etc and dpkg database are never written)
#
# The runner itself never calls make: it reads build/deb (make deb) and
# build/bin, build/lib (make all), which make test's build phase makes.

EXTRA_TESTS += deb-tests

.PHONY: deb-tests
deb-tests: deb
	$(PYTHON) tests/deb/run.py
