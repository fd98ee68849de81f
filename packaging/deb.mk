# packaging/deb.mk - make deb: the Debian packages (packaging/deb/build.sh)
#
#   build/deb/sds-bpf_DEBVERSION_amd64.deb     programs, units, man, completion, /etc/sds
#   build/deb/libsds0_DEBVERSION_amd64.deb     libsds.so.0
#   build/deb/libsds-dev_DEBVERSION_amd64.deb  headers, libsds.a, libsds.so, sds.pc
#   build/deb/sds-bpf-dbgsym_..., libsds0-dbgsym_...
#                                              their debug files, by build-id
#
# lintian on them is tests/deb (make deb-tests), which also installs them
# (in a chroot of its own); tests/cleanroot installs the same files.
#
# DEBVERSION is SDS_VERSION (packaging/version.mk) with '-' as '+', then
# "-1".  The files are those of `make install PREFIX=/usr SYSCONFDIR=/etc`
# into a staging dir; no network, no debhelper: dpkg-deb, dpkg-shlibdeps.

DEB_DIR     := $(BUILD)/deb
DEB_VERSION := $(subst -,+,$(SDS_VERSION))-1
# libsds goes where Debian keeps a library of this architecture
# (/usr/lib/x86_64-linux-gnu), which pkg-config and ld.so search.
DEB_MULTIARCH := $(shell $(CC) -print-multiarch)

# The packages' programs and library are built apart, in $(DEB_BUILD),
# with Debian's hardening flags (dpkg-buildflags, hardening=+all):
# -fstack-protector-strong, -D_FORTIFY_SOURCE=2, -Wformat
# -Werror=format-security, PIE, -z relro -z now; the tree's own build
# (and its ASan tests) keeps CFLAGS.  _FORTIFY_SOURCE goes in CFLAGS: a
# CPPFLAGS on make's command line would replace the tree's -I flags.
DEB_BUILD   := $(BUILD)/debbuild
DEB_FLAGS    = $(shell DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get $(1))

# Built in $(DEB_DIR).new and put in place by two renames at the end, so
# that a reader of $(DEB_DIR) (tests/deb, tests/cleanroot) never sees a
# half-made or emptied directory; make test builds it once, in its build
# phase (the suites only read it).
.PHONY: deb
deb:
	@test -n "$(DEB_MULTIARCH)" || { echo "make deb: $(CC) -print-multiarch says nothing" >&2; exit 1; }
	@test -n "$(call DEB_FLAGS,CFLAGS)" || { echo "make deb: dpkg-buildflags says nothing (make deps)" >&2; exit 1; }
	rm -rf $(DEB_DIR).new
	$(MAKE) --no-print-directory BUILD=$(DEB_BUILD) \
		CFLAGS="$(call DEB_FLAGS,CFLAGS) $(call DEB_FLAGS,CPPFLAGS)" \
		LDFLAGS="$(call DEB_FLAGS,LDFLAGS)" \
		install PREFIX=/usr SYSCONFDIR=/etc LDCONFIG=: \
		LIBDIR=/usr/lib/$(DEB_MULTIARCH) DESTDIR=$(abspath $(DEB_DIR)).new/stage >/dev/null
	sh packaging/deb/build.sh $(abspath $(DEB_DIR)).new/stage $(abspath $(DEB_DIR)).new/out \
		$(SDS_VERSION) $(DEB_MULTIARCH)
	mv $(DEB_DIR).new/out/*.deb $(DEB_DIR).new/
	rm -rf $(DEB_DIR).new/stage $(DEB_DIR).new/out $(DEB_DIR).old
	if [ -d $(DEB_DIR) ]; then mv $(DEB_DIR) $(DEB_DIR).old; fi
	mv $(DEB_DIR).new $(DEB_DIR)
	rm -rf $(DEB_DIR).old
