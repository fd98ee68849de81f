/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * hostid.h - the name a loader's heartbeats carry: the host name for
 * people, a machine id so that two hosts with one name stay two.
 */
#ifndef SDS_LOADER_HOSTID_H
#define SDS_LOADER_HOSTID_H

#include <stddef.h>

#define HOSTID_DIGITS	12	/* hex digits of the id in the name */

/*
 * Write this host's heartbeat name to @out (@len bytes, at least
 * SDS_HB_HOST_MAX + 1): "NAME_ID", NAME the host name (else "localhost")
 * and ID HOSTID_DIGITS hex digits derived from @machine_id_path's id; just
 * NAME when that file holds no id.  @plain (same size) gets NAME alone:
 * what loaders before the id sent, whose backlog is this host's too.
 */
void hostid__name(const char *machine_id_path, char *out, char *plain, size_t len);

#endif /* SDS_LOADER_HOSTID_H */
