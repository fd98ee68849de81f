/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * ext_int.h - the registry's state, shared by ext.c (registration, look-up,
 * listing) and ext_load.c (manifests, trust, dlopen).  Not for users.
 */
#ifndef SDS_EXT_INT_H
#define SDS_EXT_INT_H

#include <pthread.h>
#include "ext/ext.h"

#define EXT_PROBLEMS	64	/* problems kept; later ones are said only */
#define EXT_WHY_MAX	512	/* bytes of one problem */
#define EXT_IFNAME_MAX	32	/* bytes of an interface's name, NUL included */

enum ext_state {
	EXT_BUILTIN,	/* built in, not used yet */
	EXT_UNLOADED,	/* from a manifest, not used yet */
	EXT_LOADING,	/* being loaded or initialised (a cycle shows here) */
	EXT_LOADED,	/* in use */
	EXT_REFUSED,	/* refused: @why says why */
};

struct ext_iface {
	char name[EXT_IFNAME_MAX];	/* "balancer" */
	uint32_t abi;			/* its ABI version */
	char def[SDS_EXT_NAME_MAX];	/* its default implementation */
	bool scanned;			/* its manifests are read */
};

struct ext_entry {
	int iface;			/* index in sds_ext_reg.ifaces */
	char name[SDS_EXT_NAME_MAX];	/* its name; "wrap.<iface>" for a wrapper */
	bool wrapper;			/* a wrapper, not an implementation */
	bool builtin;			/* registered by the program */
	enum ext_state state;		/* see above */
	const void *impl;		/* its struct, once built in or loaded */
	const void *user;		/* what users get: @impl wrapped; NULL until first use */
	char file[SDS_EXT_PATH_MAX];	/* its manifest */
	int line;			/* its line there */
	char lib[SDS_EXT_PATH_MAX];	/* its shared object */
	char sym[SDS_EXT_SYM_MAX];	/* its symbol there */
	char why[EXT_WHY_MAX];		/* why refused */
};

struct sds_ext_reg {
	pthread_mutex_t lock;		/* recursive: an init may look others up */
	struct ext_iface ifaces[SDS_EXT_IFACES];	/* registered interfaces */
	int nifaces;			/* entries of @ifaces in use */
	struct ext_entry entries[SDS_EXT_ENTRIES];	/* every interface's, in order */
	int nentries;			/* entries of @entries in use */
	char problems[EXT_PROBLEMS][EXT_WHY_MAX];	/* as said, oldest first */
	int nproblems;			/* entries of @problems in use */
	char prog[32];			/* the program's name, for the diagnostics */
	void (*diag)(const char *line);	/* NULL: stderr */
};

extern struct sds_ext_reg sds_ext_reg;

/*
 * Say a problem once (diagnostic hook) and keep it; printf-like: what no
 * caller is told (a manifest's line, a wrapper).
 */
void sds_ext_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Keep a problem unsaid: the caller of sds_ext_get() gets it and says it. */
void sds_ext_keep(const char *line);

/* Read the manifests of interface @fi (once).  Under the lock. */
void sds_ext_scan(int fi);

/*
 * Load entry @e's plugin (probe first, in a child), check its struct and
 * run its init: 0 with e->impl set, else -1 with e->why set.  Under the lock.
 */
int sds_ext_load(struct ext_entry *e);

/* Forget the plugins refused for their init (sds_ext_reset). */
void sds_ext_load_reset(void);

/* "<iface> \"<name>\" (<file>:<line>)": how messages name @e. */
void sds_ext_label(const struct ext_entry *e, char *buf, size_t len);

/*
 * Check the struct at @p for entry @e: interface, ABI version and kind.
 * 0, or -1 with @err.
 */
int sds_ext_check_head(const struct ext_entry *e, const void *p, char *err,
		   size_t errlen);

/* The look-up given to inits (sds_ext_get). */
const void *sds_ext_lookup(const char *iface, const char *name, char *err,
		       size_t errlen);

#endif /* SDS_EXT_INT_H */
