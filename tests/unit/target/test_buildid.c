// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/target/buildid.c: the build-id of ELF files built here
 * with gcc (one given, one without), and copies whose note lies about its
 * lengths (the file at TARGET's path is hostile: docs/DEPLOY.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/buildid.h"
#include "target/elfsym.h"

static char dir[] = "/tmp/sds-buildid-XXXXXX";
static char with_id[256], without_id[256];

static int setup(void **state)
{
	char cmd[1024];

	if (!mkdtemp(dir))
		return -1;
	snprintf(with_id, sizeof(with_id), "%s/with", dir);
	snprintf(without_id, sizeof(without_id), "%s/without", dir);
	snprintf(cmd, sizeof(cmd),
		 "printf 'int main(void){return 0;}\\n' > %s/m.c && "
		 "gcc -o %s -Wl,--build-id=0x00112233445566778899aabbccddeeff01234567 %s/m.c && "
		 "gcc -o %s -Wl,--build-id=none %s/m.c",
		 dir, with_id, dir, without_id, dir);
	return system(cmd) ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

static void read_id(const char *path, char *hex)
{
	char err[512];
	struct elf_file *ef = elf_file__open(path, err, sizeof(err));

	assert_non_null(ef);
	buildid__read(ef, hex);
	elf_file__close(ef);
}

static void test_given_and_none(void **state)
{
	char hex[BUILDID_HEX_MAX + 1];

	read_id(with_id, hex);
	assert_string_equal(hex, "00112233445566778899aabbccddeeff01234567");
	read_id(without_id, hex);
	assert_string_equal(hex, "");
}

/* The file offset of @path's .note.gnu.build-id, or -1. */
static long note_offset(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	long off = -1;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	elf_getshdrstrndx(e, &shstrndx);
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(e, shstrndx, sh.sh_name), ".note.gnu.build-id"))
			off = (long)sh.sh_offset;
	elf_end(e);
	close(fd);
	return off;
}

/* A copy of the file with a build-id whose 32-bit field @field is @v. */
static void lie(int field, uint32_t v, char *hex)
{
	char copy[300], cmd[700];
	long off = note_offset(with_id);
	int fd;

	assert_true(off > 0);
	snprintf(copy, sizeof(copy), "%s/lie", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", with_id, copy);
	assert_int_equal(system(cmd), 0);
	fd = open(copy, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &v, 4, off + 4 * field), 4);
	close(fd);
	read_id(copy, hex);
}

static void test_lying_note(void **state)
{
	char hex[BUILDID_HEX_MAX + 1];

	lie(0, 0xfffffff0u, hex);	/* namesz past the section */
	assert_string_equal(hex, "");
	lie(1, 0xfffffff0u, hex);	/* descsz past the section */
	assert_string_equal(hex, "");
	lie(1, 4000, hex);		/* descsz past the section, not wrapping */
	assert_string_equal(hex, "");
	lie(2, 1, hex);			/* not NT_GNU_BUILD_ID */
	assert_string_equal(hex, "");
	lie(1, 8, hex);			/* shorter: its first 8 bytes */
	assert_string_equal(hex, "0011223344556677");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_given_and_none),
		cmocka_unit_test(test_lying_note),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
