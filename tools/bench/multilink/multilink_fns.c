// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The 64 probed functions of bench-multilink (multilink.c).  Built like
 * tools/bench/probe/fn_nop5.c: -pg -mfentry -mnop-mcount, no CET,
 * non-PIE, 64-byte aligned, so each starts with the 5-byte NOP that the
 * kernel turns into a call to its uprobe trampoline.  Each adds its own constant: no two bodies are
 * alike, so the compiler cannot fold two functions into one address.
 */
#include "multilink.h"

#define ML_FN(hi, lo)							\
	__attribute__((noinline)) int ml_fn_##hi##lo(int x)		\
	{								\
		return x + (hi) * 8 + (lo) + 1;				\
	}

#define ML_FN8(hi)							\
	ML_FN(hi, 0) ML_FN(hi, 1) ML_FN(hi, 2) ML_FN(hi, 3)		\
	ML_FN(hi, 4) ML_FN(hi, 5) ML_FN(hi, 6) ML_FN(hi, 7)

ML_FN8(0) ML_FN8(1) ML_FN8(2) ML_FN8(3)
ML_FN8(4) ML_FN8(5) ML_FN8(6) ML_FN8(7)

#define ML_REF8(hi)							\
	ml_fn_##hi##0, ml_fn_##hi##1, ml_fn_##hi##2, ml_fn_##hi##3,	\
	ml_fn_##hi##4, ml_fn_##hi##5, ml_fn_##hi##6, ml_fn_##hi##7

/* Their addresses, for their file offsets: the loop calls ml_fn_00 directly. */
int (*const ml_fns[ML_FNS])(int) = {
	ML_REF8(0), ML_REF8(1), ML_REF8(2), ML_REF8(3),
	ML_REF8(4), ML_REF8(5), ML_REF8(6), ML_REF8(7),
};
