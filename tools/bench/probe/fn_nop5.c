// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench_fn for the 5-byte NOP site: built with -pg -mfentry -mnop-mcount
 * (and linked without -pg, non-PIE), so it starts with 0f 1f 44 00 00,
 * which the kernel turns into a call to its uprobe trampoline.
 */
__attribute__((noinline)) int bench_fn(int x)
{
	return x + 1;
}
