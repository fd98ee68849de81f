// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench_fn for the "endbr64; push %rbp" site: built with -fcf-protection
 * -fno-omit-frame-pointer, as distributions with CET build their code.  A
 * probe at +0 sits on endbr64 (single-stepped); one at +4 on push %rbp
 * (emulated).
 *
 * GCC 12 sets up no frame in a leaf function that needs no stack, even
 * with -fno-omit-frame-pointer; asking for the frame address makes it
 * build the frame every non-trivial function has, at no other cost.
 */
__attribute__((noinline)) int bench_fn(int x)
{
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
	return x + 1;
}
