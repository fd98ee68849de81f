// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * ext.c - the registry of named extensions: interfaces and their built-ins
 * as the program registers them, entries from manifests (ext_load.c), and
 * the look-up every user goes through (docs/EXTENSIONS.md).
 *
 * One recursive lock guards everything.  It is taken at registration, at
 * a name's first use (which may load a plugin and run its init, which may
 * look other extensions up: hence recursive) and by the listing; a user
 * keeps the pointer it got and calls through it without the registry, so
 * a balancer's pick never sees the lock.
 *
 * Wrappers are applied at a name's first use, in manifest order (files
 * sorted by name, then lines), each to what the earlier ones returned;
 * the result is cached, so every user of a name shares one wrapped struct.
 * A wrapper that fails is said and passed over: a broken wrapper must not
 * take the built-ins away.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ext/ext_int.h"

struct sds_ext_reg sds_ext_reg = {
	.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
};

#define ERR(...)	do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

void sds_ext_set_diag(const char *prog, void (*fn)(const char *line))
{
	pthread_mutex_lock(&sds_ext_reg.lock);
	snprintf(sds_ext_reg.prog, sizeof(sds_ext_reg.prog), "%s", prog ? prog : "");
	sds_ext_reg.diag = fn;
	pthread_mutex_unlock(&sds_ext_reg.lock);
}

/* Keep @line among the problems; say it too when @say. */
static void keep_line(const char *line, bool say)
{
	if (sds_ext_reg.nproblems < EXT_PROBLEMS)
		snprintf(sds_ext_reg.problems[sds_ext_reg.nproblems++], EXT_WHY_MAX,
			 "%s", line);
	if (!say)
		return;
	if (sds_ext_reg.diag)
		sds_ext_reg.diag(line);
	else
		fprintf(stderr, "%s: extensions: %s\n",
			sds_ext_reg.prog[0] ? sds_ext_reg.prog : "sds", line);
}

void sds_ext_say(const char *fmt, ...)
{
	char line[EXT_WHY_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	keep_line(line, true);
}

void sds_ext_keep(const char *line)
{
	keep_line(line, false);
}

const char *sds_ext_problem(int i)
{
	const char *p = NULL;

	pthread_mutex_lock(&sds_ext_reg.lock);
	if (i >= 0 && i < sds_ext_reg.nproblems)
		p = sds_ext_reg.problems[i];
	pthread_mutex_unlock(&sds_ext_reg.lock);
	return p;
}

void sds_ext_label(const struct ext_entry *e, char *buf, size_t len)
{
	const char *ifn = sds_ext_reg.ifaces[e->iface].name;

	if (e->wrapper)
		snprintf(buf, len, "%s (%s:%d)", e->name, e->file, e->line);
	else if (e->builtin)
		snprintf(buf, len, "%s \"%s\" (built in)", ifn, e->name);
	else
		snprintf(buf, len, "%s \"%s\" (%s:%d)", ifn, e->name, e->file, e->line);
}

int sds_ext_check_head(const struct ext_entry *e, const void *p, char *err,
		   size_t errlen)
{
	const struct ext_iface *fi = &sds_ext_reg.ifaces[e->iface];
	const struct sds_ext_head *h = p;
	uint32_t kind = e->wrapper ? SDS_EXT_WRAPPER : SDS_EXT_IMPL;
	const char *where = e->builtin ? e->name : e->sym;

	if (!h->iface || strcmp(h->iface, fi->name)) {
		ERR("%s is a %.40s extension, not a %s", where,
		    h->iface ? h->iface : "(null)", fi->name);
		return -1;
	}
	if (h->abi != fi->abi) {
		ERR("%s is built for %s ABI %u, this program has %u", where,
		    fi->name, h->abi, fi->abi);
		return -1;
	}
	if (h->kind != kind) {
		ERR("%s is %s, not %s", where,
		    h->kind == SDS_EXT_WRAPPER ? "a wrapper" :
		    h->kind == SDS_EXT_IMPL ? "an implementation" : "of no known kind",
		    kind == SDS_EXT_WRAPPER ? "a wrapper" : "an implementation");
		return -1;
	}
	return 0;
}

/* [a-z0-9_] (and '-' when @dash), 1..@max-1 bytes. */
static bool good_name(const char *s, size_t max, bool dash)
{
	size_t i, n = s ? strlen(s) : 0;

	if (!n || n >= max)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || (dash && s[i] == '-')))
			return false;
	return true;
}

static int find_iface(const char *name)
{
	int i;

	for (i = 0; i < sds_ext_reg.nifaces; i++)
		if (!strcmp(sds_ext_reg.ifaces[i].name, name))
			return i;
	return -1;
}

int sds_ext_register(const struct sds_ext_iface *i,
		     const struct sds_ext_builtin *b, int n,
		     char *err, size_t errlen)
{
	struct ext_iface *fi;
	struct ext_entry *e;
	int k, ret = -1;

	pthread_mutex_lock(&sds_ext_reg.lock);
	if (!good_name(i->name, EXT_IFNAME_MAX, false)) {
		ERR("interface \"%s\": names are [a-z0-9_], 1..%d bytes",
		    i->name ? i->name : "", EXT_IFNAME_MAX - 1);
		goto out;
	}
	if (find_iface(i->name) >= 0) {
		ret = 0;
		goto out;
	}
	if (sds_ext_reg.nifaces == SDS_EXT_IFACES ||
	    sds_ext_reg.nentries + n > SDS_EXT_ENTRIES) {
		ERR("interface %s: more than %d interfaces or %d extensions",
		    i->name, SDS_EXT_IFACES, SDS_EXT_ENTRIES);
		goto out;
	}
	for (k = 0; k < n; k++)
		if (!good_name(b[k].name, SDS_EXT_NAME_MAX, true) || !b[k].impl) {
			ERR("%s \"%s\": names are [a-z0-9_-], 1..%d bytes",
			    i->name, b[k].name ? b[k].name : "",
			    SDS_EXT_NAME_MAX - 1);
			goto out;
		}
	fi = &sds_ext_reg.ifaces[sds_ext_reg.nifaces];
	memset(fi, 0, sizeof(*fi));
	snprintf(fi->name, sizeof(fi->name), "%s", i->name);
	snprintf(fi->def, sizeof(fi->def), "%s", i->def ? i->def : "");
	fi->abi = i->abi;
	for (k = 0; k < n; k++) {
		e = &sds_ext_reg.entries[sds_ext_reg.nentries++];
		memset(e, 0, sizeof(*e));
		e->iface = sds_ext_reg.nifaces;
		e->builtin = true;
		e->state = EXT_BUILTIN;
		e->impl = b[k].impl;
		snprintf(e->name, sizeof(e->name), "%s", b[k].name);
	}
	sds_ext_reg.nifaces++;
	ret = 0;
out:
	pthread_mutex_unlock(&sds_ext_reg.lock);
	return ret;
}

static struct ext_entry *find_entry(int fi, const char *name)
{
	int i;

	for (i = 0; i < sds_ext_reg.nentries; i++)
		if (sds_ext_reg.entries[i].iface == fi && !sds_ext_reg.entries[i].wrapper &&
		    !strcmp(sds_ext_reg.entries[i].name, name))
			return &sds_ext_reg.entries[i];
	return NULL;
}

/* "unknown balancer \"x\" (known: a, b, c)" */
static void unknown(int fi, const char *name, char *err, size_t errlen)
{
	char known[768] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < sds_ext_reg.nentries; i++) {
		const struct ext_entry *e = &sds_ext_reg.entries[i];

		if (e->iface != fi || e->wrapper || len >= sizeof(known))
			continue;
		len += snprintf(known + len, sizeof(known) - len, "%s%s",
				len ? ", " : "", e->name);
	}
	ERR("unknown %s \"%.64s\" (known: %s)", sds_ext_reg.ifaces[fi].name, name,
	    known);
}

/* Run a built-in's init (its plugin's ran in sds_ext_load). */
static int init_builtin(struct ext_entry *e)
{
	const struct sds_ext_head *h = e->impl;
	char why[EXT_WHY_MAX - 128] = "";

	if (sds_ext_check_head(e, e->impl, why, sizeof(why)) ||
	    (h->init && h->init(e->impl, sds_ext_lookup, why, sizeof(why)))) {
		char lab[160];

		sds_ext_label(e, lab, sizeof(lab));
		snprintf(e->why, sizeof(e->why), "%.150s: %.300s", lab,
			 why[0] ? why : "init failed");
		e->state = EXT_REFUSED;
		sds_ext_keep(e->why);	/* the caller says it */
		return -1;
	}
	return 0;
}

/* @impl of @fi wrapped by every wrapper of @fi that loads and agrees. */
static const void *wrap_all(int fi, const void *impl, const char *name)
{
	const struct ext_iface *ifc = &sds_ext_reg.ifaces[fi];
	char why[EXT_WHY_MAX - 160], lab[160];
	const struct sds_ext_wrapper *w;
	const void *out;
	int i;

	for (i = 0; i < sds_ext_reg.nentries; i++) {
		struct ext_entry *e = &sds_ext_reg.entries[i];

		if (e->iface != fi || !e->wrapper || e->state == EXT_REFUSED)
			continue;
		if (e->state == EXT_UNLOADED && sds_ext_load(e))
			continue;
		if (e->state != EXT_LOADED)
			continue;
		w = e->impl;
		why[0] = '\0';
		out = w->wrap ? w->wrap(w, impl, why, sizeof(why)) : NULL;
		sds_ext_label(e, lab, sizeof(lab));
		if (!out) {
			sds_ext_say("%s: did not wrap %s \"%s\": %s", lab,
				    ifc->name, name, why[0] ? why : "no reason given");
			continue;
		}
		if (sds_ext_check_head(&(struct ext_entry){ .iface = fi, .builtin = true,
							 .name = "its result" },
				   out, why, sizeof(why))) {
			sds_ext_say("%s: wrapping %s \"%s\": %s", lab, ifc->name,
				    name, why);
			continue;
		}
		impl = out;
	}
	return impl;
}

const void *sds_ext_get(const char *iface, const char *name, char *err,
			size_t errlen)
{
	const void *ret = NULL;
	struct ext_entry *e;
	enum ext_state was;
	int fi;

	pthread_mutex_lock(&sds_ext_reg.lock);
	fi = find_iface(iface ? iface : "");
	if (fi < 0) {
		ERR("no extension interface \"%.40s\" in this program",
		    iface ? iface : "");
		goto out;
	}
	sds_ext_scan(fi);
	if (!name)
		name = sds_ext_reg.ifaces[fi].def;
	e = find_entry(fi, name);
	if (!e) {
		unknown(fi, name, err, errlen);
		goto out;
	}
	if (e->user) {
		ret = e->user;
		goto out;
	}
	if (e->state == EXT_LOADING) {
		ERR("%s \"%s\" is asked for while it loads (a cycle of inits)",
		    sds_ext_reg.ifaces[fi].name, e->name);
		goto out;
	}
	if (e->state == EXT_REFUSED) {
		ERR("%s", e->why);
		goto out;
	}
	was = e->state;
	e->state = EXT_LOADING;
	if (was == EXT_BUILTIN ? init_builtin(e) : sds_ext_load(e)) {
		ERR("%s", e->why);
		goto out;
	}
	e->state = EXT_LOADED;
	e->user = wrap_all(fi, e->impl, e->name);
	ret = e->user;
out:
	pthread_mutex_unlock(&sds_ext_reg.lock);
	return ret;
}

const void *sds_ext_lookup(const char *iface, const char *name, char *err,
		       size_t errlen)
{
	return sds_ext_get(iface, name, err, errlen);
}

static const char *state_name(const struct ext_entry *e)
{
	switch (e->state) {
	case EXT_BUILTIN:
		return "built-in";
	case EXT_UNLOADED:
		return "not loaded";
	case EXT_LOADING:
		return "loading";
	case EXT_LOADED:
		return e->builtin ? "built-in, in use" : "loaded";
	case EXT_REFUSED:
	default:
		return "refused";
	}
}

int sds_ext_list(void (*fn)(const struct sds_ext_info *e, void *ctx), void *ctx)
{
	struct sds_ext_info info;
	int fi, i, n = 0;

	pthread_mutex_lock(&sds_ext_reg.lock);
	for (fi = 0; fi < sds_ext_reg.nifaces; fi++)
		sds_ext_scan(fi);
	for (fi = 0; fi < sds_ext_reg.nifaces; fi++)
		for (i = 0; i < sds_ext_reg.nentries; i++) {
			const struct ext_entry *e = &sds_ext_reg.entries[i];

			if (e->iface != fi)
				continue;
			info = (struct sds_ext_info){
				.iface = sds_ext_reg.ifaces[fi].name,
				.name = e->name,
				.builtin = e->builtin,
				.file = e->file,
				.line = e->line,
				.lib = e->lib,
				.sym = e->sym,
				.state = state_name(e),
				.why = e->state == EXT_REFUSED ? e->why : "",
				.is_default = !e->wrapper &&
					!strcmp(e->name, sds_ext_reg.ifaces[fi].def),
			};
			n++;
			if (fn)
				fn(&info, ctx);
		}
	pthread_mutex_unlock(&sds_ext_reg.lock);
	return n;
}

void sds_ext_reset(void)
{
	pthread_mutex_lock(&sds_ext_reg.lock);
	sds_ext_reg.nifaces = 0;
	sds_ext_reg.nentries = 0;
	sds_ext_reg.nproblems = 0;
	sds_ext_load_reset();
	pthread_mutex_unlock(&sds_ext_reg.lock);
}
