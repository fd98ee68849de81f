/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * debuginfo.h - separate debug info: the .symtab of a stripped binary
 * from the debug file a -dbgsym package (or objcopy --only-keep-debug)
 * left, found by build-id or by .gnu_debuglink (debuginfo.c).
 */
#ifndef SDS_DEBUGINFO_H
#define SDS_DEBUGINFO_H

#include <stddef.h>

struct elf_file;

/* Where debug files are looked for; SDS_DEBUG_ROOT overrides it (tests only). */
#define DEBUGINFO_ROOT		"/usr/lib/debug"
#define DEBUGINFO_ROOT_ENV	"SDS_DEBUG_ROOT"

/* The debug root in force: $SDS_DEBUG_ROOT when absolute, else DEBUGINFO_ROOT. */
const char *debuginfo__root(void);

/*
 * When @ef has no .symtab, look for its debug file, in this order (gdb's):
 *   ROOT/.build-id/xx/yyyy.debug            (NT_GNU_BUILD_ID of @ef)
 *   DIR/LINK, DIR/.debug/LINK, ROOT/DIR/LINK (.gnu_debuglink, CRC32 checked)
 * DIR is the directory of @ef's real path.  The first debug file that
 * has a .symtab and the build-id of @ef (and, by debuglink, its CRC)
 * stands in for @ef's .symtab from now on (ef->dbg).  One refused (bad
 * build-id, bad CRC, not ELF, no .symtab, too big, a symlink) is
 * remembered for the messages (ef->dbg_refused).  Never fails: without a
 * debug file the symbols are .dynsym's, as before.
 */
void debuginfo__attach(struct elf_file *ef);

/*
 * One line, where @ef's symbols come from, into @buf:
 *   "PATH's .symtab"
 *   "DEBUG (separate debug info of PATH, by build-id HEX)"
 *   "DEBUG (separate debug info of PATH, by .gnu_debuglink)"
 *   "PATH's .dynsym only (stripped; no debug file under ROOT[; REFUSED])"
 */
void debuginfo__describe(const struct elf_file *ef, char *buf, size_t len);

#endif /* SDS_DEBUGINFO_H */
