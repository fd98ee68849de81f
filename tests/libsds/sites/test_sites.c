// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The probe sites of the built libsds (docs/PROTOCOL.md, "Probe sites"),
 * in build/lib/libsds.so, in build/lib/libsds.a and in programs linked
 * with it (PIE, non-PIE, --gc-sections, stripped): each site is 16-byte
 * aligned and disassembles (objdump -d) to `0f 1f 44 00 00` then `c3`;
 * the .note.sds notes name the five sites with layout 5 and the address
 * of each symbol; the .so exports the API and the sites only.
 *
 * The files are given by the build (-D): see tests/libsds/libsds.mk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sds_flags.h"

#ifndef OBJDUMP
#define OBJDUMP "objdump"
#endif

static const char *const sites[] = { "enter", "exit", "exception", "downgrade", "copy",
				     "copy_ret" };
#define NSITES	6

static const char *const api[] = {
	"sds_client_open", "sds_point", "sds_should_downgrade", "sds_enter",
	"sds_should_downgrade_key", "sds_enter_key",
	"sds_exception_sign", "sds_downgrade_finally", "sds_copy", "sds_copy_response",
	"sds_client_close", "sds_lb_open", "sds_lb_error", "sds_lb_choose",
	"sds_lb_point", "sds_lb_call", "sds_lb_close", "sds__site_enter", "sds__site_exit",
	"sds__site_exception", "sds__site_downgrade", "sds__site_copy",
	"sds__site_copy_ret",
};
#define NAPI	(sizeof(api) / sizeof(api[0]))

/* One .note.sds record. */
struct note {
	char name[32];		/* the site: enter, exit, ... */
	uint64_t addr;		/* its link-time address */
	uint32_t layout;	/* SDS_FLAGS_LAYOUT it was built for */
};

/* An ELF file open for reading. */
struct elf_file {
	int fd;			/* the file */
	Elf *elf;		/* libelf's handle */
};

static int setup(void **state)
{
	return elf_version(EV_CURRENT) == EV_NONE ? -1 : 0;
}

static void elf_open(struct elf_file *f, const char *path)
{
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		fail_msg("cannot open %s", path);
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	assert_non_null(f->elf);
}

static void elf_close(struct elf_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

static Elf_Scn *section_by_name(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The notes of @e's .note.sds section; their number. */
static int read_notes(Elf *e, struct note *out, int max)
{
	Elf_Scn *scn = section_by_name(e, ".note.sds");
	GElf_Nhdr nh;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t off = 0, name_off, desc_off;
	const char *desc;
	int n = 0;

	if (!scn)
		return 0;
	assert_non_null(gelf_getshdr(scn, &sh));
	assert_int_equal(sh.sh_type, SHT_NOTE);
	/* Not allocated: nothing maps it, strip keeps it. */
	assert_int_equal(sh.sh_flags & SHF_ALLOC, 0);
	d = elf_getdata(scn, NULL);
	assert_non_null(d);
	while (off < d->d_size &&
	       (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		assert_true(n < max);
		assert_int_equal(nh.n_namesz, 4);
		assert_memory_equal((char *)d->d_buf + name_off, "sds", 4);
		assert_int_equal(nh.n_type, 1);
		/* addr (8), layout (4), a name and its NUL. */
		assert_true(nh.n_descsz >= 8 + 4 + 2);
		desc = (char *)d->d_buf + desc_off;
		memcpy(&out[n].addr, desc, 8);
		memcpy(&out[n].layout, desc + 8, 4);
		assert_non_null(memchr(desc + 12, '\0', nh.n_descsz - 12));
		snprintf(out[n].name, sizeof(out[n].name), "%s", desc + 12);
		n++;
	}
	return n;
}

/* The value of symbol @name in .symtab or .dynsym; false if absent. */
static bool symbol(Elf *e, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	const char *n;
	size_t i;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(d, i, &sym))
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name) && sym.st_shndx != SHN_UNDEF) {
				*value = sym.st_value;
				return true;
			}
		}
	}
	return false;
}

/*
 * objdump -d of the 6 bytes at @addr of @path: the first instruction's
 * bytes must be 0f 1f 44 00 00 and the second's c3.  If @label, the
 * address must carry that symbol.
 */
static void check_disasm_at(const char *path, uint64_t addr, const char *label)
{
	char cmd[512], line[512], want[128], insn[2][64];
	char *tab, *bytes, *end;
	bool labelled = false;
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 OBJDUMP " -d --start-address=0x%" PRIx64
		 " --stop-address=0x%" PRIx64 " '%s' 2>&1", addr, addr + 6, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (label)
		snprintf(want, sizeof(want), "<%s>:", label);
	while (fgets(line, sizeof(line), p)) {
		if (label && strstr(line, want))
			labelled = true;
		/* "    1070:\t0f 1f 44 00 00       \tnopl ..." */
		tab = strchr(line, '\t');
		if (!tab || !strchr(line, ':') || strchr(line, ':') > tab || n >= 2)
			continue;
		bytes = tab + 1;
		end = strchr(bytes, '\t');
		if (end)
			*end = '\0';
		else
			bytes[strcspn(bytes, "\n")] = '\0';
		while (*bytes == ' ')
			bytes++;
		for (end = bytes + strlen(bytes); end > bytes && end[-1] == ' '; end--)
			end[-1] = '\0';
		snprintf(insn[n++], sizeof(insn[0]), "%s", bytes);
	}
	assert_int_equal(pclose(p), 0);
	if (n != 2)
		fail_msg("%s @0x%" PRIx64 ": %d instructions", path, addr, n);
	assert_string_equal(insn[0], "0f 1f 44 00 00");
	assert_string_equal(insn[1], "c3");
	if (label && !labelled)
		fail_msg("%s: no <%s> at 0x%" PRIx64, path, label, addr);
}

/*
 * A linked file: four notes, each addr the symbol's (from @symfile, the
 * unstripped original, if given), 16-byte aligned, nop5 + ret there.
 */
static void check_linked(const char *path, const char *symfile)
{
	struct elf_file f, s;
	struct note notes[8];
	char sym[64];
	uint64_t value;
	int n, i, j;

	elf_open(&f, path);
	elf_open(&s, symfile ? symfile : path);
	n = read_notes(f.elf, notes, 8);
	assert_int_equal(n, NSITES);
	for (i = 0; i < NSITES; i++) {
		for (j = 0; j < n && strcmp(notes[j].name, sites[i]); j++)
			;
		if (j == n)
			fail_msg("%s: no note for %s", path, sites[i]);
		assert_int_equal(notes[j].layout, SDS_FLAGS_LAYOUT);
		snprintf(sym, sizeof(sym), "sds__site_%s", sites[i]);
		assert_true(symbol(s.elf, sym, &value));
		assert_int_equal(notes[j].addr, value);
		assert_int_equal(value % 16, 0);
		/* Hence the 5-byte NOP never crosses a page. */
		assert_true(value % 4096 <= 4096 - 5);
		check_disasm_at(path, value, symfile ? NULL : sym);
	}
	if (symfile)	/* stripped: really no symbol table left */
		assert_null(section_by_name(f.elf, ".symtab"));
	elf_close(&s);
	elf_close(&f);
}

static void test_shared_library(void **state)
{
	check_linked(SDS_SO, NULL);
}

static void test_shared_exports(void **state)
{
	struct elf_file f;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	GElf_Dyn dyn;
	Elf_Data *d;
	const char *n, *soname = NULL;
	size_t i, k;
	int found = 0;

	elf_open(&f, SDS_SO);
	while ((scn = elf_nextscn(f.elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		d = elf_getdata(scn, NULL);
		if (sh.sh_type == SHT_DYNAMIC) {
			for (i = 0; gelf_getdyn(d, i, &dyn); i++)
				if (dyn.d_tag == DT_SONAME)
					soname = elf_strptr(f.elf, sh.sh_link,
							    dyn.d_un.d_val);
		}
		if (sh.sh_type != SHT_DYNSYM)
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(d, i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_BIND(sym.st_info) == STB_LOCAL)
				continue;
			n = elf_strptr(f.elf, sh.sh_link, sym.st_name);
			for (k = 0; k < NAPI && strcmp(api[k], n); k++)
				;
			if (k == NAPI)
				fail_msg("libsds.so exports %s", n);
			assert_int_equal(GELF_ST_TYPE(sym.st_info), STT_FUNC);
			found++;
		}
	}
	assert_int_equal(found, NAPI);
	assert_non_null(soname);
	assert_string_equal(soname, "libsds.so.0");
	elf_close(&f);
}

static void test_static_library(void **state)
{
	struct elf_file f;
	struct note notes[8];
	Elf_Cmd cmd = ELF_C_READ;
	Elf_Arhdr *ah;
	Elf_Scn *text;
	GElf_Shdr sh;
	Elf *m;
	char sym[64];
	uint64_t value;
	int members = 0, with_notes = 0, n, i, j;

	elf_open(&f, SDS_A);
	assert_int_equal(elf_kind(f.elf), ELF_K_AR);
	while ((m = elf_begin(f.fd, cmd, f.elf))) {
		ah = elf_getarhdr(m);
		if (ah && ah->ar_name[0] != '/') {
			members++;
			n = read_notes(m, notes, 8);
			if (n) {
				with_notes++;
				assert_int_equal(n, NSITES);
				for (i = 0; i < NSITES; i++) {
					for (j = 0; j < n && strcmp(notes[j].name, sites[i]); j++)
						;
					assert_true(j < n);
					assert_int_equal(notes[j].layout, SDS_FLAGS_LAYOUT);
					snprintf(sym, sizeof(sym), "sds__site_%s", sites[i]);
					assert_true(symbol(m, sym, &value));
					assert_int_equal(value % 16, 0);
				}
				/* Offsets are aligned only if the section is. */
				text = section_by_name(m, ".text");
				assert_non_null(text);
				assert_non_null(gelf_getshdr(text, &sh));
				assert_true(sh.sh_addralign >= 16);
			}
		}
		cmd = elf_next(m);
		elf_end(m);
	}
	assert_true(members >= 2);
	assert_int_equal(with_notes, 1);
	elf_close(&f);
}

/*
 * Every global symbol libsds.a defines starts with "sds_": in a static
 * link they share the application's namespace.
 */
static void test_static_namespace(void **state)
{
	struct elf_file f;
	Elf_Cmd cmd = ELF_C_READ;
	Elf_Scn *scn;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	const char *n;
	Elf *m;
	size_t i;
	int globals = 0;

	elf_open(&f, SDS_A);
	while ((m = elf_begin(f.fd, cmd, f.elf))) {
		scn = NULL;
		while ((scn = elf_nextscn(m, scn))) {
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
				continue;
			d = elf_getdata(scn, NULL);
			for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				if (!gelf_getsym(d, i, &sym) ||
				    sym.st_shndx == SHN_UNDEF ||
				    GELF_ST_BIND(sym.st_info) == STB_LOCAL)
					continue;
				n = elf_strptr(m, sh.sh_link, sym.st_name);
				if (strncmp(n, "sds_", 4))
					fail_msg("libsds.a defines %s", n);
				globals++;
			}
		}
		cmd = elf_next(m);
		elf_end(m);
	}
	assert_true(globals >= (int)NAPI);
	elf_close(&f);
}

/* objdump -d of the whole archive: each site's label and its bytes. */
static void test_static_library_disasm(void **state)
{
	char cmd[512], line[512], want[64];
	int i, state_ = -1, seen[NSITES] = { 0 };
	FILE *p;

	snprintf(cmd, sizeof(cmd), OBJDUMP " -d '%s'", SDS_A);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (state_ >= 0 && strchr(line, '\t')) {
			/* The two instruction lines after the label. */
			if (seen[state_] == 1) {
				assert_non_null(strstr(line, "\t0f 1f 44 00 00 "));
				seen[state_] = 2;
			} else if (seen[state_] == 2) {
				assert_non_null(strstr(line, "\tc3 "));
				seen[state_] = 3;
				state_ = -1;
			}
			continue;
		}
		for (i = 0; i < NSITES; i++) {
			snprintf(want, sizeof(want), " <sds__site_%s>:\n", sites[i]);
			if (strstr(line, want)) {
				assert_int_equal(strtoull(line, NULL, 16) % 16, 0);
				seen[i] = 1;
				state_ = i;
			}
		}
	}
	assert_int_equal(pclose(p), 0);
	for (i = 0; i < NSITES; i++)
		assert_int_equal(seen[i], 3);
}

static void check_type(const char *path, int type)
{
	struct elf_file f;
	GElf_Ehdr eh;

	elf_open(&f, path);
	assert_non_null(gelf_getehdr(f.elf, &eh));
	assert_int_equal(eh.e_type, type);
	elf_close(&f);
}

static void test_pie(void **state)
{
	check_type(EXE_PIE, ET_DYN);
	check_linked(EXE_PIE, NULL);
}

static void test_nopie(void **state)
{
	check_type(EXE_NOPIE, ET_EXEC);
	check_linked(EXE_NOPIE, NULL);
}

static void test_gc_sections(void **state)
{
	check_linked(EXE_GC, NULL);
}

static void test_stripped(void **state)
{
	check_linked(EXE_STRIPPED, EXE_PIE);
}

static void test_programs_run(void **state)
{
	char dir[] = "/tmp/sds-sites-XXXXXX";
	const char *const exes[] = { EXE_PIE, EXE_NOPIE, EXE_GC, EXE_STRIPPED,
				     EXE_SHARED };
	size_t i;

	assert_non_null(mkdtemp(dir));
	setenv("SDS_RUN_DIR", dir, 1);
	for (i = 0; i < sizeof(exes) / sizeof(exes[0]); i++)
		if (system(exes[i]))
			fail_msg("%s failed", exes[i]);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_library),
		cmocka_unit_test(test_shared_exports),
		cmocka_unit_test(test_static_library),
		cmocka_unit_test(test_static_library_disasm),
		cmocka_unit_test(test_static_namespace),
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_gc_sections),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_programs_run),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
