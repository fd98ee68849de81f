// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * demangle.c - names as users write them.  `nm -C` shows a C++ or Rust
 * developer "shop::Cart::add(int)" and "main::handler"; the file has
 * "_ZN4shop4Cart3addEi" and "_ZN4main7handler17h817acd4767b9a97bE".
 * libiberty's demangler (the one binutils and gdb use) reads both C++ and
 * Rust, legacy and v0, so the names here are the ones those tools print.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "target/demangle.h"

/* Names are compared and measured on at most this many characters. */
#define NAME_CMP_MAX	512
/* Edit distances are computed on the first this many characters. */
#define DIST_MAX_LEN	128
/* A nearest name that does not contain what the user wrote ranks after all that do. */
#define NOT_CONTAINED	1000u

/* "::h" and 16 hex digits: the hash legacy Rust symbols end with. */
static bool rust_hash_tail(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 19 || memcmp(s + n - 19, "::h", 3))
		return false;
	for (i = n - 16; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

int demangle__name(const char *mangled, struct demangled *out)
{
	memset(out, 0, sizeof(*out));
	/* Itanium (_Z) and Rust v0 (_R); anything else is a plain name. */
	if (strncmp(mangled, "_Z", 2) && strncmp(mangled, "_R", 2))
		return -1;
	/* Auto style: C++, and Rust legacy (its hash dropped) and v0. */
	out->full = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI);
	if (!out->full)
		return -1;
	out->base = cplus_demangle(mangled, DMGL_ANSI);
	/* Verbose keeps a legacy symbol's hash: "main::handler::h<16 hex>". */
	out->hashed = rust_demangle(mangled, DMGL_VERBOSE);
	if (out->hashed && !rust_hash_tail(out->hashed)) {
		free(out->hashed);
		out->hashed = NULL;
	}
	return 0;
}

void demangle__free(struct demangled *d)
{
	free(d->full);
	free(d->base);
	free(d->hashed);
	memset(d, 0, sizeof(*d));
}

/*
 * @s without blanks and ABI tags into @out: "foo::bar[abi:cxx11](std::
 * string const &)" and "foo::bar(std::string const&)" read the same.
 */
static void name_norm(const char *s, char *out, size_t len)
{
	size_t o = 0;

	while (*s && o + 1 < len) {
		if (*s == ' ' || *s == '\t') {
			s++;
			continue;
		}
		if (!strncmp(s, "[abi:", 5) && strchr(s, ']')) {
			s = strchr(s, ']') + 1;
			continue;
		}
		out[o++] = *s++;
	}
	out[o] = '\0';
}

static bool name_eq(const char *have, const char *want_norm)
{
	char n[NAME_CMP_MAX];

	if (!have)
		return false;
	name_norm(have, n, sizeof(n));
	return !strcmp(n, want_norm);
}

bool demangle__matches(const struct demangled *d, const char *want)
{
	char w[NAME_CMP_MAX];

	if (!d->full)
		return false;
	name_norm(want, w, sizeof(w));
	if (name_eq(d->full, w) || name_eq(d->hashed, w))
		return true;
	/* "shop::Cart::add" names every overload; "add(int)" only its own. */
	return !strchr(want, '(') && name_eq(d->base, w);
}

unsigned int demangle__distance(const char *a, const char *b, unsigned int cap)
{
	unsigned int row[DIST_MAX_LEN + 1], i, j, la, lb, diag, up;

	la = (unsigned int)strnlen(a, DIST_MAX_LEN);
	lb = (unsigned int)strnlen(b, DIST_MAX_LEN);
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			unsigned int best;

			up = row[j];
			best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb] < cap ? row[lb] : cap;
}

void demangle_pick__init(struct demangle_pick *pk, const char *want)
{
	memset(pk, 0, sizeof(*pk));
	pk->want = want;
}

static void cand_free(struct demangle_cand *c)
{
	free(c->shown);
	free(c->mangled);
	memset(c, 0, sizeof(*c));
}

/* Order of the nearest list and of the matches shown: score, then names. */
static int cand_cmp(const struct demangle_cand *a, const struct demangle_cand *b)
{
	int r;

	if (a->score != b->score)
		return a->score < b->score ? -1 : 1;
	r = strcmp(a->shown, b->shown);
	return r ? r : strcmp(a->mangled, b->mangled);
}

static int cand_cmp_q(const void *a, const void *b)
{
	return cand_cmp(a, b);
}

static int cand_set(struct demangle_cand *c, const char *shown,
		    const char *mangled, uint64_t vaddr, uint64_t size,
		    unsigned int score)
{
	c->shown = strdup(shown);
	c->mangled = strdup(mangled);
	c->vaddr = vaddr;
	c->size = size;
	c->score = score;
	c->base_len = 0;
	if (!c->shown || !c->mangled) {
		cand_free(c);
		return -1;
	}
	return 0;
}

static int pick_match(struct demangle_pick *pk, const char *shown,
		      const char *mangled, uint64_t vaddr, uint64_t size)
{
	struct demangle_cand *m;
	size_t i;

	/* Aliases (a C1 and a C2 constructor, say) are one function. */
	for (i = 0; i < pk->nmatch; i++)
		if (pk->match[i].vaddr == vaddr)
			return 0;
	if (pk->nmatch == pk->match_cap) {
		size_t cap = pk->match_cap ? 2 * pk->match_cap : 4;

		m = realloc(pk->match, cap * sizeof(*m));
		if (!m)
			return -1;
		pk->match = m;
		pk->match_cap = cap;
	}
	if (cand_set(&pk->match[pk->nmatch], shown, mangled, vaddr, size, 0))
		return -1;
	pk->nmatch++;
	return 0;
}

/* Keep @shown among the nearest if it beats the worst of them. */
static int pick_near(struct demangle_pick *pk, const char *shown,
		     const char *cmp_name, const char *mangled, uint64_t vaddr)
{
	char w[NAME_CMP_MAX], n[NAME_CMP_MAX];
	struct demangle_cand c = { .shown = (char *)shown, .mangled = (char *)mangled };
	size_t i;

	name_norm(pk->want, w, sizeof(w));
	name_norm(cmp_name, n, sizeof(n));
	c.score = demangle__distance(w, n, NOT_CONTAINED - 1);
	if (!*w || !strstr(n, w))
		c.score += NOT_CONTAINED;
	for (i = 0; i < pk->nnear; i++)
		if (!strcmp(pk->near[i].shown, shown))
			return 0;
	if (pk->nnear == DEMANGLE_NEAREST) {
		if (cand_cmp(&c, &pk->near[DEMANGLE_NEAREST - 1]) >= 0)
			return 0;
		cand_free(&pk->near[--pk->nnear]);
	}
	if (cand_set(&pk->near[pk->nnear], shown, mangled, vaddr, 0, c.score))
		return -1;
	pk->nnear++;
	qsort(pk->near, pk->nnear, sizeof(pk->near[0]), cand_cmp_q);
	return 0;
}

/* One ".word.N" or ".word" component at @s: its end, or NULL. */
static const char *suffix_part(const char *s, const char *word, bool num)
{
	size_t n = strlen(word);

	if (*s != '.' || strncmp(s + 1, word, n))
		return NULL;
	s += 1 + n;
	if (!num)
		return *s == '\0' || *s == '.' ? s : NULL;
	if (*s != '.' || s[1] < '0' || s[1] > '9')
		return NULL;
	for (s++; *s >= '0' && *s <= '9'; s++)
		;
	return *s == '\0' || *s == '.' ? s : NULL;
}

enum demangle_suffix demangle__suffix_kind(const char *s)
{
	enum demangle_suffix k = DEMANGLE_SUFFIX_SAME;
	const char *e;

	if (*s != '.')
		return DEMANGLE_SUFFIX_NONE;
	while (*s) {
		if ((e = suffix_part(s, "isra", true)) ||
		    (e = suffix_part(s, "constprop", true)) ||
		    (e = suffix_part(s, "part", true))) {
			k = DEMANGLE_SUFFIX_CLONE;
		} else if (!(e = suffix_part(s, "llvm", true)) &&
			   !(e = suffix_part(s, "lto_priv", true)) &&
			   !(e = suffix_part(s, "localalias", false))) {
			return DEMANGLE_SUFFIX_OTHER;	/* .cold, or unknown */
		}
		s = e;
	}
	return k;
}

enum demangle_suffix demangle__suffix(const char *mangled, size_t *base_len)
{
	const char *s;

	*base_len = strlen(mangled);
	/* Itanium and Rust v0 mangled names hold no '.': a suffix does. */
	if (strncmp(mangled, "_Z", 2) && strncmp(mangled, "_R", 2))
		return DEMANGLE_SUFFIX_NONE;
	s = strchr(mangled, '.');
	if (!s)
		return DEMANGLE_SUFFIX_NONE;
	*base_len = (size_t)(s - mangled);
	return demangle__suffix_kind(s);
}

/* Does @want name the function @mangled is a clone of (its first @n bytes)? */
static bool clone_matches(const char *mangled, size_t n, const char *want)
{
	struct demangled d;
	char *base;
	bool m;

	base = strndup(mangled, n);
	if (!base)
		return false;
	m = !demangle__name(base, &d) && demangle__matches(&d, want);
	demangle__free(&d);
	free(base);
	return m;
}

int demangle_pick__add(struct demangle_pick *pk, const char *mangled,
		       uint64_t vaddr, uint64_t size)
{
	enum demangle_suffix sfx;
	struct demangled d;
	const char *shown, *cmp;
	size_t base_len;
	int ret;

	sfx = demangle__suffix(mangled, &base_len);
	if ((sfx == DEMANGLE_SUFFIX_CLONE || sfx == DEMANGLE_SUFFIX_SAME) &&
	    clone_matches(mangled, base_len, pk->want)) {
		if (demangle__name(mangled, &d))
			return 0;
		ret = pick_match(pk, d.full, mangled, vaddr, size);
		if (!ret && sfx == DEMANGLE_SUFFIX_CLONE && pk->nmatch &&
		    !strcmp(pk->match[pk->nmatch - 1].mangled, mangled))
			pk->match[pk->nmatch - 1].base_len = base_len;
		demangle__free(&d);
		return ret;
	}
	if (demangle__name(mangled, &d)) {
		/* A plain name (C, Go) matches only as written: no match here. */
		return pk->nearest ? pick_near(pk, mangled, mangled, mangled, vaddr) : 0;
	}
	shown = d.full;
	/* A .cold piece, or a suffix not known: never named by its function's name. */
	if (sfx == DEMANGLE_SUFFIX_NONE && demangle__matches(&d, pk->want)) {
		ret = pick_match(pk, shown, mangled, vaddr, size);
	} else if (!pk->nearest) {
		ret = 0;
	} else {
		/* Measured against the form the user wrote: with "(" or without. */
		cmp = strchr(pk->want, '(') || !d.base ? d.full : d.base;
		ret = pick_near(pk, shown, cmp, mangled, vaddr);
	}
	demangle__free(&d);
	return ret;
}

size_t demangle_pick__settle(struct demangle_pick *pk)
{
	size_t i, j, k = 0, nclone = 0;

	for (i = 0; i < pk->nmatch; i++) {
		struct demangle_cand *c = &pk->match[i];
		bool shadowed = false;

		for (j = 0; c->base_len && j < pk->nmatch; j++)
			if (!pk->match[j].base_len &&
			    strlen(pk->match[j].mangled) == c->base_len &&
			    !strncmp(pk->match[j].mangled, c->mangled, c->base_len))
				shadowed = true;
		if (shadowed) {
			cand_free(c);
			continue;
		}
		pk->match[k++] = *c;
	}
	pk->nmatch = k;
	for (i = 0; i < pk->nmatch; i++) {
		if (!pk->match[i].base_len ||
		    pk->match[i].base_len != pk->match[0].base_len ||
		    strncmp(pk->match[i].mangled, pk->match[0].mangled,
			    pk->match[0].base_len))
			return 0;
		nclone++;
	}
	return nclone;
}

/* "shown [mangled]", or "shown" when it is not mangled. */
static size_t cand_print(const struct demangle_cand *c, char *buf, size_t len)
{
	int n;

	if (!strcmp(c->shown, c->mangled))
		n = snprintf(buf, len, "%s", c->shown);
	else
		n = snprintf(buf, len, "%s [%s]", c->shown, c->mangled);
	return n < 0 ? 0 : (size_t)n;
}

void demangle_pick__describe(struct demangle_pick *pk, char *buf,
			     size_t len)
{
	size_t used = 0, i, shown;

	if (!len)
		return;
	buf[0] = '\0';
	if (pk->nmatch > 1) {
		shown = pk->nmatch < DEMANGLE_SHOWN ? pk->nmatch : DEMANGLE_SHOWN;
		qsort(pk->match, pk->nmatch, sizeof(pk->match[0]), cand_cmp_q);
		used += (size_t)snprintf(buf, len, "matches %zu functions: ",
					 pk->nmatch);
		for (i = 0; i < shown && used < len; i++) {
			used += cand_print(&pk->match[i], buf + used, len - used);
			if (used < len)
				used += (size_t)snprintf(buf + used, len - used, "; ");
		}
		if (pk->nmatch > shown && used < len)
			used += (size_t)snprintf(buf + used, len - used,
						 "and %zu more; ", pk->nmatch - shown);
		if (used < len)
			snprintf(buf + used, len - used,
				 "name one by its full signature or its mangled name");
		return;
	}
	if (!pk->nnear)
		return;
	used += (size_t)snprintf(buf, len, "nearest: ");
	for (i = 0; i < pk->nnear && used < len; i++) {
		if (i)
			used += (size_t)snprintf(buf + used, len - used, ", ");
		if (used < len)
			used += cand_print(&pk->near[i], buf + used, len - used);
	}
}

void demangle_pick__free(struct demangle_pick *pk)
{
	size_t i;

	for (i = 0; i < pk->nmatch; i++)
		cand_free(&pk->match[i]);
	free(pk->match);
	for (i = 0; i < pk->nnear; i++)
		cand_free(&pk->near[i]);
	memset(pk, 0, sizeof(*pk));
}

int demangle__shown(const char *mangled, char *buf, size_t len)
{
	struct demangled d;

	if (len)
		buf[0] = '\0';
	if (demangle__name(mangled, &d))
		return -1;
	snprintf(buf, len, "%s [%s]", d.full, mangled);
	demangle__free(&d);
	return 0;
}
