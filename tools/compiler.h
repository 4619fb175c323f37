/* SPDX-License-Identifier: MIT */
/* Small compiler helpers of the command's own (the library keeps its own). */
#ifndef BLKRING_TOOLS_COMPILER_H
#define BLKRING_TOOLS_COMPILER_H

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A spin-wait hint: lets the sibling hyperthread (or the host) have the core. */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

#endif
