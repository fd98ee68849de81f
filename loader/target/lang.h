/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The language (and C compiler) a TARGET was built from, told by its ELF:
 * which cheap probe sites its toolchain can produce depends on it.
 */
#ifndef SDS_LANG_H
#define SDS_LANG_H

#include <stdbool.h>

struct elf_file;

enum src_lang {
	SRC_LANG_C = 0,		/* C, or nothing else recognised */
	SRC_LANG_CXX,		/* C++: _Z symbols, __gxx_personality_v0 */
	SRC_LANG_RUST,		/* Rust: .rustc, rust_begin_unwind, __rust_* */
	SRC_LANG_GO,		/* Go: .go.buildinfo */
};

struct src_info {
	enum src_lang lang;	/* the language of the TARGET's own code */
	bool clang;		/* .comment names clang: C/C++ built with clang */
};

/* What @ef was built from. */
void lang_detect(struct elf_file *ef, struct src_info *out);

/* "C", "C++", "Rust", "Go" */
const char *lang_name(enum src_lang lang);

#endif /* SDS_LANG_H */
