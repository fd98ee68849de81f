// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * lb_ext.c - the balancing API's picks through an extension policy
 * (lb.c, docs/BALANCE.md "A policy of your own").
 *
 * A plugin is the application's own code, loaded into its own process:
 * it can crash the process whatever we do.  What it cannot do is make
 * sds_lb_choose() break its own contract, which callers index arrays
 * with: an answer out of range, or a downgraded provider (the contract
 * says -ENOENT when all are), is not returned.  balance.c's random pick
 * over the providers that pass, weighted, on the same load, is returned
 * in its place -- the built-in default, which needs nothing the plugin
 * may have got wrong -- and the refusal is counted, and said on stderr
 * the first time (a plugin that errs on every pick must not flood it).
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include "ext/ext_int.h"
#include "lb_ext.h"

struct sds_lb_ext {
	const struct sds_ext_balancer *ext;	/* as the registry gave it (wrapped) */
	void *state;				/* what its setup made */
	int n;					/* providers: the answer's range */
	uint64_t refused;			/* answers refused (atomic) */
};

int sds_lb_ext_new(struct sds_lb_ext **out, const struct sds_ext_balancer *ext,
		   const struct sds_lb_provider *p, int n, uint64_t warmup_ns,
		   char *err, size_t errlen)
{
	struct sds_lb_ext *x = calloc(1, sizeof(*x));
	int r;

	*out = NULL;
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	x->ext = ext;
	x->n = n;
	err[0] = '\0';
	/* The structs are the same layout: ext_balancer.c checks it. */
	r = ext->setup(ext, &x->state, (const struct sds_ext_provider *)p, n,
		       warmup_ns, err, errlen);
	if (r) {
		if (!err[0])
			snprintf(err, errlen, "balancer \"%s\": setup failed",
				 ext->head.name ? ext->head.name : "?");
		free(x);
		/* A positive or odd code is still a failure, and EINVAL is a fair one. */
		return r < 0 && r > -4096 ? r : -EINVAL;
	}
	*out = x;
	return 0;
}

void sds_lb_ext_free(struct sds_lb_ext *x)
{
	if (!x)
		return;
	if (x->ext->teardown)
		x->ext->teardown(x->ext, x->state);
	free(x);
}

/*
 * The first refusal, said and kept among the registry's problems (sds
 * ext list shows them): under the registry's lock, once a balancer -- the
 * only lock a pick can take.
 */
static void refused_say(const struct sds_lb_ext *x, int r, int n)
{
	const char *name = x->ext->head.name ? x->ext->head.name : "?";

	pthread_mutex_lock(&sds_ext_reg.lock);
	if (r >= 0 && r < n)
		sds_ext_say("balancer \"%.64s\" picked provider %d, which is downgraded: "
			    "a random pick is used instead (counted)", name, r);
	else
		sds_ext_say("balancer \"%.64s\" answered %d for %d providers: "
			    "a random pick is used instead (counted)", name, r, n);
	pthread_mutex_unlock(&sds_ext_reg.lock);
}

int sds_lb_ext_pick(struct sds_lb_ext *x, struct sds_lb *fallback,
		    const struct sds_lb_load *ld, int n, uint64_t now,
		    const void *key, size_t keylen)
{
	int r = x->ext->pick(x->ext, x->state, (const struct sds_ext_load *)ld,
			     now, key, keylen);

	if (r == -ENOENT || (r >= 0 && r < n && !ld[r].downgraded))
		return r;
	if (__atomic_fetch_add(&x->refused, 1, __ATOMIC_RELAXED) == 0)
		refused_say(x, r, n);
	return sds_lb_pick(fallback, ld, now, key, keylen);
}

uint64_t sds_lb_ext_refused_of(const struct sds_lb_ext *x)
{
	return x ? __atomic_load_n(&x->refused, __ATOMIC_RELAXED) : 0;
}
