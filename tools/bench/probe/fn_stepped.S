/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * bench_fn for the single-stepped site: its first instruction, a register
 * move, is neither a NOP, push, call nor jump, so the kernel can only
 * execute it out of line and single-step it (~20 us on the VM,
 * docs/DESIGN.md §3).
 */
	.text
	.globl	bench_fn
	.type	bench_fn, @function
	.p2align 6
bench_fn:
	mov	%edi, %eax
	add	$1, %eax
	ret
	.size	bench_fn, .-bench_fn

	.section .note.GNU-stack,"",@progbits
