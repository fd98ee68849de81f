/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * guarded.h - the guarded target program (tests/targets/guarded.c) and
 * the commands of tests/targets/guarded_harm.c and guarded_copy.c it
 * serves.
 */
#ifndef SDS_TEST_GUARDED_H
#define SDS_TEST_GUARDED_H

#include <stddef.h>
#include <sds.h>

/* libsds's probe sites (libsds/sites.S): exported, not in sds.h. */
void sds__site_enter(unsigned int id, unsigned long long key) __attribute__((weak));
void sds__site_exit(unsigned int id, unsigned long long key) __attribute__((weak));
void sds__site_exception(unsigned int id, unsigned long long key) __attribute__((weak));
void sds__site_downgrade(unsigned int id, unsigned long long key) __attribute__((weak));

/* One guarded call of @p (failing with @fail, @ms long): 1 passed, 0 downgraded. */
int guarded_call(struct sds_point *p, int fail, long ms);

/* guarded_harm.c: "sites", "seccomp WHAT...", "fork_pause", "fork_resume P N". */
void guarded_sites_line(char *buf, size_t len);
int guarded_seccomp(char **what, int n);
int guarded_fork_pause(void);
int guarded_fork_resume(struct sds_point *p, long n);

/* guarded_copy.c: "copy POINT N SIZE", N sds_copy() of distinct bodies. */
int guarded_copy(struct sds_point *p, long n, long size);

#endif /* SDS_TEST_GUARDED_H */
