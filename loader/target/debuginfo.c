// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * debuginfo.c - the .symtab of a stripped binary from its separate debug
 * file (debuginfo.h).  Debian's -dbgsym packages install
 * /usr/lib/debug/.build-id/xx/yyyy.debug; `objcopy --only-keep-debug` and
 * `--add-gnu-debuglink` leave a debug file beside the binary.  The debug
 * file has the same section addresses as the binary, so only symbol
 * VALUES are taken from it; every file offset is still computed against
 * the binary's own program headers (elf_file__func_at).
 *
 * The loader runs as root: it opens debug files only under the debug root
 * and, for a debuglink, in the binary's own directory (as gdb does), never
 * through a symlink at the last component, only regular files of bounded
 * size, and refuses one whose build-id is not the binary's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "target/buildid.h"
#include "target/debuginfo.h"
#include "target/elffile.h"
#include "target/elfsym.h"

/* Debug files bigger than this are refused (a large C++ server's is < 2 GiB). */
#define DEBUGINFO_SIZE_MAX	(8ULL << 30)
/* Longest .gnu_debuglink name taken (a file name: NAME_MAX). */
#define DEBUGLINK_NAME_MAX	NAME_MAX
/* Bytes read at once for the CRC32 of a debuglink's file. */
#define DEBUGLINK_CRC_CHUNK	(1 << 20)

const char *debuginfo__root(void)
{
	const char *r = getenv(DEBUGINFO_ROOT_ENV);

	/* Tests only (docs/INSTALL.md): a relative root would follow the cwd. */
	return r && r[0] == '/' ? r : DEBUGINFO_ROOT;
}

/* Remember the first refusal, for the "not found" message. */
static void refuse(struct elf_file *ef, const char *fmt, const char *path,
		   const char *why)
{
	char buf[PATH_MAX + 256];

	if (ef->dbg_refused)
		return;
	snprintf(buf, sizeof(buf), fmt, path, why);
	ef->dbg_refused = strdup(buf);
}

/*
 * Open @path as a debug file of @ef: a regular file (not through a
 * symlink), at most DEBUGINFO_SIZE_MAX bytes, x86-64 ELF, with a .symtab
 * and @ef's build-id @want (when @ef has one).  ENOENT is no refusal: the
 * next place is tried.  The file, or NULL.
 */
static struct elf_file *open_debug(struct elf_file *ef, const char *path,
				   const char *want)
{
	char err[PATH_MAX + 128], got[BUILDID_HEX_MAX + 1], why[256];
	struct elf_file *dbg;
	struct stat st, self;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			refuse(ef, "%s: %s", path,
			       errno == ELOOP ? "a symlink" : strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (unsigned long long)st.st_size > DEBUGINFO_SIZE_MAX) {
		close(fd);
		refuse(ef, "%s: %s", path, "not a regular file of at most 8 GiB");
		return NULL;
	}
	/* A debuglink naming the binary itself (same dir, same name). */
	if (!fstat(ef->fd, &self) && self.st_dev == st.st_dev &&
	    self.st_ino == st.st_ino) {
		close(fd);
		return NULL;
	}
	dbg = elf_file__open_fd(fd, path, err, sizeof(err));
	if (!dbg) {
		refuse(ef, "%s%s", err, "");
		return NULL;
	}
	if (!dbg->has_symtab) {
		refuse(ef, "%s: %s", path, "no .symtab");
		goto bad;
	}
	buildid__read(dbg, got);
	if (*want && strcmp(want, got)) {
		snprintf(why, sizeof(why), "build-id %s, not the binary's %s",
			 *got ? got : "(none)", want);
		refuse(ef, "%s: %s", path, why);
		goto bad;
	}
	return dbg;
bad:
	elf_file__close(dbg);
	return NULL;
}

/* ROOT/.build-id/xx/yyyy.debug for @hex; NULL when there is none. */
static struct elf_file *by_buildid(struct elf_file *ef, const char *hex)
{
	char path[PATH_MAX];

	if (strlen(hex) < 4)
		return NULL;
	if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug",
		     debuginfo__root(), hex, hex + 2) >= (int)sizeof(path))
		return NULL;
	return open_debug(ef, path, hex);
}

/* CRC32 (zlib's, the one .gnu_debuglink uses) of the whole file of @dbg. */
static int file_crc32(struct elf_file *dbg, uint32_t *crc)
{
	unsigned char *buf = malloc(DEBUGLINK_CRC_CHUNK);
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	if (!buf)
		return -1;
	while ((n = pread(dbg->fd, buf, DEBUGLINK_CRC_CHUNK, off)) > 0) {
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	free(buf);
	if (n < 0)
		return -1;
	*crc = (uint32_t)c;
	return 0;
}

/*
 * The .gnu_debuglink of @ef: a file name (no '/', not "." or ".."), NUL,
 * padding to 4, then the CRC32 of the debug file.  0, or -1 when @ef has
 * none or it is malformed.
 */
static int debuglink(struct elf_file *ef, char *name, uint32_t *crc)
{
	const char *d;
	size_t len, n, at;

	if (elf_file__section_bytes(ef, ".gnu_debuglink",
				    DEBUGLINK_NAME_MAX + 8, &d, &len))
		return -1;
	n = strnlen(d, len);
	if (!n || n > DEBUGLINK_NAME_MAX || n == len || memchr(d, '/', n) ||
	    !strcmp(d, ".") || !strcmp(d, ".."))
		return -1;
	at = (n + 1 + 3) & ~(size_t)3;
	if (at + 4 > len)
		return -1;
	memcpy(name, d, n + 1);
	memcpy(crc, d + at, 4);	/* x86-64 only: the file's byte order is ours */
	return 0;
}

/* Accept @dbg (by debuglink) when its CRC32 is @want; else refuse it. */
static struct elf_file *crc_checked(struct elf_file *ef, struct elf_file *dbg,
				    uint32_t want)
{
	char why[64];
	uint32_t got;

	if (!dbg)
		return NULL;
	if (file_crc32(dbg, &got)) {
		refuse(ef, "%s: %s", dbg->path, "cannot read it");
	} else if (got != want) {
		snprintf(why, sizeof(why), "CRC32 %08x, .gnu_debuglink says %08x",
			 got, want);
		refuse(ef, "%s: %s", dbg->path, why);
	} else {
		return dbg;
	}
	elf_file__close(dbg);
	return NULL;
}

/* DIR/LINK, DIR/.debug/LINK, ROOT/DIR/LINK, DIR the binary's real directory. */
static struct elf_file *by_debuglink(struct elf_file *ef, const char *hex)
{
	char name[DEBUGLINK_NAME_MAX + 1], real[PATH_MAX], path[PATH_MAX];
	static const char *const fmts[] = { "%s%s/%s", "%s%s/.debug/%s", "%s%s/%s" };
	struct elf_file *dbg = NULL;
	uint32_t crc;
	char *slash;
	int i;

	if (debuglink(ef, name, &crc) || !realpath(ef->path, real))
		return NULL;
	slash = strrchr(real, '/');
	if (!slash)
		return NULL;
	*slash = '\0';		/* "" for a file in / */
	for (i = 0; i < 3 && !dbg; i++) {
		if (snprintf(path, sizeof(path), fmts[i], i == 2 ? debuginfo__root() : "",
			     real, name) >= (int)sizeof(path))
			continue;
		dbg = crc_checked(ef, open_debug(ef, path, hex), crc);
	}
	return dbg;
}

void debuginfo__attach(struct elf_file *ef)
{
	char hex[BUILDID_HEX_MAX + 1];

	if (ef->has_symtab)
		return;
	buildid__read(ef, hex);
	ef->dbg = *hex ? by_buildid(ef, hex) : NULL;
	ef->dbg_how = DEBUGINFO_BY_BUILDID;
	if (!ef->dbg) {
		ef->dbg = by_debuglink(ef, hex);
		ef->dbg_how = DEBUGINFO_BY_DEBUGLINK;
	}
	if (!ef->dbg) {
		ef->dbg_how = DEBUGINFO_BY_NONE;
		return;
	}
	/* Found: what refused another place no longer matters. */
	free(ef->dbg_refused);
	ef->dbg_refused = NULL;
	ef->has_symtab = true;
}

void debuginfo__describe(const struct elf_file *ef, char *buf, size_t len)
{
	char hex[BUILDID_HEX_MAX + 1];

	if (ef->dbg && ef->dbg_how == DEBUGINFO_BY_BUILDID) {
		buildid__read((struct elf_file *)ef, hex);
		snprintf(buf, len, "%s (separate debug info of %s, by build-id %s)",
			 ef->dbg->path, ef->path, hex);
	} else if (ef->dbg) {
		snprintf(buf, len, "%s (separate debug info of %s, by .gnu_debuglink)",
			 ef->dbg->path, ef->path);
	} else if (ef->has_symtab) {
		snprintf(buf, len, "%s's .symtab", ef->path);
	} else {
		snprintf(buf, len, "%s's .dynsym only (stripped; no debug file under %s%s%s)",
			 ef->path, debuginfo__root(),
			 ef->dbg_refused ? "; refused " : "",
			 ef->dbg_refused ? ef->dbg_refused : "");
	}
}
