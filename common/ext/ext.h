/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * ext.h - the registry of named extensions (Dubbo's SPI, in C;
 * docs/EXTENSIONS.md).  A program registers each replaceable part as an
 * interface with its built-in implementations (a table it passes, no
 * constructor magic); users add implementations and wrappers through
 * manifests, <interface>[.anything].ext in $SDS_EXT_DIR (default
 * /usr/lib/sds/ext), each loaded with dlopen at the first use of its name.
 * Thread-safe (one lock, taken at set-up and first use only: what a user
 * keeps from sds_ext_get() is used without it).
 */
#ifndef SDS_EXT_H
#define SDS_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "../../libsds/sds_ext.h"

#define SDS_EXT_DIR_DEFAULT	"/usr/lib/sds/ext"
#define SDS_EXT_IFACES		8	/* interfaces of one program */
#define SDS_EXT_ENTRIES		128	/* implementations and wrappers, all interfaces */
#define SDS_EXT_FILES		64	/* manifests read per interface */
#define SDS_EXT_LINE_MAX	1024	/* bytes of a manifest line, newline included */
#define SDS_EXT_LINES		256	/* lines of one manifest */
#define SDS_EXT_NAME_MAX	64	/* bytes of a name, NUL included */
#define SDS_EXT_PATH_MAX	256	/* bytes of a path, NUL included */
#define SDS_EXT_SYM_MAX		128	/* bytes of a symbol, NUL included */
#define SDS_EXT_PROBE_MS	5000	/* a plugin's init gets this long in its probe */

/* A built-in implementation: a name and its struct (head first). */
struct sds_ext_builtin {
	const char *name;	/* [a-z0-9_-], 1..63 bytes */
	const void *impl;	/* starts with struct sds_ext_head */
};

/* An interface a program has. */
struct sds_ext_iface {
	const char *name;	/* [a-z0-9_], 1..31 bytes: "balancer" */
	uint32_t abi;		/* the ABI version its structs must carry */
	const char *def;	/* the default implementation's name */
};

/*
 * Register interface @i with its @n built-ins (copied; the structs must
 * outlive the program's use).  Registering it again is a no-op.  0, or
 * -1 with @err: bad names, too many.
 */
int sds_ext_register(const struct sds_ext_iface *i,
		     const struct sds_ext_builtin *b, int n,
		     char *err, size_t errlen);

/*
 * Implementation @name (NULL: the default) of interface @iface, wrapped
 * by every wrapper of @iface: loaded and initialised at its first use,
 * the same pointer ever after.  NULL with one line in @err: an unknown
 * name (the line lists the known ones), or a plugin refused (why).
 */
const void *sds_ext_get(const char *iface, const char *name, char *err,
			size_t errlen);

/* What sds_ext_list() says of one entry. */
struct sds_ext_info {
	const char *iface;	/* interface */
	const char *name;	/* name; "wrap.<iface>" for a wrapper */
	bool builtin;		/* built in; else from a manifest */
	const char *file;	/* the manifest ("" when built in) */
	int line;		/* its line (0 when built in) */
	const char *lib;	/* the shared object ("" when built in) */
	const char *sym;	/* its symbol ("" when built in) */
	const char *state;	/* "built-in", "not loaded", "loaded", "refused" */
	const char *why;	/* why refused ("" otherwise) */
	bool is_default;	/* the interface's default */
};

/*
 * Call @fn for every entry of every interface (reading the manifests of
 * those not read yet, loading nothing); returns the entries' count.
 */
int sds_ext_list(void (*fn)(const struct sds_ext_info *e, void *ctx), void *ctx);

/*
 * The problems met reading manifests and loading plugins, oldest first:
 * @i-th, or NULL.  Those no caller is told (a manifest's bad line, a
 * wrapper refused) are also said once through the diagnostic hook; an
 * implementation refused is sds_ext_get()'s error, for its caller to say.
 */
const char *sds_ext_problem(int i);

/*
 * Where problems are said as they are met: @fn(line) (NULL: stderr,
 * "<@prog>: extensions: <line>").  @prog: the program's name.
 */
void sds_ext_set_diag(const char *prog, void (*fn)(const char *line));

/*
 * Print the listing on @f: a table, or one JSON line {"extensions": [...],
 * "problems": [...]} (@json).  Returns the problems met (each also said
 * through the diagnostic hook).  ext_print.c; links jansson.
 */
int ext_print(FILE *f, bool json);

/* Forget every interface, entry and problem (tests); plugins stay mapped. */
void sds_ext_reset(void);

#endif /* SDS_EXT_H */
