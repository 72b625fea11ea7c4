// SPDX-License-Identifier: GPL-2.0
/*
 * qemu-kcount: a QEMU TCG plugin that counts the guest kernel's executed
 * instructions per translated block, and writes every count each time the
 * kernel runs the block at marker=ADDR (the entry of a function the guest
 * calls on purpose, e.g. ksys_sync: sync() before and after the measured
 * loop).  The difference of two dumps is the kernel's work in the window,
 * block by block; kernel/tests/kcount-compare.sh maps blocks to functions
 * with System.map and compares two kernels.  Used by vm-run.sh --kcount.
 *
 *   qemu-system-x86_64 ... -plugin qemu-kcount.so,marker=ffffffff811e6410,out=PREFIX
 *
 * Each dump PREFIX.N has a line "user N" (instructions outside the kernel
 * half, all of them) and one "ADDR COUNT" line per kernel block executed
 * (COUNT: instructions, cumulative since boot).  Counting is an inline add
 * per block execution; with -icount QEMU runs the vCPUs in one thread, so
 * the adds do not race.
 *
 * QEMU 7.2 (Debian 12) has no installed plugin header: the few declarations
 * of its plugin API version 1 used here are written out below.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
	union { struct { int smp_vcpus, max_vcpus; } system; };
} qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int, void *);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, qemu_plugin_vcpu_tb_trans_cb_t);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *, qemu_plugin_vcpu_udata_cb_t,
					  enum qemu_plugin_cb_flags, void *);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *, enum qemu_plugin_op,
					      void *, uint64_t);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define KERNEL_HALF	0xffff800000000000ull
#define NSLOT		(1u << 20)	/* a kernel runs far fewer distinct blocks */

static struct slot { uint64_t va, insns; } *slots;
static uint32_t used;
static uint64_t user_insns, marker;
static const char *prefix;
static int ndump;

/* The block starting at @va (a block retranslated at the same address adds to it). */
static struct slot *slot_of(uint64_t va)
{
	uint32_t h = (uint32_t)((va * 0x9e3779b97f4a7c15ull) >> 44);

	for (;; h = (h + 1) & (NSLOT - 1)) {
		if (slots[h].va == va)
			return &slots[h];
		if (!slots[h].va) {
			if (++used > NSLOT / 2) {
				fprintf(stderr, "qemu-kcount: more than %u kernel blocks\n", NSLOT / 2);
				exit(1);
			}
			slots[h].va = va;
			return &slots[h];
		}
	}
}

static void dump(unsigned int vcpu, void *udata)
{
	char name[4096];
	FILE *f;

	(void)vcpu;
	(void)udata;
	snprintf(name, sizeof(name), "%s.%d", prefix, ndump++);
	f = fopen(name, "w");
	if (!f) {
		perror(name);
		return;
	}
	fprintf(f, "user %llu\n", (unsigned long long)user_insns);
	for (uint32_t i = 0; i < NSLOT; i++)
		if (slots[i].va && slots[i].insns)
			fprintf(f, "%llx %llu\n", (unsigned long long)slots[i].va,
				(unsigned long long)slots[i].insns);
	fclose(f);
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t va = qemu_plugin_tb_vaddr(tb), n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	if (va < KERNEL_HALF) {
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &user_insns, n);
		return;
	}
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &slot_of(va)->insns, n);
	if (va == marker)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, dump, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "marker=", 7))
			marker = strtoull(argv[i] + 7, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			prefix = strdup(argv[i] + 4);
	}
	if (!marker || !prefix || !*prefix) {
		fprintf(stderr, "qemu-kcount: needs marker=HEXADDR and out=PREFIX\n");
		return -1;
	}
	slots = calloc(NSLOT, sizeof(*slots));
	if (!slots)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	return 0;
}
