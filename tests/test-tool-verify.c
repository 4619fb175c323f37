// SPDX-License-Identifier: MIT
/*
 * verify=crc32c blocks: the checksum against a bit-at-a-time CRC32C, the
 * header a write fills, and each check a read makes, in fio's order, with
 * its message (offset, expected, found).
 */
#include <errno.h>
#include <stdlib.h>

#include "../tools/job.h"
#include "../tools/verify.h"
#include "test.h"

/* CRC32C the long way: reflected Castagnoli polynomial, inverted in and out. */
static uint32_t crc32c_ref(uint32_t crc, const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0x82f63b78U & -(crc & 1));
	}
	return crc;
}

static void *block(size_t len)
{
	void *p = NULL;

	CHECK_EQ(posix_memalign(&p, 4096, len), 0);
	return p;
}

static struct io_unit unit(void *buf, uint32_t len, uint64_t offset)
{
	return (struct io_unit){.buf = buf, .len = len, .offset = offset, .ddir = DDIR_WRITE};
}

static void test_crc32c(void)
{
	static const unsigned char check[] = "123456789";
	unsigned char *b = block(4096);
	uint32_t want;

	/* The catalogue's check value, through the header's skip of its crc field. */
	memset(b, 0xa5, 4096);
	want = ~crc32c_ref(crc32c_ref(~0U, b, 4), b + 8, 4096 - 8);
	CHECK_EQ(verify_block_crc(b, 4096), want);
	CHECK_EQ(~crc32c_ref(~0U, check, 9), 0xe3069283U);
	for (int i = 0; i < 4096; i++)
		b[i] = (unsigned char)(i * 7 + 3);
	want = ~crc32c_ref(crc32c_ref(~0U, b, 4), b + 8, 4096 - 8);
	CHECK_EQ(verify_block_crc(b, 4096), want);
	/* The crc field itself is not covered. */
	b[5] ^= 0xff;
	CHECK_EQ(verify_block_crc(b, 4096), want);
	free(b);
}

static void test_round_trip(void)
{
	static const uint32_t sizes[] = {512, 4096, 24576, 1 << 20};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *b = block(sizes[i]);
		struct io_unit io = unit(b, sizes[i], 3 * (uint64_t)sizes[i]);
		const struct verify_hdr *h = (const void *)b;
		char msg[256] = "";

		verify_fill(&io, 42 + i, 7, 3);
		CHECK_EQ(h->magic, VERIFY_MAGIC);
		CHECK_EQ(h->len, sizes[i]);
		CHECK_EQ(h->offset, 3 * (uint64_t)sizes[i]);
		CHECK_EQ(h->seed, 42 + i);
		CHECK_EQ(h->generation, 7);
		CHECK_EQ(h->thread, 3);
		CHECK_EQ(verify_check(&io, 7, msg, sizeof(msg)), 0);
		CHECK_EQ(verify_check(&io, 0, msg, sizeof(msg)), 0);
		CHECK(!msg[0]);
		free(b);
	}
}

/* Two seeds give different data; one seed the same. */
static void test_data(void)
{
	unsigned char *a = block(4096), *b = block(4096);
	struct io_unit ia = unit(a, 4096, 0), ib = unit(b, 4096, 0);
	size_t hdr = sizeof(struct verify_hdr);

	verify_fill(&ia, 1, 1, 1);
	verify_fill(&ib, 2, 1, 1);
	CHECK(memcmp(a + hdr, b + hdr, 4096 - hdr));
	verify_fill(&ib, 1, 1, 1);
	CHECK(!memcmp(a, b, 4096));
	free(a);
	free(b);
}

static void expect(struct io_unit *io, uint64_t generation, const char *want)
{
	char msg[256] = "";

	CHECK_EQ(verify_check(io, generation, msg, sizeof(msg)), -EILSEQ);
	if (strcmp(msg, want))
		TEST_FAIL("message '%s', wanted '%s'", msg, want);
}

static void test_mismatches(void)
{
	unsigned char *b = block(8192);
	struct io_unit io = unit(b, 4096, 8192);
	struct verify_hdr *h = (void *)b;
	char want[256];

	verify_fill(&io, 9, 0x1234, 1);
	/* A block nobody wrote with verify. */
	memset(b, 0, 4096);
	expect(&io, 0,
	       "verify: bad header magic at offset 8192, length 4096: expected 0x31565242, "
	       "found 0x00000000");

	verify_fill(&io, 9, 0x1234, 1);
	io.len = 8192;
	expect(&io, 0,
	       "verify: bad header length at offset 8192, length 8192: expected 8192, found "
	       "4096");
	io.len = 4096;

	io.offset = 12288;
	expect(&io, 0,
	       "verify: bad header offset at offset 12288, length 4096: expected 12288, "
	       "found 8192");
	io.offset = 8192;

	/* One bit of data, then one bit of the header past the checked fields. */
	b[1000] ^= 0x10;
	snprintf(want, sizeof(want),
	         "verify: crc32c mismatch at offset 8192, length 4096: expected 0x%08x, found "
	         "0x%08x",
	         h->crc, verify_block_crc(b, 4096));
	expect(&io, 0, want);
	b[1000] ^= 0x10;
	h->seed ^= 1;
	CHECK_EQ(verify_check(&io, 0, want, sizeof(want)), -EILSEQ);
	CHECK(strstr(want, "crc32c mismatch"));
	h->seed ^= 1;

	/* A sound block another run wrote: the verify phase tells it apart. */
	CHECK_EQ(verify_check(&io, 0, want, sizeof(want)), 0);
	expect(&io, 0x5678,
	       "verify: block from another run (generation) at offset 8192, length "
	       "4096: expected 0x00005678, found 0x00001234");
	free(b);
}

static const struct test_case cases[] = {
    {"crc32c", test_crc32c, 0},
    {"round_trip", test_round_trip, 0},
    {"data", test_data, 0},
    {"mismatches", test_mismatches, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
