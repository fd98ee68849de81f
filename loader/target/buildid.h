/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * buildid.h - the GNU build-id of an ELF file (.note.gnu.build-id), how
 * `events`, `stats` and the heartbeat name one build of TARGET.
 */
#ifndef SDS_BUILDID_H
#define SDS_BUILDID_H

#include <stddef.h>

struct elf_file;

/* Bytes of a build-id shown: sha1's 20 fit; a longer one is cut. */
#define BUILDID_BYTES_MAX	32
#define BUILDID_HEX_MAX		(2 * BUILDID_BYTES_MAX)

/*
 * The build-id of @ef as lowercase hex into @hex (at least
 * BUILDID_HEX_MAX + 1 bytes); "" when the file has none or its note is
 * malformed (the file is hostile: every length is checked).
 */
void buildid__read(struct elf_file *ef, char *hex);

#endif /* SDS_BUILDID_H */
