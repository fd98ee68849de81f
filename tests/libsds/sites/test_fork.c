// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fork repair of libsds (client.c, sites_unoptimize) on the real
 * sites (sites.S), whatever the kernel: a helper process writes what a
 * probe may leave at its sites (an optimized call e8 <rel32>, an int3
 * before a rel32, ...), forks, and its child reports the sites it sees
 * after libsds's atfork handler and whether its client may still attach.
 * With /proc/self/mem, with only mprotect (a seccomp filter fails
 * pwrite64), and with neither (the child's guards must be off).
 * Built with ASan and UBSan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "libsds.h"

#define DENY_PWRITE	1	/* pwrite64 fails: no /proc/self/mem write */
#define DENY_MPROT_WX	2	/* mprotect(W|X) fails: no fallback */

static char run_dir[] = "/tmp/sds-fork-XXXXXX";

#define NSITES	6

/* Only their addresses: the copy site's arguments differ. */
static const void *const sites[NSITES] = {
	(const void *)sds__site_enter, (const void *)sds__site_exit,
	(const void *)sds__site_exception, (const void *)sds__site_downgrade,
	(const void *)sds__site_copy, (const void *)sds__site_copy_ret,
};

/* What the grandchild saw. */
struct report {
	unsigned char site[NSITES][5];	/* each site's first 5 bytes */
	int valid;			/* its client may attach */
	int thread_on;			/* its client looks for a loader */
};

static int setup(void **state)
{
	if (!mkdtemp(run_dir))
		return -1;
	return setenv("SDS_RUN_DIR", run_dir, 1);
}

static int teardown(void **state)
{
	rmdir(run_dir);
	return 0;
}

static int deny(int what)
{
	struct sock_filter f[16];
	struct sock_fprog prog;
	int k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	if (what & DENY_PWRITE) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      SYS_pwrite64, 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ERRNO | EPERM);
	}
	if (what & DENY_MPROT_WX) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      SYS_mprotect, 0, 4);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, args[2]));
		f[k++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K,
						      PROT_WRITE | PROT_EXEC);
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      PROT_WRITE | PROT_EXEC, 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ERRNO | EPERM);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)k;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/*
 * In a helper process (so our own sites stay NOPs): a client, @pre at
 * every site, the filter @what, fork; the child's report in *@rep.
 * The sites are never called: without a uprobe behind it an int3 traps.
 */
static void run_case(const unsigned char pre[5], int what, struct report *rep)
{
	int fds[2], st, i, mem;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sds_client *c = sds_client_open("g", "fork");
		pid_t gc;

		mem = open("/proc/self/mem", O_RDWR);
		for (i = 0; i < NSITES; i++)
			if (mem < 0 || pwrite(mem, pre, 5,
					      (off_t)(uintptr_t)sites[i]) != 5)
				_exit(2);
		close(mem);
		if (what && deny(what))
			_exit(3);
		gc = fork();
		if (gc < 0)
			_exit(4);
		if (gc == 0) {
			struct report r;

			memset(&r, 0, sizeof(r));
			for (i = 0; i < NSITES; i++)
				memcpy(r.site[i], (const void *)sites[i], 5);
			r.valid = c->valid;
			r.thread_on = c->thread_on;
			_exit(write(fds[1], &r, sizeof(r)) == sizeof(r) ? 0 : 5);
		}
		_exit(waitpid(gc, &st, 0) == gc && WIFEXITED(st) &&
		      !WEXITSTATUS(st) ? 0 : 6);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], rep, sizeof(*rep)), sizeof(*rep));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const unsigned char unopt[5] = { 0xcc, 0x1f, 0x44, 0x00, 0x00 };
static const unsigned char call[5] = { 0xe8, 0x11, 0x22, 0x33, 0x44 };

static void assert_sites(const struct report *r, const unsigned char want[5])
{
	int i;

	for (i = 0; i < NSITES; i++)
		assert_memory_equal(r->site[i], want, 5);
}

/* An optimized probe's call: int3 and the NOP's tail, all 5 bytes. */
static void test_call_proc_mem(void **state)
{
	struct report r;

	run_case(call, 0, &r);
	assert_sites(&r, unopt);
	assert_true(r.valid);
	assert_true(r.thread_on);
}

/* The same without /proc/self/mem: mprotect. */
static void test_call_mprotect(void **state)
{
	struct report r;

	run_case(call, DENY_PWRITE, &r);
	assert_sites(&r, unopt);
	assert_true(r.valid);
	assert_true(r.thread_on);
}

/* Neither may write: the call stays, and the child's guards are off. */
static void test_call_no_way(void **state)
{
	struct report r;

	run_case(call, DENY_PWRITE | DENY_MPROT_WX, &r);
	assert_sites(&r, call);
	assert_false(r.valid);
	assert_false(r.thread_on);
}

/* An int3 before a rel32 (what a remap of the text leaves): repaired. */
static void test_int3_rel32(void **state)
{
	static const unsigned char bad[5] = { 0xcc, 0x11, 0x22, 0x33, 0x44 };
	struct report r;

	run_case(bad, DENY_PWRITE, &r);
	assert_sites(&r, unopt);
	assert_true(r.valid);
}

/* The NOP's first byte before a rel32 (a probe removed since): the NOP. */
static void test_nop_rel32(void **state)
{
	static const unsigned char bad[5] = { 0x0f, 0x11, 0x22, 0x33, 0x44 };
	struct report r;

	run_case(bad, 0, &r);
	assert_sites(&r, nop5);
	assert_true(r.valid);
}

/* No probe, or an unoptimized one: untouched, even with no way to write. */
static void test_untouched(void **state)
{
	struct report r;

	run_case(nop5, DENY_PWRITE | DENY_MPROT_WX, &r);
	assert_sites(&r, nop5);
	assert_true(r.valid);
	run_case(unopt, DENY_PWRITE | DENY_MPROT_WX, &r);
	assert_sites(&r, unopt);
	assert_true(r.valid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_proc_mem),
		cmocka_unit_test(test_call_mprotect),
		cmocka_unit_test(test_call_no_way),
		cmocka_unit_test(test_int3_rel32),
		cmocka_unit_test(test_nop_rel32),
		cmocka_unit_test(test_untouched),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
