// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The five probe sites of libsds as counting C functions, linked into the
 * client tests in place of libsds/sites.S: what the BPF programs would
 * count, the tests count here, exactly, by point id and key.
 */
#define FAKE_SITES_KEYED	/* the sites' four arguments, defined here */
#include "fake_sites.h"

__u64 site_calls[SITE_KINDS][SDS_MAX_POINTS];
__u64 site_last_key[SITE_KINDS];
static __u64 site_evicts[SDS_MAX_POINTS];
static __u64 site_keyed[SITE_KINDS][SDS_MAX_POINTS];
struct sds_key site_last_keyed[SITE_KINDS];
__u64 site_last_hash[SITE_KINDS];
static __u64 site_copies[SDS_MAX_POINTS];
static __u64 site_copies_all;
struct site_copy_call site_copy_last;

static void count(int kind, __u32 id, __u64 key, const struct sds_key *k,
		  __u64 hash)
{
	if (id & SDS_SITE_KEYED) {
		id &= ~SDS_SITE_KEYED;
		if ((id & ~SDS_SITE_EVICT) < SDS_MAX_POINTS)
			__atomic_add_fetch(&site_keyed[kind][id & ~SDS_SITE_EVICT],
					   1, __ATOMIC_RELAXED);
		/* Single-threaded callers only look at these. */
		site_last_keyed[kind] = *k;
		site_last_hash[kind] = hash;
	}
	/* An eviction is no end of a call: counted apart. */
	if (kind == SITE_EXIT && (id & SDS_SITE_EVICT) &&
	    (id & ~SDS_SITE_EVICT) < SDS_MAX_POINTS) {
		__atomic_add_fetch(&site_evicts[id & ~SDS_SITE_EVICT], 1,
				   __ATOMIC_RELAXED);
		return;
	}
	if (id < SDS_MAX_POINTS)
		__atomic_add_fetch(&site_calls[kind][id], 1, __ATOMIC_RELAXED);
	__atomic_store_n(&site_last_key[kind], key, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void sds__site_enter(__u32 id, __u64 key,
						 const struct sds_key *k, __u64 hash)
{
	count(SITE_ENTER, id, key, k, hash);
}

__attribute__((noinline)) void sds__site_exit(__u32 id, __u64 key,
						 const struct sds_key *k, __u64 hash)
{
	count(SITE_EXIT, id, key, k, hash);
}

__attribute__((noinline)) void sds__site_exception(__u32 id, __u64 key,
						 const struct sds_key *k, __u64 hash)
{
	count(SITE_EXCEPTION, id, key, k, hash);
}

__attribute__((noinline)) void sds__site_downgrade(__u32 id, __u64 key,
						 const struct sds_key *k, __u64 hash)
{
	count(SITE_DOWNGRADE, id, key, k, hash);
}

/* Single-threaded callers only look at @site_copy_last. */
__attribute__((noinline)) void sds__site_copy(__u32 id, const void *buf, size_t len)
{
	if (id < SDS_MAX_POINTS)
		__atomic_add_fetch(&site_copies[id], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&site_copies_all, 1, __ATOMIC_RELAXED);
	site_copy_last.id = id;
	site_copy_last.buf = buf;
	site_copy_last.len = len;
}

/* sds_copy_response(): the same record, of its own. */
struct site_copy_call site_copy_ret_last;

__attribute__((noinline)) void sds__site_copy_ret(__u32 id, const void *buf, size_t len)
{
	site_copy_ret_last.id = id;
	site_copy_ret_last.buf = buf;
	site_copy_ret_last.len = len;
}

__u64 site_copy_count(__u32 id)
{
	return __atomic_load_n(&site_copies[id], __ATOMIC_RELAXED);
}

__u64 site_copy_total(void)
{
	return __atomic_load_n(&site_copies_all, __ATOMIC_RELAXED);
}

__u64 site_count(int kind, __u32 id)
{
	return __atomic_load_n(&site_calls[kind][id], __ATOMIC_RELAXED);
}

__u64 site_total(int kind)
{
	__u64 n = 0;
	int i;

	for (i = 0; i < SDS_MAX_POINTS; i++)
		n += site_count(kind, i);
	return n;
}

__u64 site_keyed_count(int kind, __u32 id)
{
	return __atomic_load_n(&site_keyed[kind][id], __ATOMIC_RELAXED);
}

__u64 site_evicted(__u32 id)
{
	return __atomic_load_n(&site_evicts[id], __ATOMIC_RELAXED);
}
