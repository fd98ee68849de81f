/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * diff.h - a recorded response against a shadow's answer, under ignore
 * rules (`sds-copy replay --diff`, docs/COPY.md "Responses and --diff").
 *
 * Both sides are HTTP messages when the recorded one starts "HTTP/": the
 * status, the headers (by name, case-insensitive; the framing headers
 * Content-Length, Transfer-Encoding, Connection and Keep-Alive are not
 * compared, the bodies are) and the bodies.  A body is JSON when both
 * sides parse as JSON: compared as values (object keys in any order), the
 * first difference named by its path ("$.items[3].price"); else as bytes.
 */
#ifndef COPY_DIFF_H
#define COPY_DIFF_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DIFF_RULES_MAX	64	/* --ignore rules of each kind */
#define DIFF_PATH_MAX	16	/* segments of one JSON path */
#define DIFF_SEG_MAX	64	/* bytes of one path segment's name */
#define DIFF_WHERE_MAX	256	/* the description of a difference */

/* One segment of an ignored JSON path: a key, an index, or a wildcard. */
struct diff_seg {
	char key[DIFF_SEG_MAX + 1];	/* the key; "" for an index */
	long index;			/* the index; -1: not an index */
	bool any;			/* "*" or "[*]": any key or index */
};

struct diff_path {
	struct diff_seg seg[DIFF_PATH_MAX];
	int n;				/* segments; 0: the whole body ("$") */
};

struct diff_rules {
	struct diff_path paths[DIFF_RULES_MAX];	/* JSON paths */
	int npaths;
	regex_t res[DIFF_RULES_MAX];		/* /REGEX/ over the bodies */
	int nres;
	char headers[DIFF_RULES_MAX][DIFF_SEG_MAX + 1];	/* header:NAME */
	int nheaders;
};

/*
 * Add one --ignore rule: "$.a.b[2]", "a.b", "$.items[*].ts" (a JSON path),
 * "/REGEX/" (POSIX extended, over the bodies: every match is removed from
 * both sides before they are compared) or "header:NAME".  0, or -1 with one
 * line in @err.
 */
int diff_rules_add(struct diff_rules *r, const char *spec, char *err,
		   size_t errlen);
void diff_rules_free(struct diff_rules *r);

/* The two sides of one comparison and what became of it. */
struct diff_result {
	char where[DIFF_WHERE_MAX];	/* "$.price", "status", "header etag", "body byte 12" */
	char recorded[DIFF_WHERE_MAX];	/* the recorded side there, shortened */
	char shadow[DIFF_WHERE_MAX];	/* the shadow's side there, shortened */
};

/*
 * Compare @rec (the recorded response) with @got (the shadow's answer).
 * 0 when they are the same under @r, 1 when they differ (@res says where).
 */
int diff_compare(const struct diff_rules *r, const uint8_t *rec, size_t rlen,
		 const uint8_t *got, size_t glen, struct diff_result *res);

#endif /* COPY_DIFF_H */
