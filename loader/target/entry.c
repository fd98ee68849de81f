// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * entry.c - where a function's entry probe sits.
 *
 * A uprobe on an instruction the kernel single-steps costs 10-27 us a
 * call, one it emulates (push, call, jmp, jcc, nop) ~1 us.  Compilers
 * often start a function with a stepped instruction (mov, test, sub, lea)
 * and reach a push or a call a few bytes later.  Counting and timing need
 * the probe on an instruction each call passes exactly once, not on the
 * first one: so where the first is stepped, the probe moves to the first
 * emulated instruction of the straight-line code that starts the
 * function, when
 *
 *  - nothing before it branches (every path from the entry passes it: it
 *    dominates every exit) and no jump of the function or of its split
 *    parts lands on it or before it (it lies in no loop; an indirect jump
 *    could land anywhere, so a function with one keeps its entry);
 *  - nothing before it moves the stack pointer or writes the stack: a
 *    uretprobe (the pair, the session) hijacks the return address at the
 *    top of the stack where its probe fires, and the exits pair a `ret`
 *    with its entry by the stack pointer seen there (docs/PROBES.md).
 *    The site itself may be a push or a call: the probe fires before it.
 *
 * Go points have no return probe (unwind.h): there the stack may move.
 * The decoding is capstone's (as exits.c's), over the whole function so
 * that every jump is seen, within EXITS_PART_MAX bytes.
 */
#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/elfsym.h"
#include "target/entry.h"
#include "target/exits.h"
#include "pointspec/pointspec.h"

/* The code of one function and of its split parts, decoded. */
struct entry_scan {
	struct elf_file *ef;
	const struct elf_func *fn;
	bool go;
	csh cs;
	cs_insn *in;
	unsigned char *code;		/* the function's bytes */
	size_t len;
	int nparts;			/* split parts found (SYM.cold, SYM.part.N) */
	uint64_t part_at[EXITS_PARTS];
	uint64_t part_size[EXITS_PARTS];
};

/* "+0x1f" */
static const char *entry_off(uint64_t off, char *buf, size_t len)
{
	snprintf(buf, len, "+0x%" PRIx64, off);
	return buf;
}

/* Does @in change the stack pointer or write to memory through it? */
static bool entry_moves_stack(csh cs, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd, nwr, i;

	if (!cs_regs_access(cs, in, rd, &nrd, wr, &nwr))
		for (i = 0; i < nwr; i++)
			if (wr[i] == X86_REG_RSP || wr[i] == X86_REG_ESP ||
			    wr[i] == X86_REG_SP)
				return true;
	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    (x->operands[i].access & CS_AC_WRITE) &&
		    (x->operands[i].mem.base == X86_REG_RSP ||
		     x->operands[i].mem.index == X86_REG_RSP))
			return true;
	return false;
}

/* Is @t (an address some jump lands on) a way back to [entry, @site]? */
static bool entry_back(const struct entry_scan *sc, uint64_t t, uint64_t site)
{
	/* Go's morestack path jumps back to the first byte: checked again. */
	if (sc->go && t == sc->fn->vaddr)
		return false;
	return t >= sc->fn->vaddr && t <= site;
}

/*
 * Record a part of the function a jump at @to leads into (a symbol named
 * after it, starting there): its jumps are the function's too.
 */
static void entry_part(struct entry_scan *sc, uint64_t to)
{
	size_t n = strlen(sc->fn->name);
	uint64_t start, size;
	const char *name;
	int i;

	if (to >= sc->fn->vaddr && to - sc->fn->vaddr < sc->len)
		return;
	if (elf_file__func_holding(sc->ef, to, &name, &start, &size) ||
	    start != to || strncmp(name, sc->fn->name, n) || name[n] != '.')
		return;
	for (i = 0; i < sc->nparts; i++)
		if (sc->part_at[i] == start)
			return;
	if (sc->nparts < EXITS_PARTS) {
		sc->part_at[sc->nparts] = start;
		sc->part_size[sc->nparts++] = size;
	}
}

/*
 * Decode @code (@len bytes at @at) whole: 0 when no jump in it lands in
 * [entry, @site], else -1 with the reason.  Split parts it jumps into are
 * recorded (entry_part).
 */
static int entry_no_way_back(struct entry_scan *sc, const unsigned char *code,
			     size_t len, uint64_t at, uint64_t site,
			     char *why, size_t whylen)
{
	const uint8_t *p = code;
	uint64_t a = at, fv = sc->fn->vaddr;
	size_t left = len;
	char o1[24], o2[24], o3[24];

	while (left && cs_disasm_iter(sc->cs, &p, &left, &a, sc->in)) {
		const cs_insn *in = sc->in;
		const cs_x86 *x = &in->detail->x86;
		bool jump = cs_insn_group(sc->cs, in, CS_GRP_JUMP);

		/* A call, even to the function itself, is a new call. */
		if (!jump)
			continue;
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
			uint64_t t = (uint64_t)x->operands[0].imm;

			if (entry_back(sc, t, site)) {
				snprintf(why, whylen,
					 "%s is in a loop (the %s at %s%s goes back to %s)",
					 entry_off(site - fv, o1, sizeof(o1)),
					 in->mnemonic, at == fv ? "" : "part ",
					 entry_off(in->address - at, o2, sizeof(o2)),
					 entry_off(t - fv, o3, sizeof(o3)));
				return -1;
			}
			entry_part(sc, t);
		} else {
			snprintf(why, whylen,
				 "an indirect jump (%s %.60s) at %s could land anywhere in it",
				 in->mnemonic, in->op_str,
				 entry_off(in->address - fv, o1, sizeof(o1)));
			return -1;
		}
	}
	if (left) {
		snprintf(why, whylen, "its bytes at %s do not decode",
			 entry_off(a - fv, o1, sizeof(o1)));
		return -1;
	}
	return 0;
}

/* No jump of the function or of its parts comes back to @site or before. */
static int entry_loop_free(struct entry_scan *sc, uint64_t site, char *why,
			   size_t whylen)
{
	unsigned char *buf;
	int i, ret;

	ret = entry_no_way_back(sc, sc->code, sc->len, sc->fn->vaddr, site, why,
				whylen);
	/* Parts found while decoding are appended, and decoded in turn. */
	for (i = 0; !ret && i < sc->nparts; i++) {
		if (sc->part_size[i] > EXITS_PART_MAX ||
		    !(buf = malloc(sc->part_size[i] ? sc->part_size[i] : 1))) {
			snprintf(why, whylen, "a part of it is too large to decode");
			return -1;
		}
		if (elf_file__read_code(sc->ef, sc->part_at[i], buf,
					sc->part_size[i], &(uint64_t){ 0 })) {
			free(buf);
			snprintf(why, whylen, "a part of it is not in the file");
			return -1;
		}
		ret = entry_no_way_back(sc, buf, sc->part_size[i],
					sc->part_at[i], site, why, whylen);
		free(buf);
	}
	return ret;
}

/*
 * The site the straight-line code from @s's site leads to, at or before
 * @limit (the bounded scan, or a forced site): the address of the first
 * instruction that is not stepped (@limit itself when forced), or 0 with
 * why in @why.  With @forced, only the stack test applies.
 */
static uint64_t entry_scan_line(struct entry_scan *sc, const struct site *s,
				uint64_t limit, bool forced, struct site *found,
				char *why, size_t whylen)
{
	uint64_t fv = sc->fn->vaddr, a = fv + s->skip;
	const uint8_t *p = sc->code + s->skip;
	size_t left = sc->len - s->skip;
	char o[24];
	int n;

	for (n = 0; forced || n < ENTRY_SCAN_INSNS; n++) {
		const cs_insn *in = sc->in;
		uint64_t here = a;

		if (here > limit || !left) {
			if (forced)
				snprintf(why, whylen, "%s is not the start of an instruction",
					 entry_off(limit - fv, o, sizeof(o)));
			else
				snprintf(why, whylen,
					 "no instruction it emulates in the first %d bytes of straight-line code",
					 (int)(limit - fv));
			return 0;
		}
		site_classify(sc->code + (here - fv), sc->len - (here - fv), here,
			      found);
		if (here == limit && forced)
			return here;
		/*
		 * Not a 5-byte NOP inside a function: the kernel turns its probe
		 * into a call, which fork safety (forkcheck.c) only handles at
		 * the entry; it is a NOP, the scan goes on past it.
		 */
		if (!forced && here > fv + s->skip && found->kind == SITE_EMULATED &&
		    !found->skip)
			return here;
		if (!cs_disasm_iter(sc->cs, &p, &left, &a, sc->in)) {
			snprintf(why, whylen, "its bytes at %s do not decode",
				 entry_off(here - fv, o, sizeof(o)));
			return 0;
		}
		if (here > fv + s->skip && found->skip) {
			snprintf(why, whylen,
				 "an endbr64 at %s marks a target of indirect jumps",
				 entry_off(here - fv, o, sizeof(o)));
			return 0;
		}
		if (cs_insn_group(sc->cs, in, CS_GRP_JUMP) ||
		    cs_insn_group(sc->cs, in, CS_GRP_CALL) ||
		    cs_insn_group(sc->cs, in, CS_GRP_RET) ||
		    cs_insn_group(sc->cs, in, CS_GRP_INT) ||
		    cs_insn_group(sc->cs, in, CS_GRP_IRET)) {
			snprintf(why, whylen,
				 "`%s%s%.60s` at %s leaves the straight line first",
				 in->mnemonic, *in->op_str ? " " : "", in->op_str,
				 entry_off(here - fv, o, sizeof(o)));
			return 0;
		}
		if (!sc->go && entry_moves_stack(sc->cs, in)) {
			snprintf(why, whylen,
				 "`%s %.60s` at %s moves the stack pointer first (the return address must stay on top for the return probes)",
				 in->mnemonic, in->op_str,
				 entry_off(here - fv, o, sizeof(o)));
			return 0;
		}
	}
	snprintf(why, whylen,
		 "no instruction it emulates in its first %d instructions of straight-line code",
		 ENTRY_SCAN_INSNS);
	return 0;
}

/* Move @s to the site the analysis (or @forced_off, when >= 0) finds. */
static int entry_relocate(struct entry_scan *sc, struct site *s,
			  int64_t forced_off, char *err, size_t errlen)
{
	uint64_t fv = sc->fn->vaddr, site, limit;
	char why[256], o[24];
	struct site found;

	if (forced_off >= 0)
		limit = fv + (uint64_t)forced_off;
	else
		limit = fv + s->skip + ENTRY_SCAN_BYTES;
	site = entry_scan_line(sc, s, limit, forced_off >= 0, &found, why,
			       sizeof(why));
	if (site && forced_off < 0 && entry_loop_free(sc, site, why, sizeof(why)))
		site = 0;
	if (!site) {
		if (forced_off >= 0) {
			snprintf(err, errlen, "%s", why);
			return -1;
		}
		snprintf(s->why, sizeof(s->why), "kept at the entry: %.180s", why);
		return 0;
	}
	snprintf(found.why, sizeof(found.why),
		 forced_off >= 0 ? "%s, `%s`: forced by :site=" :
		 "%s, `%s`: first emulated instruction on every path",
		 entry_off(site - fv, o, sizeof(o)), found.insn);
	found.moved = site - fv != s->skip;
	found.entry_kind = s->kind;
	found.skip = (unsigned int)(site - fv);
	*s = found;
	return 0;
}

int entry__place(struct elf_file *ef, const struct elf_func *fn,
		 const struct point_spec *spec, bool go, struct site *out,
		 char *err, size_t errlen)
{
	struct entry_scan sc = { .ef = ef, .fn = fn, .go = go };
	int64_t forced = -1;
	uint64_t off;
	int ret = 0;

	if (go)
		site_classify_go(fn->code, fn->code_len, fn->vaddr, out);
	else
		site_classify(fn->code, fn->code_len, fn->vaddr, out);
	out->entry_kind = out->kind;
	if (spec && spec->site_policy == SITE_POLICY_AT)
		forced = spec->site_at;
	if (forced < 0 && out->kind != SITE_STEPPED)
		return 0;
	/* :site=nop5 wants the entry's NOP or nothing (attach refuses). */
	if (forced < 0 && spec && (spec->site_policy == SITE_POLICY_ENTRY ||
				   spec->site_policy == SITE_POLICY_NOP5)) {
		snprintf(out->why, sizeof(out->why), "kept at the entry: :site=%s",
			 spec->site_policy == SITE_POLICY_NOP5 ? "nop5" : "entry");
		return 0;
	}
	if (forced < 0 && spec && (spec->copy || spec->key_kind)) {
		snprintf(out->why, sizeof(out->why),
			 "kept at the entry: %s reads the arguments there, before the function moves them",
			 spec->copy ? "copy=" : "key=");
		return 0;
	}
	if (!fn->size) {
		if (forced >= 0) {
			snprintf(err, errlen, "its symbol has no size");
			return -1;
		}
		snprintf(out->why, sizeof(out->why), "kept at the entry: its symbol has no size");
		return 0;
	}
	if (forced >= 0 && (uint64_t)forced >= fn->size) {
		snprintf(err, errlen, "+0x%" PRIx64 " is past its end (%" PRIu64 " bytes)",
			 (uint64_t)forced, fn->size);
		return -1;
	}
	if (forced >= 0 && (uint64_t)forced < out->skip) {
		/* Before the site: only the entry itself (before endbr64). */
		if (forced) {
			snprintf(err, errlen, "+0x%" PRIx64 " is inside the stack check or endbr64 the probe is placed after",
				 (uint64_t)forced);
			return -1;
		}
		out->skip = 0;
		snprintf(out->why, sizeof(out->why), "+0x0: forced by :site=");
		return 0;
	}
	sc.len = fn->size;
	if (sc.len > EXITS_PART_MAX) {
		if (forced >= 0) {
			snprintf(err, errlen, "it is larger than %d KiB", EXITS_PART_MAX >> 10);
			return -1;
		}
		snprintf(out->why, sizeof(out->why),
			 "kept at the entry: it is larger than %d KiB", EXITS_PART_MAX >> 10);
		return 0;
	}
	sc.code = malloc(sc.len);
	if (!sc.code || elf_file__read_code(ef, fn->vaddr, sc.code, sc.len, &off)) {
		snprintf(out->why, sizeof(out->why), "kept at the entry: its code is not in the file");
		if (forced >= 0) {
			snprintf(err, errlen, "its code is not in the file");
			ret = -1;
		}
		goto out;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &sc.cs) != CS_ERR_OK) {
		snprintf(out->why, sizeof(out->why), "kept at the entry: the decoder did not open");
		if (forced >= 0) {
			snprintf(err, errlen, "the decoder did not open");
			ret = -1;
		}
		goto out;
	}
	cs_option(sc.cs, CS_OPT_DETAIL, CS_OPT_ON);
	sc.in = cs_malloc(sc.cs);
	if (sc.in)
		ret = entry_relocate(&sc, out, forced, err, errlen);
	else
		snprintf(out->why, sizeof(out->why), "kept at the entry: out of memory");
	if (sc.in)
		cs_free(sc.in, 1);
	cs_close(&sc.cs);
out:
	free(sc.code);
	return ret;
}
