/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Finding a function in an ELF file by symbol: file offset and first bytes. */
#ifndef SDS_ELFSYM_H
#define SDS_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_FUNC_NAME_MAX	512	/* room for a function's symbol, truncated past it */

struct elf_func {
	char name[ELF_FUNC_NAME_MAX];	/* the symbol found (mangled, as in the file), for messages */
	uint64_t vaddr;		/* st_value: virtual address in the file's image */
	uint64_t offset;	/* file offset of the first instruction */
	uint64_t size;		/* st_size, 0 when unknown */
	unsigned char code[32];	/* first bytes of the function (zero padded): room for a Go stack check and the instruction after it */
	size_t code_len;	/* valid bytes in @code */
	char clone[48];		/* found as a clone of the name asked for: its suffix (".isra.0"); "" */
};

struct elf_file;	/* an open ELF file (libelf) */

/*
 * Open @path.  Errors (return NULL, message in @err without prefix):
 *   "PATH: No such file or directory"            (strerror of open)
 *   "PATH: not an ELF file"
 *   "PATH: not an x86-64 ELF executable or shared library"
 */
struct elf_file *elf_file__open(const char *path, char *err, size_t errlen);

/*
 * The same for the file open on @fd (read-only), which the elf_file owns
 * from now on, even on failure (closed).  @name is for messages only: the
 * loader parses a client's file by inode, never by a name (register.c).
 */
struct elf_file *elf_file__open_fd(int fd, const char *name, char *err,
				   size_t errlen);

/*
 * Find function @sym (STT_FUNC or STT_GNU_IFUNC, defined) in .symtab, else
 * .dynsym: by its symbol as written first, else by its demangled name
 * (C++, Rust: demangle.h), which must name one function.  Returns 0, or
 * -1 with a message in @err:
 *   "symbol 'foo' not found in PATH"
 *   "symbol 'foo' not found in PATH; nearest: foo_bar, ns::foo(int) [_ZN2ns3fooEi], ..."
 *   "symbol 'ns::f' in PATH matches 2 functions: ns::f(int) [_ZN2ns1fEi]; ns::f(long) [_ZN2ns1fEl]; name one by its full signature or its mangled name"
 *   "symbol 'foo' not found in PATH: the file is stripped (no .symtab); rebuild without -s or use a binary with symbols"
 */
int elf_file__find_func(struct elf_file *ef, const char *sym,
			struct elf_func *out, char *err, size_t errlen);

/*
 * The same, where a name may find up to @max functions, each clone with
 * its @clone suffix, one point probing them all (point/clones.h): a
 * demangled name, the clones (.isra.N, .constprop.N, .part.N) of one
 * function the compiler left without a symbol of its own, sorted by
 * symbol; a C name ("work", no '.'), its own symbol first if it has one,
 * then its clones ("work.part.0", "work.isra.0"), sorted.  Returns how
 * many are in @out (1 for any other find), or -1 with a message; more
 * than @max clones is one:
 *   "symbol 'f' in PATH has no symbol of its own, only 9 clones the compiler made (one point probes at most 8): ..."
 *   "symbol 'work' in PATH has 8 clones the compiler made beside its own symbol (one point probes at most 8 sites): work.part.0, ..."
 */
int elf_file__find_funcs(struct elf_file *ef, const char *sym,
			 struct elf_func *out, size_t max, char *err,
			 size_t errlen);

/*
 * The function defined as @sym exactly (no demangled names): its address
 * and size.  0, or -1.
 */
int elf_file__defined(struct elf_file *ef, const char *sym, uint64_t *vaddr,
		      uint64_t *size);

/* One symbol of the file, as elf_file__for_each_sym() shows it. */
struct elf_sym {
	const char *name;	/* valid during the callback only */
	uint64_t vaddr;		/* st_value */
	uint64_t size;		/* st_size */
	bool func;		/* STT_FUNC or STT_GNU_IFUNC */
	bool defined;		/* not SHN_UNDEF */
	bool local;		/* STB_LOCAL */
};

enum elf_syms {
	ELF_SYMS_FUNCS,		/* the defined functions of .symtab, else of .dynsym */
	ELF_SYMS_ALL,		/* every symbol of both tables */
};

/*
 * Call @fn on each symbol @which selects, in table order; stop at its
 * first non-zero return and return that (0 when it never stopped).
 */
int elf_file__for_each_sym(struct elf_file *ef, enum elf_syms which,
			   int (*fn)(const struct elf_sym *s, void *ctx),
			   void *ctx);

/*
 * Fill @out for the function @name at @vaddr (@size bytes, 0: unknown):
 * its file offset and first bytes.  0, or -1 with a message.
 */
int elf_file__func_at(struct elf_file *ef, const char *name, uint64_t vaddr,
		      uint64_t size, struct elf_func *out, char *err,
		      size_t errlen);

/* Does the file have a section named @name? */
bool elf_file__has_section(struct elf_file *ef, const char *name);

/*
 * The bytes of section @name (e.g. ".comment"), at most @max of them, in
 * @data/@len; 0, or -1 when there is no such section (or it has no bytes).
 */
int elf_file__section_bytes(struct elf_file *ef, const char *name, size_t max,
			    const char **data, size_t *len);

/* The probe sites of libsds (docs/PROTOCOL.md), by their .note.sds. */
#define SDS_NOTE_SITE	1	/* note type of a site record */
enum sds_site_id {
	SDS_SITE_ENTER,
	SDS_SITE_EXIT,
	SDS_SITE_EXCEPTION,
	SDS_SITE_DOWNGRADE,
	SDS_SITE_COUNT,
};

struct sds_sites {
	uint64_t offset[SDS_SITE_COUNT];	/* file offset of each site */
	uint32_t layout;			/* SDS_FLAGS_LAYOUT the library was built for */
	uint32_t found;				/* bit i: site i has a note */
	uint64_t copy_offset;			/* file offset of the copy site (issue 12) */
	bool has_copy;				/* a "copy" note: libsds has sds_copy(); older ones do not */
	uint64_t copy_ret_offset;		/* file offset of the copy_ret site (issue 37) */
	bool has_copy_ret;			/* a "copy_ret" note: libsds has sds_copy_response() */
};

/* 1: all four sites found; 0: none (no libsds here); -1: some missing. */
int elf_file__sds_sites(struct elf_file *ef, struct sds_sites *out);

/* True when the file needs a shared library whose name starts with @prefix. */
bool elf_file__needs(struct elf_file *ef, const char *prefix);

/*
 * True when code in the file can unwind the stack through its callers: it
 * has exception tables (.gcc_except_table: C++, Rust), needs libstdc++ or
 * libgcc_s, or names _Unwind_RaiseException or _Unwind_Resume (defined,
 * linked in statically, or imported).  Plain C has none of these.
 */
bool elf_file__can_unwind(struct elf_file *ef);

/* True for ET_DYN files (PIE executables and shared libraries). */
/* A Go binary: its runtime walks and copies goroutine stacks itself. */
bool elf_file__is_go(struct elf_file *ef);

bool elf_file__is_dyn(const struct elf_file *ef);

/*
 * Read @len bytes of the image at @vaddr, which must lie in one loadable
 * segment's file bytes, into @buf; the file offset of @vaddr in @off.
 * 0, or -1.
 */
int elf_file__read_code(struct elf_file *ef, uint64_t vaddr, void *buf,
			size_t len, uint64_t *off);

/*
 * The defined function whose [start, start + size) holds @vaddr, from
 * .symtab (else .dynsym): its name (valid while @ef is open), start and
 * size.  0, or -1 when no sized function holds it.
 */
int elf_file__func_holding(struct elf_file *ef, uint64_t vaddr,
			   const char **name, uint64_t *start, uint64_t *size);

/*
 * The first defined function of .symtab whose name starts with @prefix
 * (a Rust symbol with its hash): its address and file offset.  0, or -1.
 */
int elf_file__func_prefixed(struct elf_file *ef, const char *prefix,
			    uint64_t *vaddr, uint64_t *off);

/*
 * The PLT stub through which @ef calls the shared-library function @sym
 * (a `jmp *GOT(%rip)` in .plt, .plt.sec or .plt.got whose GOT slot a
 * relocation of @sym fills): its address and file offset.  0, or -1 when
 * @ef calls @sym through no stub (not at all, or -fno-plt).
 */
int elf_file__plt_stub(struct elf_file *ef, const char *sym, uint64_t *vaddr,
		       uint64_t *off);

/*
 * The shared-library function the PLT stub at @vaddr jumps to (by the
 * relocation of the GOT slot it jumps through): its name, valid while @ef
 * is open, or NULL when @vaddr is no such stub.
 */
const char *elf_file__plt_name(struct elf_file *ef, uint64_t vaddr);

/* The symbol whose relocation fills GOT slot @slot (-fno-plt calls), or NULL. */
const char *elf_file__got_name(struct elf_file *ef, uint64_t slot);

void elf_file__close(struct elf_file *ef);

#endif /* SDS_ELFSYM_H */
