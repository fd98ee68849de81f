/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Counting stand-ins of the probe sites (see fake_sites.c). */
#ifndef SDS_FAKE_SITES_H
#define SDS_FAKE_SITES_H

#include <linux/types.h>
#include <stddef.h>
#include "sds_types.h"
#include "sds_keys.h"

enum { SITE_ENTER, SITE_EXIT, SITE_EXCEPTION, SITE_DOWNGRADE, SITE_KINDS };

/*
 * The sites as libsds calls them unkeyed; fake_sites.c defines them with
 * the two arguments a keyed call adds (a key and its hash, read only when
 * the id has SDS_SITE_KEYED), as the BPF programs read them.
 */
#ifndef FAKE_SITES_KEYED
void sds__site_enter(__u32 id, __u64 key);
void sds__site_exit(__u32 id, __u64 key);
void sds__site_exception(__u32 id, __u64 key);
void sds__site_downgrade(__u32 id, __u64 key);
#endif
void sds__site_copy(__u32 id, const void *buf, size_t len);
void sds__site_copy_ret(__u32 id, const void *buf, size_t len);

/* The last call of the copy site (sds_copy), as it was called. */
struct site_copy_call {
	__u32 id;		/* its point id */
	const void *buf;	/* the buffer */
	size_t len;		/* its length */
};
/* Calls of the copy site with point id @id so far. */
__u64 site_copy_count(__u32 id);
/* Calls of the copy site, all ids (out-of-range ones too). */
__u64 site_copy_total(void);
extern struct site_copy_call site_copy_last;
extern struct site_copy_call site_copy_ret_last;	/* sds_copy_response() */

/* Calls of site @kind with point id @id so far. */
__u64 site_count(int kind, __u32 id);
/* Calls of site @kind, all ids. */
__u64 site_total(int kind);
/* Frames of point @id libsds evicted (sds__site_exit with SDS_SITE_EVICT). */
__u64 site_evicted(__u32 id);
/* The key of the last call of each site. */
extern __u64 site_last_key[SITE_KINDS];
/*
 * Keyed calls (SDS_SITE_KEYED) of site @kind with point id @id so far:
 * also counted by site_count() under the id without the bit.
 */
__u64 site_keyed_count(int kind, __u32 id);
/* The key (as the site was passed it) and hash of the last keyed call of each site. */
extern struct sds_key site_last_keyed[SITE_KINDS];
extern __u64 site_last_hash[SITE_KINDS];

#endif /* SDS_FAKE_SITES_H */
