// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * delaydrill.c - the loader's side of delay drills at function points
 * (delaydrill.h, docs/DELAY.md): the object loaded over the frames map,
 * the interfaces hooked while a drill runs (fq checked or set, the tc
 * egress link, the cgroup connect links), each point's drill as its
 * state, and every trace of it removed at the end.
 *
 * fq set by a loader carries the handle 5d5: and a claim file per loader
 * and interface in <run dir>/delay-fq/: a loader removes the fq when no
 * live loader claims it any more, and one that finds fq 5d5: claimed by
 * no live loader (a dead one's) removes it.  Never an fq someone else
 * set, never a qdisc that is not the kernel's default.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli/cmd.h"
#include "kernel/probes.h"
#include "publish/delay_nl.h"
#include "publish/delaydrill.h"
#include "publish/failfast_cg.h"
#include "serve/ctl.h"
#include "state/drill.h"
#include "sds_delay.h"
#include "sds_failfast.h"
#include "sds.skel.h"
#include "delay.skel.h"

#define DL_DRY_ENV	"SDS_DELAY_DRYRUN"
#define DL_CLAIMS	"delay-fq"
#define DL_NCG		2
/* The kernel's BPF_TCX_EGRESS (Linux 6.6), for headers older than it. */
#define DL_TCX_EGRESS	47
/* fq's horizon when the loader sets it: the longest delay, and a second. */
#define DL_HORIZON_US	((DRILL_MAX_DELAY_MS + 1000ULL) * 1000ULL)

/* One interface the drills hook. */
struct dl_dev {
	char name[IF_NAMESIZE];
	int ifindex;
	int link;		/* the tc egress link's fd; -1: none */
	bool claimed;		/* our claim on fq 5d5: is in the claims dir */
	uint64_t horizon_ns;	/* fq's: the longest delay it keeps (0: dry run) */
	char how[40];		/* what the loader found or did, in messages */
};

struct delaydrill {
	struct sds_dl_bpf *skel;
	const struct probes *probes;
	int cap;			/* point ids the maps hold */
	int ncpu;			/* possible CPUs: the per-CPU counts */
	char why[256];			/* non-empty: the object did not load */
	bool hooked;			/* the interfaces and the cgroup are hooked */
	struct bpf_link *cg[DL_NCG];	/* cgroup connect4, connect6 */
	struct dl_dev dev[DELAYDRILL_MAX_DEVS];
	int ndev;
	uint32_t gen;			/* the last drill's number */
	uint8_t active[SDS_MAX_POINTS];	/* the point's delay drill runs */
	int nactive;
	char hooked_text[DELAYDRILL_MAX_DEVS * (IF_NAMESIZE + 48)];
};

/* attach's options (one loader per process). */
static struct {
	char devs[DELAYDRILL_MAX_DEVS][IF_NAMESIZE];
	int ndevs;			/* 0: every interface up but loopback */
	bool no_qdisc;
} dl_opts;

static bool dl_dry(void)
{
	const char *v = getenv(DL_DRY_ENV);

	return v && v[0] && strcmp(v, "0");
}

int delaydrill__set_opts(const char *devs, bool no_qdisc)
{
	char buf[DELAYDRILL_MAX_DEVS * (IF_NAMESIZE + 1)], *tok, *save = NULL;

	dl_opts.no_qdisc = no_qdisc;
	dl_opts.ndevs = 0;
	if (!devs)
		return 0;
	if (!*devs || strlen(devs) >= sizeof(buf))
		return cmd_err("bad --drill-dev '%s': expected DEV[,DEV...] (at most %d)",
			       devs, DELAYDRILL_MAX_DEVS);
	strcpy(buf, devs);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strlen(tok) >= IF_NAMESIZE || strchr(tok, '/'))
			return cmd_err("bad --drill-dev '%s': '%s' is not an interface name",
				       devs, tok);
		if (!strcmp(tok, "lo"))
			return cmd_err("bad --drill-dev '%s': loopback traffic cannot be delayed by fq (its packets skip the departure time); drill traffic that leaves by a real or virtual interface (a veth)",
				       devs);
		if (dl_opts.ndevs >= DELAYDRILL_MAX_DEVS)
			return cmd_err("bad --drill-dev '%s': at most %d interfaces",
				       devs, DELAYDRILL_MAX_DEVS);
		snprintf(dl_opts.devs[dl_opts.ndevs++], IF_NAMESIZE, "%s", tok);
	}
	if (!dl_opts.ndevs)
		return cmd_err("bad --drill-dev '%s': expected DEV[,DEV...]", devs);
	return 0;
}

/* ---- claims on fq 5d5: ---------------------------------------------------- */

static void claims_dir(char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", ctl_run_dir(), DL_CLAIMS);
}

/*
 * The claims' lock, taken without waiting more than ~200 ms (another
 * loader holds it only around a few netlink requests): its fd, or -1.
 */
static int claims_lock(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	int fd, i;

	claims_dir(dir, sizeof(dir));
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	for (i = 0; i < 20; i++) {
		struct timespec ts = { 0, 10 * 1000000L };

		if (!flock(fd, LOCK_EX | LOCK_NB))
			return fd;
		nanosleep(&ts, NULL);
	}
	close(fd);
	errno = EWOULDBLOCK;
	return -1;
}

static void claims_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void claim_path(char *buf, size_t len, int ifindex, pid_t pid)
{
	char dir[PATH_MAX];

	claims_dir(dir, sizeof(dir));
	snprintf(buf, len, "%s/%d-%d", dir, ifindex, (int)pid);
}

static int claim_add(int ifindex)
{
	char path[PATH_MAX + 32];
	int fd;

	claim_path(path, sizeof(path), ifindex, getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void claim_drop(int ifindex)
{
	char path[PATH_MAX + 32];

	claim_path(path, sizeof(path), ifindex, getpid());
	unlink(path);
}

/*
 * Live loaders other than this one claiming fq on @ifindex; the claims of
 * dead ones are removed on the way.
 */
static int claims_live(int ifindex)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	struct dirent *de;
	int live = 0;
	DIR *d;

	claims_dir(dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		int ix, pid;
		char end;

		if (sscanf(de->d_name, "%d-%d%c", &ix, &pid, &end) != 2 ||
		    ix != ifindex || pid <= 0)
			continue;
		if (pid == getpid())
			continue;
		if (!kill(pid, 0) || errno == EPERM) {
			live++;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	return live;
}

/*
 * fq 5d5: on @ifindex that no live loader claims (a dead loader's, or
 * ours at the end) comes down; the lock is held by the caller.
 */
static void fq_release_locked(const char *name, int ifindex)
{
	struct delay_qdisc q;

	claim_drop(ifindex);
	if (claims_live(ifindex))
		return;
	if (delay_nl__root(ifindex, &q) || strcmp(q.kind, "fq") ||
	    q.handle != DELAYDRILL_FQ_HANDLE)
		return;
	if (delay_nl__del_root(ifindex, DELAYDRILL_FQ_HANDLE))
		cmd_err("delay drill: removing the fq qdisc the loader set on %s: %s",
			name, strerror(errno));
}

/* ---- interfaces --------------------------------------------------------- */

static int dev_flags(const char *name, short *flags)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	r = ioctl(fd, SIOCGIFFLAGS, &ifr);
	close(fd);
	*flags = ifr.ifr_flags;
	return r;
}

/* The interfaces to hook into @dd->dev: attach's list, else every one up but lo. */
static int devs_resolve(struct delaydrill *dd, char *err, size_t errlen)
{
	struct if_nameindex *ni, *it;
	short fl;
	int i;

	dd->ndev = 0;
	if (dl_opts.ndevs) {
		for (i = 0; i < dl_opts.ndevs; i++) {
			struct dl_dev *d = &dd->dev[dd->ndev];

			d->ifindex = if_nametoindex(dl_opts.devs[i]);
			if (!d->ifindex) {
				snprintf(err, errlen, "no interface '%s' (--drill-dev)",
					 dl_opts.devs[i]);
				return -1;
			}
			if (dev_flags(dl_opts.devs[i], &fl) || !(fl & IFF_UP) ||
			    (fl & IFF_LOOPBACK)) {
				snprintf(err, errlen, "interface '%s' (--drill-dev) is %s",
					 dl_opts.devs[i],
					 fl & IFF_LOOPBACK ? "a loopback: fq cannot delay its traffic" :
							     "down");
				return -1;
			}
			snprintf(d->name, sizeof(d->name), "%s", dl_opts.devs[i]);
			d->link = -1;
			dd->ndev++;
		}
		return 0;
	}
	ni = if_nameindex();
	if (!ni) {
		snprintf(err, errlen, "listing the interfaces: %s", strerror(errno));
		return -1;
	}
	for (it = ni; it->if_index && dd->ndev < DELAYDRILL_MAX_DEVS; it++) {
		struct dl_dev *d = &dd->dev[dd->ndev];

		if (dev_flags(it->if_name, &fl) || !(fl & IFF_UP) ||
		    (fl & IFF_LOOPBACK))
			continue;
		snprintf(d->name, sizeof(d->name), "%s", it->if_name);
		d->ifindex = it->if_index;
		d->link = -1;
		dd->ndev++;
	}
	if_freenameindex(ni);
	if (!dd->ndev) {
		snprintf(err, errlen, "no interface is up but loopback, and fq cannot delay loopback traffic");
		return -1;
	}
	return 0;
}

/*
 * Before anything is set: can @d keep packets @delay_ns late?  Fills
 * @d->how and @d->horizon_ns, and @set when fq must be set there.
 */
static int dev_plan(struct dl_dev *d, uint64_t delay_ns, bool *set, char *err,
		    size_t errlen)
{
	struct delay_qdisc q;
	int e;

	*set = false;
	if (dl_dry()) {
		snprintf(d->how, sizeof(d->how), "dry run: no qdisc");
		d->horizon_ns = UINT64_MAX;
		return 0;
	}
	e = delay_nl__root(d->ifindex, &q);
	if (e == -ENOENT) {
		/* noqueue and noop are not dumped: the kernel's default. */
		snprintf(q.kind, sizeof(q.kind), "noqueue");
		q.handle = 0;
	} else if (e) {
		snprintf(err, errlen, "reading the root qdisc of %s: %s", d->name,
			 strerror(-e));
		return -1;
	}
	if (!strcmp(q.kind, "fq")) {
		d->horizon_ns = q.horizon_ns;
		snprintf(d->how, sizeof(d->how), "%s",
			 q.handle == DELAYDRILL_FQ_HANDLE ? "fq set by a loader" : "fq");
		if (q.handle != DELAYDRILL_FQ_HANDLE && delay_ns > q.horizon_ns) {
			snprintf(err, errlen,
				 "the fq qdisc on %s has a horizon of %llu ms: a packet %llu ms late would be %s; the loader does not change a qdisc it did not set (give that fq a longer horizon)",
				 d->name, (unsigned long long)(q.horizon_ns / 1000000),
				 (unsigned long long)(delay_ns / 1000000),
				 q.horizon_drop ? "dropped" : "sent early");
			return -1;
		}
		/* One of ours, claimed by a dead loader or by none: join it. */
		*set = q.handle == DELAYDRILL_FQ_HANDLE;
		return 0;
	}
	if (dl_opts.no_qdisc) {
		snprintf(err, errlen,
			 "%s has no fq qdisc (its root is %s) and --no-drill-qdisc forbids the loader to set one: nothing would hold the packets",
			 d->name, q.kind);
		return -1;
	}
	if (q.handle) {
		snprintf(err, errlen,
			 "the root qdisc of %s is %s %x: (someone's): the loader replaces only the kernel's default qdisc with fq; set fq there or name another --drill-dev",
			 d->name, q.kind, q.handle >> 16);
		return -1;
	}
	*set = true;
	return 0;
}

/* fq 5d5: on @d (set, or joined if there), and our claim on it. */
static int dev_set_fq(struct dl_dev *d, char *err, size_t errlen)
{
	char msg[200];
	struct delay_qdisc q;
	int e, lk = claims_lock();

	if (lk < 0) {
		snprintf(err, errlen, "the delay drills' lock in %s/%s: %s",
			 ctl_run_dir(), DL_CLAIMS, strerror(errno));
		return -1;
	}
	if (!delay_nl__root(d->ifindex, &q) && !strcmp(q.kind, "fq") &&
	    q.handle == DELAYDRILL_FQ_HANDLE) {
		e = 0;
		d->horizon_ns = q.horizon_ns;
	} else {
		e = delay_nl__set_fq(d->ifindex, DELAYDRILL_FQ_HANDLE,
				     (uint32_t)DL_HORIZON_US, msg, sizeof(msg));
		d->horizon_ns = DL_HORIZON_US * 1000ULL;
		snprintf(d->how, sizeof(d->how), "fq set by the loader");
	}
	if (e) {
		snprintf(err, errlen, "setting fq as the root qdisc of %s: %s%s%s%s",
			 d->name, strerror(-e), msg[0] ? " (" : "", msg,
			 msg[0] ? ")" : "");
		if (e == -ENOENT || strstr(msg, "unknown"))
			snprintf(err + strlen(err), errlen - strlen(err),
				 "; this kernel has no fq qdisc (CONFIG_NET_SCH_FQ), which is what holds the packets");
		claims_unlock(lk);
		return -1;
	}
	if (claim_add(d->ifindex) == 0)
		d->claimed = true;
	claims_unlock(lk);
	return 0;
}

static void dev_release(struct dl_dev *d)
{
	int lk;

	if (d->link >= 0)
		close(d->link);
	d->link = -1;
	if (!d->claimed)
		return;
	lk = claims_lock();
	fq_release_locked(d->name, d->ifindex);
	claims_unlock(lk);
	d->claimed = false;
}

/* ---- hooking ------------------------------------------------------------ */

static void dl_unhook(struct delaydrill *dd)
{
	__u64 zero = 0;
	__u32 w;
	int i;

	/* The marks first: no socket is marked once nothing delays it. */
	for (i = 0; i < DL_NCG; i++) {
		bpf_link__destroy(dd->cg[i]);
		dd->cg[i] = NULL;
	}
	for (i = 0; i < dd->ndev; i++)
		dev_release(&dd->dev[i]);
	/* The next drill's marks start from no port. */
	for (w = 0; dd->skel && w < SDS_DL_PORT_WORDS; w++)
		bpf_map_update_elem(bpf_map__fd(dd->skel->maps.delay_ports), &w,
				    &zero, BPF_ANY);
	if (dd->hooked)
		fprintf(stderr, "sds-bpf: delay drills: unhooked %s\n", dd->hooked_text);
	dd->ndev = 0;
	dd->hooked = false;
	dd->hooked_text[0] = '\0';
}

static int dl_hook(struct delaydrill *dd, uint64_t delay_ns, char *err,
		   size_t errlen)
{
	bool set[DELAYDRILL_MAX_DEVS];
	struct bpf_program *progs[DL_NCG] = {
		dd->skel->progs.sds_dl_connect4,
		dd->skel->progs.sds_dl_connect6,
	};
	int i, prog = bpf_program__fd(dd->skel->progs.sds_dl_egress);
	size_t off = 0;

	if (devs_resolve(dd, err, errlen))
		return -1;
	/* Every interface is judged before any is touched. */
	for (i = 0; i < dd->ndev; i++)
		if (dev_plan(&dd->dev[i], delay_ns, &set[i], err, errlen))
			goto fail;
	for (i = 0; i < dd->ndev; i++)
		if (set[i] && dev_set_fq(&dd->dev[i], err, errlen))
			goto fail;
	for (i = 0; i < dd->ndev; i++) {
		struct dl_dev *d = &dd->dev[i];

		d->link = bpf_link_create(prog, d->ifindex,
					  (enum bpf_attach_type)DL_TCX_EGRESS, NULL);
		if (d->link < 0) {
			snprintf(err, errlen,
				 "attaching the tc egress program to %s: %s (tcx links need Linux 6.6)",
				 d->name, strerror(errno));
			d->link = -1;
			goto fail;
		}
	}
	if (failfast_cg__attach(progs, DL_NCG, dd->cg)) {
		snprintf(err, errlen, "attaching the cgroup connect hooks (the loader's log says why)");
		goto fail;
	}
	for (i = 0; i < dd->ndev; i++)
		off += snprintf(dd->hooked_text + off, sizeof(dd->hooked_text) - off,
				"%s%s (%s)", i ? ", " : "", dd->dev[i].name,
				dd->dev[i].how);
	dd->hooked = true;
	fprintf(stderr, "sds-bpf: delay drills: tc egress on %s\n", dd->hooked_text);
	return 0;
fail:
	dl_unhook(dd);
	return -1;
}

/* ---- the object ----------------------------------------------------------- */

/* Dead loaders' fq 5d5: on the interfaces the drills would hook. */
static void dl_sweep(struct delaydrill *dd)
{
	char err[256];
	int i, lk;

	if (dl_dry() || devs_resolve(dd, err, sizeof(err)))
		goto out;
	lk = claims_lock();
	if (lk < 0)
		goto out;
	for (i = 0; i < dd->ndev; i++) {
		struct delay_qdisc q;

		if (delay_nl__root(dd->dev[i].ifindex, &q) || strcmp(q.kind, "fq") ||
		    q.handle != DELAYDRILL_FQ_HANDLE || claims_live(dd->dev[i].ifindex))
			continue;
		if (!delay_nl__del_root(dd->dev[i].ifindex, DELAYDRILL_FQ_HANDLE))
			fprintf(stderr, "sds-bpf: delay drills: removed the fq a dead loader left on %s\n",
				dd->dev[i].name);
	}
	claims_unlock(lk);
out:
	dd->ndev = 0;
}

/*
 * The object, loaded at the first delay drill (a loader that never runs
 * one verifies nothing of it, and its start costs nothing more): 0, or -1
 * with @dd->why kept (every later drill is refused with it, said once).
 */
static int dl_load(struct delaydrill *dd)
{
	const struct probes *p = dd->probes;
	libbpf_print_fn_t old;
	int e;

	if (dd->skel)
		return 0;
	if (dd->why[0])
		return -1;
	dd->skel = sds_dl_bpf__open();
	if (!dd->skel) {
		snprintf(dd->why, sizeof(dd->why), "opening the delay BPF object: %s",
			 strerror(errno));
		goto refused;
	}
	dd->skel->rodata->atomics = p->atomics;
	if (bpf_map__reuse_fd(dd->skel->maps.frames,
			      bpf_map__fd(p->skel->maps.frames)) ||
	    bpf_map__set_max_entries(dd->skel->maps.delay_state, dd->cap) ||
	    bpf_map__set_max_entries(dd->skel->maps.delay_count, dd->cap)) {
		snprintf(dd->why, sizeof(dd->why), "preparing the delay maps: %s",
			 strerror(errno));
		goto refused;
	}
	old = libbpf_set_print(NULL);
	e = sds_dl_bpf__load(dd->skel);
	libbpf_set_print(old);
	if (e) {
		snprintf(dd->why, sizeof(dd->why),
			 "the kernel refuses the delay programs (cgroup connect hooks with socket storage, tc egress): %s",
			 strerror(-e));
		goto refused;
	}
	return 0;
refused:
	fprintf(stderr, "sds-bpf: delay drills at function points are off: %s\n",
		dd->why);
	sds_dl_bpf__destroy(dd->skel);
	dd->skel = NULL;
	return -1;
}

/*
 * Can a delay drill mark the sockets @ps's calls connect?  Its calls keep
 * a frame a connect can find: failfast=connect's, or :drill=net's alone.
 */
static bool dl_markable(const struct point_spec *ps)
{
	return (ps->failfast_ops & SDS_FF_CONNECT) || ps->drill_net;
}

int delaydrill__open(struct delaydrill **out, const struct probes *p, int n)
{
	struct delaydrill *dd;
	int i, want = 0;

	*out = NULL;
	for (i = 0; i < n; i++)
		want |= dl_markable(&p->pts[i].spec);
	if (!want)
		return 0;
	dd = calloc(1, sizeof(*dd));
	if (!dd)
		return cmd_err("out of memory");
	*out = dd;
	dd->probes = p;
	dd->ncpu = libbpf_num_possible_cpus();
	dd->cap = p->cap > 0 ? p->cap : SDS_MAX_POINTS;
	if (dl_dry())
		fprintf(stderr, "sds-bpf: delay drill dry run (%s): packets are stamped, no qdisc is checked or set\n",
			DL_DRY_ENV);
	dl_sweep(dd);
	return 0;
}

void delaydrill__close(struct delaydrill *dd)
{
	if (!dd)
		return;
	dl_unhook(dd);
	sds_dl_bpf__destroy(dd->skel);
	free(dd);
}

int delaydrill__can(const struct delaydrill *dd, const struct probe_point *p,
		    char *err, size_t errlen)
{
	if (!dl_markable(&p->spec)) {
		snprintf(err, errlen,
			 "'%s' is a function point whose traffic the loader cannot mark: a delay drill delays the sockets a thread connects inside the function, which needs :drill=net or failfast=connect on the point (docs/DELAY.md)",
			 p->spec.name);
		return -1;
	}
	if (!dd || dd->why[0]) {
		snprintf(err, errlen, "'%s': delay drills are off in this loader: %s",
			 p->spec.name, dd ? dd->why : "not loaded");
		return -1;
	}
	return 0;
}

static int dl_write(struct delaydrill *dd, int id, const struct sds_dl_state *st)
{
	__u32 key = id;

	return bpf_map_update_elem(bpf_map__fd(dd->skel->maps.delay_state), &key,
				   st, BPF_ANY);
}

int delaydrill__start(struct delaydrill *dd, int id, uint32_t ratio,
		      uint64_t delay_ns, uint64_t expires_ns, char *err,
		      size_t errlen)
{
	struct sds_dl_state st = {
		.ratio = ratio, .delay_ns = delay_ns, .expires_ns = expires_ns,
	};
	int i;

	if (!dd || id < 0 || id >= dd->cap) {
		snprintf(err, errlen, "delay drills are off in this loader");
		return -1;
	}
	if (dl_load(dd)) {
		snprintf(err, errlen, "delay drills are off in this loader: %s", dd->why);
		return -1;
	}
	if (!dd->hooked && dl_hook(dd, delay_ns, err, errlen))
		return -1;
	/* Hooked by an earlier drill: its interfaces must keep this delay too. */
	for (i = 0; i < dd->ndev; i++)
		if (delay_ns > dd->dev[i].horizon_ns) {
			snprintf(err, errlen,
				 "the fq qdisc on %s keeps packets at most %llu ms: a delay of %llu ms would be dropped there",
				 dd->dev[i].name,
				 (unsigned long long)(dd->dev[i].horizon_ns / 1000000),
				 (unsigned long long)(delay_ns / 1000000));
			goto undo;
		}
	st.gen = ++dd->gen;
	/* A ratio-0 drill marks nothing: state 0 is "no drill". */
	if (dl_write(dd, id, &st)) {
		snprintf(err, errlen, "writing the point's delay state: %s",
			 strerror(errno));
		goto undo;
	}
	if (!dd->active[id]) {
		dd->active[id] = 1;
		dd->nactive++;
	}
	return 0;
undo:
	if (!dd->nactive)
		dl_unhook(dd);
	return -1;
}

bool delaydrill__running(const struct delaydrill *dd, int id)
{
	return dd && id >= 0 && id < dd->cap && dd->active[id];
}

void delaydrill__stop(struct delaydrill *dd, int id)
{
	struct sds_dl_state st = {};

	if (!dd || !dd->skel || id < 0 || id >= dd->cap || !dd->active[id])
		return;
	if (dl_write(dd, id, &st))
		cmd_err("delay drill: clearing point %d's state: %s", id,
			strerror(errno));
	dd->active[id] = 0;
	if (--dd->nactive == 0)
		dl_unhook(dd);
}

/* Point @id's counts summed over the CPUs; -1 if unreadable. */
static int dl_count(struct delaydrill *dd, int id, struct sds_dl_count *sum)
{
	struct sds_dl_count *v;
	__u32 key = id;
	int c;

	memset(sum, 0, sizeof(*sum));
	if (!dd || id < 0 || id >= dd->cap)
		return -1;
	if (!dd->skel)
		return 0;	/* no drill yet: nothing counted */
	v = calloc(dd->ncpu, sizeof(*v));
	if (!v)
		return -1;
	if (bpf_map_lookup_elem(bpf_map__fd(dd->skel->maps.delay_count), &key, v)) {
		free(v);
		return -1;
	}
	for (c = 0; c < dd->ncpu; c++) {
		sum->marked += v[c].marked;
		sum->spared += v[c].spared;
		sum->packets += v[c].packets;
	}
	free(v);
	return 0;
}

uint64_t delaydrill__marked(struct delaydrill *dd, int id)
{
	struct sds_dl_count n;

	return dl_count(dd, id, &n) ? 0 : n.marked;
}

const char *delaydrill__hooked(const struct delaydrill *dd)
{
	return dd ? dd->hooked_text : "";
}

json_t *delaydrill__point_json(struct delaydrill *dd, int id)
{
	struct sds_dl_count n;

	if (!dd || id < 0 || id >= dd->cap ||
	    !dl_markable(&dd->probes->pts[id].spec) || dl_count(dd, id, &n))
		return NULL;
	return json_pack("{s:I, s:I, s:I}",
			 "marked", (json_int_t)n.marked,
			 "spared", (json_int_t)n.spared,
			 "packets", (json_int_t)n.packets);
}
