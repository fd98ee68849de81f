// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * repair.c - the probe sites of a forked child (client.c, fork_child):
 * no call into a trampoline the child does not have, and nothing the
 * kernel may restore later into a corrupt instruction.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include "libsds.h"

#define SITE_LEN	5	/* a site's NOP (sites.S) */

/*
 * Linux 6.18 turns a uprobe on a 5-byte NOP into a call to a trampoline
 * page it maps in the process; fork() copies the call (the text page is
 * the parent's private copy) but not the trampoline, so the child would
 * die of SIGSEGV at its first guarded call.  Put a breakpoint back on each
 * site that holds such a call: the kernel then handles the child's hits as
 * an ordinary uprobe (counting them) and optimizes them again for it.
 * All 5 bytes are written, the int3 and the rest of the NOP: when the
 * probe goes away the kernel restores only the first byte of a site that
 * holds an int3, and `0f` before a call's rel32 would be a corrupt
 * instruction; before the NOP's tail it is the NOP again.
 */
static const unsigned char site_nop[SITE_LEN] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/*
 * What the site at @p must hold, in @want; false if it does.  A call
 * (e8) or an int3 before anything but the NOP's tail becomes int3 + tail;
 * a NOP's first byte before a rel32 (a probe removed since) the whole NOP.
 */
static bool site_wrong(const unsigned char *p, unsigned char *want)
{
	unsigned char b[SITE_LEN];
	int i;

	for (i = 0; i < SITE_LEN; i++)
		b[i] = ((const volatile unsigned char *)p)[i];
	memcpy(want, site_nop, SITE_LEN);
	if (b[0] == 0xe8 || b[0] == 0xcc)
		want[0] = 0xcc;
	else if (b[0] != 0x0f)
		return false;	/* not a site we know: leave it */
	return memcmp(b, want, SITE_LEN) != 0;
}

/*
 * Through /proc/self/mem (*@memfd, opened on first use; -2 once that
 * failed), which may write to read-only text as ptrace does.
 */
static int site_write_mem(int *memfd, unsigned char *p,
			  const unsigned char *want)
{
	if (*memfd == -2)
		return -1;
	if (*memfd < 0)
		*memfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (*memfd < 0) {
		*memfd = -2;
		return -1;
	}
	return pwrite(*memfd, want, SITE_LEN,
		      (off_t)(uintptr_t)p) == SITE_LEN ? 0 : -1;
}

/*
 * Without /proc (or where it may not write: a seccomp filter, a hardened
 * kernel): make the site's page writable for the one write.  It stays
 * executable throughout: this code may share the page.
 */
static int site_write_mprotect(unsigned char *p, const unsigned char *want)
{
	uintptr_t pg = getauxval(AT_PAGESZ) ? getauxval(AT_PAGESZ) : 4096;
	uintptr_t lo = (uintptr_t)p & ~(pg - 1);
	size_t len = (((uintptr_t)p + SITE_LEN + pg - 1) & ~(pg - 1)) - lo;
	volatile unsigned char *v = p;
	int i;

	if (mprotect((void *)lo, len, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -1;
	for (i = 0; i < SITE_LEN; i++)
		v[i] = want[i];
	/* Text is r-x; if this fails it stays writable, which is harmless. */
	mprotect((void *)lo, len, PROT_READ | PROT_EXEC);
	return 0;
}

/*
 * Every site that holds a call into the parent's trampoline gets its
 * breakpoint back; 0, or -1 if one may still hold such a call (the child
 * must then never call a site: client.c's fork_child disables its guards).  Passes
 * until nothing changes: an mprotect splits the text mapping, and the
 * kernel then installs its breakpoints in the new mapping again, an int3
 * over the first byte of a site not repaired yet (before its rel32).
 */
int sds__sites_repair(void)
{
	/* Only their addresses: the copy site's arguments differ. */
	const void *const sites[] = {
		(const void *)sds__site_enter, (const void *)sds__site_exit,
		(const void *)sds__site_exception,
		(const void *)sds__site_downgrade, (const void *)sds__site_copy,
		(const void *)sds__site_copy_ret,
	};
	unsigned char want[SITE_LEN];
	int memfd = -1, ret = -1, pass;
	bool wrote;
	size_t i;

	for (pass = 0; pass < 4; pass++) {
		wrote = false;
		for (i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
			unsigned char *p = (unsigned char *)sites[i];

			if (!site_wrong(p, want))
				continue;
			if (site_write_mem(&memfd, p, want) &&
			    site_write_mprotect(p, want))
				goto out;
			wrote = true;
		}
		if (!wrote) {
			ret = 0;
			break;
		}
	}
out:
	if (memfd >= 0)
		close(memfd);
	return ret;
}
