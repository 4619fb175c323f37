/* SPDX-License-Identifier: MIT */
/* Small compiler helpers shared by every layer. */
#ifndef BLKRING_LIB_COMPILER_H
#define BLKRING_LIB_COMPILER_H

#include <stddef.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define CACHELINE 64
#define __cacheline_aligned __attribute__((aligned(CACHELINE)))

/* A volume's size, limits, features and read-only flag change at a table
 * swap while submitters read them (Linux's READ_ONCE/WRITE_ONCE): each
 * field is read and written whole, a plain load or store on x86. */
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* The module interface (Linux's EXPORT_SYMBOL): what drivers built as
 * separately loaded modules call.  The shared library exports these, and
 * programs linked with the static one export them from the executable. */
#define BLKRING__MODULE_API __attribute__((visibility("default")))

/* A spin-wait hint: lets the sibling hyperthread (or the host) have the core. */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

#endif
