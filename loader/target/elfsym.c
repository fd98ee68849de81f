// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Finding a function in an ELF file by symbol: file offset and first bytes. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/debuginfo.h"
#include "target/demangle.h"
#include "target/elfsym.h"
#include "target/elffile.h"

/* Note sections larger than this are skipped looking for libsds's sites. */
#define SDS_NOTE_SECTION_MAX	(1 << 20)


/* Check and index the ELF file on @ef->fd; 0, or -1 with a message. */
static int elf_file__begin(struct elf_file *ef, char *err, size_t errlen)
{
	const char *path = ef->path;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	struct stat st;

	/* A directory opens fine and then reads as EISDIR: say that. */
	if (fstat(ef->fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", path, strerror(EISDIR));
		return -1;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "%s: libelf: %s", path, elf_errmsg(-1));
		return -1;
	}
	/* ELF_C_READ reads with pread: a file truncated under us is no SIGBUS. */
	ef->elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	/* elf_kind() also turns away ar archives and empty files. */
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		return -1;
	}
	if (gelf_getclass(ef->elf) != ELFCLASS64 ||
	    !gelf_getehdr(ef->elf, &ef->ehdr) ||
	    ef->ehdr.e_machine != EM_X86_64 ||
	    (ef->ehdr.e_type != ET_EXEC && ef->ehdr.e_type != ET_DYN)) {
		snprintf(err, errlen,
			 "%s: not an x86-64 ELF executable or shared library",
			 path);
		return -1;
	}
	while ((scn = elf_nextscn(ef->elf, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB) {
			ef->has_symtab = true;
			break;
		}
	}
	return 0;
}

struct elf_file *elf_file__open_fd(int fd, const char *name, char *err,
				   size_t errlen)
{
	struct elf_file *ef;

	ef = calloc(1, sizeof(*ef));
	if (!ef) {
		snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
		close(fd);
		return NULL;
	}
	ef->fd = fd;
	ef->path = strdup(name);
	if (!ef->path) {
		snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
		goto err_free;
	}
	if (elf_file__begin(ef, err, errlen))
		goto err_free;
	return ef;

err_free:
	elf_file__close(ef);
	return NULL;
}

struct elf_file *elf_file__open(const char *path, char *err, size_t errlen)
{
	struct elf_file *ef;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	ef = elf_file__open_fd(fd, path, err, errlen);
	/* By path only: a client's file opened by inode needs no symbols. */
	if (ef)
		debuginfo__attach(ef);
	return ef;
}

/*
 * Look for a defined function @sym in the first section of type @type.
 * A global (or weak) definition wins over a local one: several
 * translation units may each have a static function of the same name,
 * but only one global.  Returns 0 and fills @out->vaddr and size, or -1.
 */
static int elf_file__lookup(struct elf_file *ef, Elf64_Word type,
			    const char *sym, struct elf_func *out)
{
	Elf *e = elf_file__table_elf(ef, type);
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	GElf_Sym s, best;
	bool found = false;
	size_t i, n;

	memset(&best, 0, sizeof(best));
	while ((scn = elf_nextscn(e, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			break;
	}
	if (!scn || !shdr.sh_entsize)
		return -1;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -1;

	n = shdr.sh_size / shdr.sh_entsize;
	for (i = 0; i < n; i++) {
		const char *name;
		int t;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		t = GELF_ST_TYPE(s.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
		    s.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(e, shdr.sh_link, s.st_name);
		if (!name || strcmp(name, sym))
			continue;
		if (!found || GELF_ST_BIND(best.st_info) == STB_LOCAL)
			best = s;
		found = true;
		if (GELF_ST_BIND(s.st_info) != STB_LOCAL)
			break;
	}
	if (!found)
		return -1;
	out->vaddr = best.st_value;
	out->size = best.st_size;
	return 0;
}

int elf_file__segment(struct elf_file *ef, uint64_t vaddr, GElf_Phdr *ph)
{
	size_t i, nph;

	if (elf_getphdrnum(ef->elf, &nph))
		return -1;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(ef->elf, (int)i, ph) || ph->p_type != PT_LOAD)
			continue;
		if (vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_filesz)
			return 0;
	}
	return -1;
}

int elf_file__func_at(struct elf_file *ef, const char *name, uint64_t vaddr,
		      uint64_t size, struct elf_func *out, char *err,
		      size_t errlen)
{
	GElf_Phdr ph;
	size_t want;
	ssize_t got;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->vaddr = vaddr;
	out->size = size;
	/* Uprobes take a file offset: find the segment that maps the address. */
	if (elf_file__segment(ef, out->vaddr, &ph)) {
		snprintf(err, errlen,
			 "symbol '%s' in %s: address 0x%llx is in no loadable segment",
			 name, ef->path, (unsigned long long)out->vaddr);
		return -1;
	}
	out->offset = out->vaddr - ph.p_vaddr + ph.p_offset;

	/* No more than the function, nor than the segment has in the file. */
	want = sizeof(out->code);
	if (out->size && out->size < want)
		want = (size_t)out->size;
	if (ph.p_filesz - (out->vaddr - ph.p_vaddr) < want)
		want = (size_t)(ph.p_filesz - (out->vaddr - ph.p_vaddr));
	got = pread(ef->fd, out->code, want, (off_t)out->offset);
	if (got < 0) {
		snprintf(err, errlen, "%s: reading symbol '%s': %s",
			 ef->path, name, strerror(errno));
		return -1;
	}
	out->code_len = (size_t)got;
	return 0;
}

/*
 * The symbol table @type of the file, its header in @shdr and the libelf
 * handle that holds it (ours, or the debug file's) in @e; NULL if none.
 */
static Elf_Data *elf_file__symtab(struct elf_file *ef, Elf64_Word type,
				  GElf_Shdr *shdr, Elf **e)
{
	Elf_Scn *scn = NULL;

	*e = elf_file__table_elf(ef, type);
	while ((scn = elf_nextscn(*e, scn))) {
		if (gelf_getshdr(scn, shdr) && shdr->sh_type == type &&
		    shdr->sh_entsize)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

static int for_each_in(struct elf_file *ef, Elf64_Word type, bool funcs,
		       int (*fn)(const struct elf_sym *s, void *ctx), void *ctx)
{
	GElf_Shdr shdr;
	Elf *e;
	Elf_Data *data = elf_file__symtab(ef, type, &shdr, &e);
	struct elf_sym es;
	GElf_Sym s;
	size_t i, n;
	int t, ret;

	if (!data)
		return 0;
	n = shdr.sh_size / shdr.sh_entsize;
	for (i = 0; i < n; i++) {
		if (!gelf_getsym(data, (int)i, &s))
			break;
		t = GELF_ST_TYPE(s.st_info);
		es.name = elf_strptr(e, shdr.sh_link, s.st_name);
		es.vaddr = s.st_value;
		es.size = s.st_size;
		es.func = t == STT_FUNC || t == STT_GNU_IFUNC;
		es.defined = s.st_shndx != SHN_UNDEF;
		es.local = GELF_ST_BIND(s.st_info) == STB_LOCAL;
		if (!es.name || !*es.name || (funcs && (!es.func || !es.defined)))
			continue;
		ret = fn(&es, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int elf_file__for_each_sym(struct elf_file *ef, enum elf_syms which,
			   int (*fn)(const struct elf_sym *s, void *ctx),
			   void *ctx)
{
	int ret;

	if (which == ELF_SYMS_FUNCS)
		return for_each_in(ef, ef->has_symtab ? SHT_SYMTAB : SHT_DYNSYM,
				   true, fn, ctx);
	ret = for_each_in(ef, SHT_SYMTAB, false, fn, ctx);
	return ret ? ret : for_each_in(ef, SHT_DYNSYM, false, fn, ctx);
}

static int pick_add(const struct elf_sym *s, void *ctx)
{
	return demangle_pick__add(ctx, s->name, s->vaddr, s->size) ? -ENOMEM : 0;
}

static int func_by_name(const void *a, const void *b)
{
	return strcmp(((const struct elf_func *)a)->name,
		      ((const struct elf_func *)b)->name);
}

/*
 * @sym is no symbol of the file: the function whose demangled name it is,
 * if exactly one, or the @max or fewer clones of one function the compiler
 * left without a symbol of its own (into @out[0..]); else a message
 * listing the several, or the nearest.  Returns how many in @out, or -1.
 */
static int elf_file__find_demangled(struct elf_file *ef, const char *sym,
				    struct elf_func *out, size_t max,
				    char *err, size_t errlen)
{
	struct demangle_pick pk;
	char what[1536];
	size_t nclone, i;
	int ret = -1;

	demangle_pick__init(&pk, sym);
	if (elf_file__for_each_sym(ef, ELF_SYMS_FUNCS, pick_add, &pk))
		goto nomem;
	nclone = demangle_pick__settle(&pk);
	if (pk.nmatch == 1 || (nclone > 1 && nclone <= max)) {
		for (i = 0; i < pk.nmatch; i++) {
			memset(&out[i], 0, sizeof(out[i]));
			if (elf_file__func_at(ef, pk.match[i].mangled,
					      pk.match[i].vaddr,
					      pk.match[i].size, &out[i], err,
					      errlen))
				goto out;
			if (pk.match[i].base_len)
				snprintf(out[i].clone, sizeof(out[i].clone), "%s",
					 pk.match[i].mangled + pk.match[i].base_len);
		}
		/* By symbol: attach names the clones in the same order every time. */
		qsort(out, pk.nmatch, sizeof(*out), func_by_name);
		ret = (int)pk.nmatch;
		goto out;
	}
	if (nclone > 1) {
		char room[64] = "";

		demangle_pick__describe(&pk, what, sizeof(what));
		if (max > 1)
			snprintf(room, sizeof(room), " (one point probes at most %zu)",
				 max);
		snprintf(err, errlen,
			 "symbol '%s' in %s has no symbol of its own, only %zu clones the compiler made%s: %s",
			 sym, ef->path, nclone, room,
			 strstr(what, ": ") ? strstr(what, ": ") + 2 : what);
		goto out;
	}
	if (pk.nmatch > 1) {
		demangle_pick__describe(&pk, what, sizeof(what));
		snprintf(err, errlen, "symbol '%s' in %s %s", sym, ef->path, what);
		goto out;
	}
	if (!ef->has_symtab) {
		snprintf(err, errlen,
			 "symbol '%s' not found in %s: the file is stripped (no .symtab) and has no debug file under %s%s%s; rebuild without -s, install its debug symbols (-dbgsym) or use a binary with symbols",
			 sym, ef->path, debuginfo__root(),
			 ef->dbg_refused ? "; refused " : "",
			 ef->dbg_refused ? ef->dbg_refused : "");
		goto out;
	}
	/* Nothing matched: a second pass for the nearest names. */
	pk.nearest = true;
	if (elf_file__for_each_sym(ef, ELF_SYMS_FUNCS, pick_add, &pk))
		goto nomem;
	demangle_pick__describe(&pk, what, sizeof(what));
	snprintf(err, errlen, "symbol '%s' not found in %s%s%s", sym, ef->path,
		 *what ? "; " : "", what);
	goto out;
nomem:
	snprintf(err, errlen, "%s: %s", ef->path, strerror(ENOMEM));
out:
	demangle_pick__free(&pk);
	return ret;
}

/* A C function's clones (c_clones_find()): what the walk collects. */
struct c_clones {
	const char *base;	/* the name asked for */
	size_t base_len;
	struct elf_sym *found;	/* the clones, by symbol */
	size_t n, cap;
};

static int c_clone_add(const struct elf_sym *s, void *ctx)
{
	struct c_clones *cc = ctx;
	struct elf_sym *g;
	size_t i;

	if (strncmp(s->name, cc->base, cc->base_len) ||
	    s->name[cc->base_len] != '.')
		return 0;
	/* .isra.N, .constprop.N, .part.N (and so on): never .cold. */
	if (demangle__suffix_kind(s->name + cc->base_len) != DEMANGLE_SUFFIX_CLONE)
		return 0;
	/* An alias (.localalias) of code already found is one site. */
	for (i = 0; i < cc->n; i++)
		if (cc->found[i].vaddr == s->vaddr)
			return 0;
	if (cc->n == cc->cap) {
		size_t cap = cc->cap ? 2 * cc->cap : 8;

		g = realloc(cc->found, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		cc->found = g;
		cc->cap = cap;
	}
	g = &cc->found[cc->n++];
	*g = *s;
	g->name = strdup(s->name);
	if (!g->name) {
		cc->n--;
		return -ENOMEM;
	}
	return 0;
}

static int sym_by_name(const void *a, const void *b)
{
	return strcmp(((const struct elf_sym *)a)->name,
		      ((const struct elf_sym *)b)->name);
}

/*
 * The clones gcc made of C function @sym ("work" has "work.part.0",
 * "work.isra.0", "work.constprop.1"; not "work.cold"), into @out[@have..@max) after the
 * @have found already (its own symbol, at @own_vaddr, or none), sorted by
 * symbol.  Returns how many @out holds then, or -1 with a message (more
 * than @max in all, listed).
 */
static int c_clones_find(struct elf_file *ef, const char *sym,
			 struct elf_func *out, size_t have, size_t max,
			 uint64_t own_vaddr, char *err, size_t errlen)
{
	struct c_clones cc = { .base = sym, .base_len = strlen(sym) };
	size_t i, k = have, at;
	int ret = -1;

	if (elf_file__for_each_sym(ef, ELF_SYMS_FUNCS, c_clone_add, &cc)) {
		snprintf(err, errlen, "%s: %s", ef->path, strerror(ENOMEM));
		goto out;
	}
	if (cc.n)
		qsort(cc.found, cc.n, sizeof(*cc.found), sym_by_name);
	for (i = 0; i < cc.n; i++)
		if (!have || cc.found[i].vaddr != own_vaddr)
			k++;
	if (k > max && have) {
		at = (size_t)snprintf(err, errlen,
				      "symbol '%s' in %s has %zu clones the compiler made beside its own symbol (one point probes at most %zu sites):",
				      sym, ef->path, k - have, max);
	} else if (k > max) {
		char room[64] = "";

		if (max > 1)
			snprintf(room, sizeof(room), " (one point probes at most %zu)",
				 max);
		at = (size_t)snprintf(err, errlen,
				      "symbol '%s' in %s has no symbol of its own, only %zu clones the compiler made%s:",
				      sym, ef->path, k, room);
	}
	if (k > max) {
		for (i = 0; i < cc.n && at < errlen; i++)
			at += (size_t)snprintf(err + at, errlen - at, "%s %s",
					       i ? "," : "", cc.found[i].name);
		goto out;
	}
	k = have;
	for (i = 0; i < cc.n; i++) {
		const struct elf_sym *c = &cc.found[i];

		if (have && c->vaddr == own_vaddr)
			continue;	/* an alias of its own symbol */
		memset(&out[k], 0, sizeof(out[k]));
		if (elf_file__func_at(ef, c->name, c->vaddr, c->size, &out[k],
				      err, errlen))
			goto out;
		snprintf(out[k].clone, sizeof(out[k].clone), "%s",
			 c->name + cc.base_len);
		k++;
	}
	ret = (int)k;
out:
	for (i = 0; i < cc.n; i++)
		free((char *)cc.found[i].name);
	free(cc.found);
	return ret;
}

/* A plain (C) name, whose clones are NAME.SUFFIX: no '.', not mangled. */
static bool c_name(const char *sym)
{
	return !strchr(sym, '.') && strncmp(sym, "_Z", 2) &&
	       strncmp(sym, "_R", 2);
}

int elf_file__defined(struct elf_file *ef, const char *sym, uint64_t *vaddr,
		      uint64_t *size)
{
	struct elf_func found;

	if (elf_file__lookup(ef, SHT_SYMTAB, sym, &found) &&
	    elf_file__lookup(ef, SHT_DYNSYM, sym, &found))
		return -1;
	*vaddr = found.vaddr;
	*size = found.size;
	return 0;
}

int elf_file__find_funcs(struct elf_file *ef, const char *sym,
			 struct elf_func *out, size_t max, char *err,
			 size_t errlen)
{
	struct elf_func found;
	size_t base_len;

	int n;

	if (!max)
		max = 1;
	/* The symbol as written wins: a mangled name, a C or Go name. */
	memset(&found, 0, sizeof(found));
	if (elf_file__lookup(ef, SHT_SYMTAB, sym, &found) &&
	    elf_file__lookup(ef, SHT_DYNSYM, sym, &found)) {
		/* A C function gcc left only as clones: found by its name. */
		if (c_name(sym)) {
			n = c_clones_find(ef, sym, out, 0, max, 0, err, errlen);
			if (n)
				return n;
		}
		return elf_file__find_demangled(ef, sym, out, max, err, errlen);
	}
	if (elf_file__func_at(ef, sym, found.vaddr, found.size, out, err, errlen))
		return -1;
	/* A clone named by its own symbol: its arguments are the compiler's too. */
	if (demangle__suffix(sym, &base_len) == DEMANGLE_SUFFIX_CLONE)
		snprintf(out->clone, sizeof(out->clone), "%s", sym + base_len);
	else if (strncmp(sym, "_Z", 2) && strncmp(sym, "_R", 2) &&
		 strchr(sym, '.') &&
		 demangle__suffix_kind(strchr(sym, '.')) == DEMANGLE_SUFFIX_CLONE)
		snprintf(out->clone, sizeof(out->clone), "%s", strchr(sym, '.'));
	/*
	 * A C function and its clones: callers of its .part.N piece (its head
	 * inlined into them) or of a .constprop.N copy never enter its own
	 * symbol, so one point probes them all (point/clones.h).
	 */
	if (max > 1 && c_name(sym))
		return c_clones_find(ef, sym, out, 1, max, found.vaddr, err,
				     errlen);
	return 1;
}

int elf_file__find_func(struct elf_file *ef, const char *sym,
			struct elf_func *out, char *err, size_t errlen)
{
	return elf_file__find_funcs(ef, sym, out, 1, err, errlen) < 0 ? -1 : 0;
}

static const char *const site_names[SDS_SITE_COUNT] = {
	[SDS_SITE_ENTER] = "enter",
	[SDS_SITE_EXIT] = "exit",
	[SDS_SITE_EXCEPTION] = "exception",
	[SDS_SITE_DOWNGRADE] = "downgrade",
};

/* One .note.sds record: {u64 addr; u32 layout; char name[]}. */
static void sds_note(struct elf_file *ef, const char *desc, size_t len,
		     struct sds_sites *out)
{
	GElf_Phdr ph;
	uint64_t addr;
	uint32_t layout;
	const char *name;
	int i;

	if (len < 13)
		return;
	memcpy(&addr, desc, 8);
	memcpy(&layout, desc + 8, 4);
	name = desc + 12;
	if (!memchr(name, '\0', len - 12))
		return;
	/* The copy site is optional (older libsds): outside the four. */
	if (!strcmp(name, "copy") && !elf_file__segment(ef, addr, &ph)) {
		out->copy_offset = addr - ph.p_vaddr + ph.p_offset;
		out->has_copy = true;
		return;
	}
	if (!strcmp(name, "copy_ret") && !elf_file__segment(ef, addr, &ph)) {
		out->copy_ret_offset = addr - ph.p_vaddr + ph.p_offset;
		out->has_copy_ret = true;
		return;
	}
	for (i = 0; i < SDS_SITE_COUNT; i++) {
		if (strcmp(name, site_names[i]))
			continue;
		if (elf_file__segment(ef, addr, &ph))
			return;
		out->offset[i] = addr - ph.p_vaddr + ph.p_offset;
		out->layout = layout;
		out->found |= 1u << i;
	}
}

int elf_file__sds_sites(struct elf_file *ef, struct sds_sites *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	memset(out, 0, sizeof(*out));
	while ((scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		/* .note.sds is a few records: a huge note is not worth reading. */
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE ||
		    shdr.sh_size > SDS_NOTE_SECTION_MAX)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_namesz == 4 && nh.n_type == SDS_NOTE_SITE &&
			    !memcmp((char *)data->d_buf + name_off, "sds", 4))
				sds_note(ef, (char *)data->d_buf + desc_off,
					 nh.n_descsz, out);
		}
	}
	if (out->found == 0)
		return 0;
	return out->found == (1u << SDS_SITE_COUNT) - 1 ? 1 : -1;
}

bool elf_file__needs(struct elf_file *ef, const char *prefix)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Dyn dyn;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !shdr.sh_entsize)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			const char *name;

			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(ef->elf, shdr.sh_link, dyn.d_un.d_val);
			if (name && !strncmp(name, prefix, strlen(prefix)))
				return true;
		}
	}
	return false;
}

/* The section named @name, its header in @shdr; NULL if none. */
static Elf_Scn *elf_file__section(struct elf_file *ef, const char *name,
				  GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(ef->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(ef->elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

bool elf_file__has_section(struct elf_file *ef, const char *name)
{
	GElf_Shdr shdr;

	return elf_file__section(ef, name, &shdr) != NULL;
}

int elf_file__section_bytes(struct elf_file *ef, const char *name, size_t max,
			    const char **data, size_t *len)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = elf_file__section(ef, name, &shdr);
	Elf_Data *d;

	if (!scn || shdr.sh_type == SHT_NOBITS)
		return -1;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return -1;
	*data = d->d_buf;
	*len = d->d_size < max ? d->d_size : max;
	return 0;
}

/* Is @sym in a symbol table of @e, defined or not? */
static bool elf_names(Elf *e, const char *sym)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym s;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *data;
		const char *name;
		size_t i, n;

		if (!gelf_getshdr(scn, &shdr) || !shdr.sh_entsize ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			if (!gelf_getsym(data, (int)i, &s))
				break;
			name = elf_strptr(e, shdr.sh_link, s.st_name);
			if (name && !strcmp(name, sym))
				return true;
		}
	}
	return false;
}

/* Is @sym in a symbol table of the file (or of its debug file)? */
static bool elf_file__names(struct elf_file *ef, const char *sym)
{
	return elf_names(ef->elf, sym) || (ef->dbg && elf_names(ef->dbg->elf, sym));
}

bool elf_file__can_unwind(struct elf_file *ef)
{
	return elf_file__has_section(ef, ".gcc_except_table") ||
	       elf_file__needs(ef, "libstdc++") ||
	       elf_file__needs(ef, "libgcc_s") ||
	       elf_file__names(ef, "_Unwind_RaiseException") ||
	       elf_file__names(ef, "_Unwind_Resume");
}

bool elf_file__is_go(struct elf_file *ef)
{
	/* Every Go binary since 1.13 carries its build information here. */
	return elf_file__has_section(ef, ".go.buildinfo");
}

bool elf_file__is_dyn(const struct elf_file *ef)
{
	return ef->ehdr.e_type == ET_DYN;
}

void elf_file__close(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	elf_file__close(ef->dbg);
	free(ef->dbg_refused);
	free(ef->nothrow);
	free(ef->path);
	free(ef);
}
