/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The inside of an open ELF file, shared by the modules that read it
 * (elfsym.c: symbols by name; elfaddr.c: what is at an address).  Not for
 * other modules: they use elfsym.h.
 */
#ifndef SDS_ELFFILE_H
#define SDS_ELFFILE_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

struct elf_file {
	int fd;			/* the open file; libelf reads through it */
	Elf *elf;		/* libelf handle on @fd */
	char *path;		/* as given, for messages */
	GElf_Ehdr ehdr;		/* the ELF header, checked at open */
	bool has_symtab;	/* a .symtab exists, ours or @dbg's */
	struct elf_file *dbg;	/* separate debug file whose .symtab stands in for ours (debuginfo.c); NULL */
	int dbg_how;		/* how @dbg was found: DEBUGINFO_BY_* */
	char *dbg_refused;	/* why the first debug file found was refused, for messages; NULL */
	struct nothrow_memo *nothrow;	/* nothrow.c's verdicts so far (one allocation); NULL */
};

enum {
	DEBUGINFO_BY_NONE,	/* no debug file: our own .symtab, or .dynsym only */
	DEBUGINFO_BY_BUILDID,	/* ROOT/.build-id/xx/yyyy.debug */
	DEBUGINFO_BY_DEBUGLINK,	/* .gnu_debuglink's name, CRC32 checked */
};

/*
 * The libelf handle that holds @ef's symbol table of @type: the debug
 * file's for .symtab when one stands in (same addresses: only the
 * symbols come from it; code and segments are always @ef's).
 */
static inline Elf *elf_file__table_elf(const struct elf_file *ef, unsigned int type)
{
	return type == SHT_SYMTAB && ef->dbg ? ef->dbg->elf : ef->elf;
}

/* The PT_LOAD segment whose file bytes hold @vaddr, in @ph; -1 if none. */
int elf_file__segment(struct elf_file *ef, uint64_t vaddr, GElf_Phdr *ph);

#endif /* SDS_ELFFILE_H */
