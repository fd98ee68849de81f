/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * lb_ext.h - a balancer of sds.h (lb.c) whose policy is an extension: a
 * plugin's, or any policy wrapped by a manifest's wrap.balancer
 * (docs/EXTENSIONS.md).  Its answers are checked before lb.c returns them.
 */
#ifndef SDS_LB_EXT_H
#define SDS_LB_EXT_H

#include <stdint.h>
#include "balance.h"
#include "sds_ext.h"

struct sds_lb_ext;
struct sds_balancer;

/*
 * Set up @ext over @n providers @p (checked already by balance.c):
 * 0 and *@out, or a negative errno with one line in @err.
 */
int sds_lb_ext_new(struct sds_lb_ext **out, const struct sds_ext_balancer *ext,
		   const struct sds_lb_provider *p, int n, uint64_t warmup_ns,
		   char *err, size_t errlen);
/* The extension's teardown, then free. NULL: nothing. */
void sds_lb_ext_free(struct sds_lb_ext *x);

/*
 * The extension's pick on the full load @ld of @n providers, checked: an
 * index in range of a provider not downgraded, or -ENOENT when the
 * extension says every provider is.  Any other answer is refused, counted,
 * and replaced by @fallback's pick on the same load (balance.c's random:
 * a provider that passes, weighted, or -ENOENT).
 */
int sds_lb_ext_pick(struct sds_lb_ext *x, struct sds_lb *fallback,
		    const struct sds_lb_load *ld, int n, uint64_t now,
		    const void *key, size_t keylen);

/*
 * The answers of @b's extension refused so far (0 for a built-in policy).
 * Internal to libsds (not exported): its tests read it.
 */
uint64_t sds_lb_ext_refused(const struct sds_balancer *b);
uint64_t sds_lb_ext_refused_of(const struct sds_lb_ext *x);

#endif /* SDS_LB_EXT_H */
