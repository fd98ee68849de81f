/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * ext_balancer.h - balancing policies by name, through the extension
 * registry (common/ext/ext.h): the five of balance.h built in, a user's from
 * a manifest, each wrapped by the manifests' wrap.balancer.
 */
#ifndef SDS_EXT_BALANCER_H
#define SDS_EXT_BALANCER_H

#include <stdbool.h>
#include <stddef.h>
#include "balance.h"
#include "sds_ext.h"

/*
 * The policy named @name (NULL: the default, "random"), loaded and wrapped
 * at its first use.  NULL with one line in @err: an unknown name (listing
 * the known ones) or a plugin refused (why).  Use it as
 *
 *     const struct sds_ext_balancer *b = sds_ext_balancer(name, err, len);
 *     void *st;
 *     b->setup(b, &st, providers, n, warmup_ns, err, len);
 *     i = b->pick(b, st, load, now_ns, key, key_len);
 *     b->teardown(b, st);
 */
const struct sds_ext_balancer *sds_ext_balancer(const char *name, char *err,
						size_t errlen);

/* Register the interface and its built-ins (idempotent): 0, or -1 with @err. */
int sds_ext_balancer_register(char *err, size_t errlen);

/*
 * Is @b one of the five built-ins, unwrapped (no wrap.balancer took it)?
 * Then *@policy is the one, and balance.c can be called straight.
 */
bool sds_ext_balancer_builtin(const struct sds_ext_balancer *b,
			      enum sds_lb_policy *policy);

#endif /* SDS_EXT_BALANCER_H */
