// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * keys.c - hot keys (docs/KEYS.md): each keyed point's table of keys in
 * the kernel (bpf/sds_keys.bpf.h), made with the point's key_capacity
 * and put in the outer array at its id, read with batch lookups, and the
 * blocked keys of :failfast= points.
 *
 * A table is an LRU hash the loader creates: the kernel preallocates its
 * capacity, so a point's memory is bounded by key_capacity whatever the
 * app passes, and a new key past it evicts the least recently used one.
 * Evictions are counted as the keys the kernel inserted minus the keys
 * the table holds, both exact.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "heartbeat/heartbeat.h"
#include "keys/keys.h"
#include "kernel/probes.h"
#include "strategy.h"
#include "sds.skel.h"

#define KEYS_BATCH	256	/* entries per bpf_map_lookup_batch */

int keys__init(struct probes *pr)
{
	int i;

	pr->keys = calloc(SDS_MAX_POINTS, sizeof(*pr->keys));
	if (!pr->keys)
		return -1;
	for (i = 0; i < SDS_MAX_POINTS; i++)
		pr->keys[i].fd = -1;
	return 0;
}

void keys__destroy(struct probes *pr)
{
	int i;

	if (!pr->keys)
		return;
	for (i = 0; i < SDS_MAX_POINTS; i++)
		if (pr->keys[i].fd >= 0)
			close(pr->keys[i].fd);
	free(pr->keys);
	pr->keys = NULL;
}

int keys__configure(struct probes *pr, int id)
{
	const struct point_spec *ps = &pr->pts[id].spec;
	struct sds_key_cfg cfg = {};
	__u32 k = id;

	if (pr->pts[id].kind == POINT_FUNCTION && ps->key_kind) {
		cfg.kind = ps->key_kind;
		cfg.arg = ps->key_arg;
		cfg.len_arg = ps->key_len_arg;
		cfg.max = ps->key_max;
		cfg.failfast = ps->failfast_ops != 0;
	}
	return bpf_map_update_elem(bpf_map__fd(pr->skel->maps.key_cfg), &k,
				   &cfg, BPF_ANY);
}

bool keys__keyed(const struct probes *pr, int id)
{
	if (id < 0 || id >= SDS_MAX_POINTS || !pr->keys)
		return false;
	return pr->keys[id].fd >= 0 ||
	       (pr->pts[id].kind == POINT_FUNCTION && pr->pts[id].spec.key_kind);
}

/* Point @id's key_counts summed over the CPUs; -1 with errno. */
static int counts_sum(const struct probes *pr, int id, struct sds_key_count *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	struct sds_key_count *v;
	__u32 k = id;

	memset(sum, 0, sizeof(*sum));
	if (ncpu <= 0)
		return -1;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -1;
	if (bpf_map_lookup_elem(bpf_map__fd(pr->skel->maps.key_counts), &k, v)) {
		free(v);
		return -1;
	}
	for (i = 0; i < ncpu; i++) {
		sum->inserted += v[i].inserted;
		sum->unreadable += v[i].unreadable;
		sum->lost += v[i].lost;
		sum->blocked += v[i].blocked;
	}
	free(v);
	return 0;
}

/* Entries in table @fd, counted by batch lookups; -1 with errno. */
static int64_t table_live(int fd)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 *kb = calloc(KEYS_BATCH, sizeof(*kb)), in = 0, out = 0;
	struct sds_key_stat *vb = calloc(KEYS_BATCH, sizeof(*vb));
	void *inp = NULL;
	int64_t n = 0;

	while (kb && vb) {
		__u32 count = KEYS_BATCH;
		int e = bpf_map_lookup_batch(fd, inp, &out, kb, vb, &count, &opts);

		if (e && errno != ENOENT)
			break;
		n += count;
		if (e) {
			free(kb);
			free(vb);
			return n;
		}
		in = out;
		inp = &in;
	}
	free(kb);
	free(vb);
	return -1;
}

/* A dead loader's table of point @id in the pinned outer map, if of @cap keys. */
static int table_adopt(struct probes *pr, int id, uint32_t cap)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), inner, k = id;
	int fd;

	if (bpf_map_lookup_elem(bpf_map__fd(pr->skel->maps.key_tables), &k, &inner))
		return -1;
	fd = bpf_map_get_fd_by_id(inner);
	if (fd < 0)
		return -1;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.max_entries != cap) {
		close(fd);
		return -1;
	}
	return fd;
}

int keys__table(struct probes *pr, int id, int64_t cap, char *err,
		size_t errlen)
{
	struct probe_keys *pk = &pr->keys[id];
	uint32_t want = cap > 0 ? (uint32_t)cap : SDS_KEY_CAPACITY_DEFAULT;
	struct sds_key_count c;
	char name[16];
	__u32 k = id;
	int64_t live;
	int fd, e;

	if (want > SDS_KEY_CAPACITY_MAX)
		want = SDS_KEY_CAPACITY_MAX;
	if (pk->fd >= 0 && pk->cap == want)
		return 0;
	if (counts_sum(pr, id, &c))
		memset(&c, 0, sizeof(c));
	if (pk->fd < 0) {
		fd = table_adopt(pr, id, want);
		if (fd >= 0) {
			/* What it holds was inserted; what else was, evicted. */
			live = table_live(fd);
			pk->fd = fd;
			pk->cap = want;
			pk->base_inserted = c.inserted - (live > 0 ? (uint64_t)live : 0);
			return 0;
		}
	}
	snprintf(name, sizeof(name), "sds_keys_%d", id);
	fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, name, sizeof(__u64),
			    sizeof(struct sds_key_stat), want, NULL);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen,
			 "point '%s': creating its table of %u keys: %s",
			 pr->pts[id].spec.name, want, strerror(e));
		errno = e;
		return -1;
	}
	if (bpf_map_update_elem(bpf_map__fd(pr->skel->maps.key_tables), &k,
				&fd, BPF_ANY)) {
		e = errno;
		close(fd);
		snprintf(err, errlen, "point '%s': installing its key table: %s",
			 pr->pts[id].spec.name, strerror(e));
		errno = e;
		return -1;
	}
	if (pk->fd >= 0) {
		/* The old table's evictions stay counted; its keys are gone. */
		live = table_live(pk->fd);
		if (live >= 0 && c.inserted >= pk->base_inserted + (uint64_t)live)
			pk->evicted_before += c.inserted - pk->base_inserted -
					      (uint64_t)live;
		close(pk->fd);
	}
	pk->fd = fd;
	pk->cap = want;
	pk->base_inserted = c.inserted;
	return 0;
}

void keys__tick(struct probes *pr, int64_t (*cap_of)(void *ctx, int id),
		void *ctx)
{
	char err[256];
	int id;

	if (!pr->skel || !pr->skel->bss || !pr->keys)
		return;
	for (id = 0; id < pr->npoints; id++) {
		if (!__atomic_load_n(&pr->skel->bss->key_wanted[id], __ATOMIC_RELAXED))
			continue;
		pr->skel->bss->key_wanted[id] = 0;
		if (pr->keys[id].fd >= 0)
			continue;
		if (keys__table(pr, id, cap_of ? cap_of(ctx, id) : SDS_OFF,
				err, sizeof(err)))
			fprintf(stderr, "sds-bpf: %s\n", err);
	}
}

/* The BPF side's current second, as its slots are stamped (sec_of()). */
static uint32_t keys_now_sec(const struct probes *pr)
{
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	if (pr->skel && pr->skel->rodata)
		ns += pr->skel->rodata->sec_offset_ns;
	return (uint32_t)(ns / 1000000000ULL);
}

static void entry_fill(struct keys_entry *e, const struct sds_key_stat *v,
		       uint32_t now)
{
	const struct sds_key_mark *first;
	int i;

	e->key = v->key;
	e->calls = v->calls;
	e->exceptions = v->exceptions;
	e->downgrades = v->downgrades;
	e->latency_sum = v->latency_sum;
	memcpy(e->hist, v->hist, sizeof(e->hist));
	/* A completed call is counted in its bucket only. */
	e->completed = 0;
	for (i = 0; i < SDS_KEY_HIST; i++)
		e->completed += v->hist[i];
	/*
	 * The window: the totals less the mark of its oldest second (each
	 * second with calls has one; none in the window, no calls in it).
	 */
	e->win_calls = e->win_exceptions = e->win_downgrades = 0;
	first = NULL;
	for (i = 0; i < SDS_KEY_RING; i++) {
		const struct sds_key_mark *m = &v->ring[i];

		if (!m->sec || (uint32_t)(now - m->sec) >= SDS_WINDOW_S)
			continue;
		if (!first || (int32_t)(m->sec - first->sec) < 0)
			first = m;
	}
	if (!first)
		return;
	e->win_calls = (uint32_t)((uint32_t)v->calls - first->calls);
	e->win_exceptions = (uint32_t)((uint32_t)v->exceptions - first->exceptions);
	e->win_downgrades = (uint32_t)((uint32_t)v->downgrades - first->downgrades);
}

int keys__read(const struct probes *pr, int id, struct keys_read *out)
{
	const struct probe_keys *pk;
	struct sds_key_count c;
	__u64 *kb = NULL;
	struct sds_key_stat *vb = NULL;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 in = 0, outb = 0;
	void *inp = NULL;
	uint32_t now;
	uint64_t ins;

	memset(out, 0, sizeof(*out));
	if (id < 0 || id >= SDS_MAX_POINTS || !pr->keys || pr->keys[id].fd < 0)
		return errno = ENOENT, -1;
	pk = &pr->keys[id];
	out->cap = pk->cap;
	out->e = calloc(pk->cap, sizeof(*out->e));
	kb = calloc(KEYS_BATCH, sizeof(*kb));
	vb = calloc(KEYS_BATCH, sizeof(*vb));
	if (!out->e || !kb || !vb)
		goto fail;
	/* The counts first: an insert they miss is a key the table may show. */
	if (counts_sum(pr, id, &c))
		goto fail;
	now = keys_now_sec(pr);
	for (;;) {
		__u32 count = KEYS_BATCH, i;
		int e = bpf_map_lookup_batch(pk->fd, inp, &outb, kb, vb, &count,
					     &opts);

		if (e && errno != ENOENT)
			goto fail;
		for (i = 0; i < count && out->n < pk->cap; i++)
			entry_fill(&out->e[out->n++], &vb[i], now);
		if (e)
			break;
		in = outb;
		inp = &in;
	}
	free(kb);
	free(vb);
	out->live = out->n;
	ins = c.inserted >= pk->base_inserted ? c.inserted - pk->base_inserted : 0;
	out->inserted = ins;
	out->evicted = pk->evicted_before + (ins > out->live ? ins - out->live : 0);
	out->unreadable = c.unreadable;
	out->lost = c.lost;
	out->blocked = c.blocked;
	return 0;
fail:
	{
		int e = errno;

		free(kb);
		free(vb);
		keys__read_free(out);
		errno = e;
	}
	return -1;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct keys_entry *x = a, *y = b;

	if (x->win_calls != y->win_calls)
		return x->win_calls > y->win_calls ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

void keys__top(struct keys_read *r)
{
	if (r->n > 1)
		qsort(r->e, r->n, sizeof(r->e[0]), entry_cmp);
}

void keys__read_free(struct keys_read *r)
{
	free(r->e);
	r->e = NULL;
	r->n = 0;
}

const char *keys__kind_name(unsigned int kind)
{
	switch (kind) {
	case SDS_KEY_INT: return "int";
	case SDS_KEY_STR: return "str";
	case SDS_KEY_BUF: return "buf";
	case SDS_KEY_UNREADABLE: return "unreadable";
	}
	return "none";
}

void keys__text(const struct sds_key *k, char *buf, size_t len)
{
	unsigned int n = k->len > SDS_KEY_MAX ? SDS_KEY_MAX : k->len, i;
	bool printable = true;
	size_t o;

	if (k->kind == SDS_KEY_UNREADABLE) {
		snprintf(buf, len, "(unreadable)");
		return;
	}
	if (k->kind == SDS_KEY_INT) {
		int64_t v;

		memcpy(&v, k->bytes, sizeof(v));
		snprintf(buf, len, "%lld", (long long)v);
		return;
	}
	for (i = 0; i < n; i++)
		if (k->bytes[i] < 0x20 || k->bytes[i] > 0x7e)
			printable = false;
	if (printable && n) {
		snprintf(buf, len, "%.*s", (int)n, (const char *)k->bytes);
		return;
	}
	o = (size_t)snprintf(buf, len, "0x");
	for (i = 0; i < n && o + 2 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", k->bytes[i]);
}

uint64_t keys__percentile(const struct keys_entry *e, unsigned int p)
{
	return keys__hist_percentile(e->hist, p);
}

int keys__block(struct probes *pr, int id, uint64_t hash, uint64_t until_ns)
{
	struct sds_key_block b = { .point = (uint32_t)id, .hash = hash };

	return bpf_map_update_elem(bpf_map__fd(pr->skel->maps.key_blocked), &b,
				   &until_ns, BPF_ANY);
}

int keys__unblock(struct probes *pr, int id, uint64_t hash)
{
	struct sds_key_block b = { .point = (uint32_t)id, .hash = hash };

	if (bpf_map_delete_elem(bpf_map__fd(pr->skel->maps.key_blocked), &b) &&
	    errno != ENOENT)
		return -1;
	return 0;
}

void keys__heartbeat(const struct probes *pr, int id, struct keys_period *kp,
		     struct sds_hb_key *out, int *n, int max)
{
	int mine = 0;
	struct keys_read r;
	size_t i;

	if (!keys__keyed(pr, id) || keys__read(pr, id, &r))
		return;
	/* Marks of a table since replaced (a new capacity) hold nothing of this one's. */
	if (kp->table != pr->keys[id].base_inserted)
		keys_period__free(kp);
	keys__top(&r);
	for (i = 0; i < r.n && i < SDS_HB_POINT_KEYS; i++) {
		const struct keys_entry *e = &r.e[i];
		struct sds_hb_key *k;
		char text[KEYS_TEXT_MAX];

		if (!e->win_calls || *n >= max || mine >= SDS_HB_POINT_KEYS)
			break;
		k = &out[(*n)++];
		mine++;
		memset(k, 0, sizeof(*k));
		k->point = id;
		keys__text(&e->key, text, sizeof(text));
		snprintf(k->key, sizeof(k->key), "%s", text);
		snprintf(k->kind, sizeof(k->kind), "%s", keys__kind_name(e->key.kind));
		k->calls = e->win_calls;
		k->exceptions = e->win_exceptions;
		k->downgrades = e->win_downgrades;
		k->p99_ns = keys_period__percentile(kp, e, 99);
	}
	keys_period__mark(kp, &r, pr->keys[id].base_inserted);
	keys__read_free(&r);
}
