// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * diff.c - compare a recorded response with a shadow's answer under the
 * --ignore rules (diff.h).  Everything compared comes from outside (a
 * recording, a shadow): lengths are the callers', nothing is assumed
 * NUL-terminated, and what is shown of a side is shortened and escaped.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "diff.h"

#define SHOW_MAX	60	/* bytes of a value shown in a difference */

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* RFC 9110 token characters: what a header name may hold. */
static bool token_char(char c)
{
	return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+.^_`|~-", c));
}

static int path_parse(const char *spec, struct diff_path *p, size_t *bad)
{
	const char *s = spec;
	struct diff_seg *g;
	size_t n;

	memset(p, 0, sizeof(*p));
	if (*s == '$')
		s++;
	else if (name_char(*s) || *s == '*')
		goto name;		/* "a.b": the first key without its dot */
	else
		return *bad = 0, -1;
	while (*s) {
		if (*s == '.') {
			s++;
name:
			if (p->n == DIFF_PATH_MAX)
				return *bad = s - spec, -1;
			g = &p->seg[p->n];
			g->index = -1;
			if (*s == '*') {
				g->any = true;
				s++;
			} else {
				for (n = 0; name_char(s[n]); n++)
					;
				if (!n || n > DIFF_SEG_MAX)
					return *bad = s - spec, -1;
				memcpy(g->key, s, n);
				s += n;
			}
			p->n++;
		} else if (*s == '[') {
			if (p->n == DIFF_PATH_MAX)
				return *bad = s - spec, -1;
			g = &p->seg[p->n];
			s++;
			if (*s == '*') {
				g->any = true;
				s++;
			} else {
				char *end;

				if (!isdigit((unsigned char)*s))
					return *bad = s - spec, -1;
				g->index = strtol(s, &end, 10);
				if (end - s > 9)
					return *bad = s - spec, -1;
				s = end;
			}
			if (*s != ']')
				return *bad = s - spec, -1;
			s++;
			p->n++;
		} else {
			return *bad = s - spec, -1;
		}
	}
	return 0;
}

int diff_rules_add(struct diff_rules *r, const char *spec, char *err,
		   size_t errlen)
{
	size_t len = strlen(spec), bad = 0, i;
	char *re;
	int e;

	if (len > 1 && spec[0] == '/') {
		if (len < 3 || spec[len - 1] != '/') {
			snprintf(err, errlen, "--ignore '%s': a regular expression is /REGEX/ (closing / missing)", spec);
			return -1;
		}
		if (r->nres == DIFF_RULES_MAX)
			goto full;
		re = strndup(spec + 1, len - 2);
		if (!re)
			return snprintf(err, errlen, "out of memory"), -1;
		e = regcomp(&r->res[r->nres], re, REG_EXTENDED);
		free(re);
		if (e) {
			char why[128];

			regerror(e, &r->res[r->nres], why, sizeof(why));
			snprintf(err, errlen, "--ignore '%s': bad regular expression: %s", spec, why);
			return -1;
		}
		r->nres++;
		return 0;
	}
	if (!strncasecmp(spec, "header:", 7)) {
		const char *h = spec + 7;

		for (i = 0; token_char(h[i]); i++)
			;
		if (!i || h[i] || i > DIFF_SEG_MAX) {
			snprintf(err, errlen, "--ignore '%s': header:NAME wants a header name (1..64 token characters)", spec);
			return -1;
		}
		if (r->nheaders == DIFF_RULES_MAX)
			goto full;
		memcpy(r->headers[r->nheaders++], h, i + 1);
		return 0;
	}
	if (r->npaths == DIFF_RULES_MAX)
		goto full;
	if (!len || path_parse(spec, &r->paths[r->npaths], &bad)) {
		snprintf(err, errlen,
			 "--ignore '%s': unknown syntax at character %zu (a JSON path like $.a.b[0], a.b or $.items[*].ts; /REGEX/; or header:NAME)",
			 spec, bad + 1);
		return -1;
	}
	r->npaths++;
	return 0;
full:
	snprintf(err, errlen, "--ignore '%s': more than %d rules of its kind", spec, DIFF_RULES_MAX);
	return -1;
}

void diff_rules_free(struct diff_rules *r)
{
	int i;

	for (i = 0; i < r->nres; i++)
		regfree(&r->res[i]);
	r->nres = 0;
}

/* @len bytes of @p into @out, printable, cut at SHOW_MAX with "...". */
static void show(char *out, size_t size, const char *p, size_t len)
{
	size_t o = 0, i;

	for (i = 0; i < len && o + 8 < size; i++) {
		unsigned char c = p[i];

		if (i == SHOW_MAX) {
			o += snprintf(out + o, size - o, "...");
			break;
		}
		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = c;
		else
			o += snprintf(out + o, size - o, "\\x%02x", c);
	}
	out[o] = '\0';
}

static void show_json(char *out, size_t size, const json_t *v)
{
	char *s;

	if (!v) {
		snprintf(out, size, "(absent)");
		return;
	}
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!s) {
		snprintf(out, size, "?");
		return;
	}
	show(out, size, s, strlen(s));
	free(s);
}

/* ---- JSON ---- */

struct walk {
	const struct diff_rules *r;
	const char *key[DIFF_PATH_MAX];	/* the path so far: a key, or NULL ... */
	long index[DIFF_PATH_MAX];	/* ... and then an index */
	int depth;
	struct diff_result *res;
};

static bool path_ignored(const struct walk *w)
{
	int i, j;

	for (i = 0; i < w->r->npaths; i++) {
		const struct diff_path *p = &w->r->paths[i];

		if (p->n != w->depth)
			continue;
		for (j = 0; j < p->n; j++) {
			const struct diff_seg *g = &p->seg[j];

			if (g->any)
				continue;
			if (g->index >= 0 ? w->key[j] || w->index[j] != g->index :
			    !w->key[j] || strcmp(w->key[j], g->key))
				break;
		}
		if (j == p->n)
			return true;
	}
	return false;
}

static void path_show(const struct walk *w, char *out, size_t size)
{
	size_t o;
	int i;

	o = snprintf(out, size, "$");
	for (i = 0; i < w->depth && o < size; i++) {
		const char *k = w->key[i];
		size_t n;

		if (!k) {
			o += snprintf(out + o, size - o, "[%ld]", w->index[i]);
			continue;
		}
		for (n = 0; name_char(k[n]); n++)
			;
		o += snprintf(out + o, size - o, k[n] || !n ? "[\"%.64s\"]" : ".%.64s", k);
	}
}

static int differ(struct walk *w, const json_t *a, const json_t *b)
{
	path_show(w, w->res->where, sizeof(w->res->where));
	show_json(w->res->recorded, sizeof(w->res->recorded), a);
	show_json(w->res->shadow, sizeof(w->res->shadow), b);
	return 1;
}

static int walk_cmp(struct walk *w, const json_t *a, const json_t *b);

/* Child @key (or @index) of both sides, below the current path. */
static int walk_child(struct walk *w, const char *key, long index,
		      const json_t *a, const json_t *b)
{
	int rc;

	if (w->depth == DIFF_PATH_MAX)	/* deeper than any rule: whole values */
		return json_equal(a, b) ? 0 : differ(w, a, b);
	w->key[w->depth] = key;
	w->index[w->depth] = index;
	w->depth++;
	rc = path_ignored(w) ? 0 : !a || !b ? differ(w, a, b) : walk_cmp(w, a, b);
	w->depth--;
	return rc;
}

static int walk_cmp(struct walk *w, const json_t *a, const json_t *b)
{
	const char *k;
	json_t *v;
	size_t i, na, nb;

	if (json_typeof(a) != json_typeof(b))
		return differ(w, a, b);
	if (json_is_object(a)) {
		/* In the recorded order, then what only the shadow has. */
		json_object_foreach((json_t *)a, k, v)
			if (walk_child(w, k, -1, v, json_object_get(b, k)))
				return 1;
		json_object_foreach((json_t *)b, k, v)
			if (!json_object_get(a, k) && walk_child(w, k, -1, NULL, v))
				return 1;
		return 0;
	}
	if (json_is_array(a)) {
		na = json_array_size(a);
		nb = json_array_size(b);
		for (i = 0; i < na || i < nb; i++)
			if (walk_child(w, NULL, (long)i, json_array_get(a, i),
				       json_array_get(b, i)))
				return 1;
		return 0;
	}
	return json_equal(a, b) ? 0 : differ(w, a, b);
}

/* ---- bodies and HTTP ---- */

/* @p[0..len) without every match of the rules' expressions, into @out. */
static size_t strip(const struct diff_rules *r, const char *p, size_t len,
		    char *out)
{
	char *tmp = out;
	size_t n = len, o, at;
	regmatch_t m;
	int i;

	memcpy(out, p, len);
	out[len] = '\0';
	for (i = 0; i < r->nres; i++) {
		for (at = 0, o = 0; at <= n;) {
			m.rm_so = at;
			m.rm_eo = n;
			if (regexec(&r->res[i], tmp, 1, &m, REG_STARTEND |
				    (at ? REG_NOTBOL : 0)))
				break;
			memmove(tmp + o, tmp + at, m.rm_so - at);
			o += m.rm_so - at;
			at = m.rm_eo;
			if (m.rm_eo == m.rm_so) {	/* empty: keep a byte, go on */
				if (at == n)
					break;
				tmp[o++] = tmp[at++];
			}
		}
		memmove(tmp + o, tmp + at, n - at);
		n = o + n - at;
		tmp[n] = '\0';
	}
	return n;
}

static int body_cmp(const struct diff_rules *r, const char *a, size_t alen,
		    const char *b, size_t blen, struct diff_result *res)
{
	json_t *ja = NULL, *jb = NULL;
	struct walk w = { .r = r, .res = res };
	char *sa = NULL, *sb = NULL;
	size_t i;
	int rc;

	if (r->nres) {		/* copies without the expressions' matches */
		sa = malloc(alen + 1);
		sb = malloc(blen + 1);
		if (!sa || !sb) {
			snprintf(res->where, sizeof(res->where), "out of memory");
			rc = 1;
			goto out;
		}
		alen = strip(r, a, alen, sa);
		blen = strip(r, b, blen, sb);
		a = sa;
		b = sb;
	}
	/* The same bytes are the same JSON, whatever is ignored: most pairs
	 * of a replay are, and never pay for a parse. */
	if (alen == blen && !memcmp(a, b, alen)) {
		rc = 0;
		goto out;
	}
	if (alen && blen) {
		ja = json_loadb(a, alen, JSON_DECODE_ANY, NULL);
		jb = ja ? json_loadb(b, blen, JSON_DECODE_ANY, NULL) : NULL;
	}
	if (ja && jb) {
		rc = path_ignored(&w) ? 0 : walk_cmp(&w, ja, jb);
		goto out;
	}
	for (i = 0; i < alen && i < blen && a[i] == b[i]; i++)
		;
	rc = i < alen || i < blen;
	if (rc) {
		snprintf(res->where, sizeof(res->where), "body byte %zu", i);
		show(res->recorded, sizeof(res->recorded), a + i, alen - i);
		show(res->shadow, sizeof(res->shadow), b + i, blen - i);
	}
out:
	json_decref(ja);
	json_decref(jb);
	free(sa);
	free(sb);
	return rc;
}

/* A message split: status, header lines, body. */
struct msg {
	const char *head, *body;
	size_t hlen, blen;
	int status;			/* -1: not HTTP */
};

static void msg_split(const uint8_t *p, size_t len, struct msg *m)
{
	const char *s = (const char *)p, *e = memmem(s, len, "\r\n\r\n", 4);

	m->status = -1;
	m->head = s;
	m->hlen = 0;
	m->body = s;
	m->blen = len;
	if (len < 12 || memcmp(s, "HTTP/1.", 7) || s[8] != ' ' || !e ||
	    !isdigit((unsigned char)s[9]) || !isdigit((unsigned char)s[10]) ||
	    !isdigit((unsigned char)s[11]))
		return;
	m->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
	m->hlen = e - s + 2;		/* with the last line's CRLF */
	m->body = e + 4;
	m->blen = len - (e + 4 - s);
}

static bool header_skipped(const struct diff_rules *r, const char *n, size_t len)
{
	static const char *const framing[] = {
		"content-length", "transfer-encoding", "connection", "keep-alive",
	};
	size_t i;

	for (i = 0; i < sizeof(framing) / sizeof(framing[0]); i++)
		if (strlen(framing[i]) == len && !strncasecmp(framing[i], n, len))
			return true;
	for (i = 0; i < (size_t)r->nheaders; i++)
		if (strlen(r->headers[i]) == len && !strncasecmp(r->headers[i], n, len))
			return true;
	return false;
}

/* The next header line of @m after @at: name and value, or false. */
static bool header_next(const struct msg *m, size_t *at, const char **n,
			size_t *nlen, const char **v, size_t *vlen)
{
	const char *l, *e, *c;

	for (;;) {
		l = m->head + *at;
		if (*at >= m->hlen)
			return false;
		/* The head ends in CRLF: a LF is a line's end (a bare LF too). */
		e = memchr(l, '\n', m->hlen - *at);
		if (!e)
			return false;
		*at = e + 1 - m->head;
		if (e > l && e[-1] == '\r')
			e--;
		c = memchr(l, ':', e - l);
		if (!c || l == m->head)		/* the status line, or junk */
			continue;
		*n = l;
		*nlen = c - l;
		for (c++; c < e && (*c == ' ' || *c == '\t'); c++)
			;
		*v = c;
		*vlen = e - c;
		while (*vlen && (c[*vlen - 1] == ' ' || c[*vlen - 1] == '\t'))
			(*vlen)--;
		return true;
	}
}

/* Is header @n: @v in @m (same name, same value, not yet @used)? */
static bool header_in(const struct msg *m, const char *n, size_t nlen,
		      const char *v, size_t vlen)
{
	const char *n2, *v2;
	size_t at = 0, nl2, vl2;

	while (header_next(m, &at, &n2, &nl2, &v2, &vl2))
		if (nl2 == nlen && !strncasecmp(n, n2, nlen) && vl2 == vlen &&
		    !memcmp(v, v2, vlen))
			return true;
	return false;
}

/* Every compared header of @a is in @b: else 1 with @res set. */
static int headers_cmp(const struct diff_rules *r, const struct msg *a,
		       const struct msg *b, bool a_recorded,
		       struct diff_result *res)
{
	const char *n, *v;
	size_t at = 0, nl, vl;

	while (header_next(a, &at, &n, &nl, &v, &vl)) {
		if (header_skipped(r, n, nl) || header_in(b, n, nl, v, vl))
			continue;
		snprintf(res->where, sizeof(res->where), "header %.*s",
			 (int)(nl < 64 ? nl : 64), n);
		show(a_recorded ? res->recorded : res->shadow, DIFF_WHERE_MAX, v, vl);
		snprintf(a_recorded ? res->shadow : res->recorded, DIFF_WHERE_MAX,
			 "(absent or other)");
		return 1;
	}
	return 0;
}

int diff_compare(const struct diff_rules *r, const uint8_t *rec, size_t rlen,
		 const uint8_t *got, size_t glen, struct diff_result *res)
{
	struct msg a, b;

	memset(res, 0, sizeof(*res));
	msg_split(rec, rlen, &a);
	msg_split(got, glen, &b);
	if (a.status >= 0) {
		if (a.status != b.status) {
			snprintf(res->where, sizeof(res->where), "status");
			snprintf(res->recorded, sizeof(res->recorded), "%d", a.status);
			if (b.status < 0)
				snprintf(res->shadow, sizeof(res->shadow), "not HTTP");
			else
				snprintf(res->shadow, sizeof(res->shadow), "%d", b.status);
			return 1;
		}
		if (headers_cmp(r, &a, &b, true, res) ||
		    headers_cmp(r, &b, &a, false, res))
			return 1;
	} else if (b.status >= 0) {
		/* A bare recorded body: the shadow's body is what it answered. */
	} else {
		b.body = (const char *)got;
		b.blen = glen;
	}
	return body_cmp(r, a.body, a.blen, b.body, b.blen, res);
}
