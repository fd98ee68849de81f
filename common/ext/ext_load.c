// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * ext_load.c - where external extensions come from: the manifests of an
 * interface (<iface>.ext and <iface>.<anything>.ext in $SDS_EXT_DIR), the
 * trust rules, and loading a plugin at its first use (docs/EXTENSIONS.md).
 *
 * Trust.  The loader is a root daemon: whoever can write a manifest or a
 * plugin it reads runs code as root.  So, as sudo does with sudoers, the
 * directory, every manifest and every shared object must be owned by root
 * (or by the user running the program, who could run the code anyway) and
 * writable by their owner only; anything else is refused and said.  Paths
 * in manifests are absolute: no search path decides what is loaded.
 * Every directory above them counts too (sshd's StrictModes, as the
 * loader checks its run directory): whoever can write one can rename
 * another root-owned object, or a directory of their own, into place.  A
 * plugin is opened once (O_NOFOLLOW), checked through that descriptor and
 * the directories of its real path, and loaded from the descriptor
 * (/proc/self/fd/N) in the probe and in the program: what was checked is
 * what runs, whatever happens to the name meanwhile.
 *
 * A plugin that crashes.  dlopen() runs the object's constructors and we
 * then run its init; either may crash, and a crash in the loader would
 * take every guard of the host down with it.  So a plugin is first loaded
 * in a probe: a forked child does all of it (dlopen, dlsym, the checks,
 * init) and reports through a pipe; only if the child succeeded does the
 * program load it for real.  A probe that dies by a signal or takes more
 * than SDS_EXT_PROBE_MS refuses the plugin, and nothing else is loaded
 * from its file.  The costs: one fork per plugin at its first use, and
 * the init runs twice (once in the child), so an init must not do, outside
 * its process, what it cannot do twice.  The child of a threaded process
 * may deadlock in dlopen on a lock another thread held at the fork: the
 * timeout bounds that too (and refuses the plugin, which a retry in a new
 * process fixes).  A crash after init, in a callback, is not caught: that
 * is the plugin's code running in the program, as a built-in's would.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ext/ext_int.h"
#include "trust.h"

#define BADLIBS	32	/* plugins refused for a failed or crashed init */

/* Plugins nothing more is loaded from: their path and why. */
static struct {
	char lib[SDS_EXT_PATH_MAX];	/* the shared object */
	char why[EXT_WHY_MAX];		/* the entry that failed, and how */
} badlibs[BADLIBS];
static int nbadlibs;

/* 0, or -1 with @err: @st of @path is not owned by root (or us) or is writable by others. */
static int trusted(const char *path, const struct stat *st, char *err,
		   size_t errlen)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(err, errlen, "%s: owned by uid %u: refused (extensions must be owned by root)",
			 path, (unsigned int)st->st_uid);
		return -1;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "%s: %s-writable: refused (extensions must be writable by their owner only)",
			 path, st->st_mode & S_IWOTH ? "world" : "group");
		return -1;
	}
	return 0;
}

struct parents_walk {
	const char *what;	/* the extension or directory, for @err */
	char *err;
	size_t errlen;
};

/* One directory of parents_trusted()'s walk (common/trust.c). */
static int parent_trusted(const char *dir, const struct stat *st, bool parent,
			  void *ctx)
{
	struct parents_walk *w = ctx;

	if (!st) {
		snprintf(w->err, w->errlen, "%s: %s: %s", w->what, dir, strerror(errno));
		return -1;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(w->err, w->errlen, "%s: directory %s is owned by uid %u: refused (every directory above an extension must be owned by root)",
			 w->what, dir, (unsigned int)st->st_uid);
		return -1;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(parent && st->st_uid == 0 && (st->st_mode & S_ISVTX))) {
		snprintf(w->err, w->errlen, "%s: directory %s is %s-writable: refused (every directory above an extension must be writable by its owner only)",
			 w->what, dir, st->st_mode & S_IWOTH ? "world" : "group");
		return -1;
	}
	return 0;
}

/*
 * 0, or -1 with @err: a directory of @rp (a real path: no symlinks, no
 * "..") or one above it is not owned by root (or us) or is writable by
 * group or others.  A world-writable parent may be root's and sticky
 * (/tmp): nobody else can then rename what is in it.  @rp is consumed.
 */
static int parents_trusted(char *rp, const char *what, char *err, size_t errlen)
{
	struct parents_walk w = { .what = what, .err = err, .errlen = errlen };

	return sds_trust_walk(rp, parent_trusted, &w);
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
			   end[-1] == '\r'))
		*--end = '\0';
	return s;
}

static bool ident(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n >= SDS_EXT_SYM_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static bool good_entry_name(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n >= SDS_EXT_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/*
 * One line "KEY = /path/lib.so:symbol" of manifest @path (line @ln) of
 * interface @fi: 0 and a new entry, or -1 with @err.
 */
static int parse_line(int fi, const char *path, int ln, char *s, char *err,
		      size_t errlen)
{
	const char *ifn = sds_ext_reg.ifaces[fi].name;
	char *eq = strchr(s, '='), *key, *val, *colon;
	bool wrapper = false;
	struct ext_entry *e;
	int i;

	if (!eq) {
		snprintf(err, errlen, "expected NAME = /path/lib.so:symbol");
		return -1;
	}
	*eq = '\0';
	key = trim(s);
	val = trim(eq + 1);
	if (!strncmp(key, "wrap.", 5)) {
		if (strcmp(key + 5, ifn)) {
			snprintf(err, errlen, "%.64s in a manifest of %s (wrap.%s only)",
				 key, ifn, ifn);
			return -1;
		}
		wrapper = true;
	} else if (!good_entry_name(key)) {
		snprintf(err, errlen, "bad name \"%.64s\": names are [a-z0-9_-], 1..%d bytes",
			 key, SDS_EXT_NAME_MAX - 1);
		return -1;
	}
	colon = strrchr(val, ':');
	if (!colon || colon == val) {
		snprintf(err, errlen, "expected /path/lib.so:symbol after '=', not \"%.160s\"", val);
		return -1;
	}
	*colon = '\0';
	if (val[0] != '/') {
		snprintf(err, errlen, "%.200s: the library's path must be absolute", val);
		return -1;
	}
	if (strlen(val) >= SDS_EXT_PATH_MAX) {
		snprintf(err, errlen, "a library path of %zu bytes: at most %d",
			 strlen(val), SDS_EXT_PATH_MAX - 1);
		return -1;
	}
	if (!ident(colon + 1)) {
		snprintf(err, errlen, "bad symbol \"%.128s\": a C identifier of 1..%d bytes",
			 colon + 1, SDS_EXT_SYM_MAX - 1);
		return -1;
	}
	for (i = 0; !wrapper && i < sds_ext_reg.nentries; i++) {
		e = &sds_ext_reg.entries[i];
		if (e->iface == fi && !e->wrapper && !strcmp(e->name, key)) {
			if (e->builtin)
				snprintf(err, errlen, "%s \"%s\" is built in already", ifn, key);
			else
				snprintf(err, errlen, "%s \"%s\" is defined already at %s:%d",
					 ifn, key, e->file, e->line);
			return -1;
		}
	}
	if (sds_ext_reg.nentries == SDS_EXT_ENTRIES) {
		snprintf(err, errlen, "more than %d extensions", SDS_EXT_ENTRIES);
		return -1;
	}
	e = &sds_ext_reg.entries[sds_ext_reg.nentries++];
	memset(e, 0, sizeof(*e));
	e->iface = fi;
	e->wrapper = wrapper;
	e->state = EXT_UNLOADED;
	e->line = ln;
	snprintf(e->name, sizeof(e->name), "%s", key);
	snprintf(e->file, sizeof(e->file), "%.255s", path);
	snprintf(e->lib, sizeof(e->lib), "%s", val);
	snprintf(e->sym, sizeof(e->sym), "%s", colon + 1);
	return 0;
}

/* Manifest @path of interface @fi: its entries up to its first bad line. */
static void read_manifest(int fi, const char *path)
{
	char buf[SDS_EXT_LINE_MAX + 1], err[EXT_WHY_MAX - SDS_EXT_PATH_MAX - 16];
	struct stat st;
	int fd, ln = 0;
	FILE *f;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		sds_ext_say("%s: %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		sds_ext_say("%s: not a regular file", path);
		close(fd);
		return;
	}
	if (trusted(path, &st, err, sizeof(err))) {
		sds_ext_say("%s", err);
		close(fd);
		return;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *s;

		ln++;
		if (!strchr(buf, '\n') && !feof(f)) {
			sds_ext_say("%s:%d: a line over %d bytes; the rest of the file is skipped",
				    path, ln, SDS_EXT_LINE_MAX - 1);
			break;
		}
		if (ln > SDS_EXT_LINES) {
			sds_ext_say("%s:%d: more than %d lines; the rest of the file is skipped",
				    path, ln, SDS_EXT_LINES);
			break;
		}
		s = trim(buf);
		if (!*s || *s == '#')
			continue;
		if (parse_line(fi, path, ln, s, err, sizeof(err))) {
			sds_ext_say("%s:%d: %s; the rest of the file is skipped",
				    path, ln, err);
			break;
		}
	}
	fclose(f);
}

static const char *scan_iface;	/* the interface scandir() is filtering for */

static int is_manifest(const struct dirent *d)
{
	size_t n = strlen(d->d_name), k = strlen(scan_iface);

	return d->d_name[0] != '.' && n > 4 && !strcmp(d->d_name + n - 4, ".ext") &&
	       !strncmp(d->d_name, scan_iface, k) &&
	       (d->d_name[k] == '.');
}

void sds_ext_scan(int fi)
{
	struct ext_iface *ifc = &sds_ext_reg.ifaces[fi];
	/* A setuid program's caller must not pick what it loads. */
	const char *dir = secure_getenv("SDS_EXT_DIR");
	char path[SDS_EXT_PATH_MAX + 64], err[EXT_WHY_MAX], rp[PATH_MAX];
	bool given = dir && *dir;
	struct dirent **list = NULL;
	struct stat st;
	int i, n;

	if (ifc->scanned)
		return;
	ifc->scanned = true;
	if (!given)
		dir = SDS_EXT_DIR_DEFAULT;
	if (stat(dir, &st)) {
		if (given || errno != ENOENT)
			sds_ext_say("SDS_EXT_DIR %s: %s", dir, strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		sds_ext_say("SDS_EXT_DIR %s: not a directory", dir);
		return;
	}
	if (trusted(dir, &st, err, sizeof(err))) {
		sds_ext_say("%s", err);
		return;
	}
	if (!realpath(dir, rp)) {
		sds_ext_say("SDS_EXT_DIR %s: %s", dir, strerror(errno));
		return;
	}
	if (parents_trusted(rp, dir, err, sizeof(err))) {
		sds_ext_say("%s", err);
		return;
	}
	scan_iface = ifc->name;
	n = scandir(dir, &list, is_manifest, alphasort);
	if (n < 0) {
		sds_ext_say("SDS_EXT_DIR %s: %s", dir, strerror(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		if (i == SDS_EXT_FILES)
			sds_ext_say("%s: more than %d manifests of %s; %s and later are skipped",
				    dir, SDS_EXT_FILES, ifc->name, list[i]->d_name);
		else if (snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name) <
			 SDS_EXT_PATH_MAX)
			read_manifest(fi, path);
		else
			sds_ext_say("%s/%s: a path over %d bytes", dir,
				    list[i]->d_name, SDS_EXT_PATH_MAX - 1);
	}
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* ---- loading ------------------------------------------------------------ */

/*
 * dlopen, dlsym, check, init: what both the probe and the real load do.
 * 0 and *@out, or -1 with @err (and @init_failed set when init said no).
 */
static int load_in(const struct ext_entry *e, const char *lib, const void **out,
		   bool *init_failed, char *err, size_t errlen)
{
	const struct sds_ext_head *h;
	char why[EXT_WHY_MAX / 2] = "";
	void *dl, *p;

	*init_failed = false;
	dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		snprintf(err, errlen, "dlopen: %s", dlerror());
		return -1;
	}
	p = dlsym(dl, e->sym);
	if (!p) {
		snprintf(err, errlen, "%s has no symbol %s", e->lib, e->sym);
		dlclose(dl);
		return -1;
	}
	if (sds_ext_check_head(e, p, err, errlen)) {
		dlclose(dl);
		return -1;
	}
	h = p;
	if (h->init && h->init(p, sds_ext_lookup, why, sizeof(why))) {
		snprintf(err, errlen, "init failed: %s", why[0] ? why : "no reason given");
		*init_failed = true;
		dlclose(dl);
		return -1;
	}
	*out = p;
	return 0;
}

/* The probe's child says nothing: the parent says what it reports. */
static void silent(const char *line)
{
}

/*
 * The probe's child: load, and report on @fd one line that starts with
 * '+' (loaded), '!' (its init said no: the rest is why) or '-' (refused:
 * why).  A child that dies first reports nothing.  The report, not the
 * exit status, is what counts: a program that ignores SIGCHLD cannot
 * wait for the status.
 */
static void probe_child(const struct ext_entry *e, const char *lib, int fd)
{
	static const int crash[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	char err[EXT_WHY_MAX] = "", out[EXT_WHY_MAX + 1];
	pthread_mutexattr_t a;
	bool init_failed;
	const void *p;
	size_t i;
	ssize_t w;

	/*
	 * A crash must show as the signal, not as whatever the program's
	 * handlers (a sanitizer's, say) make of it.
	 */
	for (i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
		signal(crash[i], SIG_DFL);
	/* A probe's crash is an answer, not something to debug: no core. */
	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	/* The lock's owner is the parent's thread id: take it anew. */
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&sds_ext_reg.lock, &a);
	pthread_mutex_lock(&sds_ext_reg.lock);
	sds_ext_reg.diag = silent;
	if (!load_in(e, lib, &p, &init_failed, err, sizeof(err)))
		snprintf(out, sizeof(out), "+");
	else
		snprintf(out, sizeof(out), "%c%s", init_failed ? '!' : '-', err);
	w = write(fd, out, strlen(out));
	(void)w;
	_exit(0);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Load @e in a forked child first: 0 when it loaded there, else -1 with
 * @err; @bad set when nothing more may come from its file.
 */
static int probe(const struct ext_entry *e, const char *lib, bool *bad, char *err,
		 size_t errlen)
{
	uint64_t until = mono_ms() + SDS_EXT_PROBE_MS, now;
	char msg[EXT_WHY_MAX + 2];
	int pfd[2], st = 0, r;
	size_t len = 0;
	pid_t pid;

	*bad = false;
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (!pid) {
		close(pfd[0]);
		probe_child(e, lib, pfd[1]);
	}
	close(pfd[1]);
	/* Until the child closes its end (it exited, or died). */
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		ssize_t n;

		now = mono_ms();
		r = now < until ? poll(&p, 1, (int)(until - now)) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			close(pfd[0]);
			snprintf(err, errlen, "init did not finish within %d ms in its probe",
				 SDS_EXT_PROBE_MS);
			*bad = true;
			return -1;
		}
		n = read(pfd[0], msg + len, sizeof(msg) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
		if (len == sizeof(msg) - 1)
			break;
	}
	msg[len] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (len && msg[0] == '+')
		return 0;
	if (len) {
		*bad = msg[0] == '!';
		snprintf(err, errlen, "%.400s", msg + 1);
		return -1;
	}
	*bad = true;
	if (WIFSIGNALED(st))
		snprintf(err, errlen, "init crashed in its probe (signal %d, %s)",
			 WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(err, errlen, "init died in its probe");
	return -1;
}

void sds_ext_load_reset(void)
{
	nbadlibs = 0;
}

static const char *badlib(const char *lib)
{
	int i;

	for (i = 0; i < nbadlibs; i++)
		if (!strcmp(badlibs[i].lib, lib))
			return badlibs[i].why;
	return NULL;
}

int sds_ext_load(struct ext_entry *e)
{
	char lab[SDS_EXT_PATH_MAX + 96], err[EXT_WHY_MAX] = "";
	const char *bad = badlib(e->lib);
	char fdpath[32], rp[PATH_MAX];
	bool init_failed = false, nomore = false;
	int lfd = -1;
	struct stat st;
	const void *p;
	ssize_t n;

	e->state = EXT_LOADING;
	sds_ext_label(e, lab, sizeof(lab));
	if (bad) {
		snprintf(e->why, sizeof(e->why), "%.200s: not loaded: %.280s", lab, bad);
		goto refused;
	}
	lfd = open(e->lib, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0) {
		snprintf(err, sizeof(err), "%s: %s", e->lib,
			 errno == ELOOP ? "a symlink: refused (name the file itself)" : strerror(errno));
		goto fail;
	}
	if (fstat(lfd, &st)) {
		snprintf(err, sizeof(err), "%s: %s", e->lib, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, sizeof(err), "%s: not a regular file", e->lib);
		goto fail;
	}
	if (trusted(e->lib, &st, err, sizeof(err)))
		goto fail;
	/* The directories the file really is in, from the descriptor. */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", lfd);
	n = readlink(fdpath, rp, sizeof(rp) - 1);
	if (n <= 0 || rp[0] != '/') {
		snprintf(err, sizeof(err), "%s: %s: %s", e->lib, fdpath,
			 n < 0 ? strerror(errno) : "not a path");
		goto fail;
	}
	rp[n] = '\0';
	*strrchr(rp, '/') = '\0';
	if (!rp[0])
		strcpy(rp, "/");
	if (parents_trusted(rp, e->lib, err, sizeof(err)))
		goto fail;
	if (probe(e, fdpath, &nomore, err, sizeof(err)))
		goto fail;
	if (load_in(e, fdpath, &p, &init_failed, err, sizeof(err))) {
		nomore = init_failed;
		goto fail;
	}
	/*
	 * Kept open while the plugin is loaded: dlopen() knows an object by
	 * the name it was given first, and a later plugin opened at this
	 * number would be taken for this one.
	 */
	e->impl = p;
	e->state = EXT_LOADED;
	return 0;

fail:
	if (lfd >= 0)
		close(lfd);
	if (nomore) {
		snprintf(e->why, sizeof(e->why), "%.150s: %.200s; nothing else is loaded from %.120s",
			 lab, err, e->lib);
		if (nbadlibs < BADLIBS) {
			snprintf(badlibs[nbadlibs].lib, sizeof(badlibs[0].lib), "%s", e->lib);
			snprintf(badlibs[nbadlibs].why, sizeof(badlibs[0].why),
				 "%.200s was refused (%.200s)", e->lib, lab);
			nbadlibs++;
		}
	} else {
		snprintf(e->why, sizeof(e->why), "%.200s: %.300s", lab, err);
	}
refused:
	e->state = EXT_REFUSED;
	/* An implementation's refusal is its caller's error; a wrapper's no one's. */
	if (e->wrapper)
		sds_ext_say("%s", e->why);
	else
		sds_ext_keep(e->why);
	return -1;
}
