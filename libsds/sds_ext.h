/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_ext.h - what an extension of sds-bpf is made of (docs/EXTENSIONS.md):
 * the header every extension's struct starts with, the wrapper's shape,
 * and the interfaces a plugin can implement.  Installed beside sds.h; a
 * plugin includes it and nothing else of sds-bpf, and links nothing.
 *
 * A plugin is a shared object holding one const struct per extension,
 * named by a manifest line in $SDS_EXT_DIR (default /usr/lib/sds/ext):
 *
 *     # balancer.ext
 *     mine = /usr/lib/sds/ext/libmine.so:mine_balancer
 *     wrap.balancer = /usr/lib/sds/ext/libcount.so:count_wrapper
 *
 * The program checks the struct's interface name, kind and ABI version
 * before it calls anything in it: a struct built against another ABI
 * version is refused, never half used.
 */
#ifndef SDS_EXT_PUBLIC_H
#define SDS_EXT_PUBLIC_H

#include <stddef.h>
#include <stdint.h>

/* What a struct is: an implementation, or a wrapper of implementations. */
#define SDS_EXT_IMPL		1
#define SDS_EXT_WRAPPER		2

/*
 * IoC-lite: an extension's init receives this to ask for other extensions
 * by interface and name (NULL: the interface's default).  It returns the
 * extension (wrapped, as every user gets it) or NULL with one line in @err.
 */
typedef const void *(*sds_ext_lookup_fn)(const char *iface, const char *name,
					 char *err, size_t errlen);

/* The start of every extension's struct. */
struct sds_ext_head {
	const char *iface;	/* the interface's name: "balancer", "store" */
	uint32_t abi;		/* the interface's ABI version it was built for */
	uint32_t kind;		/* SDS_EXT_IMPL or SDS_EXT_WRAPPER */
	const char *name;	/* for messages; the manifest's name is the one used */
	/*
	 * Called once, at first use, before anything else of the struct;
	 * NULL: nothing to do.  Non-zero refuses the extension (and every
	 * other from its file) with @err's line.
	 */
	int (*init)(const void *self, sds_ext_lookup_fn lookup, char *err,
		    size_t errlen);
};

/*
 * A wrapper (Dubbo's AOP): named in a manifest as wrap.<interface>, it
 * decorates every implementation of that interface, built-in or not.  Its
 * head carries the wrapped interface's name and ABI version and kind
 * SDS_EXT_WRAPPER.  @wrap gets the implementation a user would have had
 * (@inner, perhaps wrapped already by an earlier wrapper) and returns the
 * one the user gets instead: a struct of the same interface that it owns
 * for the program's life, usually a copy of *@inner with some callbacks
 * replaced, plus a pointer back to @inner, e.g.
 *
 *     struct counted { struct sds_ext_balancer b; const struct sds_ext_balancer *in; };
 *     static int counted_pick(const struct sds_ext_balancer *self, void *st, ...)
 *     {
 *             const struct counted *c = (const void *)self;
 *             picks++;
 *             return c->in->pick(c->in, st, ...);
 *     }
 *
 * NULL (with @err) leaves @inner unwrapped by this wrapper.
 */
struct sds_ext_wrapper {
	struct sds_ext_head head;	/* iface, abi: the wrapped interface's */
	const void *(*wrap)(const struct sds_ext_wrapper *self, const void *inner,
			    char *err, size_t errlen);
};

/* ---- the "balancer" interface: a policy that picks a provider ---------- */

#define SDS_EXT_BALANCER	"balancer"
#define SDS_EXT_BALANCER_ABI	1

/* A provider as set up (the same layout as libsds's own). */
struct sds_ext_provider {
	const char *name;	/* unique, 1..127 bytes */
	int32_t weight;		/* 1..10000 */
};

/*
 * A provider's load at a pick, one per provider in set-up order: the
 * host-wide counts the kernel keeps, published every tick.  A writer may
 * change it under a pick: read each field once.
 */
struct sds_ext_load {
	uint64_t start_ns;	/* when the provider started (warm-up); 0: long ago */
	uint64_t in_flight;	/* calls in flight, host-wide */
	uint64_t latency_ns;	/* recent mean latency; 0: not measured yet */
	uint32_t downgraded;	/* non-zero: never pick it while another passes */
	uint32_t pad;		/* zero */
};

struct sds_ext_balancer {
	struct sds_ext_head head;	/* SDS_EXT_BALANCER, SDS_EXT_BALANCER_ABI */
	/*
	 * Set up a balancer over @n providers (validated by the caller:
	 * names unique, weights in range) with a warm-up of @warmup_ns
	 * (0: the default; UINT64_MAX: none): 0 and *@state, or a negative
	 * errno and one line in @err.
	 */
	int (*setup)(const struct sds_ext_balancer *self, void **state,
		     const struct sds_ext_provider *p, int n, uint64_t warmup_ns,
		     char *err, size_t errlen);
	/*
	 * A provider's index, or -ENOENT when every provider is downgraded.
	 * @load: n entries, or NULL (all idle and passing); @now_ns on the
	 * clock of start_ns; @key the request's key (NULL: none).  Called
	 * from any thread, often: no lock, no allocation, no syscall.
	 */
	int (*pick)(const struct sds_ext_balancer *self, void *state,
		    const struct sds_ext_load *load, uint64_t now_ns,
		    const void *key, size_t key_len);
	/* Free what setup made. */
	void (*teardown)(const struct sds_ext_balancer *self, void *state);
};

#endif /* SDS_EXT_PUBLIC_H */
