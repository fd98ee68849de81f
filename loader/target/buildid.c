// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* buildid.c - the GNU build-id note of an ELF file (see buildid.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "target/buildid.h"
#include "target/elfsym.h"

#define NT_GNU_BUILD_ID_TYPE	3	/* NT_GNU_BUILD_ID */
#define BUILDID_NOTE_MAX	4096	/* bytes of the section read at most */

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));	/* the section need not be aligned in memory */
	return v;
}

void buildid__read(struct elf_file *ef, char *hex)
{
	const unsigned char *d;
	const char *data;
	uint32_t namesz, descsz, type;
	size_t len, off = 0, namepad, i;

	hex[0] = '\0';
	if (elf_file__section_bytes(ef, ".note.gnu.build-id", BUILDID_NOTE_MAX,
				    &data, &len))
		return;
	d = (const unsigned char *)data;
	/* One or more notes: namesz, descsz, type, name (padded to 4), desc. */
	while (len - off >= 12) {
		namesz = rd32(d + off);
		descsz = rd32(d + off + 4);
		type = rd32(d + off + 8);
		off += 12;
		namepad = ((size_t)namesz + 3) & ~(size_t)3;
		if (namesz > len - off || namepad > len - off ||
		    descsz > len - off - namepad)
			return;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    !memcmp(d + off, "GNU", 4)) {
			d += off + namepad;
			if (descsz > BUILDID_BYTES_MAX)
				descsz = BUILDID_BYTES_MAX;
			for (i = 0; i < descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", d[i]);
			return;
		}
		off += namepad + (((size_t)descsz + 3) & ~(size_t)3);
		if (off > len)
			return;
	}
}
