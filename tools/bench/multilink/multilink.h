/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * multilink.h - the probed functions of bench-multilink (multilink_fns.c,
 * built for nop5 sites) as the timing code (multilink.c) sees them.
 */
#ifndef SDS_BENCH_MULTILINK_H
#define SDS_BENCH_MULTILINK_H

#define ML_FNS	64

/* The function the per-call loop calls; the first of ml_fns[]. */
int ml_fn_00(int x);

extern int (*const ml_fns[ML_FNS])(int);

#endif /* SDS_BENCH_MULTILINK_H */
