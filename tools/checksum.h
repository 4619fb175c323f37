/* SPDX-License-Identifier: MIT */
/*
 * The checksums verify= names, with fio's names.  Each sums a block in two
 * spans (the header before its checksum field, then the rest), so a block
 * carries its own sum.  Code from well-kept libraries: ISA-L's CRCs,
 * OpenSSL's digests, libxxhash; only CRC7 is written here (ten lines that
 * no Debian library offers).
 */
#ifndef BLKRING_TOOLS_CHECKSUM_H
#define BLKRING_TOOLS_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#define CHECKSUM_MAX 64 /* sha512's */

struct checksum {
	const char *name;
	unsigned len; /* bytes the sum takes */
	void (*sum)(const void *a, size_t alen, const void *b, size_t blen, uint8_t *out);
};

/* NULL-terminated, by name; crc32c-intel is crc32c (ISA-L picks the CPU's
 * instruction for both). */
extern const struct checksum checksums[];
const struct checksum *checksum_find(const char *name);

#endif
