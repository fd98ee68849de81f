/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Names as users write them: C++ (Itanium) and Rust (legacy and v0)
 * symbols demangled by libiberty, matched against what a user typed, and
 * the nearest names when nothing matches.
 */
#ifndef SDS_DEMANGLE_H
#define SDS_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A symbol's demangled forms; all NULL for a name that is not mangled. */
struct demangled {
	char *full;	/* with parameters: "shop::Cart::add(int)", "main::handler" */
	char *base;	/* without parameters: "shop::Cart::add" */
	char *hashed;	/* Rust legacy with its hash: "main::handler::h0123456789abcdef" */
};

/* Demangle @mangled into @out (C++ or Rust); 0, or -1 when it is not mangled. */
int demangle__name(const char *mangled, struct demangled *out);

void demangle__free(struct demangled *d);

/*
 * Does @want name the function with the demangled forms @d?  Its full
 * signature, its Rust hash or not, or (without a '(' in @want) its name
 * without the parameters, which every overload shares.  Blanks and
 * C++ ABI tags ("[abi:cxx11]") are ignored on both sides.
 */
bool demangle__matches(const struct demangled *d, const char *want);

/*
 * Picking one function by a name a user wrote: fed every function of a
 * file, it keeps those the name matches and the few nearest names, for
 * the message when the match is not exactly one.
 */
#define DEMANGLE_NEAREST	5	/* nearest names shown when none matches */
#define DEMANGLE_SHOWN		8	/* matches shown when several do */

struct demangle_cand {
	char *shown;		/* demangled full name (or the symbol, if not mangled) */
	char *mangled;		/* the symbol as in the file */
	uint64_t vaddr;		/* its address: aliases of one function are one match */
	uint64_t size;		/* st_size */
	unsigned int score;	/* nearest: 0 contains @want, then edit distance */
	size_t base_len;	/* a clone: the length of the symbol it is a clone of (the unsuffixed one); 0 */
};

struct demangle_pick {
	const char *want;		/* what the user wrote */
	struct demangle_cand *match;	/* the functions @want names, by address */
	size_t nmatch;			/* entries in @match */
	size_t match_cap;		/* room in @match */
	bool nearest;			/* collect @near too (a second pass, when nothing matched) */
	struct demangle_cand near[DEMANGLE_NEAREST];	/* nearest non-matches, best first */
	size_t nnear;			/* entries in @near */
};

void demangle_pick__init(struct demangle_pick *pk, const char *want);

/*
 * What a compiler's suffix on a C++ or Rust symbol ("_ZN..Ei.isra.0")
 * makes of it: the same function under another name (.llvm.N,
 * .lto_priv.N, .localalias), a clone whose arguments the compiler may
 * have changed (.isra.N, .constprop.N, .part.N), or a piece of one that
 * is no function entry (.cold) or unknown.
 */
enum demangle_suffix {
	DEMANGLE_SUFFIX_NONE,		/* no suffix */
	DEMANGLE_SUFFIX_SAME,		/* the function itself */
	DEMANGLE_SUFFIX_CLONE,		/* a clone: named as the function, arguments changed */
	DEMANGLE_SUFFIX_OTHER,		/* .cold or unknown: never named so */
};

/* @mangled's suffix, and in @base_len the length before it. */
enum demangle_suffix demangle__suffix(const char *mangled, size_t *base_len);

/*
 * What suffix @s (from its first '.', ".part.0", ".isra.0.constprop.1")
 * makes of the symbol it ends, whatever the language: a C function's
 * clones carry the same suffixes on its plain name ("work.part.0").
 */
enum demangle_suffix demangle__suffix_kind(const char *s);

/*
 * Consider function @mangled at @vaddr: a match, or with @pk->nearest
 * one of the nearest names.  -1 on ENOMEM.
 */
int demangle_pick__add(struct demangle_pick *pk, const char *mangled,
		       uint64_t vaddr, uint64_t size);

/*
 * After the last demangle_pick__add(): drop the clones whose unsuffixed
 * function is among the matches (it is the one named).  Then, when every
 * match left is a clone of one function (the unsuffixed symbol absent),
 * their number; else 0 (a direct match, none, or an ambiguous mix).
 */
size_t demangle_pick__settle(struct demangle_pick *pk);

/*
 * The message for @pk when it holds no match or several, into @buf:
 * "nearest: A [mangled A], B, ..." or "matches N functions: A [mangled
 * A]; B [...]; name one by its full signature or its mangled name" (the
 * matches sorted by name on the way); "" when nothing is near.
 */
void demangle_pick__describe(struct demangle_pick *pk, char *buf,
			     size_t len);

void demangle_pick__free(struct demangle_pick *pk);

/*
 * "DEMANGLED [MANGLED]" of symbol @mangled into @buf, as attach and
 * list-symbols show it: 0, or -1 (@buf "") when @mangled is not mangled.
 */
int demangle__shown(const char *mangled, char *buf, size_t len);

/* Levenshtein distance of @a and @b, at most @cap (cheaper past it). */
unsigned int demangle__distance(const char *a, const char *b, unsigned int cap);

#endif /* SDS_DEMANGLE_H */
