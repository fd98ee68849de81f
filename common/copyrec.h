/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * copyrec.h - one captured request ("copy record"), as a loader sends it
 * to sds-copy and as a recording file holds it (docs/COPY.md, version 1).
 *
 * Everything is little-endian.  A record is a 20-byte header, the app and
 * point names, then the captured bytes:
 *
 *   u64 ts_ns      CLOCK_REALTIME of the capture
 *   u32 orig_len   the request's length at the function
 *   u32 cap_len    bytes that follow the names (<= 64 KiB, <= orig_len)
 *   u16 flags      COPYREC_F_*; truncated iff cap_len < orig_len
 *   u8  app_len    1..SDS_NAME_MAX
 *   u8  point_len  1..SDS_NAME_MAX
 *
 * then, only when flags has COPYREC_F_PAIRED, a u64 pair id right after
 * the names: a request and the response captured for it (COPYREC_F_RESPONSE)
 * carry the same id, so a reader pairs them (docs/COPY.md, "Responses").
 * Records without the flag are the version-1 records they always were.
 *
 * A stream to sds-copy starts with an 8-byte hello ("SDSc", u16 version,
 * u16 zero); a file with a 16-byte header ("SDSr", u16 version, u16 zero,
 * u64 created-at ns).  Decoding trusts nothing: every length is bounded
 * before it is used and names must be valid (common/names.h).
 */
#ifndef SDS_COPYREC_H
#define SDS_COPYREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sds_types.h"

#define COPYREC_VERSION		1
#define COPYREC_PAYLOAD_MAX	65536	/* captured bytes of one record */
#define COPYREC_HDR_LEN		20	/* fixed part of a record */
#define COPYREC_HELLO_LEN	8	/* stream hello */
/*
 * A stream with a token: the hello's version is COPYREC_HELLO_TOKEN and
 * its second u16 the token's length (1..4096), the token right after it;
 * sds-copy serve --stream-token-file checks it (docs/COPY.md).
 */
#define COPYREC_HELLO_TOKEN	2
#define COPYREC_FILEHDR_LEN	16	/* file header */
#define COPYREC_PAIR_LEN	8	/* the pair id of a COPYREC_F_PAIRED record */
/* The longest record: header, two longest names, a pair id, the longest payload. */
#define COPYREC_MAX_LEN		(COPYREC_HDR_LEN + 2 * SDS_NAME_MAX + COPYREC_PAIR_LEN + \
				 COPYREC_PAYLOAD_MAX)

#define COPYREC_F_TRUNCATED	0x1	/* the request was longer than captured */
#define COPYREC_F_WRITE		0x2	/* a write point (else a read point) */
#define COPYREC_F_PAIRED	0x4	/* a pair id follows the names */
#define COPYREC_F_RESPONSE	0x8	/* the response of the request of its pair id */
#define COPYREC_F_ALL		(COPYREC_F_TRUNCATED | COPYREC_F_WRITE | \
				 COPYREC_F_PAIRED | COPYREC_F_RESPONSE)

extern const char copyrec_stream_magic[4];	/* "SDSc" */
extern const char copyrec_file_magic[4];	/* "SDSr" */

struct copyrec {
	uint64_t ts_ns;			/* CLOCK_REALTIME of the capture, ns */
	uint32_t orig_len;		/* length of the request (response) at the point */
	uint32_t cap_len;		/* bytes in @data */
	uint16_t flags;			/* COPYREC_F_* */
	char app[SDS_NAME_MAX + 1];	/* source app, a valid name */
	char point[SDS_NAME_MAX + 1];	/* point in it, a valid name */
	uint64_t pair;			/* pair id when flags has COPYREC_F_PAIRED, else 0 */
	const uint8_t *data;		/* captured bytes (into the decoded buffer) */
};

/* Bytes copyrec_encode() writes for @r. */
size_t copyrec_size(const struct copyrec *r);

/*
 * Encode @r into @buf.  Returns the length, or -1 (errno EINVAL) when @r
 * itself is not valid (names, lengths, flags) or @size is too small.
 */
int copyrec_encode(const struct copyrec *r, void *buf, size_t size);

/*
 * Decode the record at the start of @buf (@len bytes available).  Returns
 * its length (> 0) with @r filled (r->data points into @buf), 0 when
 * @len holds only a valid prefix of a record (read more), or -1 with a
 * static reason in *@why (and *@at the offset of the bad field, relative
 * to @buf) when the bytes cannot be a record.
 */
int copyrec_decode(const void *buf, size_t len, struct copyrec *r,
		   const char **why, size_t *at);

/* The stream hello into @buf (COPYREC_HELLO_LEN bytes). */
void copyrec_hello_encode(void *buf);
/* Like copyrec_decode() for the hello: 8, 0 (need more) or -1. */
int copyrec_hello_decode(const void *buf, size_t len, const char **why,
			 size_t *at);

/* The file header with @created_ns into @buf (COPYREC_FILEHDR_LEN). */
void copyrec_filehdr_encode(void *buf, uint64_t created_ns);
/* Like copyrec_decode() for the file header: 16, 0 or -1. */
int copyrec_filehdr_decode(const void *buf, size_t len, uint64_t *created_ns,
			   const char **why, size_t *at);

/*
 * A recording file read record by record through a bounded buffer.
 * copyrec_reader_next() returns 1 with @r valid until the next call, 0 at
 * a clean end of file, -1 with @err set to "offset N: why" (the file
 * offset of the bad field, or of the record a truncated file cuts).
 */
struct copyrec_reader {
	FILE *f;			/* the file, not owned */
	uint8_t *buf;			/* COPYREC_MAX_LEN bytes */
	size_t len;			/* bytes held in @buf */
	size_t pos;			/* first unconsumed byte of @buf */
	uint64_t off;			/* file offset of buf[pos] */
	uint64_t created_ns;		/* from the header */
	uint64_t rec_off;		/* file offset of the record last returned */
	bool eof;			/* no more to read from @f */
	bool header;			/* the header was read */
};

int copyrec_reader_init(struct copyrec_reader *rd, FILE *f);
int copyrec_reader_next(struct copyrec_reader *rd, struct copyrec *r,
			char *err, size_t errlen);
void copyrec_reader_free(struct copyrec_reader *rd);

#endif /* SDS_COPYREC_H */
