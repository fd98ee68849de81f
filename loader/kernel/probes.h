/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The BPF side of a loader: the skeleton, the per-point configuration and
 * one uprobe + uretprobe pair per function point.
 */
#ifndef SDS_PROBES_H
#define SDS_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "target/elfsym.h"
#include "target/exits.h"
#include "pointspec/pointspec.h"
#include "target/site.h"
#include "target/unwind.h"

struct bpf_link;
struct pins;
struct probe_keys;
struct sds_bpf;

enum point_kind {
	POINT_FUNCTION = 1,		/* POINT=SYMBOL: uprobe + uretprobe */
	POINT_GUARD = 2,		/* a libsds call site, or named by a strategy */
};

/* One point: what the user asked for and where it landed. */
struct probe_point {
	enum point_kind kind;		/* function or guard */
	struct point_spec spec;		/* name; for functions the whole POINT=SYMBOL[:...] */
	struct elf_func fn;		/* the function in TARGET */
	struct site site;		/* the instruction the probe sits on */
	uint64_t attach_off;		/* file offset of the probe: fn.offset + site.skip */
	enum ret_mode ret_mode;		/* how its calls are seen ending (unwind.h) */
	enum ret_why ret_why;		/* why not a pair, if it is not */
	struct bpf_link *enter;		/* uprobe link */
	struct bpf_link *leave;		/* uretprobe link (RET_PAIR) */
	struct exit_sites exits;	/* its rets (RET_EXITS) */
	struct bpf_link *exit_links[EXITS_MAX];	/* a uprobe on each (RET_EXITS) */
	char exits_why[160];		/* why it has no exit probes (RET_WHY_NO_EXITS) */
	char returns_why[160];		/* in a target that can unwind: "cannot unwind: ..." (a pair) or "may unwind: ..." (nothrow.c) */
	bool unresolved;		/* not in the build TARGET now is (watch.c): nothing to attach */
	bool session;			/* @enter is a uprobe session link (probes_session.c) */
	/*
	 * The function's other clones, when g++ left several and no symbol
	 * of its own, or a C function has clones beside its own symbol
	 * (point/clones.h): each a sub-point with its own fn, site, returns
	 * and links, attached with this point's id, on the pair path (never
	 * a session), pinned, suspended and detached with it.
	 */
	struct probe_point *clones;
	int nclones;
	/*
	 * @fn is a .part.N piece (the rest of the function, its head inlined
	 * elsewhere) of a point that has other sites too: its entry, on a
	 * thread inside a call entered at another of them, continues that
	 * call and is not a new one (SDS_COOKIE_PART, docs/PROBES.md).
	 */
	bool part;
	/* The point (pts[] only) has such pieces: its frames must be kept (the pair path). */
	bool parts;
};

#define PROBES_MAX_GUARD_FILES	16	/* distinct files holding libsds sites */

/*
 * A file whose libsds probe sites this loader has attached to.  A file a
 * session brought in is held by sessions; when none holds it, it stays
 * attached (idle: a process of it starting again costs nothing) until its
 * slot is needed for another file, so a libsds upgrade (a new inode) does
 * not keep the old one's slot forever.  Detaching takes the kernel a few
 * hundred ms, hence not on every session's end.  TARGET's own (attached
 * at start) is pinned.
 */
struct guard_file {
	bool used;			/* slot taken */
	bool pinned;			/* TARGET's: never detached */
	dev_t dev;			/* identity of the file ... */
	ino_t ino;			/* ... as uprobes see it */
	uid_t uid;			/* who brought it in (per-uid cap) */
	int refs;			/* sessions holding it; 0: idle */
	uint64_t idle_since;		/* when @refs last fell to 0 (eviction order) */
	struct bpf_link *links[SDS_SITE_COUNT];	/* one uprobe per site */
	struct bpf_link *copy_link;	/* capture's program on the copy site; NULL: none */
	struct bpf_link *copy_ret_link;	/* ... and on the copy_ret site (responses) */
};

/* SDS_PROBE_PATH: how function points see their calls end. */
enum probe_path_mode {
	PROBE_PATH_AUTO,	/* the session where the kernel has it, else the pair */
	PROBE_PATH_SESSION,	/* the session or fail */
	PROBE_PATH_PAIR,	/* uprobe + uretprobe, whatever the kernel */
};

/* Which path the loader's function points take (docs/PROBES.md). */
struct probe_path {
	enum probe_path_mode mode;	/* asked by SDS_PROBE_PATH */
	bool session;			/* the session program is loaded and attaches */
	char why[160];			/* the pair's reason, when not the session */
};

/*
 * Where calls' time went (probes_split.c, docs/SPLIT.md): the two
 * scheduler tracepoints, loaded unless --no-split, attached once the
 * loader has a point.
 */
struct probe_split {
	bool off;			/* --no-split */
	bool loaded;			/* the programs are in the skeleton */
	bool on;			/* both attached: calls keep their split */
	char why[160];			/* why not on (once it cannot be) */
	struct bpf_link *sw;		/* sds_split_switch */
	struct bpf_link *wk;		/* sds_split_wakeup */
};

struct probes {
	struct sds_bpf *skel;		/* loaded programs and maps */
	int nfiles;			/* guard files attached (used slots) */
	struct guard_file files[PROBES_MAX_GUARD_FILES];
	struct bpf_link *exit_link;	/* sds_thread_exit */
	struct catch_sites catches;	/* TARGET's, found when a point is RET_EXITS */
	struct bpf_link *catch_links[EXITS_CATCH_MAX];	/* sds_catch on each */
	int npoints;			/* points in use, ids 0..npoints-1 */
	bool atomics;			/* BPF adds are locked: the kernel preempts */
	enum ret_mode ret_mode;		/* how function points see returns (unwind.h) */
	enum ret_why ret_why;		/* why they count entries only, if they do */
	struct probe_point *pts;	/* SDS_MAX_POINTS entries */
	const struct pins *pins;	/* where links are pinned (probes_pin.c); NULL: nowhere */
	int cap;			/* point ids the maps hold (set before probes__load; 0: SDS_MAX_POINTS) */
	struct bpf_program *copy_site_prog;	/* capture.c's sds_copy_site; NULL: no capture */
	struct bpf_program *copy_ret_prog;	/* capture.c's sds_copy_site_ret */
	struct probe_path path;		/* session or pair, and why (probes_session.c) */
	struct probe_split split;	/* the split's tracepoints (probes_split.c) */
	struct probe_keys *keys;	/* per point its key table (keys.c), SDS_MAX_POINTS */
	bool globals_adopted;		/* adopted: the pinned links' .bss is ours (probes_pin.c) */
	bool deps;			/* attach --deps: function points keep frames (docs/DEPS.md) */
};

/*
 * Guard points a loader has room for beyond its function points: libsds
 * names its points at run time (`point NAME`), the strategies name more.
 * The per-CPU counting maps cost ~1.3 KB per point and CPU, so they are
 * sized to the points a loader can serve, not to SDS_MAX_POINTS.
 */
#define PROBES_GUARD_ROOM	256

/* The point ids a loader of @nfunc function points serves. */
int probes__cap_for(int nfunc);
/* Size the per-point maps and the BPF side's point_cap to pr->cap (open, not loaded). */
int probes__size_maps(struct probes *pr);

/*
 * Open and load the BPF object, attach the thread-exit program.  @key is
 * the value guard sites must pass to be counted by this loader.
 */
int probes__load(struct probes *pr, uint64_t key, uint64_t sec_offset_ns,
		 char *err, size_t errlen);

/*
 * probes_session.c: SDS_PROBE_PATH into @pp (0, or -1 with a message for
 * a bad value); before the load, set the session program up or leave it
 * out; after a failed load in auto mode, whether to load again without
 * it (the reason kept in pr->path.why).
 */
int probes__path_parse(struct probe_path *pp, char *err, size_t errlen);
void probes__session_prepare(struct probes *pr, uint64_t key);
bool probes__session_retry(struct probes *pr, int load_err);
/* Whether function point @p goes on the session path. */
bool probes__wants_session(const struct probes *pr, const struct probe_point *p);
/*
 * Attach point @id as a uprobe session at its attach_off: p->enter is the
 * session link.  0; 1: the kernel refused it in auto mode (the pair
 * from now on, the reason kept); -1 with errno.
 */
int probes__session_attach(struct probes *pr, int id, const char *target,
			   pid_t pid);
/* Points 0..@n-1 adopted from their pins: which enter links are sessions. */
void probes__session_adopted(struct probes *pr, int n);
/* "session (...)" or "pair (...)": what `attach` and `stats` show. */
const char *probes__path_text(const struct probes *pr, char *buf, size_t len);

/*
 * probes_split.c: before the load, the split's programs in or out; after
 * a failed load with them, whether to load again without (the reason
 * kept); once a point exists, attach them (a refusal is one line on
 * stderr and the split unavailable, attach goes on); detach them.
 */
void probes__split_prepare(struct probes *pr);
bool probes__split_retry(struct probes *pr, int load_err);
void probes__split_want(struct probes *pr);
void probes__split_detach(struct probes *pr);
/* The split's maps for the counters (-1: not loaded). */
int probes__split_sums_fd(const struct probes *pr);
int probes__split_hist_fd(const struct probes *pr);

/* Find a point by name: its id, or -1. */
/*
 * Point @id's name and kind, for the modules that only report a point
 * (serve, capture, watch): the table is the probes' own.
 */
const char *probes__name(const struct probes *pr, int id);
enum point_kind probes__kind(const struct probes *pr, int id);
/*
 * A deploy (watch.c): points 0..@n-1 of the table trade places with
 * @pts (a build's copies, resolved and attached in it), and TARGET's
 * catch sites and their links with @cs and @links, so that the table
 * describes the build at the path and the caller keeps the links of the
 * one it was.
 */
void probes__swap_build(struct probes *pr, struct probe_point *pts, int n,
			struct catch_sites *cs, struct bpf_link **links);
/*
 * attach: the point ids the maps hold (before probes__load, from
 * probes__cap_for), and where links are pinned (NULL: nowhere).
 */
void probes__set_cap(struct probes *pr, int cap);
void probes__set_pins(struct probes *pr, const struct pins *pins);
/* Capture's programs for libsds's copy and copy_ret sites (capture.c); NULL: none, capture is off. */
void probes__set_copy_site(struct probes *pr, struct bpf_program *prog,
			   struct bpf_program *ret_prog);
int probes__find(const struct probes *pr, const char *name);

/* Add guard point @name: its id, or -1 when the table is full. */
int probes__add_guard(struct probes *pr, const char *name);

/* Write point @id's BPF configuration (timeout, error predicate). */
int probes__configure(struct probes *pr, int id, uint64_t timeout_ns);

/* probes_guard.c: detach the guard programs from file @gf (its slot kept). */
void probes__guard_file_detach(struct guard_file *gf);
/* " (run as root, ...)" for an EPERM/EACCES @err, else "". */
const char *probes__perm_hint(int err);
/* The same for attaching a uprobe (perf_event_open, not the verifier). */
const char *probes__attach_hint(int err);

/*
 * probes_guard.c: attach the guard programs to the libsds sites @sites of
 * TARGET at @path, pinned for the loader's life.  Returns 0, or -1 with a message.
 */
int probes__attach_guards(struct probes *pr, const char *path,
			  const struct sds_sites *sites, char *err,
			  size_t errlen);

/*
 * The guard file of inode @dev/@ino if attached: take a reference, return
 * its index; else -1.
 */
int probes__guard_get(struct probes *pr, dev_t dev, ino_t ino);

/* Guard files brought in by @uid that some session holds (not pinned). */
int probes__guard_held(const struct probes *pr, uid_t uid);

/*
 * Attach the guard programs to @sites of the file @path (which must be
 * inode @dev/@ino: register.c passes "/proc/self/fd/N") for @uid, holding
 * one reference; an idle file is detached if its slot is needed.  Returns
 * its index; -1 with errno ENOSPC (every slot held), EDQUOT (@uid, not
 * root, holds @uid_max files already), or the attach's error, and a
 * message in @err.
 */
int probes__guard_add(struct probes *pr, const char *path, dev_t dev,
		      ino_t ino, const struct sds_sites *sites, uid_t uid,
		      int uid_max, char *err, size_t errlen);

/* Drop a reference on guard file @i (the last one makes it idle). */
void probes__guard_put(struct probes *pr, int i);

/*
 * Configure point @id and attach its probes to @target for @pid (-1:
 * every process, running now or later), as its ret_mode says: a pair, an
 * entry and one probe per exit, or the entry alone, counting visits.
 */
int probes__attach_point(struct probes *pr, int id, const char *target,
			 pid_t pid, char *err, size_t errlen);

/*
 * Attach sds_catch to TARGET's catch sites @pr->catches (@target, @pid as
 * for the points): exceptions through RET_EXITS points are counted when
 * caught.  0, or -1 with a message.
 */
int probes__attach_catches(struct probes *pr, const char *target, pid_t pid,
			   char *err, size_t errlen);

/*
 * Detach point @id's pair (the budget: its probes cost the target too
 * much); its id, configuration and counts stay.
 */
void probes__suspend(struct probes *pr, int id);

/*
 * Attach point @id's pair again at the same site of @target for @pid
 * (as probes__attach_point() did).  0, or -1 with a message.
 */
int probes__resume(struct probes *pr, int id, const char *target, pid_t pid,
		   char *err, size_t errlen);

/*
 * What a call of function point @p costs the target with its probes, in
 * ns: its entry site, plus the return as its ret_mode sees it; with
 * clones, its dearest site's, plus its dearest .part.N piece's when it
 * has pieces (a call through the head enters both).
 */
unsigned int probes__point_cost_ns(const struct probe_point *p);

/*
 * Whether each call of function point @p single-steps an instruction (a
 * stepped entry site, or its rets: RET_EXITS), the ~20 us kind of cost;
 * with clones, whether some site does.
 */
bool probes__point_stepped(const struct probe_point *p);

/*
 * Another build of TARGET (watch.c): attach function point @id's probes
 * as @p says (a copy of pr->pts[id] resolved in that build: its site,
 * ret_mode and exits) to @target, every process, the links into @p.
 * The same cookie @id: both builds count into one point; @p's clones
 * (point/clones.h) too.  0, or -1 with a message (nothing of @p left
 * attached).
 */
int probes__attach_copy(struct probes *pr, struct probe_point *p, int id,
			const char *target, char *err, size_t errlen);

/* Detach what probes__attach_copy() attached to @p; free its clones. */
void probes__detach_copy(struct probe_point *p);

/*
 * sds_catch on the catch sites @cs of @target, every process, the links
 * into @links (EXITS_CATCH_MAX).  0, or -1 with a message.
 */
int probes__attach_catch_set(struct probes *pr, const struct catch_sites *cs,
			     struct bpf_link **links, const char *target,
			     char *err, size_t errlen);
void probes__detach_catch_set(struct bpf_link **links);

int probes__slots_fd(const struct probes *pr);
int probes__gauges_fd(const struct probes *pr);
/* The stuck table (bpf/sds_stuck.bpf.h) and point_cfg, for kernel/stuck.h. */
int probes__stuck_fd(const struct probes *pr);
int probes__cfg_fd(const struct probes *pr);
/* Timed calls the stuck table had no room for, since the load. */
uint64_t probes__stuck_lost(const struct probes *pr);

/*
 * probes_pin.c: the maps and links pinned in the app's pin directory.
 * Pin the maps of a fresh load; 0, or -1 with a message.
 */
int probes__pin_maps(struct probes *pr, const struct pins *p, char *err,
		     size_t errlen);
/*
 * Load the programs again over the pinned maps, with the constants the
 * pinned programs were loaded with; adopt the thread-exit link.
 */
int probes__adopt_load(struct probes *pr, uint64_t key, uint64_t sec_offset_ns,
		       bool atomics, const struct pins *p, char *err,
		       size_t errlen);
/* Take points 0..@n-1's and the catch sites' pinned links (those there are). */
void probes__adopt_points(struct probes *pr, const struct pins *p, int n);
/* Take TARGET's pinned guard links (@dev/@ino); -1 if not all are pinned. */
int probes__adopt_guards(struct probes *pr, const struct pins *p,
			 dev_t dev, ino_t ino);
/* Pin every link not pinned yet; 0, or -1 with a message. */
int probes__pin_links(struct probes *pr, const struct pins *p, char *err,
		      size_t errlen);
/* Unpin point @id's links (before they are detached for good). */
void probes__unpin_point(struct probes *pr, int id);

/* The point table, empty (SDS_MAX_POINTS entries); -1: out of memory. */
int probes__init(struct probes *pr);
/*
 * Detach everything and free; safe on a partly set-up @pr.  Pinned links
 * stay in the kernel (pins__remove() removes them).
 */
void probes__destroy(struct probes *pr);

#endif /* SDS_PROBES_H */
