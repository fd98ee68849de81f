// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * hostid.c - the heartbeat's host: the host name and /etc/machine-id.
 *
 * The admin keeps statistics per (app, host).  Host names are not
 * identities: every host whose name is unset is "localhost", and cloned
 * VMs share a name; their periods were merged and counted once (a
 * (host, period) is idempotent).  /etc/machine-id is unique per install.
 * It goes into the name as "NAME_ID": NAME stays readable, the split is
 * at the last underscore (ID has none; NAME may, as Linux allows one
 * though RFC 1123 does not), and the heartbeat's fields do not change, so
 * every admin, old or new, accepts it.
 *
 * The id is not the machine id itself: machine-id(5) asks that it not be
 * sent over the network.  ID is a keyed hash of it (FNV-1a 64 of a fixed
 * prefix and the id, 48 bits shown): stable, unique enough for a fleet
 * (two of 20,000 hosts collide with odds below 1 in a million), and the
 * machine id cannot be read back from it.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "heartbeat/heartbeat.h"
#include "report/hostid.h"

#define MACHINE_ID_LEN	32	/* hex digits of /etc/machine-id */

/* The 32 hex digits of @path, lowercase; false if it holds anything else. */
static bool read_machine_id(const char *path, char id[MACHINE_ID_LEN + 1])
{
	char buf[MACHINE_ID_LEN + 2];
	ssize_t n;
	int fd, i;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < MACHINE_ID_LEN || (n > MACHINE_ID_LEN && buf[MACHINE_ID_LEN] != '\n'))
		return false;
	for (i = 0; i < MACHINE_ID_LEN; i++) {
		if (!isxdigit((unsigned char)buf[i]))
			return false;
		id[i] = (char)tolower((unsigned char)buf[i]);
	}
	id[MACHINE_ID_LEN] = '\0';
	/* All zeros: an image's placeholder, not an identity. */
	return strspn(id, "0") != MACHINE_ID_LEN;
}

void hostid__name(const char *machine_id_path, char *out, char *plain, size_t len)
{
	static const char key[] = "sds-bpf host id v1:";
	char name[SDS_HB_HOST_MAX + 1], id[MACHINE_ID_LEN + 1];
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i, max;

	if (gethostname(name, sizeof(name)) || !heartbeat_host_valid(name))
		snprintf(name, sizeof(name), "localhost");
	snprintf(plain, len, "%s", name);
	if (!read_machine_id(machine_id_path, id)) {
		snprintf(out, len, "%s", name);
		return;
	}
	for (i = 0; i < sizeof(key) - 1; i++)
		h = (h ^ (unsigned char)key[i]) * 0x100000001b3ULL;
	for (i = 0; i < MACHINE_ID_LEN; i++)
		h = (h ^ (unsigned char)id[i]) * 0x100000001b3ULL;
	/* The name is cut so that "_ID" always fits the 253 bytes. */
	max = SDS_HB_HOST_MAX - 1 - HOSTID_DIGITS;
	snprintf(out, len, "%.*s_%012llx", (int)max, name,
		 (unsigned long long)(h >> 16));
}
