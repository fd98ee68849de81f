/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The probe sites of libsds (docs/PROTOCOL.md, "Probe sites").
 *
 * Each site is a tiny exported function of its own, exactly
 *	0f 1f 44 00 00		nopl 0x0(%rax,%rax,1)
 *	c3			ret
 * called with (uint32_t id, uint64_t key) -- the copy site with
 * (uint32_t id, const void *buf, size_t len), for the loader's copy
 * program (docs/COPY.md) to read the buffer from, and the copy_ret site
 * alike for the response (sds_copy_response()).  The 5-byte NOP is the only
 * first instruction the kernel turns into a call to a uprobe trampoline
 * (~260 ns a hit instead of an int3 trap, docs/DESIGN.md §3), and only if it
 * does not cross a page: hence the 16-byte alignment.  It is the whole
 * function, never inside a body, because the optimized probe writes below
 * the stack pointer and would corrupt a leaf function's red zone.
 *
 * Each site is also recorded in a .note.sds ELF note, as USDT does with
 * .note.stapsdt, so the loader finds it in a stripped binary: owner "sds",
 * type 1, descriptor {uint64_t addr; uint32_t layout; char name[]}.  The
 * note section is not allocated, so `addr` is resolved by the static
 * linker to the link-time virtual address (no dynamic relocation), in an
 * executable, PIE or not, and in the shared library alike.  descsz is the
 * descriptor's exact size; the record is then padded to 4 bytes as the
 * ELF note format wants.
 */

#define SDS_NOTE_TYPE	1
/* SDS_FLAGS_LAYOUT of bpf/sds_flags.h (not includable here: C only). */
#define SDS_NOTE_LAYOUT	5

.macro SDS_SITE name
	.text
	.p2align 4
	.globl	sds__site_\name
	.type	sds__site_\name, @function
sds__site_\name:
.Lsds_site_\name:
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
	ret
	.size	sds__site_\name, . - sds__site_\name

	/* "" flags: not SHF_ALLOC, so strip keeps it and nothing maps it. */
	.pushsection .note.sds, "", @note
	.balign	4
	.4byte	4				/* namesz: "sds" and its NUL */
	.4byte	.Lsds_desc_end_\name - .Lsds_desc_\name	/* descsz */
	.4byte	SDS_NOTE_TYPE
	.asciz	"sds"
.Lsds_desc_\name:
	/* A local label: the relocation is against .text, not the global
	 * (preemptible) symbol, so the linker resolves it in a .so too. */
	.8byte	.Lsds_site_\name
	.4byte	SDS_NOTE_LAYOUT
	.asciz	"\name"
.Lsds_desc_end_\name:
	.balign	4
	.popsection
.endm

	SDS_SITE enter
	SDS_SITE exit
	SDS_SITE exception
	SDS_SITE downgrade
	SDS_SITE copy
	SDS_SITE copy_ret

	.section .note.GNU-stack, "", @progbits
