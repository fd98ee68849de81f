// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * ext_plugin.c - plugins for test_ext.c, built by the test itself with
 * `cc -shared -fPIC -DPART=n` the way a user builds one: sds_ext.h and
 * nothing else of sds-bpf.
 *
 *   PART 1 (libgood.so)   mine_balancer: the last provider that passes;
 *                         delegating_balancer: round_robin, looked up by
 *                         its init (IoC); count_wrapper: counts every pick
 *                         of every balancer in count_picks; bad_abi and
 *                         not_a_balancer: refused by their heads
 *   PART 2 (libfail.so)   failing_balancer: init says no;
 *                         fine_balancer: good, but from the same file
 *   PART 3 (libcrash.so)  crashing_balancer: init dereferences NULL;
 *                         fine_balancer: good, but from the same file
 *   PART 4 (libhang.so)   hanging_balancer: init never returns
 *   PART 5 (libwild.so)   wild_balancer: answers n, -1, then provider 0
 *                         even when downgraded, in turn (test_lb_ext.c)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sds_ext.h"

static int last_setup(const struct sds_ext_balancer *self, void **state,
		      const struct sds_ext_provider *p, int n, uint64_t warmup_ns,
		      char *err, size_t errlen)
{
	*state = (void *)(long)n;
	return 0;
}

static int last_pick(const struct sds_ext_balancer *self, void *state,
		     const struct sds_ext_load *load, uint64_t now_ns,
		     const void *key, size_t key_len)
{
	int i = (int)(long)state;

	while (--i >= 0)
		if (!load || !load[i].downgraded)
			return i;
	return -ENOENT;
}

static void last_teardown(const struct sds_ext_balancer *self, void *state)
{
}

#define LAST(nm, initfn, abiv, ifc) {					\
	.head = { .iface = ifc, .abi = abiv, .kind = SDS_EXT_IMPL,	\
		  .name = nm, .init = initfn },				\
	.setup = last_setup, .pick = last_pick, .teardown = last_teardown, \
}

#if PART == 1
const struct sds_ext_balancer mine_balancer =
	LAST("mine", NULL, SDS_EXT_BALANCER_ABI, SDS_EXT_BALANCER);
const struct sds_ext_balancer bad_abi =
	LAST("old", NULL, 99, SDS_EXT_BALANCER);
const struct sds_ext_balancer not_a_balancer =
	LAST("store", NULL, SDS_EXT_BALANCER_ABI, "store");

/* IoC: round_robin, as the registry gives it to anyone (wrapped). */
static const struct sds_ext_balancer *rr;

static int delegating_init(const void *self, sds_ext_lookup_fn lookup,
			   char *err, size_t errlen)
{
	rr = lookup(SDS_EXT_BALANCER, "round_robin", err, errlen);
	return rr ? 0 : -1;
}

static int del_setup(const struct sds_ext_balancer *self, void **state,
		     const struct sds_ext_provider *p, int n, uint64_t warmup_ns,
		     char *err, size_t errlen)
{
	return rr->setup(rr, state, p, n, warmup_ns, err, errlen);
}

static int del_pick(const struct sds_ext_balancer *self, void *state,
		    const struct sds_ext_load *load, uint64_t now_ns,
		    const void *key, size_t key_len)
{
	return rr->pick(rr, state, load, now_ns, key, key_len);
}

static void del_teardown(const struct sds_ext_balancer *self, void *state)
{
	rr->teardown(rr, state);
}

const struct sds_ext_balancer delegating_balancer = {
	.head = { .iface = SDS_EXT_BALANCER, .abi = SDS_EXT_BALANCER_ABI,
		  .kind = SDS_EXT_IMPL, .name = "delegating",
		  .init = delegating_init },
	.setup = del_setup, .pick = del_pick, .teardown = del_teardown,
};

/* The wrapper: a copy of the inner struct whose pick counts. */
unsigned long count_picks;	/* every pick of every wrapped balancer */
unsigned long count_wraps;	/* balancers wrapped */

struct counted {
	struct sds_ext_balancer b;		/* what users get */
	const struct sds_ext_balancer *in;	/* what it wraps */
};

static struct counted wrapped[32];

static int counted_pick(const struct sds_ext_balancer *self, void *state,
			const struct sds_ext_load *load, uint64_t now_ns,
			const void *key, size_t key_len)
{
	const struct counted *c = (const void *)self;

	__atomic_add_fetch(&count_picks, 1, __ATOMIC_RELAXED);
	return c->in->pick(c->in, state, load, now_ns, key, key_len);
}

static int counted_setup(const struct sds_ext_balancer *self, void **state,
			 const struct sds_ext_provider *p, int n, uint64_t warmup_ns,
			 char *err, size_t errlen)
{
	const struct counted *c = (const void *)self;

	return c->in->setup(c->in, state, p, n, warmup_ns, err, errlen);
}

static void counted_teardown(const struct sds_ext_balancer *self, void *state)
{
	const struct counted *c = (const void *)self;

	c->in->teardown(c->in, state);
}

static const void *count_wrap(const struct sds_ext_wrapper *self,
			      const void *inner, char *err, size_t errlen)
{
	struct counted *c;

	if (count_wraps == sizeof(wrapped) / sizeof(wrapped[0])) {
		snprintf(err, errlen, "wrapped %lu already", count_wraps);
		return NULL;
	}
	c = &wrapped[count_wraps++];
	c->in = inner;
	c->b = *c->in;
	c->b.setup = counted_setup;
	c->b.pick = counted_pick;
	c->b.teardown = counted_teardown;
	return &c->b;
}

const struct sds_ext_wrapper count_wrapper = {
	.head = { .iface = SDS_EXT_BALANCER, .abi = SDS_EXT_BALANCER_ABI,
		  .kind = SDS_EXT_WRAPPER, .name = "count" },
	.wrap = count_wrap,
};
#endif

#if PART == 2
static int failing_init(const void *self, sds_ext_lookup_fn lookup,
			char *err, size_t errlen)
{
	snprintf(err, errlen, "no licence");
	return -1;
}

const struct sds_ext_balancer failing_balancer =
	LAST("failing", failing_init, SDS_EXT_BALANCER_ABI, SDS_EXT_BALANCER);
const struct sds_ext_balancer fine_balancer =
	LAST("fine", NULL, SDS_EXT_BALANCER_ABI, SDS_EXT_BALANCER);
#endif

#if PART == 3
static int crashing_init(const void *self, sds_ext_lookup_fn lookup,
			 char *err, size_t errlen)
{
	volatile int *p = NULL;

	return *p;
}

const struct sds_ext_balancer crashing_balancer =
	LAST("crashing", crashing_init, SDS_EXT_BALANCER_ABI, SDS_EXT_BALANCER);
const struct sds_ext_balancer fine_balancer =
	LAST("fine", NULL, SDS_EXT_BALANCER_ABI, SDS_EXT_BALANCER);
#endif

#if PART == 4
static int hanging_init(const void *self, sds_ext_lookup_fn lookup,
			char *err, size_t errlen)
{
	for (;;)
		pause();
	return 0;
}

const struct sds_ext_balancer hanging_balancer =
	LAST("hanging", hanging_init, SDS_EXT_BALANCER_ABI, SDS_EXT_BALANCER);
#endif

#if PART == 5
/* An answer out of range (n), a stray error (-1), then provider 0 whatever. */
static int wild_pick(const struct sds_ext_balancer *self, void *state,
		     const struct sds_ext_load *load, uint64_t now_ns,
		     const void *key, size_t key_len)
{
	static unsigned long turn;
	int n = (int)(long)state;

	switch (__atomic_fetch_add(&turn, 1, __ATOMIC_RELAXED) % 3) {
	case 0:
		return n;
	case 1:
		return -1;
	default:
		return 0;
	}
}

const struct sds_ext_balancer wild_balancer = {
	.head = { .iface = SDS_EXT_BALANCER, .abi = SDS_EXT_BALANCER_ABI,
		  .kind = SDS_EXT_IMPL, .name = "wild" },
	.setup = last_setup, .pick = wild_pick, .teardown = last_teardown,
};
#endif
