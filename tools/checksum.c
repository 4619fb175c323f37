// SPDX-License-Identifier: MIT
#include <isa-l/crc.h>
#include <isa-l/crc64.h>
#include <openssl/evp.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "checksum.h"

/* ISA-L's crc32_iscsi neither inverts its seed nor its result: CRC32C does both. */
static void sum_crc32c(const void *a, size_t alen, const void *b, size_t blen, uint8_t *out)
{
	uint32_t crc = crc32_iscsi((unsigned char *)a, (int)alen, 0xffffffffU);

	crc = ~crc32_iscsi((unsigned char *)b, (int)blen, crc);
	memcpy(out, &crc, sizeof(crc));
}

static void sum_crc32(const void *a, size_t alen, const void *b, size_t blen, uint8_t *out)
{
	uint32_t crc = crc32_gzip_refl(crc32_gzip_refl(0, a, alen), b, blen);

	memcpy(out, &crc, sizeof(crc));
}

/* CRC-64/XZ (ECMA-182, reflected). */
static void sum_crc64(const void *a, size_t alen, const void *b, size_t blen, uint8_t *out)
{
	uint64_t crc = crc64_ecma_refl(crc64_ecma_refl(0, a, alen), b, blen);

	memcpy(out, &crc, sizeof(crc));
}

/* CRC-16/T10-DIF, the one ISA-L has (fio's crc16 is CRC-16/ARC). */
static void sum_crc16(const void *a, size_t alen, const void *b, size_t blen, uint8_t *out)
{
	uint16_t crc = crc16_t10dif(crc16_t10dif(0, a, alen), b, blen);

	memcpy(out, &crc, sizeof(crc));
}

/* CRC-7/MMC (polynomial x^7 + x^3 + 1), bit by bit: the crc sits in the
 * top seven bits of the byte. */
static uint8_t crc7_span(uint8_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = (uint8_t)(crc & 0x80 ? (crc << 1) ^ (0x09 << 1) : crc << 1);
	}
	return crc;
}

static void sum_crc7(const void *a, size_t alen, const void *b, size_t blen, uint8_t *out)
{
	*out = crc7_span(crc7_span(0, a, alen), b, blen) >> 1;
}

static void sum_xxhash(const void *a, size_t alen, const void *b, size_t blen, uint8_t *out)
{
	XXH32_state_t st;
	uint32_t h;

	XXH32_reset(&st, 0);
	XXH32_update(&st, a, alen);
	XXH32_update(&st, b, blen);
	h = XXH32_digest(&st);
	memcpy(out, &h, sizeof(h));
}

/* One context per thread, made on first use: the digests run per block. */
static void sum_digest(const EVP_MD *md, const void *a, size_t alen, const void *b, size_t blen,
                       uint8_t *out)
{
	static _Thread_local EVP_MD_CTX *ctx;

	if (!ctx)
		ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, md, NULL) || !EVP_DigestUpdate(ctx, a, alen) ||
	    !EVP_DigestUpdate(ctx, b, blen) || !EVP_DigestFinal_ex(ctx, out, NULL))
		memset(out, 0, (size_t)EVP_MD_get_size(md)); /* then every check fails */
}

#define DIGEST(fn, md)                                                                       \
	static void fn(const void *a, size_t alen, const void *b, size_t blen, uint8_t *out) \
	{                                                                                    \
		sum_digest(md(), a, alen, b, blen, out);                                     \
	}

DIGEST(sum_md5, EVP_md5)
DIGEST(sum_sha1, EVP_sha1)
DIGEST(sum_sha256, EVP_sha256)
DIGEST(sum_sha512, EVP_sha512)

const struct checksum checksums[] = {
    {.name = "crc32c", .len = 4, .sum = sum_crc32c},
    {.name = "crc32c-intel", .len = 4, .sum = sum_crc32c},
    {.name = "crc32", .len = 4, .sum = sum_crc32},
    {.name = "crc64", .len = 8, .sum = sum_crc64},
    {.name = "crc16", .len = 2, .sum = sum_crc16},
    {.name = "crc7", .len = 1, .sum = sum_crc7},
    {.name = "md5", .len = 16, .sum = sum_md5},
    {.name = "sha1", .len = 20, .sum = sum_sha1},
    {.name = "sha256", .len = 32, .sum = sum_sha256},
    {.name = "sha512", .len = 64, .sum = sum_sha512},
    {.name = "xxhash", .len = 4, .sum = sum_xxhash},
    {0},
};

const struct checksum *checksum_find(const char *name)
{
	for (const struct checksum *c = checksums; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}
