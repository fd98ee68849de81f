// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * register.c - a guarded process's `register`: find the file it runs
 * libsds's probe sites from and attach the guard probes there
 * (docs/PROTOCOL.md, "Guard session"; docs/TRUST.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "loader.h"
#include "register.h"

/*
 * The file mapped at @addr in process @pid, as a path the loader can open
 * whatever mount namespace the process lives in.
 */
static int mapped_file(pid_t pid, uint64_t addr, char *path, size_t len)
{
	char maps[64], line[4096];
	int ret = -1;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		int n = 0;
		char *file;

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &n) < 2 || !n)
			continue;
		if (addr < lo || addr >= hi)
			continue;
		file = line + n;
		file[strcspn(file, "\n")] = '\0';
		if (file[0] != '/')
			break;
		snprintf(path, len, "/proc/%d/root%s", (int)pid, file);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Find and attach the libsds sites of the file @pid runs them from. */
static int attach_sites(struct loader *l, pid_t pid, uint64_t addr,
			char *err, size_t errlen)
{
	struct sds_sites sites;
	struct elf_file *ef;
	char path[4200];
	int r;

	if (mapped_file(pid, addr, path, sizeof(path))) {
		snprintf(err, errlen, "no file mapped at 0x%" PRIx64 " in pid %d",
			 addr, (int)pid);
		return -1;
	}
	ef = elf_file__open(path, err, errlen);
	if (!ef)
		return -1;
	r = elf_file__sds_sites(ef, &sites);
	elf_file__close(ef);
	if (r != 1) {
		snprintf(err, errlen, "%.300s: no complete set of libsds sites", path);
		return -1;
	}
	if (sites.layout != SDS_FLAGS_LAYOUT) {
		snprintf(err, errlen, "%.300s: libsds layout %u, this loader speaks %u",
			 path, sites.layout, SDS_FLAGS_LAYOUT);
		return -1;
	}
	return probes__attach_guards(&l->probes, path, &sites, err, errlen);
}

int register__attach(struct loader *l, const struct reg_peer *peer,
		     const char *arg, char *err, size_t errlen)
{
	uint64_t addr;

	if (sscanf(arg, "%" SCNx64, &addr) != 1) {
		snprintf(err, errlen, "expected 'register ADDR'");
		return -1;
	}
	if (attach_sites(l, peer->pid, addr, err, errlen))
		return -1;
	return 0;
}

void register__release(struct loader *l, int file)
{
}

char *register__reply(struct loader *l, int slot)
{
	json_t *o;
	char *s;

	/* The fds follow in this order: flags (read-only), cells. */
	o = json_pack("{s:i, s:I, s:I, s:i, s:I, s:I}", "slot", slot,
		      "key", (json_int_t)l->key, "epoch", (json_int_t)l->epoch,
		      "layout", SDS_FLAGS_LAYOUT, "size", (json_int_t)l->flags.size,
		      "cells_size", (json_int_t)l->flags.cells_size);
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}
