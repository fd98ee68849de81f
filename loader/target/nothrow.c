// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * nothrow.c - functions no unwind can pass through.
 *
 * A return probe breaks an exception only when the unwinder walks
 * through the probed call's frame, and it walks only frames below a
 * throw: so a function whose whole call tree never throws, never resumes
 * an unwind and never walks the stack can keep a uretprobe even in a C++
 * or Rust TARGET.  This is decided from the code: every direct call and
 * jump to another function is followed (to NOTHROW_DEPTH calls), the PLT
 * is trusted only for a short list of C library functions that neither
 * throw, nor call back into the program, nor are cancellation points
 * (pthread_cancel's forced unwind), and anything not known is unsafe: an
 * indirect call (a virtual call, a callback), a call deeper than the
 * bound, an unknown library function.  The decoding is capstone's.
 */
#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/demangle.h"
#include "target/elffile.h"
#include "target/elfsym.h"
#include "target/exits.h"
#include "target/nothrow.h"

/* Library functions that never throw, call back or cancel. */
static const char *const nothrow_libc[] = {
	"memcpy", "memmove", "memset", "memcmp", "bcmp", "memchr", "strlen",
	"strnlen", "strcmp", "strncmp", "strcpy", "strncpy", "strcat",
	"strncat", "strchr", "strrchr", "strstr", "strdup", "strndup",
	"malloc", "calloc", "realloc", "free", "posix_memalign",
	"aligned_alloc", "__stack_chk_fail", "abort", "__errno_location",
	"clock_gettime", "gettimeofday", "time", "getpid", "gettid",
	"snprintf", "vsnprintf", "sprintf", "vsprintf", "__memcpy_chk",
	"__memmove_chk", "__memset_chk", "__strcpy_chk", "__strncpy_chk",
	"__strcat_chk", "__snprintf_chk", "__vsnprintf_chk", "__sprintf_chk",
	"__vsprintf_chk", "__strlen_chk", "__assert_fail",
	"_ZdlPv", "_ZdlPvm", "_ZdaPv", "_ZdaPvm",	/* operator delete: noexcept */
	"__rust_dealloc",
};

/* What raises or resumes an unwind, or walks the stack. */
static const char *const nothrow_raisers[] = {
	"__cxa_throw", "__cxa_rethrow", "__cxa_allocate_exception", "_Unwind_RaiseException",
	"_Unwind_Resume", "_Unwind_Resume_or_Rethrow", "_Unwind_ForcedUnwind",
	"_Unwind_Backtrace", "__rust_start_panic", "rust_begin_unwind",
	"__cxa_call_unexpected", "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE",
	"backtrace", "pthread_exit", "pthread_cancel",
};

/*
 * Functions of this file already found safe, by address: every function
 * a safe root saw (its tree is in the root's).  Unsafe verdicts are not
 * kept: a callee may have been assumed safe while in progress, and the
 * message names the path anew.  Open addressing; full, it stops
 * remembering.
 */
#define NOTHROW_MEMO	(1u << 14)
enum { MEMO_NONE, MEMO_SAFE };
struct nothrow_memo {
	uint64_t at[NOTHROW_MEMO];
	uint8_t verdict[NOTHROW_MEMO];
	unsigned int n;
};

static unsigned int memo_slot(const struct nothrow_memo *m, uint64_t a)
{
	unsigned int i = (unsigned int)((a * 0x9e3779b97f4a7c15ULL) >> 50) & (NOTHROW_MEMO - 1);

	while (m->verdict[i] != MEMO_NONE && m->at[i] != a)
		i = (i + 1) & (NOTHROW_MEMO - 1);
	return i;
}

static int memo_get(const struct elf_file *ef, uint64_t a)
{
	const struct nothrow_memo *m = ef->nothrow;

	return m ? m->verdict[memo_slot(m, a)] : MEMO_NONE;
}

static void memo_put(struct elf_file *ef, uint64_t a, int verdict)
{
	struct nothrow_memo *m = ef->nothrow;
	unsigned int i;

	if (!m && !(m = ef->nothrow = calloc(1, sizeof(*m))))
		return;
	/* Three quarters full at most: a probe always ends. */
	if (m->n >= NOTHROW_MEMO / 4 * 3)
		return;
	i = memo_slot(m, a);
	if (m->verdict[i] == MEMO_NONE)
		m->n++;
	m->at[i] = a;
	m->verdict[i] = (uint8_t)verdict;
}

struct nothrow_scan {
	struct elf_file *ef;
	csh cs;
	cs_insn *in;
	uint64_t seen[NOTHROW_FUNCS];	/* functions decoded or being decoded */
	int nseen;
	const char *path[NOTHROW_DEPTH + 2];	/* the calls down to here, by name */
	int depth;
	const char *plt[4];		/* library functions called, for the message */
	int nplt;
	char *why;
	size_t whylen;
	char libname[160];		/* a library function's name, for the message */
	int nknown;			/* calls to functions proven safe before */
};

static bool nothrow_listed(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

/* Rust's panic machinery, whatever its hash: std/core::panicking::*. */
static bool nothrow_rust_panic(const char *name)
{
	return strstr(name, "9panicking") || strstr(name, "rust_panic") ||
	       strstr(name, "begin_panic");
}

/* "may unwind: calls A -> B -> @last" into why. */
static int nothrow_unsafe(struct nothrow_scan *sc, const char *last,
			  const char *how)
{
	size_t used;
	int i;

	used = (size_t)snprintf(sc->why, sc->whylen, "may unwind: ");
	for (i = 1; i <= sc->depth && used < sc->whylen; i++)
		used += (size_t)snprintf(sc->why + used, sc->whylen - used,
					 "%s%s", i > 1 ? " -> " : "calls ",
					 sc->path[i]);
	if (used < sc->whylen)
		snprintf(sc->why + used, sc->whylen - used, "%s%s%s",
			 last ? (sc->depth ? " -> " : "calls ") : (sc->depth ? ": " : ""),
			 last ? last : "", how ? how : "");
	return -1;
}

/* A name for messages: the demangled one without parameters, kept. */
static const char *nothrow_name(struct nothrow_scan *sc, const char *mangled,
				char *buf, size_t len)
{
	struct demangled d;

	(void)sc;
	if (demangle__name(mangled, &d))
		return mangled;
	snprintf(buf, len, "%s", d.base ? d.base : d.full);
	demangle__free(&d);
	return buf;
}

static int nothrow_func(struct nothrow_scan *sc, const char *name,
			uint64_t start, uint64_t size);

/* A library function @name (PLT or GOT): 0 when it is trusted. */
static int nothrow_lib(struct nothrow_scan *sc, const char *name)
{
	int i;

	if (nothrow_listed(name, nothrow_libc,
			   sizeof(nothrow_libc) / sizeof(nothrow_libc[0]))) {
		for (i = 0; i < sc->nplt; i++)
			if (!strcmp(sc->plt[i], name))
				return 0;
		if (sc->nplt < (int)(sizeof(sc->plt) / sizeof(sc->plt[0])))
			sc->plt[sc->nplt++] = name;
		return 0;
	}
	return nothrow_unsafe(sc, nothrow_name(sc, name, sc->libname,
						sizeof(sc->libname)),
			      nothrow_listed(name, nothrow_raisers,
			      sizeof(nothrow_raisers) / sizeof(nothrow_raisers[0])) ?
			      NULL : " (a library function not known never to throw)");
}

/* A direct call or jump from the function at [@start, +@size) to @to. */
static int nothrow_target(struct nothrow_scan *sc, const char *self,
			  uint64_t start, uint64_t size, uint64_t to)
{
	uint64_t fstart, fsize;
	const char *name, *plt;
	char buf[160], addr[32];
	int i;

	if (to >= start && to - start < size)
		return 0;
	plt = elf_file__plt_name(sc->ef, to);
	/* A shared object calls its own exported functions by the PLT too. */
	if (plt && !nothrow_listed(plt, nothrow_libc,
				   sizeof(nothrow_libc) / sizeof(nothrow_libc[0])) &&
	    !elf_file__defined(sc->ef, plt, &fstart, &fsize))
		to = fstart;
	else if (plt)
		return nothrow_lib(sc, plt);
	if (elf_file__func_holding(sc->ef, to, &name, &fstart, &fsize)) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, to);
		return nothrow_unsafe(sc, addr, " (no function known there)");
	}
	if (nothrow_listed(name, nothrow_raisers,
			   sizeof(nothrow_raisers) / sizeof(nothrow_raisers[0])) ||
	    nothrow_rust_panic(name))
		return nothrow_unsafe(sc, nothrow_name(sc, name, buf, sizeof(buf)), NULL);
	if (nothrow_listed(name, nothrow_libc,
			   sizeof(nothrow_libc) / sizeof(nothrow_libc[0])))
		return 0;
	for (i = 0; i < sc->nseen; i++)
		if (sc->seen[i] == fstart)
			return 0;	/* decoded, or in progress (recursion) */
	/* Proven before (its tree is all safe): not decoded again. */
	if (memo_get(sc->ef, fstart) == MEMO_SAFE) {
		sc->nknown++;
		return 0;
	}
	/* A part of the caller (SELF.cold): its code is the caller's. */
	if (fstart == to && !strncmp(name, self, strlen(self)) &&
	    name[strlen(self)] == '.')
		return nothrow_func(sc, name, fstart, fsize);
	if (sc->depth >= NOTHROW_DEPTH) {
		snprintf(buf + 80, 80, " (deeper than %d calls: not followed)",
			 NOTHROW_DEPTH);
		return nothrow_unsafe(sc, nothrow_name(sc, name, buf, 80), buf + 80);
	}
	sc->path[++sc->depth] = name;
	i = nothrow_func(sc, name, fstart, fsize);
	sc->depth--;
	return i;
}

/* Decode function @name at [@start, +@size): 0 when nothing in it unwinds. */
static int nothrow_func(struct nothrow_scan *sc, const char *name,
			uint64_t start, uint64_t size)
{
	const uint8_t *p;
	unsigned char *code;
	uint64_t a = start, off;
	size_t left = size;
	char at[200];
	int ret = 0;

	if (sc->nseen == NOTHROW_FUNCS) {
		snprintf(at, sizeof(at), "more than %d functions below it", NOTHROW_FUNCS);
		return nothrow_unsafe(sc, NULL, at);
	}
	sc->seen[sc->nseen++] = start;
	if (!size || size > EXITS_PART_MAX)
		return nothrow_unsafe(sc, NULL, size ? "too large to decode" :
				      "its symbol has no size");
	code = malloc(size);
	if (!code)
		return nothrow_unsafe(sc, NULL, "out of memory");
	if (elf_file__read_code(sc->ef, start, code, size, &off)) {
		free(code);
		return nothrow_unsafe(sc, NULL, "its code is not in the file");
	}
	p = code;
	while (!ret && left && cs_disasm_iter(sc->cs, &p, &left, &a, sc->in)) {
		const cs_insn *in = sc->in;
		const cs_x86 *x = &in->detail->x86;
		bool call = cs_insn_group(sc->cs, in, CS_GRP_CALL);

		if (!call && !cs_insn_group(sc->cs, in, CS_GRP_JUMP))
			continue;
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
			ret = nothrow_target(sc, name, start, size,
					     (uint64_t)x->operands[0].imm);
			continue;
		}
		/* call *GOT(%rip), -fno-plt: the library function is known. */
		if (x->op_count == 1 && x->operands[0].type == X86_OP_MEM &&
		    x->operands[0].mem.base == X86_REG_RIP &&
		    x->operands[0].mem.index == X86_REG_INVALID) {
			const char *lib = elf_file__got_name(sc->ef,
				in->address + in->size + (uint64_t)x->operands[0].mem.disp);

			if (lib) {
				ret = nothrow_lib(sc, lib);
				continue;
			}
		}
		snprintf(at, sizeof(at), "an indirect %s (%s %.60s) at +0x%" PRIx64,
			 call ? "call" : "jump", in->mnemonic, in->op_str,
			 in->address - start);
		ret = nothrow_unsafe(sc, NULL, at);
	}
	if (!ret && left)
		ret = nothrow_unsafe(sc, NULL, "bytes that do not decode");
	free(code);
	return ret;
}

bool nothrow__check(struct elf_file *ef, const struct elf_func *fn, char *why,
		    size_t whylen)
{
	struct nothrow_scan sc = { .ef = ef, .why = why, .whylen = whylen };
	size_t used;
	int i, ret = -1;

	sc.path[0] = fn->name;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &sc.cs) != CS_ERR_OK) {
		snprintf(why, whylen, "may unwind: the decoder did not open");
		return false;
	}
	cs_option(sc.cs, CS_OPT_DETAIL, CS_OPT_ON);
	sc.in = cs_malloc(sc.cs);
	if (sc.in)
		ret = nothrow_func(&sc, fn->name, fn->vaddr, fn->size);
	else
		snprintf(why, whylen, "may unwind: out of memory");
	if (sc.in)
		cs_free(sc.in, 1);
	cs_close(&sc.cs);
	if (ret)
		return false;
	/* A safe root: all it saw is safe (their trees are in its tree). */
	for (i = 0; i < sc.nseen; i++)
		memo_put(ef, sc.seen[i], MEMO_SAFE);
	/* Worded alike whatever was proven before (the memo). */
	if (sc.nseen > 1 || sc.nknown) {
		snprintf(why, whylen, "cannot unwind: nothing it calls can throw");
		return true;
	}
	if (!sc.nplt) {
		snprintf(why, whylen, "cannot unwind: a leaf");
		return true;
	}
	used = (size_t)snprintf(why, whylen, "cannot unwind: it calls only ");
	for (i = 0; i < sc.nplt && used < whylen; i++)
		used += (size_t)snprintf(why + used, whylen - used, "%s%s",
					 i ? ", " : "", sc.plt[i]);
	if (sc.nplt == (int)(sizeof(sc.plt) / sizeof(sc.plt[0])) && used < whylen)
		snprintf(why + used, whylen - used, ", ...");
	return true;
}
