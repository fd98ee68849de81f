// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* copyrec.c - the copy record codec and the recording file reader. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "copyrec.h"
#include "names.h"

const char copyrec_stream_magic[4] = { 'S', 'D', 'S', 'c' };
const char copyrec_file_magic[4] = { 'S', 'D', 'S', 'r' };

/* Byte by byte: the buffers are not aligned and the host order is moot. */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v);
	put16(p + 2, v >> 16);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v);
	put32(p + 4, v >> 32);
}

static uint16_t get16(const uint8_t *p)
{
	return p[0] | (uint16_t)p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* The rules every record obeys, for the encoder and the decoder alike. */
static const char *lens_check(uint32_t orig, uint32_t cap, uint16_t flags,
			      size_t *at)
{
	if (cap > COPYREC_PAYLOAD_MAX)
		return *at = 12, "captured length above 65536";
	if (cap > orig)
		return *at = 12, "captured length above the original length";
	if (flags & ~COPYREC_F_ALL)
		return *at = 16, "unknown flags";
	if (!(flags & COPYREC_F_TRUNCATED) != (cap == orig))
		return *at = 16, "truncated flag does not match the lengths";
	if ((flags & COPYREC_F_RESPONSE) && !(flags & COPYREC_F_PAIRED))
		return *at = 16, "response flag without a pair id";
	return NULL;
}

size_t copyrec_size(const struct copyrec *r)
{
	return COPYREC_HDR_LEN + strlen(r->app) + strlen(r->point) +
	       (r->flags & COPYREC_F_PAIRED ? COPYREC_PAIR_LEN : 0) + r->cap_len;
}

int copyrec_encode(const struct copyrec *r, void *buf, size_t size)
{
	size_t alen = strnlen(r->app, sizeof(r->app));
	size_t plen = strnlen(r->point, sizeof(r->point));
	size_t pl = r->flags & COPYREC_F_PAIRED ? COPYREC_PAIR_LEN : 0;
	uint8_t *p = buf;
	size_t at;

	if (!sds_name_valid(r->app) || !sds_name_valid(r->point) ||
	    lens_check(r->orig_len, r->cap_len, r->flags, &at) ||
	    (r->cap_len && !r->data) ||
	    size < COPYREC_HDR_LEN + alen + plen + pl + r->cap_len) {
		errno = EINVAL;
		return -1;
	}
	put64(p, r->ts_ns);
	put32(p + 8, r->orig_len);
	put32(p + 12, r->cap_len);
	put16(p + 16, r->flags);
	p[18] = alen;
	p[19] = plen;
	memcpy(p + 20, r->app, alen);
	memcpy(p + 20 + alen, r->point, plen);
	if (pl)
		put64(p + 20 + alen + plen, r->pair);
	if (r->cap_len)
		memcpy(p + 20 + alen + plen + pl, r->data, r->cap_len);
	return (int)(COPYREC_HDR_LEN + alen + plen + pl + r->cap_len);
}

/* A name of @len bytes at @p into @out, if it is a valid name. */
static bool name_take(const uint8_t *p, size_t len, char *out)
{
	memcpy(out, p, len);
	out[len] = '\0';
	/* An embedded NUL would make a shorter, valid name. */
	return strlen(out) == len && sds_name_valid(out);
}

int copyrec_decode(const void *buf, size_t len, struct copyrec *r,
		   const char **why, size_t *at)
{
	const uint8_t *p = buf;
	size_t alen, plen, pl, total;

	if (len < COPYREC_HDR_LEN)
		return 0;
	r->ts_ns = get64(p);
	r->orig_len = get32(p + 8);
	r->cap_len = get32(p + 12);
	r->flags = get16(p + 16);
	alen = p[18];
	plen = p[19];
	*why = lens_check(r->orig_len, r->cap_len, r->flags, at);
	if (*why)
		return -1;
	if (alen < 1 || alen > SDS_NAME_MAX)
		return *at = 18, *why = "app name length not in 1..64", -1;
	if (plen < 1 || plen > SDS_NAME_MAX)
		return *at = 19, *why = "point name length not in 1..64", -1;
	/* Bounded above: 20 + 64 + 64 + 8 + 65536, no overflow. */
	pl = r->flags & COPYREC_F_PAIRED ? COPYREC_PAIR_LEN : 0;
	total = COPYREC_HDR_LEN + alen + plen + pl + r->cap_len;
	if (len < COPYREC_HDR_LEN + alen + plen)
		return 0;
	if (!name_take(p + 20, alen, r->app))
		return *at = 20, *why = "app name not of [A-Za-z0-9_-]", -1;
	if (!name_take(p + 20 + alen, plen, r->point))
		return *at = 20 + alen, *why = "point name not of [A-Za-z0-9_-]", -1;
	if (len < total)
		return 0;
	r->pair = pl ? get64(p + 20 + alen + plen) : 0;
	r->data = p + 20 + alen + plen + pl;
	return (int)total;
}

void copyrec_hello_encode(void *buf)
{
	uint8_t *p = buf;

	memcpy(p, copyrec_stream_magic, 4);
	put16(p + 4, COPYREC_VERSION);
	put16(p + 6, 0);
}

/* Magic, version and the reserved zero: the start of hello and header. */
static int preamble_check(const uint8_t *p, const char magic[4],
			  const char **why, size_t *at)
{
	if (memcmp(p, magic, 4))
		return *at = 0, *why = "bad magic", -1;
	if (get16(p + 4) != COPYREC_VERSION)
		return *at = 4, *why = "unsupported version (this is version 1)", -1;
	if (get16(p + 6))
		return *at = 6, *why = "reserved field not zero", -1;
	return 0;
}

int copyrec_hello_decode(const void *buf, size_t len, const char **why,
			 size_t *at)
{
	/* A wrong magic is told as soon as its bytes are in. */
	if (len < 4 && memcmp(buf, copyrec_stream_magic, len))
		return *at = 0, *why = "bad magic", -1;
	if (len < COPYREC_HELLO_LEN)
		return 0;
	if (preamble_check(buf, copyrec_stream_magic, why, at))
		return -1;
	return COPYREC_HELLO_LEN;
}

void copyrec_filehdr_encode(void *buf, uint64_t created_ns)
{
	uint8_t *p = buf;

	memcpy(p, copyrec_file_magic, 4);
	put16(p + 4, COPYREC_VERSION);
	put16(p + 6, 0);
	put64(p + 8, created_ns);
}

int copyrec_filehdr_decode(const void *buf, size_t len, uint64_t *created_ns,
			   const char **why, size_t *at)
{
	if (len < COPYREC_FILEHDR_LEN)
		return 0;
	if (preamble_check(buf, copyrec_file_magic, why, at))
		return -1;
	*created_ns = get64((const uint8_t *)buf + 8);
	return COPYREC_FILEHDR_LEN;
}

int copyrec_reader_init(struct copyrec_reader *rd, FILE *f)
{
	memset(rd, 0, sizeof(*rd));
	rd->f = f;
	rd->buf = malloc(COPYREC_MAX_LEN);
	return rd->buf ? 0 : -1;
}

void copyrec_reader_free(struct copyrec_reader *rd)
{
	free(rd->buf);
	rd->buf = NULL;
}

/* Keep the unconsumed bytes and top the buffer up from the file. */
static int reader_fill(struct copyrec_reader *rd)
{
	size_t n;

	if (rd->pos) {
		memmove(rd->buf, rd->buf + rd->pos, rd->len - rd->pos);
		rd->len -= rd->pos;
		rd->pos = 0;
	}
	if (rd->eof || rd->len == COPYREC_MAX_LEN)
		return 0;
	n = fread(rd->buf + rd->len, 1, COPYREC_MAX_LEN - rd->len, rd->f);
	rd->len += n;
	if (n == 0) {
		if (ferror(rd->f))
			return -1;
		rd->eof = true;
	}
	return 0;
}

int copyrec_reader_next(struct copyrec_reader *rd, struct copyrec *r,
			char *err, size_t errlen)
{
	const char *why = NULL;
	size_t at = 0;
	int n;

	for (;;) {
		if (!rd->header)
			n = copyrec_filehdr_decode(rd->buf + rd->pos, rd->len - rd->pos,
						   &rd->created_ns, &why, &at);
		else if (rd->pos == rd->len && rd->eof)
			return 0;
		else
			n = copyrec_decode(rd->buf + rd->pos, rd->len - rd->pos, r,
					   &why, &at);
		if (n < 0) {
			snprintf(err, errlen, "offset %" PRIu64 ": %s",
				 rd->off + at, why);
			return -1;
		}
		if (n > 0)
			break;
		if (rd->eof) {
			snprintf(err, errlen, "offset %" PRIu64 ": truncated %s (%zu of its bytes in the file)",
				 rd->off, rd->header ? "record" : "file header",
				 rd->len - rd->pos);
			return -1;
		}
		if (reader_fill(rd)) {
			snprintf(err, errlen, "offset %" PRIu64 ": %s", rd->off,
				 strerror(errno));
			return -1;
		}
	}
	rd->rec_off = rd->off;
	rd->pos += n;
	rd->off += n;
	if (!rd->header) {
		rd->header = true;
		return copyrec_reader_next(rd, r, err, errlen);
	}
	return 1;
}
