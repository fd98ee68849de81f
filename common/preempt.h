/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * preempt.h - can a uprobe program be preempted by another on the same
 * CPU?  It decides how a BPF program may count per CPU: plain adds when
 * it cannot (nothing else runs on that CPU until it returns), locked adds
 * when it can.  sds-bpf's programs and the benchmark's baselines ask the
 * same question, so that they count the same way.
 */
#ifndef SDS_PREEMPT_H
#define SDS_PREEMPT_H

#include <stdbool.h>

/*
 * Only with full (or lazy, or RT) preemption.  The model of a
 * PREEMPT_DYNAMIC kernel is in debugfs when it is mounted, else set by
 * preempt= on the command line, else the build's default.  When in
 * doubt: yes.
 */
bool preempt_kernel_preemptible(void);

#endif /* SDS_PREEMPT_H */
