// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * floor.c - bench-split-floor OBJECT: load and attach the empty
 * tracepoint programs of floor.bpf.c, print "ready", and keep them
 * attached until stdin closes (split_bench.py's floor rounds).
 */
#include <stdio.h>
#include <bpf/libbpf.h>

int main(int argc, char **argv)
{
	struct bpf_program *p;
	struct bpf_object *o;
	char buf[64];

	if (argc != 2) {
		fprintf(stderr, "usage: bench-split-floor OBJECT\n");
		return 2;
	}
	o = bpf_object__open(argv[1]);
	if (!o || bpf_object__load(o)) {
		fprintf(stderr, "bench-split-floor: loading %s failed\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(p, o)
		if (!bpf_program__attach(p)) {
			fprintf(stderr, "bench-split-floor: attaching %s failed\n",
				bpf_program__name(p));
			return 1;
		}
	printf("ready\n");
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	bpf_object__close(o);
	return 0;
}
