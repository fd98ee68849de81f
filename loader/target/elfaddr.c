// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * elfaddr.c - what is at an address of an ELF file: its code bytes, the
 * function holding it, and the PLT stubs through which the file calls a
 * shared library.  exits.c follows a function's jumps with these.
 */
#include <gelf.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "target/elffile.h"
#include "target/elfsym.h"

int elf_file__read_code(struct elf_file *ef, uint64_t vaddr, void *buf,
			size_t len, uint64_t *off)
{
	GElf_Phdr ph;

	if (elf_file__segment(ef, vaddr, &ph) ||
	    ph.p_filesz - (vaddr - ph.p_vaddr) < len)
		return -1;
	*off = vaddr - ph.p_vaddr + ph.p_offset;
	if (pread(ef->fd, buf, len, (off_t)*off) != (ssize_t)len)
		return -1;
	return 0;
}

/* elf_file__func_holding() in the first section of type @type. */
static int elf_file__func_in(struct elf_file *ef, Elf64_Word type,
			     uint64_t vaddr, const char **name,
			     uint64_t *start, uint64_t *size)
{
	Elf *e = elf_file__table_elf(ef, type);
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	GElf_Sym s;
	size_t i, n;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			break;
	if (!scn || !shdr.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return -1;
	n = shdr.sh_size / shdr.sh_entsize;
	for (i = 0; i < n; i++) {
		int t;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		t = GELF_ST_TYPE(s.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
		    s.st_shndx == SHN_UNDEF || !s.st_size ||
		    vaddr < s.st_value || vaddr - s.st_value >= s.st_size)
			continue;
		*name = elf_strptr(e, shdr.sh_link, s.st_name);
		if (!*name)
			continue;
		*start = s.st_value;
		*size = s.st_size;
		return 0;
	}
	return -1;
}

int elf_file__func_holding(struct elf_file *ef, uint64_t vaddr,
			   const char **name, uint64_t *start, uint64_t *size)
{
	if (!elf_file__func_in(ef, SHT_SYMTAB, vaddr, name, start, size))
		return 0;
	return elf_file__func_in(ef, SHT_DYNSYM, vaddr, name, start, size);
}

int elf_file__func_prefixed(struct elf_file *ef, const char *prefix,
			    uint64_t *vaddr, uint64_t *off)
{
	size_t n = strlen(prefix), i, cnt;
	Elf *e = elf_file__table_elf(ef, SHT_SYMTAB);
	Elf_Scn *scn = NULL;
	unsigned char b;
	GElf_Shdr shdr;
	Elf_Data *data;
	GElf_Sym s;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			break;
	if (!scn || !shdr.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return -1;
	cnt = shdr.sh_size / shdr.sh_entsize;
	for (i = 0; i < cnt; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(e, shdr.sh_link, s.st_name);
		if (!name || strncmp(name, prefix, n))
			continue;
		*vaddr = s.st_value;
		return elf_file__read_code(ef, s.st_value, &b, 1, off);
	}
	return -1;
}

/*
 * The first relocation, in any SHT_RELA section, against a symbol, whose
 * symbol's name is @sym (non-NULL) or whose GOT slot is @slot (@sym NULL):
 * 0, its slot into *@at and its symbol's name (NULL if unreadable) into
 * *@name; -1 for none.
 */
static int elf_file__got_find(struct elf_file *ef, const char *sym,
			      uint64_t slot, uint64_t *at, const char **name)
{
	Elf_Scn *scn = NULL, *symscn;
	GElf_Shdr shdr, symshdr;
	Elf_Data *data, *syms;
	GElf_Rela r;
	GElf_Sym s;
	size_t i, n;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA ||
		    !shdr.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		symscn = elf_getscn(ef->elf, shdr.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symshdr) ||
		    !(syms = elf_getdata(symscn, NULL)))
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			const char *nm;

			if (!gelf_getrela(data, (int)i, &r) ||
			    (!sym && r.r_offset != slot) ||
			    !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
				continue;
			nm = elf_strptr(ef->elf, symshdr.sh_link, s.st_name);
			if (sym && (!nm || strcmp(nm, sym)))
				continue;
			*at = r.r_offset;
			*name = nm;
			return 0;
		}
	}
	return -1;
}

/* The GOT slot a relocation of @sym fills, from any SHT_RELA section. */
static int elf_file__got_slot(struct elf_file *ef, const char *sym,
			      uint64_t *slot)
{
	const char *name;

	return elf_file__got_find(ef, sym, 0, slot, &name);
}

/*
 * The GOT slot a stub at @a (bytes @b, @len of them) jumps through, into
 * *@slot: [endbr64] [bnd] jmp *disp32(%rip).  False for another stub.
 */
static bool plt_stub_slot(const unsigned char *b, size_t len, uint64_t a,
			  uint64_t *slot)
{
	size_t at = 0;
	int32_t disp;

	if (len >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		at = 4;
	if (at < len && b[at] == 0xf2)
		at++;
	if (at + 6 > len || b[at] != 0xff || b[at + 1] != 0x25)
		return false;
	memcpy(&disp, b + at + 2, 4);
	*slot = a + at + 6 + (int64_t)disp;
	return true;
}

/* A stub at @a (bytes @b, @len of them) that jumps through GOT slot @slot. */
static bool plt_jumps_through(const unsigned char *b, size_t len, uint64_t a,
			      uint64_t slot)
{
	uint64_t to;

	return plt_stub_slot(b, len, a, &to) && to == slot;
}

/* The GOT slot the stub at @b (@len bytes, at @a) jumps through, or 0. */
static uint64_t plt_slot_of(const unsigned char *b, size_t len, uint64_t a)
{
	uint64_t to;

	return plt_stub_slot(b, len, a, &to) ? to : 0;
}

const char *elf_file__plt_name(struct elf_file *ef, uint64_t vaddr)
{
	unsigned char b[16];
	uint64_t slot, off;

	if (elf_file__read_code(ef, vaddr, b, sizeof(b), &off))
		return NULL;
	slot = plt_slot_of(b, sizeof(b), vaddr);
	return slot ? elf_file__got_name(ef, slot) : NULL;
}

const char *elf_file__got_name(struct elf_file *ef, uint64_t slot)
{
	const char *name;
	uint64_t at;

	return elf_file__got_find(ef, NULL, slot, &at, &name) ? NULL : name;
}

int elf_file__plt_stub(struct elf_file *ef, const char *sym, uint64_t *vaddr,
		       uint64_t *off)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	uint64_t slot;

	if (elf_file__got_slot(ef, sym, &slot) || elf_getshdrstrndx(ef->elf, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const unsigned char *b;
		Elf_Data *data;
		const char *name;
		size_t at, step;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(ef->elf, shstrndx, shdr.sh_name);
		if (!name || strncmp(name, ".plt", 4) ||
		    !(data = elf_getdata(scn, NULL)) || !data->d_buf)
			continue;
		b = data->d_buf;
		/* Stubs are 16 bytes in .plt and .plt.sec, 8 in .plt.got. */
		step = shdr.sh_entsize >= 8 ? shdr.sh_entsize : 8;
		for (at = 0; at + 6 <= data->d_size; at += step) {
			if (!plt_jumps_through(b + at, data->d_size - at,
					       shdr.sh_addr + at, slot))
				continue;
			*vaddr = shdr.sh_addr + at;
			*off = shdr.sh_offset + at;
			return 0;
		}
	}
	return -1;
}
