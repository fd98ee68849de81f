// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* preempt.c - the preemption model of the running kernel (preempt.h). */
#include <stdio.h>
#include <string.h>
#include "preempt.h"

bool preempt_kernel_preemptible(void)
{
	char buf[4096], *p;
	FILE *f;
	size_t n;

	f = fopen("/sys/kernel/debug/sched/preempt", "re");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		p = strchr(buf, '(');
		if (p)
			return strncmp(p, "(none)", 6) && strncmp(p, "(voluntary)", 11);
	}
	f = fopen("/proc/cmdline", "re");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		p = strstr(buf, "preempt=");
		if (p)
			return strncmp(p + 8, "none", 4) && strncmp(p + 8, "voluntary", 9);
	}
	f = popen("zcat /proc/config.gz 2>/dev/null", "re");
	if (f) {
		bool none = false, full = false;

		while (fgets(buf, sizeof(buf), f)) {
			if (!strcmp(buf, "CONFIG_PREEMPT_NONE=y\n") ||
			    !strcmp(buf, "CONFIG_PREEMPT_VOLUNTARY=y\n"))
				none = true;
			if (!strcmp(buf, "CONFIG_PREEMPT=y\n") ||
			    !strcmp(buf, "CONFIG_PREEMPT_RT=y\n") ||
			    !strcmp(buf, "CONFIG_PREEMPT_LAZY=y\n"))
				full = true;
		}
		pclose(f);
		if (none || full)
			return !none || full;
	}
	return true;
}
