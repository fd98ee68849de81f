// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * lang.c - what a TARGET was built from.  The hints under attach's table
 * (site_hint) name compiler options, and which exist depends on the
 * toolchain: gcc has -mnop-mcount, clang on x86 has not, stable rustc has
 * neither, Go has no say at all.
 */
#include <string.h>

#include "target/elfsym.h"
#include "target/lang.h"

/* .comment holds one string per compiler that contributed code. */
#define COMMENT_MAX	4096

/* What the symbols say: bit 0 Rust, bit 1 C++. */
#define SEEN_RUST	1
#define SEEN_CXX	2

static int lang_sym(const struct elf_sym *s, void *ctx)
{
	int *seen = ctx;

	if (!strcmp(s->name, "rust_begin_unwind") ||
	    !strncmp(s->name, "__rust_", 7) || !strncmp(s->name, "_R", 2))
		*seen |= SEEN_RUST;
	else if (!strcmp(s->name, "__gxx_personality_v0") ||
		 !strncmp(s->name, "_Z", 2))
		*seen |= SEEN_CXX;
	/* Rust wins: its legacy symbols are _Z too, and it may link C++. */
	return *seen & SEEN_RUST;
}

/* Does .comment name clang (and so the C or C++ code came from it)? */
static bool built_by_clang(struct elf_file *ef)
{
	const char *d;
	size_t len, i;

	if (elf_file__section_bytes(ef, ".comment", COMMENT_MAX, &d, &len))
		return false;
	/* NUL-separated strings: "GCC: (Debian 12.2.0-14) 12.2.0", "Debian clang version 14..." */
	for (i = 0; i + 5 <= len; i++)
		if (!memcmp(d + i, "clang", 5))
			return true;
	return false;
}

void lang_detect(struct elf_file *ef, struct src_info *out)
{
	int seen = 0;

	memset(out, 0, sizeof(*out));
	if (elf_file__is_go(ef)) {
		out->lang = SRC_LANG_GO;
		return;
	}
	if (elf_file__has_section(ef, ".rustc"))
		seen = SEEN_RUST;
	else
		elf_file__for_each_sym(ef, ELF_SYMS_ALL, lang_sym, &seen);
	if (seen & SEEN_RUST)
		out->lang = SRC_LANG_RUST;
	else if (seen & SEEN_CXX)
		out->lang = SRC_LANG_CXX;
	else
		out->lang = SRC_LANG_C;
	out->clang = out->lang != SRC_LANG_RUST && built_by_clang(ef);
}

const char *lang_name(enum src_lang lang)
{
	switch (lang) {
	case SRC_LANG_C:
		return "C";
	case SRC_LANG_CXX:
		return "C++";
	case SRC_LANG_RUST:
		return "Rust";
	case SRC_LANG_GO:
		return "Go";
	}
	return "?";
}
