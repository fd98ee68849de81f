/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* plan.h - copy plans: which records go where, how often (docs/COPY.md). */
#ifndef COPY_PLAN_H
#define COPY_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "sds_types.h"

#define COPY_AMP_MAX_DEFAULT	20	/* --max-amplification */
#define COPY_AMP_LIMIT		1000	/* what --max-amplification may say */
#define COPY_PLANS_MAX		64	/* plans in one file */
#define COPY_POINTS_MAX		64	/* points of one plan */
#define COPY_SHADOWS_MAX	64	/* shadow endpoints of one plan */
#define COPY_WEIGHT_MAX		1000	/* weight of one endpoint */
#define COPY_POOL_DEFAULT	4	/* connections per endpoint */
#define COPY_POOL_MAX		64
/* Connections of all plans together (each holds ~7 KiB of buffers). */
#define COPY_CONNS_MAX		4096
#define COPY_ADDR_MAX		128	/* "HOST:PORT" as written */
#define COPY_PLANS_FILE_MAX	(1 << 20)	/* bytes of a plans file */
#define COPY_IGNORE_MAX		16	/* "ignore" rules of a diff plan */
#define COPY_IGNORE_LEN		256	/* bytes of one */

enum copy_framing {
	COPY_FRAMING_RAW,		/* the captured bytes as they are */
	COPY_FRAMING_HTTP,		/* an HTTP/1.1 POST of them, coloured */
};

/* "HOST:PORT" resolved once, when the plans are loaded. */
struct copy_addr {
	char text[COPY_ADDR_MAX + 1];	/* as written, for stats and Host: */
	struct sockaddr_storage sa;	/* resolved address */
	socklen_t salen;		/* its length */
};

struct copy_shadow_cfg {
	struct copy_addr addr;		/* where the copies go */
	int weight;			/* share in the round robin, 1..1000 */
};

/* One plan as the file says it; the server keeps its runtime beside it. */
struct copy_plan_cfg {
	char name[SDS_NAME_MAX + 1];	/* unique in the file */
	char app[SDS_NAME_MAX + 1];	/* source app of the records */
	char points[COPY_POINTS_MAX][SDS_NAME_MAX + 1];	/* its points */
	int npoints;			/* entries of @points */
	int amplification;		/* copies per record, 1..max */
	struct copy_shadow_cfg shadows[COPY_SHADOWS_MAX];	/* endpoints */
	int nshadows;			/* entries of @shadows */
	enum copy_framing framing;	/* raw or http */
	bool writes;			/* copy records of write points too */
	uint64_t rate;			/* copies per second, 0: no cap */
	int pool;			/* connections per endpoint */
	int64_t expires_at;		/* unix seconds; the plan stops then */
	bool diff;			/* compare shadow answers with production's */
	char ignore[COPY_IGNORE_MAX][COPY_IGNORE_LEN + 1];	/* diff's --ignore rules */
	int nignore;			/* entries of @ignore */
};

struct copy_plans {
	struct copy_plan_cfg *plans;	/* @n plans, in file order */
	int n;				/* number of plans */
};

/*
 * Read and check the plans file @path.  0, or -1 with one line (without
 * the "sds-copy: " prefix) in @err; @now (unix seconds) judges expiry.
 */
int plan_load(const char *path, int max_amp, int64_t now,
	      struct copy_plans *out, char *err, size_t errlen);
void copy_plans__free(struct copy_plans *p);

/*
 * The same from the document @text (@what names it in messages).  @skip
 * (the admin's plans): a bad plan is left out and named in @err ("plan I
 * (NAME): WHY; ..."), the others are taken and 0 is returned; beyond
 * COPY_PLANS_MAX, the first are taken.  Without @skip, as a file.
 */
int plan_parse_text(const char *text, size_t len, const char *what, int max_amp,
		    int64_t now, bool skip, struct copy_plans *out, char *err,
		    size_t errlen);

/* The framing named @s ("raw", "http"), or -1. */
int plan_framing_parse(const char *s);
const char *plan_framing_name(enum copy_framing f);

/* Resolve "HOST:PORT" / "[V6]:PORT" into @a; 0 or -1 with @err. */
int addr_parse(const char *s, struct copy_addr *a, char *err,
	       size_t errlen);
/*
 * addr_parse(), and with @numeric a host name is refused rather than
 * resolved: what the admin sends is parsed on the epoll loop, where a
 * resolver that does not answer would stop receiving.
 */
int addr_resolve(const char *s, bool numeric, struct copy_addr *a,
		 char *err, size_t errlen);

#endif /* COPY_PLAN_H */
