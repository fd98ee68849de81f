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
	bool has_symtab;	/* a .symtab exists: not stripped */
};

/* The PT_LOAD segment whose file bytes hold @vaddr, in @ph; -1 if none. */
int elf_file__segment(struct elf_file *ef, uint64_t vaddr, GElf_Phdr *ph);

#endif /* SDS_ELFFILE_H */
