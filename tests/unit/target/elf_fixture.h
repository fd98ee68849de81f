/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * elf_fixture.h - the shared object a unit of tests/unit/target builds
 * from its own assembly and opens (test_entry.c, test_exits.c,
 * test_nothrow.c): written into a fresh temporary folder, built with gcc,
 * opened with elf_file__open(), and removed with its folder at the end.
 * Included once, after target/elfsym.h.
 */
#ifndef ELF_FIXTURE_H
#define ELF_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

/*
 * Make @dir (a mkdtemp() template, changed in place), write @asm_src into
 * @dir/f.S, build it into @dir/f.so (its path into @so, @so_len bytes)
 * with gcc -shared -nostdlib and @ldflags ("" for none), and open it into
 * *@ef: 0, or -1.
 */
static int elf_fixture__build(char *dir, const char *asm_src,
			      const char *ldflags, char *so, size_t so_len,
			      struct elf_file **ef)
{
	char cmd[256];
	char err[256];
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/f.S", dir);
	f = fopen(cmd, "w");
	if (!f || fputs(asm_src, f) < 0 || fclose(f))
		return -1;
	snprintf(so, so_len, "%s/f.so", dir);
	snprintf(cmd, sizeof(cmd), "gcc -shared -nostdlib %s -o %s %s/f.S",
		 ldflags, so, dir);
	if (system(cmd))
		return -1;
	*ef = elf_file__open(so, err, sizeof(err));
	return *ef ? 0 : -1;
}

/* Close @ef and remove @dir with all it holds: system()'s status. */
static int elf_fixture__remove(const char *dir, struct elf_file *ef)
{
	char cmd[128];

	elf_file__close(ef);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

#endif
