// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * ext_balancer.c - the "balancer" extension interface: balance.c's five
 * policies as its built-ins, registered at the first look-up (a table,
 * not a constructor: a program that never balances registers nothing).
 *
 * The built-ins are thin: setup is sds_lb_new() under the policy's own
 * name, pick is sds_lb_pick(), teardown sds_lb_free().  The public structs
 * of sds_ext.h and balance.h's are the same layout, checked below, so a
 * load view passes through without a copy on the pick path.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include "ext/ext.h"
#include "balance.h"
#include "ext_balancer.h"

_Static_assert(sizeof(struct sds_ext_load) == sizeof(struct sds_lb_load) &&
	       offsetof(struct sds_ext_load, start_ns) == offsetof(struct sds_lb_load, start_ns) &&
	       offsetof(struct sds_ext_load, in_flight) == offsetof(struct sds_lb_load, in_flight) &&
	       offsetof(struct sds_ext_load, latency_ns) == offsetof(struct sds_lb_load, latency_ns) &&
	       offsetof(struct sds_ext_load, downgraded) == offsetof(struct sds_lb_load, downgraded),
	       "sds_ext_load is sds_lb_load");
_Static_assert(sizeof(struct sds_ext_provider) == sizeof(struct sds_lb_provider) &&
	       offsetof(struct sds_ext_provider, name) == offsetof(struct sds_lb_provider, name) &&
	       offsetof(struct sds_ext_provider, weight) == offsetof(struct sds_lb_provider, weight),
	       "sds_ext_provider is sds_lb_provider");

static int bi_setup(const struct sds_ext_balancer *self, void **state,
		    const struct sds_ext_provider *p, int n, uint64_t warmup_ns,
		    char *err, size_t errlen)
{
	struct sds_lb *lb;
	int ret;

	ret = sds_lb_new(&lb, self->head.name, (const struct sds_lb_provider *)p,
			 n, warmup_ns, err, errlen);
	*state = lb;
	return ret;
}

static int bi_pick(const struct sds_ext_balancer *self, void *state,
		   const struct sds_ext_load *load, uint64_t now_ns,
		   const void *key, size_t key_len)
{
	return sds_lb_pick(state, (const struct sds_lb_load *)load, now_ns, key,
			   key_len);
}

static void bi_teardown(const struct sds_ext_balancer *self, void *state)
{
	sds_lb_free(state);
}

#define BUILTIN(nm) {							\
	.head = { .iface = SDS_EXT_BALANCER, .abi = SDS_EXT_BALANCER_ABI,	\
		  .kind = SDS_EXT_IMPL, .name = nm },			\
	.setup = bi_setup, .pick = bi_pick, .teardown = bi_teardown,	\
}

static const struct sds_ext_balancer builtins[SDS_LB_NPOLICIES] = {
	[SDS_LB_RANDOM] = BUILTIN("random"),
	[SDS_LB_ROUND_ROBIN] = BUILTIN("round_robin"),
	[SDS_LB_LEAST_ACTIVE] = BUILTIN("least_active"),
	[SDS_LB_SHORTEST_RESPONSE] = BUILTIN("shortest_response"),
	[SDS_LB_CONSISTENT_HASH] = BUILTIN("consistent_hash"),
};

/*
 * Register the interface and its built-ins: idempotent (the registry
 * ignores an interface it has), so it runs at every look-up -- which is
 * at set-up, never on the pick path -- and survives sds_ext_reset().
 */
int sds_ext_balancer_register(char *err, size_t errlen)
{
	static const struct sds_ext_iface iface = {
		.name = SDS_EXT_BALANCER,
		.abi = SDS_EXT_BALANCER_ABI,
		.def = "random",
	};
	struct sds_ext_builtin b[SDS_LB_NPOLICIES];
	int i;

	for (i = 0; i < SDS_LB_NPOLICIES; i++) {
		b[i].name = builtins[i].head.name;
		b[i].impl = &builtins[i];
	}
	return sds_ext_register(&iface, b, SDS_LB_NPOLICIES, err, errlen);
}

const struct sds_ext_balancer *sds_ext_balancer(const char *name, char *err,
						size_t errlen)
{
	if (sds_ext_balancer_register(err, errlen))
		return NULL;
	return sds_ext_get(SDS_EXT_BALANCER, name, err, errlen);
}

bool sds_ext_balancer_builtin(const struct sds_ext_balancer *b,
			      enum sds_lb_policy *policy)
{
	int i;

	for (i = 0; i < SDS_LB_NPOLICIES; i++)
		if (b == &builtins[i]) {
			*policy = (enum sds_lb_policy)i;
			return true;
		}
	return false;
}
