// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* keys_run.c - hot keys' limits, fed and published at the tick. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "state/events.h"
#include "tick/keys_run.h"
#include "decide/keylimit.h"
#include "kernel/probes.h"
#include "keys/keys.h"
#include "publish/flags.h"
#include "strategy.h"

void keys_run__init(struct keys_run *kr, struct probes *pr,
		    struct flags_region *f)
{
	kr->probes = pr;
	kr->flags = f;
}

static bool has_key_limits(const struct sds_strategy *st)
{
	return st && (st->key_visit_threshold != SDS_OFF ||
		      st->key_token_rate != SDS_OFF || st->key_ov_n > 0);
}

/* One change published where point @id's calls look. */
static void publish(struct keys_run *kr, int id, uint64_t hash,
		    uint64_t until_ns)
{
	struct keys_run_point *p = &kr->pt[id];
	int rc;

	if (p->guard)
		rc = until_ns ? flags__key_block(kr->flags, id, hash, until_ns) :
				flags__key_clear(kr->flags, id, hash);
	else
		rc = until_ns ? keys__block(kr->probes, id, hash, until_ns) :
				keys__unblock(kr->probes, id, hash);
	/* A lift of a block the region never held is no failure. */
	if (rc && !until_ns && errno == ENOENT)
		return;
	if (rc && errno == ENOSPC)
		p->enospc++;
	else if (rc)
		p->failed++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_prev(const void *a, const void *b)
{
	return cmp_u64(&((const struct keys_run_prev *)a)->hash,
		       &((const struct keys_run_prev *)b)->hash);
}

static bool in_sorted(const uint64_t *v, size_t n, uint64_t h)
{
	return n && bsearch(&h, v, n, sizeof(*v), cmp_u64);
}

/* Every block of point @id lifted, its state freed. */
static void point_off(struct keys_run *kr, int id, uint64_t now_ns)
{
	struct keys_run_point *p = &kr->pt[id];
	const struct keylimit_change *ch;
	struct keylimit_limits off = { SDS_OFF, SDS_OFF, SDS_OFF };
	size_t i, n;

	if (!p->kl)
		return;
	/* Limits gone: the decision lifts every key it blocked. */
	if (!keylimit__set_limits(p->kl, &off, NULL, 0)) {
		n = keylimit__tick(p->kl, now_ns, NULL, 0, &ch);
		for (i = 0; i < n; i++)
			if (!ch[i].until_ns)
				publish(kr, id, ch[i].hash, 0);
	}
	/* And whatever it could not: a guard's whole table, a function's known keys. */
	if (p->guard)
		flags__key_clear_all(kr->flags, id);
	else
		for (i = 0; i < p->nblocked; i++)
			publish(kr, id, p->blocked[i], 0);
	keylimit__free(p->kl);
	free(p->prev);
	free(p->blocked);
	memset(p, 0, sizeof(*p));
}

void keys_run__configure(struct keys_run *kr, int id,
			 const struct sds_strategies *s,
			 const struct sds_strategy *st, uint64_t now_ns)
{
	struct keys_run_point *p = &kr->pt[id];
	const struct probe_point *pp = &kr->probes->pts[id];
	bool guard = pp->kind != POINT_FUNCTION;
	struct keylimit_override *ov;
	struct keylimit_limits def;
	uint32_t cap;
	char err[256];
	int n;

	/* A function point enforces them only keyed and with :failfast= (engine__check). */
	if (!has_key_limits(st) ||
	    (!guard && (!pp->spec.key_kind || !pp->spec.failfast_ops))) {
		point_off(kr, id, now_ns);
		return;
	}
	cap = st->key_capacity > 0 ? (uint32_t)st->key_capacity :
				     SDS_KEY_CAPACITY_DEFAULT;
	if (p->kl && (p->cap != cap || p->guard != guard))
		point_off(kr, id, now_ns);
	ov = calloc(SDS_KEY_OVERRIDES_MAX, sizeof(*ov));
	if (!ov) {
		fprintf(stderr, "sds-bpf: point '%s': key limits: out of memory\n",
			pp->spec.name);
		point_off(kr, id, now_ns);
		return;
	}
	n = keylimit__from_strategy(s, st, guard ? SDS_KEY_BUF : pp->spec.key_kind,
				    &def, ov, err, sizeof(err));
	if (n < 0) {
		/* engine__check refused it already: never here. */
		fprintf(stderr, "sds-bpf: %s\n", err);
		free(ov);
		point_off(kr, id, now_ns);
		return;
	}
	if (!p->kl) {
		p->kl = keylimit__new(cap);
		p->prev = calloc(cap, sizeof(*p->prev));
		p->blocked = calloc(cap, sizeof(*p->blocked));
		p->cap = cap;
		p->guard = guard;
		p->primed = false;
		if (!p->kl || !p->prev || !p->blocked) {
			fprintf(stderr, "sds-bpf: point '%s': key limits: out of memory\n",
				pp->spec.name);
			keylimit__free(p->kl);
			free(p->prev);
			free(p->blocked);
			memset(p, 0, sizeof(*p));
			free(ov);
			return;
		}
	}
	if (keylimit__set_limits(p->kl, &def, ov, (size_t)n))
		fprintf(stderr, "sds-bpf: point '%s': key limits: %s; the limits before stay\n",
			pp->spec.name, strerror(errno));
	free(ov);
}

bool keys_run__on(const struct keys_run *kr, int id)
{
	return kr->pt[id].kl != NULL;
}

/* The kernel's count of @e's calls that passed: calls less downgrades. */
static uint64_t passed_of(uint64_t calls, uint64_t downgrades)
{
	return calls > downgrades ? calls - downgrades : 0;
}

/* @r's entry of @hash, for its text; NULL: not in the read. */
static const struct keys_entry *entry_of(const struct keys_read *r,
					 const uint32_t *order,
					 const struct keys_run_prev *cur,
					 size_t n, uint64_t hash)
{
	struct keys_run_prev k = { .hash = hash };
	const struct keys_run_prev *c = bsearch(&k, cur, n, sizeof(*cur), cmp_prev);

	return c ? &r->e[order[c - cur]] : NULL;
}

static void key_event(struct events *ev, const char *name, bool started,
		      const struct keys_entry *e, uint32_t why, uint64_t more)
{
	char text[KEYS_TEXT_MAX], detail[EVENTS_DETAIL_MAX], rest[48] = "";

	if (e)
		keys__text(&e->key, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "(no longer counted)");
	if (more)
		snprintf(rest, sizeof(rest), " and %llu more",
			 (unsigned long long)more);
	snprintf(detail, sizeof(detail), "key %.64s%s %s%s", text, rest,
		 started ? "blocked" : "lifted",
		 !started ? "" : why == KEYLIMIT_VISIT ? " (key_visit_threshold)" :
		 " (key_token_rate)");
	events__add_key(ev, name, started, detail);
}

void keys_run__tick(struct keys_run *kr, int id, uint64_t now_ns,
		    struct events *ev, const char *name)
{
	struct keys_run_point *p = &kr->pt[id];
	const struct keylimit_change *ch;
	struct keys_run_prev *cur = NULL;
	struct keylimit_obs *obs = NULL;
	uint32_t *order = NULL;
	struct keys_read r = { 0 };
	size_t i, n = 0, nch, nb;
	/* Per way (0 lifted, 1 blocked): events written, the rest's first and count. */
	size_t shown[2] = { 0, 0 };
	uint64_t rest[2] = { 0, 0 };
	const struct keys_entry *rest_e[2] = { NULL, NULL };
	uint32_t rest_why[2] = { 0, 0 };
	bool read_ok = false;
	int read_errno = 0;
	uint8_t *gone;		/* [0, nb) of @p->blocked lifted this tick */

	if (!p->kl)
		return;
	/* Bounded by the table's capacity: one batch read, never a wait. */
	if (!keys__keyed(kr->probes, id))
		read_errno = ENOENT;
	else if (keys__read(kr->probes, id, &r))
		read_errno = errno;
	else
		read_ok = true;
	if (read_ok) {
		n = r.n < p->cap ? r.n : p->cap;
		cur = malloc((n ? n : 1) * sizeof(*cur));
		obs = malloc((n ? n : 1) * sizeof(*obs));
		order = malloc((n ? n : 1) * sizeof(*order));
		if (!cur || !obs || !order) {
			free(cur);
			free(obs);
			free(order);
			keys__read_free(&r);
			return;		/* this tick fed nothing: the next one catches up */
		}
	}
	for (i = 0; i < n; i++) {
		const struct keys_entry *e = &r.e[i];

		cur[i].hash = sds_key_hash(&e->key);
		cur[i].passed = passed_of(e->calls, e->downgrades);
		/* The one key for unreadable calls is never failed. */
		if (e->key.kind == SDS_KEY_UNREADABLE)
			cur[i].hash = 0;
	}
	/* Sorted by hash, with where each came from (its text for events). */
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	{
		/* Sort (hash, index) pairs together: pack the index in a parallel sort. */
		struct pair { struct keys_run_prev c; uint32_t i; } *pr;

		pr = n ? malloc(n * sizeof(*pr)) : NULL;
		if (n && !pr) {
			free(cur);
			free(obs);
			free(order);
			keys__read_free(&r);
			return;
		}
		for (i = 0; i < n; i++) {
			pr[i].c = cur[i];
			pr[i].i = (uint32_t)i;
		}
		if (n)
			qsort(pr, n, sizeof(*pr), cmp_prev);
		for (i = 0; i < n; i++) {
			cur[i] = pr[i].c;
			order[i] = pr[i].i;
		}
		free(pr);
	}
	for (i = 0; i < n; i++) {
		const struct keys_entry *e = &r.e[order[i]];
		struct keys_run_prev *was = p->nprev ?
			bsearch(&cur[i], p->prev, p->nprev, sizeof(*p->prev), cmp_prev) :
			NULL;
		uint64_t d = cur[i].passed;

		/*
		 * Since the last tick: the growth of its count; a key new to
		 * the table, or evicted and back (its counts from 0), all of
		 * it.  The first read after the limits came is their start.
		 */
		if (!p->primed)
			d = 0;
		else if (was && was->passed <= cur[i].passed)
			d = cur[i].passed - was->passed;
		obs[i] = (struct keylimit_obs){
			.hash = cur[i].hash,
			.passed = d,
			.visits = passed_of(e->win_calls, e->win_downgrades),
		};
	}
	nch = keylimit__tick(p->kl, now_ns, obs, n, &ch);
	nb = p->nblocked;
	gone = nb ? calloc(nb, 1) : NULL;
	for (i = 0; i < nch; i++) {
		bool was = in_sorted(p->blocked, nb, ch[i].hash);
		bool on = ch[i].until_ns != 0;
		const struct keys_entry *e;

		publish(kr, id, ch[i].hash, ch[i].until_ns);
		if (on == was)
			continue;	/* a block renewed, or a lift of none */
		if (on) {
			p->blocks++;
			if (p->nblocked < p->cap)
				p->blocked[p->nblocked++] = ch[i].hash;
		} else {
			const uint64_t *b = bsearch(&ch[i].hash, p->blocked, nb,
						    sizeof(uint64_t), cmp_u64);

			p->lifts++;
			/* Marked, not zeroed: [0, nb) stays sorted for this tick's searches. */
			if (gone)
				gone[b - p->blocked] = 1;
		}
		/* KEYS_RUN_EVENTS - 1 events each way, the last counts the rest. */
		e = entry_of(&r, order, cur, n, ch[i].hash);
		if (shown[on] < KEYS_RUN_EVENTS - 1) {
			key_event(ev, name, on, e, ch[i].why, 0);
			shown[on]++;
		} else if (!rest[on]++) {
			rest_e[on] = e;
			rest_why[on] = ch[i].why;
		}
	}
	for (i = 0; i < 2; i++)
		if (rest[i])
			key_event(ev, name, i, rest_e[i], rest_why[i], rest[i] - 1);
	/*
	 * The blocked set again, sorted, without the lifted.  Out of memory
	 * for the marks: the lifted stay listed (a later block of one is no
	 * event; point_off unblocks it again, harmlessly).
	 */
	{
		size_t k = 0, old_nb = nb;

		for (i = 0; i < p->nblocked; i++)
			if (i >= old_nb || !gone || !gone[i])
				p->blocked[k++] = p->blocked[i];
		p->nblocked = k;
	}
	free(gone);
	qsort(p->blocked, p->nblocked, sizeof(uint64_t), cmp_u64);
	/*
	 * This read's counts are the next tick's base; no table yet (a
	 * guard point not passed a key), the first one's counts are all new.
	 */
	if (read_ok) {
		if (n)
			memcpy(p->prev, cur, n * sizeof(*cur));
		p->nprev = n;
		p->primed = true;
	} else if (read_errno == ENOENT) {
		p->nprev = 0;
		p->primed = true;
	}
	free(cur);
	free(obs);
	free(order);
	keys__read_free(&r);
}

void keys_run__close(struct keys_run *kr)
{
	int id;

	for (id = 0; id < SDS_MAX_POINTS; id++)
		point_off(kr, id, flags_now_ns());
}

bool keys_run__is_blocked(const struct keys_run *kr, int id, uint64_t hash)
{
	const struct keys_run_point *p = &kr->pt[id];

	return p->kl && in_sorted(p->blocked, p->nblocked, hash);
}

json_t *keys_run__json(const struct keys_run *kr, int id)
{
	const struct keys_run_point *p = &kr->pt[id];

	if (!p->kl)
		return NULL;
	/*
	 * keys_seen: the kernel saw the point's calls pass a key (a guard
	 * point's table is made then): false, its limits have nothing to
	 * block (`stats` warns).
	 */
	return json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "reason", "key",
			 "keys_seen", keys__keyed(kr->probes, id),
			 "blocked", (json_int_t)p->nblocked,
			 "tracked", (json_int_t)keylimit__tracked(p->kl),
			 "blocks", (json_int_t)p->blocks,
			 "lifts", (json_int_t)p->lifts,
			 "enospc", (json_int_t)p->enospc,
			 "failed", (json_int_t)p->failed);
}
