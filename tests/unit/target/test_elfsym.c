// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/target/elfsym.c against ELF files built here with gcc:
 * a PIE, a non-PIE, a shared library, stripped copies, and things that
 * are not x86-64 executables at all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/elfsym.h"

static char dir[] = "/tmp/sds-elfsym-XXXXXX";

/* Known bytes, so the test can say what code[] must hold. */
static const char asm_src[] =
	"\t.text\n"
	"\t.globl sds_nop5_fn\n"
	"\t.type sds_nop5_fn, @function\n"
	"sds_nop5_fn:\n"
	"\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"\tret\n"
	"\t.size sds_nop5_fn, .-sds_nop5_fn\n"
	/* No .size: st_size 0, so 16 bytes are read. */
	"\t.globl sds_nosize_fn\n"
	"\t.type sds_nosize_fn, @function\n"
	"sds_nosize_fn:\n"
	"\t.byte 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3\n"
	"\t.byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n"
	"\t.byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n"
	/* A global twin of a static function in the C file. */
	"\t.globl sds_dup\n"
	"\t.type sds_dup, @function\n"
	"sds_dup:\n"
	"\t.byte 0x55, 0x5d, 0xc3\n"
	"\t.size sds_dup, .-sds_dup\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

static const char c_src[] =
	"#include <unistd.h>\n"
	"int sds_test_var = 5;\n"
	"__attribute__((noinline, used)) int sds_test_add(int a, int b)\n"
	"{ return a + b + sds_test_var; }\n"
	"static __attribute__((noinline, used)) int sds_local(int x)\n"
	"{ return x * 7 + sds_test_var; }\n"
	"static __attribute__((noinline, used)) int sds_dup(int x)\n"
	"{ return x * 3; }\n"
	"static int impl(void) { return 42; }\n"
	"static int (*resolve(void))(void) { return impl; }\n"
	"int sds_ifunc(void) __attribute__((ifunc(\"resolve\")));\n"
	"int main(void) { return sds_test_add(getpid() > 0, -1) - 5 + sds_local(0) - 5; }\n";

/* Functions by C++ and Rust names (the bytes tell them apart). */
#define NAMES_FN(sym, b0)						\
	"\t.globl " sym "\n\t.type " sym ", @function\n" sym ":\n"	\
	"\t.byte " #b0 ", 0xc3\n\t.size " sym ", .-" sym "\n"
static const char names_src[] =
	"\t.text\n"
	NAMES_FN("_ZN4shop4Cart3addEi", 0x50)
	NAMES_FN("_ZN4shop4Cart3addEl", 0x51)
	NAMES_FN("_ZN4main7handler17h817acd4767b9a97bE", 0x52)
	NAMES_FN("_RNvCs1234_5other6worker", 0x53)
	NAMES_FN("foo", 0x54)
	NAMES_FN("_Z3fooi", 0x55)
	/* Two names of one constructor (C1, C2): one function. */
	NAMES_FN("_ZN4shop4CartC2Ev", 0x56)
	"\t.globl _ZN4shop4CartC1Ev\n\t.set _ZN4shop4CartC1Ev, _ZN4shop4CartC2Ev\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

/*
 * Two clones of shop::charge(int, long) without a symbol of their own
 * (in the file out of name order), and an overload with one.
 */
static const char clones_src[] =
	"\t.text\n"
	NAMES_FN("_ZN4shopL6chargeEil.constprop.1", 0x61)
	NAMES_FN("_ZN4shopL6chargeEil.constprop.0", 0x60)
	NAMES_FN("_ZN4shop6chargeEd", 0x62)
	"\t.section .note.GNU-stack,\"\",@progbits\n";

/*
 * A C function and gcc's clones of it: its .part.0 piece, a .cold piece
 * and an alias (never sites of their own), a name that only begins like
 * it; a static one left only as two clones; one with nine.
 */
#define CMANY(i) NAMES_FN("cmany.part." #i, 0x80)
static const char cclones_src[] =
	"\t.text\n"
	NAMES_FN("cwork.part.0", 0x71)
	NAMES_FN("cwork", 0x70)
	NAMES_FN("cwork.cold", 0x72)
	"\t.globl cwork.localalias\n\t.set cwork.localalias, cwork\n"
	NAMES_FN("cwork_other", 0x73)
	NAMES_FN("cprice.isra.0", 0x74)
	NAMES_FN("cprice.constprop.0", 0x75)
	CMANY(0) CMANY(1) CMANY(2) CMANY(3) CMANY(4) CMANY(5) CMANY(6)
	CMANY(7) CMANY(8)
	"\t.section .note.GNU-stack,\"\",@progbits\n";

static const char lib_src[] =
	"int sds_lib_fn(int x) { return x * 2 + 1; }\n";

static char path_buf[8][256];

/* @name inside the temporary directory (a few slots, reused round-robin). */
static const char *in_dir(const char *name)
{
	static int next;
	char *p = path_buf[next++ % 8];

	snprintf(p, sizeof(path_buf[0]), "%s/%s", dir, name);
	return p;
}

static int write_file(const char *name, const char *text)
{
	FILE *f = fopen(in_dir(name), "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int setup(void **state)
{
	/* The stripped files' messages name the default debug root. */
	unsetenv("SDS_DEBUG_ROOT");
	if (!mkdtemp(dir))
		return -1;
	if (write_file("t.c", c_src) || write_file("f.S", asm_src) ||
	    write_file("lib.c", lib_src) || write_file("names.S", names_src) ||
	    write_file("clones.S", clones_src) ||
	    write_file("cclones.S", cclones_src) ||
	    write_file("text.txt", "just some text, not an ELF file\n") ||
	    write_file("empty", ""))
		return -1;
	/* Sanitizer flags of this test must not leak into the fixtures. */
	if (run("cd %s && gcc -O1 -fPIE -pie -o pie t.c f.S && "
		"gcc -O1 -fno-pie -no-pie -o nopie t.c f.S && "
		"gcc -O1 -fPIC -shared -o libt.so lib.c f.S && "
		"gcc -shared -o libnames.so names.S && "
		"gcc -shared -o libclones.so clones.S && "
		"gcc -shared -o libcclones.so cclones.S && "
		"cp libnames.so libnames.stripped.so && strip libnames.stripped.so && "
		"gcc -O1 -c -o t.o t.c && "
		"cp pie pie.stripped && strip pie.stripped && "
		"cp libt.so libt.stripped.so && strip libt.stripped.so && "
		"cp pie pie.i386 && "
		/* e_machine (offset 18, little-endian) = EM_386 */
		"printf '\\003\\000' | dd of=pie.i386 bs=1 seek=18 conv=notrunc "
		"status=none", dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	return run("rm -rf %s", dir);
}

/*
 * st_value of @sym as nm prints it with a type letter in @types, so the
 * test does not trust libelf alone.
 */
static uint64_t nm_value(const char *path, const char *sym, int dynamic,
			 const char *types)
{
	char cmd[512], line[512], name[256], type;
	unsigned long long v;
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s %s", dynamic ? "-D" : "", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %c %255s", &v, &type, name) == 3 &&
		    !strcmp(name, sym) && strchr(types, type))
			found = v;
	}
	pclose(p);
	assert_true(found != 0);
	return found;
}

/* The bytes at @off in the file, read without libelf. */
static void file_bytes(const char *path, uint64_t off, unsigned char *buf,
		       size_t len)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static struct elf_file *open_ok(const char *path)
{
	char err[512] = "";
	struct elf_file *ef = elf_file__open(path, err, sizeof(err));

	if (!ef)
		fail_msg("%s", err);
	return ef;
}

static void find_ok(struct elf_file *ef, const char *sym, struct elf_func *f)
{
	char err[512] = "";

	if (elf_file__find_func(ef, sym, f, err, sizeof(err)))
		fail_msg("%s", err);
}

/* What every found function must satisfy, whatever the file. */
static void check_func(const char *path, const struct elf_func *f)
{
	unsigned char buf[sizeof(f->code)];
	size_t i;

	assert_true(f->code_len > 0 && f->code_len <= sizeof(f->code));
	file_bytes(path, f->offset, buf, f->code_len);
	assert_memory_equal(f->code, buf, f->code_len);
	for (i = f->code_len; i < sizeof(f->code); i++)
		assert_int_equal(f->code[i], 0);
}

static const unsigned char nop5_code[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3 };
static const unsigned char nosize_code[16] = {
	0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3,
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
};
static const unsigned char dup_code[] = { 0x55, 0x5d, 0xc3 };

static void test_nopie(void **state)
{
	const char *path = in_dir("nopie");
	struct elf_file *ef = open_ok(path);
	struct elf_func f;

	assert_false(elf_file__is_dyn(ef));

	find_ok(ef, "sds_nop5_fn", &f);
	assert_int_equal(f.vaddr, nm_value(path, "sds_nop5_fn", 0, "T"));
	/* ld puts the first page of a non-PIE at 0x400000, file offset 0. */
	assert_int_equal(f.offset, f.vaddr - 0x400000);
	assert_int_equal(f.size, sizeof(nop5_code));
	assert_int_equal(f.code_len, sizeof(nop5_code));
	assert_memory_equal(f.code, nop5_code, sizeof(nop5_code));
	check_func(path, &f);

	find_ok(ef, "sds_test_add", &f);
	assert_int_equal(f.vaddr, nm_value(path, "sds_test_add", 0, "T"));
	assert_int_equal(f.offset, f.vaddr - 0x400000);
	assert_true(f.size > 0);
	assert_int_equal(f.code_len, f.size < sizeof(f.code) ? f.size : sizeof(f.code));
	check_func(path, &f);

	find_ok(ef, "sds_nosize_fn", &f);
	assert_int_equal(f.size, 0);
	/* No size: as much as the buffer holds; the first 16 bytes are its own. */
	assert_int_equal(f.code_len, sizeof(f.code));
	assert_memory_equal(f.code, nosize_code, 16);
	check_func(path, &f);

	elf_file__close(ef);
}

static void test_pie(void **state)
{
	const char *path = in_dir("pie");
	struct elf_file *ef = open_ok(path);
	struct elf_func f;

	assert_true(elf_file__is_dyn(ef));

	find_ok(ef, "sds_nop5_fn", &f);
	assert_int_equal(f.vaddr, nm_value(path, "sds_nop5_fn", 0, "T"));
	/* ld lays a PIE out with p_vaddr == p_offset in every segment. */
	assert_int_equal(f.offset, f.vaddr);
	assert_int_equal(f.code_len, sizeof(nop5_code));
	assert_memory_equal(f.code, nop5_code, sizeof(nop5_code));
	check_func(path, &f);

	find_ok(ef, "sds_test_add", &f);
	assert_int_equal(f.vaddr, nm_value(path, "sds_test_add", 0, "T"));
	assert_int_equal(f.offset, f.vaddr);
	check_func(path, &f);

	/* A static (local) function is found too. */
	find_ok(ef, "sds_local", &f);
	assert_int_equal(f.vaddr, nm_value(path, "sds_local", 0, "t"));
	check_func(path, &f);

	/* IFUNC: the symbol (its resolver) is found. */
	find_ok(ef, "sds_ifunc", &f);
	assert_int_equal(f.vaddr, nm_value(path, "sds_ifunc", 0, "i"));
	check_func(path, &f);

	elf_file__close(ef);
}

static void test_global_beats_local(void **state)
{
	const char *path = in_dir("pie");
	struct elf_file *ef = open_ok(path);
	struct elf_func f;

	/* The static sds_dup comes first in .symtab; the global one wins. */
	find_ok(ef, "sds_dup", &f);
	assert_int_equal(f.vaddr, nm_value(path, "sds_dup", 0, "T"));
	assert_int_equal(f.code_len, sizeof(dup_code));
	assert_memory_equal(f.code, dup_code, sizeof(dup_code));
	elf_file__close(ef);
}

static void test_shared_library(void **state)
{
	const char *path = in_dir("libt.so");
	const char *spath = in_dir("libt.stripped.so");
	struct elf_file *ef = open_ok(path), *sef;
	struct elf_func f, sf;

	assert_true(elf_file__is_dyn(ef));
	find_ok(ef, "sds_nop5_fn", &f);
	assert_int_equal(f.vaddr, nm_value(path, "sds_nop5_fn", 0, "T"));
	assert_int_equal(f.offset, f.vaddr);
	assert_memory_equal(f.code, nop5_code, sizeof(nop5_code));
	check_func(path, &f);

	find_ok(ef, "sds_lib_fn", &f);
	assert_int_equal(f.vaddr, nm_value(path, "sds_lib_fn", 0, "T"));
	check_func(path, &f);

	/* Stripped: .dynsym still has the exported functions, same place. */
	sef = open_ok(spath);
	find_ok(sef, "sds_lib_fn", &sf);
	assert_int_equal(sf.vaddr, nm_value(spath, "sds_lib_fn", 1, "T"));
	assert_int_equal(sf.vaddr, f.vaddr);
	assert_int_equal(sf.offset, f.offset);
	assert_int_equal(sf.size, f.size);
	assert_int_equal(sf.code_len, f.code_len);
	assert_memory_equal(sf.code, f.code, sizeof(f.code));
	check_func(spath, &sf);
	find_ok(sef, "sds_nop5_fn", &sf);
	assert_memory_equal(sf.code, nop5_code, sizeof(nop5_code));
	elf_file__close(sef);
	elf_file__close(ef);
}

static void find_bad(const char *path, const char *sym, const char *why)
{
	struct elf_file *ef = open_ok(path);
	struct elf_func f;
	char err[1024] = "", want[1024];

	assert_int_equal(elf_file__find_func(ef, sym, &f, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), why, sym, path);
	assert_string_equal(err, want);
	elf_file__close(ef);
}

/* Not found, and the message goes on with the nearest names. */
static void find_near(const char *path, const char *sym)
{
	struct elf_file *ef = open_ok(path);
	struct elf_func f;
	char err[1024] = "", want[512];

	assert_int_equal(elf_file__find_func(ef, sym, &f, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "symbol '%s' not found in %s; nearest: ",
		 sym, path);
	if (strncmp(err, want, strlen(want)))
		fail_msg("'%s' does not start with '%s'", err, want);
	elf_file__close(ef);
}

static void test_not_found(void **state)
{
	find_near(in_dir("pie"), "no_such_fn");
	/* Undefined here (imported from libc): not a definition. */
	find_near(in_dir("pie"), "getpid");
	/* An object, not a function. */
	find_near(in_dir("pie"), "sds_test_var");
	find_near(in_dir("nopie"), "no_such_fn");
	find_near(in_dir("libt.so"), "main");
	/* Stripped, and .dynsym has a few things but not this one. */
	find_bad(in_dir("libt.stripped.so"), "no_such_fn",
		 "symbol '%s' not found in %s: the file is stripped (no .symtab) and has no debug file under /usr/lib/debug; rebuild without -s, install its debug symbols (-dbgsym) or use a binary with symbols");
}

/* The byte libnames.so's function @sym (any name of it) starts with. */
static int names_byte(const char *path, const char *sym)
{
	struct elf_file *ef = open_ok(path);
	struct elf_func f;

	find_ok(ef, sym, &f);
	assert_int_equal(f.code_len, 2);
	elf_file__close(ef);
	return f.code[0];
}

static void test_demangled(void **state)
{
	const char *lib = in_dir("libnames.so");
	const char *slib = in_dir("libnames.stripped.so");
	const char *p;
	struct elf_func f;
	struct elf_file *ef;
	int i;

	for (i = 0; i < 2; i++) {
		p = i ? slib : lib;	/* stripped: .dynsym has them all */
		assert_int_equal(names_byte(p, "shop::Cart::add(int)"), 0x50);
		assert_int_equal(names_byte(p, "shop::Cart::add(long)"), 0x51);
		assert_int_equal(names_byte(p, "_ZN4shop4Cart3addEl"), 0x51);
		assert_int_equal(names_byte(p, "main::handler"), 0x52);
		assert_int_equal(names_byte(p, "main::handler::h817acd4767b9a97b"), 0x52);
		assert_int_equal(names_byte(p, "other::worker"), 0x53);
		/* The symbol as written wins over a demangled name. */
		assert_int_equal(names_byte(p, "foo"), 0x54);
		assert_int_equal(names_byte(p, "foo(int)"), 0x55);
		assert_int_equal(names_byte(p, "shop::Cart::Cart()"), 0x56);
		assert_int_equal(names_byte(p, "shop::Cart::Cart"), 0x56);
	}
	/* The found symbol is kept for messages. */
	ef = open_ok(lib);
	find_ok(ef, "main::handler", &f);
	assert_string_equal(f.name, "_ZN4main7handler17h817acd4767b9a97bE");
	elf_file__close(ef);

	find_bad(lib, "shop::Cart::add",
		 "symbol '%s' in %s matches 2 functions: shop::Cart::add(int) [_ZN4shop4Cart3addEi]; shop::Cart::add(long) [_ZN4shop4Cart3addEl]; name one by its full signature or its mangled name");
	find_bad(lib, "main::handler::h0000000000000000",
		 "symbol '%s' not found in %s; nearest: main::handler [_ZN4main7handler17h817acd4767b9a97bE], other::worker [_RNvCs1234_5other6worker], shop::Cart::Cart() [_ZN4shop4CartC2Ev], shop::Cart::add(int) [_ZN4shop4Cart3addEi], shop::Cart::add(long) [_ZN4shop4Cart3addEl]");
	find_bad(slib, "shop::Cart::sub",
		 "symbol '%s' not found in %s: the file is stripped (no .symtab) and has no debug file under /usr/lib/debug; rebuild without -s, install its debug symbols (-dbgsym) or use a binary with symbols");
}

/*
 * A name that finds only clones of one function: all of them, sorted by
 * symbol, each with its suffix, where the caller takes several; one
 * message where it takes one; the overload's own symbol makes the bare
 * name ambiguous.
 */
static void test_clones(void **state)
{
	const char *lib = in_dir("libclones.so");
	struct elf_func f[8];
	struct elf_file *ef = open_ok(lib);
	char err[1024] = "";

	assert_int_equal(elf_file__find_funcs(ef, "shop::charge(int, long)", f,
					      8, err, sizeof(err)), 2);
	assert_string_equal(f[0].name, "_ZN4shopL6chargeEil.constprop.0");
	assert_string_equal(f[0].clone, ".constprop.0");
	assert_int_equal(f[0].code[0], 0x60);
	assert_string_equal(f[1].name, "_ZN4shopL6chargeEil.constprop.1");
	assert_string_equal(f[1].clone, ".constprop.1");
	assert_int_equal(f[1].code[0], 0x61);
	check_func(lib, &f[0]);
	check_func(lib, &f[1]);
	/* One function found is one, whatever the room. */
	assert_int_equal(elf_file__find_funcs(ef, "shop::charge(double)", f, 8,
					      err, sizeof(err)), 1);
	assert_int_equal(f[0].code[0], 0x62);
	assert_string_equal(f[0].clone, "");
	/* Fewer places than clones: refused, listing them. */
	assert_int_equal(elf_file__find_funcs(ef, "shop::charge(int, long)", f,
					      1, err, sizeof(err)), -1);
	elf_file__close(ef);
	find_bad(lib, "shop::charge(int, long)",
		 "symbol '%s' in %s has no symbol of its own, only 2 clones the compiler made: shop::charge(int, long) [clone .constprop.0] [_ZN4shopL6chargeEil.constprop.0]; shop::charge(int, long) [clone .constprop.1] [_ZN4shopL6chargeEil.constprop.1]; name one by its full signature or its mangled name");
	find_bad(lib, "shop::charge",
		 "symbol '%s' in %s matches 3 functions: shop::charge(double) [_ZN4shop6chargeEd]; shop::charge(int, long) [clone .constprop.0] [_ZN4shopL6chargeEil.constprop.0]; shop::charge(int, long) [clone .constprop.1] [_ZN4shopL6chargeEil.constprop.1]; name one by its full signature or its mangled name");
}

/*
 * A C name finds its own symbol first, then gcc's clones of it (not
 * .cold, not an alias, not another name it begins), or the clones alone;
 * more than the room is refused, listing them; a clone named as written
 * is known for one.
 */
static void test_c_clones(void **state)
{
	const char *lib = in_dir("libcclones.so");
	struct elf_func f[8];
	struct elf_file *ef = open_ok(lib);
	char err[1024] = "", want[1024];

	assert_int_equal(elf_file__find_funcs(ef, "cwork", f, 8, err,
					      sizeof(err)), 2);
	assert_string_equal(f[0].name, "cwork");
	assert_string_equal(f[0].clone, "");
	assert_int_equal(f[0].code[0], 0x70);
	assert_string_equal(f[1].name, "cwork.part.0");
	assert_string_equal(f[1].clone, ".part.0");
	assert_int_equal(f[1].code[0], 0x71);
	check_func(lib, &f[1]);
	/* Room for one: the function's own symbol. */
	assert_int_equal(elf_file__find_funcs(ef, "cwork", f, 1, err,
					      sizeof(err)), 1);
	assert_string_equal(f[0].name, "cwork");
	assert_int_equal(elf_file__find_funcs(ef, "cprice", f, 8, err,
					      sizeof(err)), 2);
	assert_string_equal(f[0].name, "cprice.constprop.0");
	assert_string_equal(f[0].clone, ".constprop.0");
	assert_int_equal(f[0].code[0], 0x75);
	assert_string_equal(f[1].name, "cprice.isra.0");
	assert_string_equal(f[1].clone, ".isra.0");
	assert_int_equal(f[1].code[0], 0x74);
	/* Named as written: one, a clone. */
	assert_int_equal(elf_file__find_funcs(ef, "cprice.isra.0", f, 8, err,
					      sizeof(err)), 1);
	assert_string_equal(f[0].clone, ".isra.0");
	assert_int_equal(elf_file__find_funcs(ef, "cwork_other", f, 8, err,
					      sizeof(err)), 1);
	assert_string_equal(f[0].clone, "");
	assert_int_equal(elf_file__find_funcs(ef, "cmany", f, 8, err,
					      sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "symbol 'cmany' in %s has no symbol of its own, only 9 clones the compiler made (one point probes at most 8): cmany.part.0, cmany.part.1, cmany.part.2, cmany.part.3, cmany.part.4, cmany.part.5, cmany.part.6, cmany.part.7, cmany.part.8",
		 lib);
	assert_string_equal(err, want);
	elf_file__close(ef);
	find_bad(lib, "cprice",
		 "symbol '%s' in %s has no symbol of its own, only 2 clones the compiler made: cprice.constprop.0, cprice.isra.0");
}

static void test_stripped(void **state)
{
	find_bad(in_dir("pie.stripped"), "sds_test_add",
		 "symbol '%s' not found in %s: the file is stripped (no .symtab) and has no debug file under /usr/lib/debug; rebuild without -s, install its debug symbols (-dbgsym) or use a binary with symbols");
	find_bad(in_dir("pie.stripped"), "sds_nop5_fn",
		 "symbol '%s' not found in %s: the file is stripped (no .symtab) and has no debug file under /usr/lib/debug; rebuild without -s, install its debug symbols (-dbgsym) or use a binary with symbols");
}

static void open_bad(const char *path, const char *why)
{
	char err[512] = "", want[512];

	assert_null(elf_file__open(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: %s", path, why);
	assert_string_equal(err, want);
}

static void test_open_errors(void **state)
{
	char rel[300];

	open_bad(in_dir("missing"), "No such file or directory");
	open_bad(in_dir("text.txt"), "not an ELF file");
	open_bad(in_dir("empty"), "not an ELF file");
	open_bad(dir, "Is a directory");
	open_bad(in_dir("t.o"), "not an x86-64 ELF executable or shared library");
	open_bad(in_dir("pie.i386"), "not an x86-64 ELF executable or shared library");

	/* The path is named as given, relative or not. */
	assert_int_equal(chdir(dir), 0);
	open_bad("text.txt", "not an ELF file");
	open_bad("./nope", "No such file or directory");
	snprintf(rel, sizeof(rel), "%s", "pie.stripped");
	find_bad(rel, "sds_test_add",
		 "symbol '%s' not found in %s: the file is stripped (no .symtab) and has no debug file under /usr/lib/debug; rebuild without -s, install its debug symbols (-dbgsym) or use a binary with symbols");
	assert_int_equal(chdir("/"), 0);
}

/*
 * elf_file__open_fd parses the file open on the fd, whatever its name
 * says now (the loader names it "/proc/self/fd/N"), owns the fd even on
 * failure, and names the file in messages as told.
 */
static void test_open_fd(void **state)
{
	struct elf_func f1, f2;
	struct elf_file *ef;
	char err[512] = "";
	int fd;

	fd = open(in_dir("pie"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ef = elf_file__open_fd(fd, "client's file", err, sizeof(err));
	if (!ef)
		fail_msg("%s", err);
	find_ok(ef, "sds_test_add", &f1);
	elf_file__close(ef);
	ef = open_ok(in_dir("pie"));
	find_ok(ef, "sds_test_add", &f2);
	elf_file__close(ef);
	assert_int_equal(f1.offset, f2.offset);

	fd = open(in_dir("text.txt"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_null(elf_file__open_fd(fd, "NAME", err, sizeof(err)));
	assert_string_equal(err, "NAME: not an ELF file");
	/* The fd was closed: a new open gets the same number back. */
	assert_int_equal(open(in_dir("text.txt"), O_RDONLY | O_CLOEXEC), fd);
	close(fd);
}

static void test_close_null(void **state)
{
	elf_file__close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_global_beats_local),
		cmocka_unit_test(test_shared_library),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_demangled),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_clones),
		cmocka_unit_test(test_c_clones),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_open_fd),
		cmocka_unit_test(test_close_null),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
