// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * sds.c - the hot path of libsds: sds_should_downgrade(), sds_enter(),
 * sds_exception_sign(), sds_downgrade_finally(), sds_copy(), and the
 * keyed entries sds_should_downgrade_key(), sds_enter_key() (docs/KEYS.md).
 *
 * No allocation, no lock, no syscall (CLOCK_MONOTONIC comes from the
 * vDSO, and only for a point whose entry is active) -- except the sleep
 * of a call that a delay drill hits, which is the drill's point.  A point that was
 * never bound costs two loads at the start and one at the end of a call.
 *
 * Each thread keeps a small stack of the guarded calls it is inside: the
 * point, the binding the call started with and what the decision gave it,
 * so that the end of the call gives back exactly what its start took, on
 * the session it took it from, even if the client has re-registered since.
 * SDS lets calls end in any order: the end of a call takes the innermost
 * frame of its own point.
 *
 * A thread that leaks frames (a missed finally, a C++ exception, a
 * longjmp over the end of a call) fills its stack; the next call then
 * evicts the oldest frame, giving back what that call took as its end
 * would (frames_evict), and is guarded as any other.
 */
#include <errno.h>
#include <time.h>
#include "guard.h"
#include "libsds.h"

/* As deep as the BPF side pairs guarded calls of one thread. */
#define SDS_FRAMES	SDS_MAX_DEPTH
/*
 * The depth while frames_evict() moves the stack: above SDS_FRAMES, so a
 * signal handler that interrupts it neither takes nor ends a frame.
 */
#define SDS_FRAMES_BUSY	(SDS_FRAMES + 1)

/*
 * One guarded call in progress on this thread.  A keyed call (SDS_G_KEYED
 * in @how) keeps its key for its exception and exit sites (the caller's
 * buffer may be gone by then) in a slot of its own, @key, of the
 * thread's key slots: the frame stays the size it was, so the unkeyed
 * path, which never reads @key, is the code it was, and a frame moved by
 * an end out of order takes its key along for free.
 */
struct frame {
	struct sds_point *point;	/* the call's point */
	const struct sds_bind *bind;	/* its binding at entry; NULL: detached */
	unsigned int how;		/* SDS_G_* of its decision and since */
	unsigned int key;		/* keyed: its slot in frames.keys (was padding) */
};

/* A keyed call's key, held for its sites. */
struct frame_key {
	uint64_t hash;			/* sds_key_hash(&key) */
	struct sds_key key;		/* zero-padded */
};

/* The guarded calls of one thread. */
struct frames {
	unsigned int depth;		/* frames in use; SDS_FRAMES_BUSY: moving */
	uint64_t rng;			/* downgrade_rate's PRNG; 0: unseeded */
	struct frame f[SDS_FRAMES];	/* innermost last */
	/* Keyed calls only, after what the unkeyed path reads. */
	uint64_t keys_used;		/* bit i: keys[i] is a live frame's */
	struct frame_key keys[SDS_FRAMES];
};
_Static_assert(sizeof(struct frame) == 24, "a frame: three words, as before keys");
_Static_assert(SDS_FRAMES <= 64, "one bit a key slot");

static __thread struct frames frames;

/*
 * A signal handler may run guarded calls between any two instructions
 * here; it only ever works above the depth it finds, so a frame is
 * claimed (depth raised) before it is written, and dropped after it was
 * read.  These fences keep the compiler from reordering across that.
 */
#define signal_fence()	__atomic_signal_fence(__ATOMIC_SEQ_CST)

static inline uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The innermost frame of @p, or -1.  None while an eviction moves the
 * stack: only a signal handler can ask then, and its calls were not given
 * frames (enter_frame).
 */
static inline int frame_find(const struct frames *t, const struct sds_point *p)
{
	int i;

	if (t->depth > SDS_FRAMES)
		return -1;
	for (i = (int)t->depth - 1; i >= 0; i--)
		if (t->f[i].point == p)
			return i;
	return -1;
}

/* A delay drill's sleep: the whole of it, whatever signals arrive. */
static void drill_sleep(uint64_t ns)
{
	struct timespec until;
	uint64_t t = clock_ns() + ns;

	until.tv_sec = t / 1000000000ULL;
	until.tv_nsec = t % 1000000000ULL;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

/*
 * A free key slot of @t, taken; -1 if none (never while frames are
 * balanced: a live keyed frame holds one of SDS_FRAMES).  Only this
 * thread's signal handlers can race us, and one instruction is atomic
 * against them: bts sets the bit and says whether it was set (a handler
 * took that slot between our read and it: we try the next), with no bus
 * lock, which an atomic of the C library would take for nothing.
 */
static int key_slot_take(struct frames *t)
{
	uint64_t used;
	unsigned char was;
	long i;

	for (;;) {
		used = __atomic_load_n(&t->keys_used, __ATOMIC_RELAXED);
		if (!~used)
			return -1;
		i = __builtin_ctzll(~used);
		__asm__ volatile("btsq %2, %0\n\tsetc %1"
				 : "+m"(t->keys_used), "=q"(was) : "r"(i) : "cc");
		if (!was)
			return (int)i;
	}
}

/* Give back the key slot of a frame that ended (@how, @slot: its). */
static inline void key_slot_give(struct frames *t, unsigned int how,
				 unsigned int slot)
{
	if ((how & SDS_G_KEYED) && slot < SDS_FRAMES)
		__asm__ volatile("btrq %1, %0" : "+m"(t->keys_used)
				 : "r"((long)slot) : "cc");
}

/*
 * The stack of @t is full: drop its oldest frame, the call least likely
 * to be still running (frames are only leaked by calls that never end),
 * and return the new depth.  What the call took is given back as its end
 * would give it: its permit, at once, so a leaked call cannot hold the
 * semaphore for good.  A probe's outcome is not counted: nobody knows
 * it, and a late "failed" would restart a hold that may have ended since
 * (a process killed inside a probe counts nothing either; the next probe
 * interval brings the next probe).  The BPF side is told to drop the
 * call's frame (sds__site_exit with SDS_SITE_EVICT): its stack stays the
 * same as ours and the in-flight gauge counts the call as given up, not
 * completed, and never as a timeout.
 *
 * Signal-safe: the depth is swapped for SDS_FRAMES_BUSY in one
 * instruction, so a handler that runs meanwhile makes its calls without
 * frames (they pass, counted nowhere), and one that evicted between our
 * read of the depth and the swap leaves us a stack that is not full.
 * Returns a depth above SDS_FRAMES when the caller is such a handler.
 */
static __attribute__((noinline, cold)) unsigned int frames_evict(struct frames *t)
{
	struct frame old;
	unsigned int d;

	d = __atomic_exchange_n(&t->depth, SDS_FRAMES_BUSY, __ATOMIC_RELAXED);
	if (d != SDS_FRAMES) {
		t->depth = d;
		return d;
	}
	signal_fence();
	old = t->f[0];
	__builtin_memmove(&t->f[0], &t->f[1], (SDS_FRAMES - 1) * sizeof(old));
	signal_fence();
	t->depth = SDS_FRAMES - 1;
	signal_fence();
	if (!old.bind || (old.how & SDS_G_DOWNGRADE)) {
		key_slot_give(t, old.how, old.key);
		return SDS_FRAMES - 1;	/* took nothing, pushed nothing */
	}
	if (old.how & SDS_G_KEYED)
		sds__site_exit_keyed(old.bind->id | SDS_SITE_EVICT | SDS_SITE_KEYED,
				     old.bind->key, &t->keys[old.key].key,
				     t->keys[old.key].hash);
	else
		sds__site_exit(old.bind->id | SDS_SITE_EVICT, old.bind->key);
	if (old.how & SDS_G_PERMIT)
		sds_guard_release(old.bind->cell, old.bind->permit,
				  SDS_G_PERMIT);
	key_slot_give(t, old.how, old.key);
	return SDS_FRAMES - 1;
}

/*
 * The frame a call about to begin will take: the depth, or SDS_FRAMES
 * when even an eviction left none (a signal handler inside an eviction:
 * the call passes with no frame).
 */
static inline __attribute__((always_inline)) unsigned int
frame_reserve(struct frames *t)
{
	unsigned int d = t->depth;

	return d < SDS_FRAMES ? d : frames_evict(t);
}

/*
 * Frame @d pushed for a call of @p (@b NULL: detached): the depth moves
 * first, so that a signal handler's call takes the next frame, then the
 * frame is written.
 */
static inline __attribute__((always_inline)) struct frame *
frame_push(struct frames *t, unsigned int d, struct sds_point *p,
	   const struct sds_bind *b, unsigned int how)
{
	struct frame *f;

	t->depth = d + 1;
	signal_fence();
	f = &t->f[d];
	f->point = p;
	f->bind = b;
	f->how = how;
	return f;
}

/*
 * The work of a call of a point that is or was bound.  Out of line so
 * that the path of a never-bound point (no loader) stays a leaf that
 * saves no register: two loads and a return.  @fault_downgrades: the
 * caller (sds_should_downgrade) cannot be told of a fault, so a faulted
 * call becomes a downgrade, which drives it onto its fallback.
 */
static __attribute__((noinline)) enum sds_verdict
enter_frame(struct sds_point *p, const struct sds_bind *b, bool fault_downgrades)
{
	struct frames *t;
	unsigned int how = 0;
	uint64_t delay_ns = 0;
	unsigned int d;

	t = &frames;
	d = frame_reserve(t);
	if (d >= SDS_FRAMES)
		return SDS_PASS;
	if (b && __atomic_load_n(&b->entry->active, __ATOMIC_RELAXED))
		how = sds_guard_decide_drill(b->entry, b->cell, b->hdr, b->permit,
					     clock_ns(), &t->rng, &delay_ns);
	if ((how & SDS_G_FAULT) && fault_downgrades) {
		/* Give back what the pass took; a probe that faults failed. */
		sds_guard_release(b->cell, b->permit, how | SDS_G_EXCEPTION);
		how = SDS_G_DOWNGRADE;
	}
	/*
	 * A detached call gets a frame too (bind NULL), so that its end
	 * does not take the frame of an outer call of the same point.
	 * The frame is written before the site is called: nothing of the
	 * thread's state is needed after the call.
	 */
	frame_push(t, d, p, b, how);
	if (!b)
		return SDS_PASS;
	if (how & SDS_G_DOWNGRADE) {
		sds__site_downgrade(b->id, b->key);
		return SDS_DOWNGRADE;
	}
	sds__site_enter(b->id, b->key);
	/* After the entry site: the sleep is part of the call's latency. */
	if (how & SDS_G_DELAY)
		drill_sleep(delay_ns);
	return (how & SDS_G_FAULT) ? SDS_FAULT : SDS_PASS;
}

static inline enum sds_verdict enter(struct sds_point *p, bool fault_downgrades)
{
	const struct sds_bind *b;

	if (!p)
		return SDS_PASS;
	b = __atomic_load_n(&p->bind, __ATOMIC_ACQUIRE);
	/* Never bound: no frame of this point can exist. */
	if (!b && !__atomic_load_n(&p->ever, __ATOMIC_RELAXED))
		return SDS_PASS;
	return enter_frame(p, b, fault_downgrades);
}

SDS_API bool sds_should_downgrade(struct sds_point *p)
{
	return enter(p, true) != SDS_PASS;
}

SDS_API enum sds_verdict sds_enter(struct sds_point *p)
{
	return enter(p, false);
}

/*
 * A keyed call of a point that is or was bound (docs/KEYS.md): the key
 * built zero-padded on the stack and hashed once; a key the loader
 * blocked is downgraded (SDS_G_KEYBLOCK, reason key) without touching the
 * point's limits -- its bucket, semaphore or probe stay the other keys'
 * -- and any other key is decided as enter_frame() decides an unkeyed
 * call.  Every site of the call is called keyed, with the frame's copy
 * of the key.  The unkeyed path shares none of this: its instructions are
 * those it had.
 */
static __attribute__((noinline)) enum sds_verdict
enter_frame_key(struct sds_point *p, const struct sds_bind *b, const void *key,
		size_t len, bool fault_downgrades)
{
	struct sds_key k;
	struct frames *t;
	struct frame *f;
	unsigned int how = SDS_G_KEYED;
	uint64_t delay_ns = 0, now = 0, hash;
	unsigned int d;
	int slot;

	t = &frames;
	d = frame_reserve(t);
	if (d >= SDS_FRAMES)
		return SDS_PASS;
	if (!b) {
		/* Detached: a frame for the end to find, no key needed. */
		frame_push(t, d, p, NULL, 0);
		return SDS_PASS;
	}
	if (len > SDS_KEY_MAX)
		len = SDS_KEY_MAX;	/* the first 64 bytes are the key */
	__builtin_memset(&k, 0, sizeof(k));
	k.kind = SDS_KEY_BUF;
	k.len = (__u8)len;
	__builtin_memcpy(k.bytes, key, len);
	hash = sds_key_hash(&k);

	if (__atomic_load_n(&b->keys->nblocked, __ATOMIC_ACQUIRE)) {
		now = clock_ns();
		if (sds_guard_key_blocked(b->keys, b->hdr, hash, now))
			how |= SDS_G_DOWNGRADE | SDS_G_KEYBLOCK;
	}
	if (!(how & SDS_G_DOWNGRADE) &&
	    __atomic_load_n(&b->entry->active, __ATOMIC_RELAXED))
		how |= sds_guard_decide_drill(b->entry, b->cell, b->hdr, b->permit,
					      now ? now : clock_ns(), &t->rng,
					      &delay_ns);
	if ((how & SDS_G_FAULT) && fault_downgrades) {
		sds_guard_release(b->cell, b->permit, how | SDS_G_EXCEPTION);
		how = SDS_G_KEYED | SDS_G_DOWNGRADE;
	}
	/* The key's slot before the frame: the frame names a written key. */
	slot = key_slot_take(t);
	if (slot < 0) {
		how &= ~SDS_G_KEYED;	/* no room (leaked frames): counted unkeyed */
	} else {
		t->keys[slot].hash = hash;
		t->keys[slot].key = k;
	}
	signal_fence();
	f = frame_push(t, d, p, b, how);
	f->key = (unsigned int)slot;
	if (slot < 0) {
		if (how & SDS_G_DOWNGRADE) {
			sds__site_downgrade(b->id, b->key);
			return SDS_DOWNGRADE;
		}
		sds__site_enter(b->id, b->key);
	} else if (how & SDS_G_DOWNGRADE) {
		sds__site_downgrade_keyed(b->id | SDS_SITE_KEYED, b->key,
					  &t->keys[slot].key, hash);
		return SDS_DOWNGRADE;
	} else {
		sds__site_enter_keyed(b->id | SDS_SITE_KEYED, b->key,
				      &t->keys[slot].key, hash);
	}
	if (how & SDS_G_DELAY)
		drill_sleep(delay_ns);
	return (how & SDS_G_FAULT) ? SDS_FAULT : SDS_PASS;
}

static inline enum sds_verdict enter_key(struct sds_point *p, const void *key,
					 size_t len, bool fault_downgrades)
{
	const struct sds_bind *b;

	if (!key || !len)
		return enter(p, fault_downgrades);
	if (!p)
		return SDS_PASS;
	b = __atomic_load_n(&p->bind, __ATOMIC_ACQUIRE);
	/* Never bound: the key is not even built. */
	if (!b && !__atomic_load_n(&p->ever, __ATOMIC_RELAXED))
		return SDS_PASS;
	return enter_frame_key(p, b, key, len, fault_downgrades);
}

SDS_API bool sds_should_downgrade_key(struct sds_point *p, const void *key,
				      size_t len)
{
	return enter_key(p, key, len, true) != SDS_PASS;
}

SDS_API enum sds_verdict sds_enter_key(struct sds_point *p, const void *key,
				       size_t len)
{
	return enter_key(p, key, len, false);
}

/*
 * Exact trips (PROTOCOL.md): an exception signed while the loader counts
 * exceptions against a mark spends one, before the site counts it, so the
 * next call of any process of the app already sees it.
 */
static inline void exception_spend(const struct sds_bind *b)
{
	if ((__atomic_load_n(&b->entry->active, __ATOMIC_RELAXED) & SDS_ACT_BUDGET) &&
	    __atomic_load_n(&b->entry->exc_upto, __ATOMIC_RELAXED) != UINT64_MAX)
		__atomic_fetch_add(&b->cell->exc_spent, 1, __ATOMIC_RELAXED);
}

/* A keyed call's exception site, with its key: out of the unkeyed path. */
static __attribute__((noinline)) void exception_keyed(struct frames *t,
						      const struct frame *f)
{
	sds__site_exception_keyed(f->bind->id | SDS_SITE_KEYED, f->bind->key,
				  &t->keys[f->key].key, t->keys[f->key].hash);
}

SDS_API void sds_exception_sign(struct sds_point *p)
{
	struct frames *t;
	struct frame *f;
	int i;

	if (!p || !__atomic_load_n(&p->ever, __ATOMIC_RELAXED))
		return;
	t = &frames;
	i = frame_find(t, p);
	if (i < 0)
		return;
	f = &t->f[i];
	if (!f->bind || (f->how & (SDS_G_DOWNGRADE | SDS_G_EXCEPTION)))
		return;
	f->how |= SDS_G_EXCEPTION;
	exception_spend(f->bind);
	if (__builtin_expect(f->how & SDS_G_KEYED, 0))
		exception_keyed(t, f);
	else
		sds__site_exception(f->bind->id, f->bind->key);
}

/* Drop frame @i of @t (its fields read already). */
static inline void frame_drop(struct frames *t, int i)
{
	if ((unsigned int)i + 1 < t->depth)
		__builtin_memmove(&t->f[i], &t->f[i + 1],
				  (t->depth - 1 - i) * sizeof(t->f[0]));
	signal_fence();
	t->depth--;
}

/*
 * The end of a keyed call: as finally_frame(), its exit site keyed with
 * the key of its slot, given back after the site (held until then, no
 * signal handler's call can take it).
 */
static __attribute__((noinline)) void finally_keyed(struct frames *t, int i)
{
	const struct sds_bind *b = t->f[i].bind;
	unsigned int how = t->f[i].how, slot = t->f[i].key;

	frame_drop(t, i);
	if (b && !(how & SDS_G_DOWNGRADE) && slot < SDS_FRAMES) {
		sds__site_exit_keyed(b->id | SDS_SITE_KEYED, b->key,
				     &t->keys[slot].key, t->keys[slot].hash);
		if (how & (SDS_G_PERMIT | SDS_G_PROBE))
			sds_guard_release(b->cell, b->permit, how);
	}
	key_slot_give(t, how, slot);
}

/* The end of a call of a point that was bound once (see above). */
static __attribute__((noinline)) void finally_frame(struct sds_point *p)
{
	const struct sds_bind *b;
	struct frames *t;
	unsigned int how;
	int i;

	t = &frames;
	i = frame_find(t, p);
	if (i < 0)
		return;
	b = t->f[i].bind;
	how = t->f[i].how;
	if (__builtin_expect(how & SDS_G_KEYED, 0)) {
		finally_keyed(t, i);
		return;
	}
	frame_drop(t, i);

	if (!b || (how & SDS_G_DOWNGRADE))
		return;		/* a downgraded call ends with nothing */
	/* Exit first: a permit given back lets the next call in. */
	sds__site_exit(b->id, b->key);
	if (how & (SDS_G_PERMIT | SDS_G_PROBE))
		sds_guard_release(b->cell, b->permit, how);
}

SDS_API void sds_downgrade_finally(struct sds_point *p)
{
	if (p && __atomic_load_n(&p->ever, __ATOMIC_RELAXED))
		finally_frame(p);
}

/* A point without a binding copies nothing; only a bad one is an error. */
static __attribute__((noinline, cold)) int copy_unbound(const struct sds_point *p)
{
	if (!p || !p->valid) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/*
 * Off: the binding, then the entry's copy word -- a plain load, no seq
 * (flags__set_copy says why a stale read is fine).  The site call is the
 * only thing added when on; the BPF side bounds the id, samples and copies.
 * Inlined into both entries with a constant @response: one site call each.
 */
static __attribute__((always_inline)) inline int
copy_call(struct sds_point *p, const void *buf, size_t len, bool response)
{
	const struct sds_bind *b;

	b = p ? __atomic_load_n(&p->bind, __ATOMIC_ACQUIRE) : NULL;
	if (!b)
		return copy_unbound(p);
	if (__builtin_expect(!__atomic_load_n(&b->entry->copy, __ATOMIC_RELAXED), 1))
		return 0;
	if (response)
		sds__site_copy_ret(b->id, buf, len);
	else
		sds__site_copy(b->id, buf, len);
	return 0;
}

SDS_API int sds_copy(struct sds_point *p, const void *buf, size_t len)
{
	return copy_call(p, buf, len, false);
}

/* The copy_ret site's program pairs the response with the request. */
SDS_API int sds_copy_response(struct sds_point *p, const void *buf, size_t len)
{
	return copy_call(p, buf, len, true);
}

void sds__frames_forget(void)
{
	struct frames *t = &frames;
	unsigned int i;

	for (i = 0; i < t->depth && i < SDS_FRAMES; i++)
		t->f[i].bind = NULL;
}
