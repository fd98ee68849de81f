/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * lb_fixture.h - what the units of the balancing API (test_lb.c,
 * test_lb_call.c) share: the stand-in loader serving app "lb", a
 * balancer of dependency "pay" over providers p0..p(n-1), and the
 * loader's side of each provider's flag entry (its load, a downgrade).
 * One test program includes it once: its statics are that program's.
 */
#ifndef SDS_LB_FIXTURE_H
#define SDS_LB_FIXTURE_H

#include <stdio.h>

#include "balance.h"
#include "fake/client_fixture.h"
#include "fake/fakeloader.h"

#define SEED	0x5d5b1a5eULL

static struct fake_loader fl;	/* the stand-in loader of a test */

/* A client of app "lb" served by the stand-in, and the balancer over p0..p(n-1). */
static inline struct sds_client *lb_client(void)
{
	struct sds_client *c;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "lb", 1), 0);
	c = sds_client_open("g", "lb");
	assert_non_null(c);
	return c;
}

static inline struct sds_balancer *lb_open(struct sds_client *c, const char *policy,
				    const int *w, int n,
				    const struct sds_lb_opts *o)
{
	static char names[SDS_LB_MAX_MEMBERS][16];
	struct sds_lb_member m[SDS_LB_MAX_MEMBERS];
	struct sds_balancer *b;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		m[i] = (struct sds_lb_member){ .name = names[i], .weight = w[i] };
	}
	b = sds_lb_open(c, "pay", policy, m, n, o);
	if (!b)
		fail_msg("sds_lb_open: %s", sds_lb_error());
	return b;
}

static inline struct sds_flag *entry(int i)
{
	char name[32];
	struct sds_flag *e;

	snprintf(name, sizeof(name), "pay@p%d", i);
	e = fake_entry(&fl, name);
	assert_non_null(e);
	return e;
}

static inline int id_of(int i)
{
	char name[32];

	snprintf(name, sizeof(name), "pay@p%d", i);
	return fake_id(&fl, name);
}

/* The loader's tick, for provider @i: what lbpub.c stores. */
static inline void publish(int i, __u32 inflight, __u32 latency_ns)
{
	__atomic_store_n(&entry(i)->lb_inflight, inflight, __ATOMIC_RELAXED);
	__atomic_store_n(&entry(i)->lb_latency_ns, latency_ns, __ATOMIC_RELAXED);
}

static inline void downgrade(int i, bool on)
{
	fake_set(entry(i), on ? SDS_ACT_DOWNGRADE : 0, 100,
		 on ? fake_now() + 60 * NS : 0, 0, 0);
}

static inline void close_all(struct sds_balancer *b, struct sds_client *c)
{
	sds_lb_close(b);
	sds_client_close(c);
	fake_stop(&fl);
}

#endif
