/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_keys.h - hot keys: what the BPF programs, the loader and libsds
 * agree on about a call's key (docs/KEYS.md).
 *
 * A key is at most SDS_KEY_MAX bytes of a call: an integer argument
 * (:key=argN, 8 bytes little-endian), the string an argument points to
 * (:key=strN), bytes and their length (:key=bufN,lenM), or what a guard
 * passes to sds_should_downgrade_key() / sds_enter_key().  It is always
 * held zero-padded to SDS_KEY_MAX, so the hash is the same fixed work for
 * every key (no loop bound to prove, no length-dependent cost) and two
 * writers of one key -- a probe and a guard, the kernel and the loader --
 * hash it alike.
 *
 * Header-only and freestanding: included by bpf/ (with vmlinux.h's
 * types), the loader and libsds (with <linux/types.h>).
 */
#ifndef SDS_KEYS_H
#define SDS_KEYS_H

#define SDS_KEY_MAX			64	/* bytes of a key, at most */
#define SDS_KEY_WORDS			(SDS_KEY_MAX / 8)
#define SDS_KEY_CAPACITY_DEFAULT	4096	/* keys a point keeps (LRU) */
#define SDS_KEY_CAPACITY_MAX		65536
#define SDS_KEY_OVERRIDES_MAX		1024	/* key_overrides entries a point */

/* How a key was taken; shown by it (an integer, printable text or hex). */
enum sds_key_kind {
	SDS_KEY_NONE = 0,
	SDS_KEY_INT = 1,	/* :key=argN: the argument's 8 bytes */
	SDS_KEY_STR = 2,	/* :key=strN: up to the NUL, at most SDS_KEY_MAX */
	SDS_KEY_BUF = 3,	/* :key=bufN,lenM or a guard's (key, len) */
	SDS_KEY_UNREADABLE = 4,	/* the kernel could not read it: one key for all */
};

struct sds_key {
	__u8 kind;		/* enum sds_key_kind */
	__u8 len;		/* bytes used of @bytes, <= SDS_KEY_MAX */
	__u8 pad[6];		/* zero */
	__u8 bytes[SDS_KEY_MAX];	/* zero past @len */
} __attribute__((aligned(8)));	/* @bytes read as words */

/*
 * A 64-bit mix of the key's nine words (kind and len first): a
 * multiply-xorshift per word, as splitmix64's finalizer.  Not a defence
 * against chosen collisions: a key table is per point, bounded and
 * evicts, and the counts it keeps are statistics of the app's own calls.
 * Never 0 (0 marks an empty slot in the tables that store hashes).
 */
static inline __u64 sds_key_mix(__u64 h, __u64 w)
{
	h ^= w;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 29;
	return h;
}

static inline __u64 sds_key_hash(const struct sds_key *k)
{
	const __u64 *w = (const __u64 *)k->bytes;
	__u64 h = 0x9e3779b97f4a7c15ULL;
	int i;

	h = sds_key_mix(h, (__u64)k->kind | (__u64)k->len << 8);
	for (i = 0; i < SDS_KEY_WORDS; i++)
		h = sds_key_mix(h, w[i]);
	return h ? h : 1;
}

#endif /* SDS_KEYS_H */
