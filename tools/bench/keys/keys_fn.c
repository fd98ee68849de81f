// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * kb_fn, the keyed benchmark's target function: built like
 * ../probe/fn_nop5.c (a 5-byte NOP first, non-PIE) so that the probe's
 * cost is a call into the kernel's trampoline, not a trap, and the key's
 * few tens of ns are not lost in a trap's noise.  Its first argument is
 * the integer key (key=arg1), its second the string one (key=str2).
 */
__attribute__((noinline)) long kb_fn(long id, const char *name)
{
	return id + (name ? name[0] : 0);
}
