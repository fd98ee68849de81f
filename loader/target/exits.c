// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * exits.c - where a call of a function ends, found in its code.
 *
 * A uretprobe sees every return, but it does so by planting the kernel's
 * trampoline in the call's return slot, and an unwinder that meets the
 * trampoline (a C++ exception, a Rust panic, backtrace()) stops there:
 * std::terminate.  A uprobe on each `ret` of the function plants nothing:
 * the stack stays the program's own, and the BPF program pairs the `ret`
 * with the call's entry by the stack pointer, which at a `ret` points at
 * the return address exactly as it did at entry.  A call that never
 * reaches a `ret` (an exception unwound it, or longjmp) is found out when
 * the thread next enters or leaves a probed call further up the stack,
 * and counted as an exception then (bpf/sds.bpf.c).
 *
 * So every instruction that can end a call must be found, or the call is
 * miscounted.  Compilers end a function with `ret`, but also jump to code
 * of it placed elsewhere (GCC's .cold and .part clones: followed, their
 * `ret`s are the function's), tail-call another function (its `ret` ends
 * our call: refused, we would have to probe a function that others call),
 * or jump through a register (a switch table or a tail call: we cannot
 * tell, refused).  A refused point counts its entries only, and attach
 * says why.  The decoding is capstone's: linear, which is exact for
 * compiler output, where jump tables live in .rodata.
 */
#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/elfsym.h"
#include "target/exits.h"

/* A range of code that belongs to the function: the function or a part. */
struct exits_part {
	uint64_t start;		/* first byte's address */
	uint64_t size;		/* bytes */
};

/* The decoding of one function: its parts, and where it has got to. */
struct exits_scan {
	struct elf_file *ef;			/* the file */
	const char *sym;			/* the function's symbol */
	uint64_t entry;				/* where the entry probe sits */
	int nparts;				/* parts known (the first: the function) */
	struct exits_part parts[EXITS_PARTS];	/* in the order found */
	struct exit_sites *out;			/* the sites found */
	char *why;				/* the reason, on refusal */
	size_t whylen;				/* room in @why */
};

static bool exits_in_parts(const struct exits_scan *sc, uint64_t a)
{
	int i;

	for (i = 0; i < sc->nparts; i++)
		if (a >= sc->parts[i].start && a - sc->parts[i].start < sc->parts[i].size)
			return true;
	return false;
}

/* Where @a is, for a message: "+0x1f" in the function, else "name+0x4". */
static void exits_where(const struct exits_scan *sc, uint64_t a, char *buf,
			size_t len)
{
	const char *name;
	uint64_t start, size;

	if (a >= sc->parts[0].start && a - sc->parts[0].start < sc->parts[0].size)
		snprintf(buf, len, "+0x%llx",
			 (unsigned long long)(a - sc->parts[0].start));
	else if (!elf_file__func_holding(sc->ef, a, &name, &start, &size))
		snprintf(buf, len, "%s+0x%llx", name,
			 (unsigned long long)(a - start));
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)a);
}

/*
 * A jump from @from to @to, outside the parts known: a part of the
 * function (a symbol named after it: "SYM.cold", "SYM.part.0") is added
 * to the parts to decode; anything else is a tail call.  0, or -1.
 */
static int exits_follow(struct exits_scan *sc, uint64_t from, uint64_t to)
{
	size_t n = strlen(sc->sym);
	char at[64], dest[256];
	uint64_t start, size;
	const char *name;

	if (!elf_file__func_holding(sc->ef, to, &name, &start, &size) &&
	    start == to && !strncmp(name, sc->sym, n) && name[n] == '.') {
		if (sc->nparts == EXITS_PARTS) {
			snprintf(sc->why, sc->whylen,
				 "it is split in more than %d parts", EXITS_PARTS);
			return -1;
		}
		sc->parts[sc->nparts].start = start;
		sc->parts[sc->nparts].size = size;
		sc->nparts++;
		return 0;
	}
	exits_where(sc, from, at, sizeof(at));
	exits_where(sc, to, dest, sizeof(dest));
	snprintf(sc->why, sc->whylen,
		 "it jumps at %s to %s (a tail call: the call ends in another function's ret)",
		 at, dest);
	return -1;
}

static int exits_add(struct exits_scan *sc, uint64_t a)
{
	struct exit_sites *o = sc->out;
	unsigned char insn;
	char at[64];

	exits_where(sc, a, at, sizeof(at));
	if (a == sc->entry) {
		snprintf(sc->why, sc->whylen,
			 "its entry probe's instruction is its ret (%s)", at);
		return -1;
	}
	if (o->n == EXITS_MAX) {
		snprintf(sc->why, sc->whylen, "it has more than %d rets", EXITS_MAX);
		return -1;
	}
	if (elf_file__read_code(sc->ef, a, &insn, 1, &o->off[o->n])) {
		snprintf(sc->why, sc->whylen, "its ret at 0x%llx is not in the file",
			 (unsigned long long)a);
		return -1;
	}
	o->vaddr[o->n++] = a;
	return 0;
}

/* One decoded instruction @in: an exit, a jump to follow, or neither. */
static int exits_insn(struct exits_scan *sc, csh cs, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	char at[64];

	if (cs_insn_group(cs, in, CS_GRP_RET)) {
		if (in->id == X86_INS_RET)
			return exits_add(sc, in->address);
		exits_where(sc, in->address, at, sizeof(at));
		snprintf(sc->why, sc->whylen, "a far return (%s) at %s",
			 in->mnemonic, at);
		return -1;
	}
	if (!cs_insn_group(cs, in, CS_GRP_JUMP))
		return 0;
	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
		uint64_t to = (uint64_t)x->operands[0].imm;

		return exits_in_parts(sc, to) ? 0 : exits_follow(sc, in->address, to);
	}
	exits_where(sc, in->address, at, sizeof(at));
	snprintf(sc->why, sc->whylen,
		 "an indirect jump (%s %s) at %s: a switch or a tail call, its target is unknown",
		 in->mnemonic, in->op_str, at);
	return -1;
}

/* Decode part @i whole.  0, or -1 with the reason. */
static int exits_part(struct exits_scan *sc, csh cs, int i)
{
	struct exits_part p = sc->parts[i];
	const uint8_t *code;
	unsigned char *buf;
	uint64_t addr, off;
	size_t left;
	cs_insn *in;
	int ret = -1;

	if (p.size > EXITS_PART_MAX) {
		snprintf(sc->why, sc->whylen, "it is larger than %d KiB",
			 EXITS_PART_MAX >> 10);
		return -1;
	}
	buf = malloc(p.size);
	in = cs_malloc(cs);
	if (!buf || !in) {
		snprintf(sc->why, sc->whylen, "out of memory");
		goto out;
	}
	if (elf_file__read_code(sc->ef, p.start, buf, p.size, &off)) {
		snprintf(sc->why, sc->whylen, "its code at 0x%llx is not in the file",
			 (unsigned long long)p.start);
		goto out;
	}
	code = buf;
	left = p.size;
	addr = p.start;
	while (left && cs_disasm_iter(cs, &code, &left, &addr, in))
		if (exits_insn(sc, cs, in))
			goto out;
	if (left) {
		char at[64];

		exits_where(sc, addr, at, sizeof(at));
		snprintf(sc->why, sc->whylen, "bytes at %s do not decode", at);
		goto out;
	}
	ret = 0;
out:
	if (in)
		cs_free(in, 1);
	free(buf);
	return ret;
}

int exits__find(struct elf_file *ef, const struct elf_func *fn,
		const char *sym, uint64_t entry, struct exit_sites *out,
		char *why, size_t whylen)
{
	struct exits_scan sc = {
		.ef = ef, .sym = sym, .entry = entry, .nparts = 1,
		.parts = { { fn->vaddr, fn->size } },
		.out = out, .why = why, .whylen = whylen,
	};
	int i, ret = 0;
	csh cs;

	memset(out, 0, sizeof(*out));
	if (!fn->size) {
		snprintf(why, whylen, "its symbol has no size");
		return -1;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		snprintf(why, whylen, "the decoder did not open");
		return -1;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	/* Parts found while decoding are appended, and decoded in turn. */
	for (i = 0; i < sc.nparts && !ret; i++)
		ret = exits_part(&sc, cs, i);
	if (!ret && !out->n) {
		snprintf(why, whylen, "it has no ret (it never returns)");
		ret = -1;
	}
	cs_close(&cs);
	return ret;
}

/*
 * A probe at a function's entry sees the stack pointer on its return
 * address: a probed call recorded at or below it is over, whichever
 * function this is.  So a catch site need only be called at or below the
 * catching function's level; the closer, the sooner the count.
 */
void exits__catch_sites(struct elf_file *ef, struct catch_sites *out)
{
	static const char *const rust_try_cleanup =
		"_ZN3std9panicking3try7cleanup17h";	/* + hash, Rust legacy names */
	static const char *const names[] = {
		"__cxa_begin_catch", "__rust_panic_cleanup",
	};
	char err[256];
	uint64_t vaddr;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct elf_func fn;

		if (!elf_file__find_func(ef, names[i], &fn, err, sizeof(err)))
			out->off[out->n] = fn.offset;
		else if (elf_file__plt_stub(ef, names[i], &vaddr, &out->off[out->n]))
			continue;
		out->what[out->n++] = names[i];
	}
	if (!elf_file__func_prefixed(ef, rust_try_cleanup, &vaddr, &out->off[out->n]))
		out->what[out->n++] = "std::panicking::try::cleanup";
}
