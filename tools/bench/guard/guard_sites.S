/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Four probe sites for bench-guard, byte for byte like libsds's own
 * (libsds/sites.S): each a whole function `0f 1f 44 00 00; c3`,
 * 16-byte aligned so the NOP never crosses a page.  bench_site_a and
 * bench_site_b carry the two bare uprobes the guarded call is compared
 * with (bench-bare-up); bench_site_c and bench_site_d never get a probe:
 * the same two calls without probes.
 */

.macro BENCH_SITE name
	.text
	.p2align 4
	.globl	bench_site_\name
	.type	bench_site_\name, @function
bench_site_\name:
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
	ret
	.size	bench_site_\name, . - bench_site_\name
.endm

	BENCH_SITE a
	BENCH_SITE b
	BENCH_SITE c
	BENCH_SITE d

	.section .note.GNU-stack, "", @progbits
