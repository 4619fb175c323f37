// SPDX-License-Identifier: MIT
/*
 * verify= blocks: the header a write fills, each check a read makes, in
 * fio's order, with its message (offset, expected, found), for every
 * method, with verify_interval, verify_offset and verify_pattern.
 */
#include <errno.h>
#include <stdlib.h>

#include "../tools/error.h"
#include "../tools/job.h"
#include "../tools/verify.h"
#include "test.h"

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

static unsigned kind_of(const char *name)
{
	for (unsigned k = 0; verify_kinds[k]; k++)
		if (!strcmp(verify_kinds[k], name))
			return k;
	TEST_FAIL("no verify kind %s", name);
}

/* Options for verify=name and the others as given. */
static struct job_opts opts(const char *name, uint64_t interval, uint64_t offset,
                            const char *pattern)
{
	struct job_opts o = {
	    .verify = kind_of(name), .verify_interval = interval, .verify_offset = offset};

	if (pattern && pattern_parse(&o.verify_pattern, pattern, true))
		TEST_FAIL("verify_pattern=%s: %s", pattern, tool_last_error());
	return o;
}

static struct verify_method method(const char *name, uint64_t interval, uint64_t offset,
                                   const char *pattern, uint32_t bs)
{
	struct job_opts o = opts(name, interval, offset, pattern);
	struct verify_method m;

	if (verify_method_init(&m, &o, bs))
		TEST_FAIL("verify=%s: %s", name, tool_last_error());
	return m;
}

static void expect(const struct verify_method *m, struct io_unit *io, uint64_t generation,
                   const char *want)
{
	char msg[256] = "";

	CHECK_EQ(verify_check(m, io, generation, msg, sizeof(msg)), -EILSEQ);
	if (strcmp(msg, want))
		TEST_FAIL("message '%s', wanted '%s'", msg, want);
}

static void expect_part(const struct verify_method *m, struct io_unit *io, const char *part)
{
	char msg[256] = "";

	CHECK_EQ(verify_check(m, io, 0, msg, sizeof(msg)), -EILSEQ);
	if (!strstr(msg, part))
		TEST_FAIL("message '%s' lacks '%s'", msg, part);
}

/* Every method: a block it wrote checks, a flipped data bit does not
 * (meta: a flipped header field does not), with the method's name. */
static void test_every_kind(void)
{
	static const uint32_t sizes[] = {512, 4096, 24576, 1 << 20};

	for (unsigned k = 1; verify_kinds[k]; k++) {
		const char *name = verify_kinds[k];
		bool pattern = !strcmp(name, "pattern"), meta = !strcmp(name, "meta");

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct verify_method m =
			    method(name, 0, 0, pattern ? "0xa5c3" : NULL, sizes[i]);
			unsigned char *b = block(sizes[i]);
			struct io_unit io = unit(b, sizes[i], 3 * (uint64_t)sizes[i]);
			char msg[256] = "", want[64];

			verify_fill(&m, &io, 42 + i, 7, 3);
			CHECK_EQ(verify_check(&m, &io, 7, msg, sizeof(msg)), 0);
			CHECK_EQ(verify_check(&m, &io, 0, msg, sizeof(msg)), 0);
			CHECK(!msg[0]);
			if (meta) {
				((struct verify_hdr *)b)->offset ^= 512;
				expect_part(&m, &io, "bad header offset");
			} else {
				b[sizes[i] - 3] ^= 0x10;
				snprintf(want, sizeof(want), "%s mismatch",
				         m.sum ? name : "pattern");
				expect_part(&m, &io, m.sum ? m.sum->name : want);
			}
			free(b);
		}
	}
}

static void test_header(void)
{
	struct verify_method m = method("crc32c", 0, 0, NULL, 4096);
	unsigned char *b = block(4096);
	struct io_unit io = unit(b, 4096, 12288);
	const struct verify_hdr *h = (const void *)b;

	verify_fill(&m, &io, 42, 7, 3);
	CHECK_EQ(h->magic, VERIFY_MAGIC);
	CHECK_EQ(h->kind, kind_of("crc32c"));
	CHECK_EQ(h->sum_len, 4);
	CHECK_EQ(h->len, 4096);
	CHECK_EQ(h->offset, 12288);
	CHECK_EQ(h->seed, 42);
	CHECK_EQ(h->generation, 7);
	CHECK_EQ(h->thread, 3);
	free(b);
}

/* Two seeds give different data; one seed the same. */
static void test_data(void)
{
	struct verify_method m = method("crc32c", 0, 0, NULL, 4096);
	unsigned char *a = block(4096), *b = block(4096);
	struct io_unit ia = unit(a, 4096, 0), ib = unit(b, 4096, 0);
	size_t hdr = sizeof(struct verify_hdr);

	verify_fill(&m, &ia, 1, 1, 1);
	verify_fill(&m, &ib, 2, 1, 1);
	CHECK(memcmp(a + hdr, b + hdr, 4096 - hdr));
	verify_fill(&m, &ib, 1, 1, 1);
	CHECK(!memcmp(a, b, 4096));
	free(a);
	free(b);
}

static void test_mismatches(void)
{
	struct verify_method m = method("crc32c", 0, 0, NULL, 4096);
	unsigned char *b = block(8192);
	struct io_unit io = unit(b, 4096, 8192);
	struct verify_hdr *h = (void *)b;

	verify_fill(&m, &io, 9, 0x1234, 1);
	/* A block nobody wrote with verify. */
	memset(b, 0, 4096);
	expect(&m, &io, 0,
	       "verify: bad header magic at offset 8192, length 4096: expected 0x32565242, "
	       "found 0x00000000");

	verify_fill(&m, &io, 9, 0x1234, 1);
	h->len = 8192;
	expect(&m, &io, 0,
	       "verify: bad header length at offset 8192, length 4096: expected 4096, found "
	       "8192");
	h->len = 4096;

	io.offset = 12288;
	expect(&m, &io, 0,
	       "verify: bad header offset at offset 12288, length 4096: expected 12288, "
	       "found 8192");
	io.offset = 8192;

	/* One bit of data, then one bit of the header past the checked fields. */
	b[1000] ^= 0x10;
	expect_part(&m, &io, "verify: crc32c mismatch at offset 8192, length 4096: expected 0x");
	b[1000] ^= 0x10;
	h->seed ^= 1;
	expect_part(&m, &io, "crc32c mismatch");
	h->seed ^= 1;

	/* A sound block another run wrote: the verify phase tells it apart. */
	CHECK_EQ(verify_check(&m, &io, 0, (char[256]){0}, 256), 0);
	expect(&m, &io, 0x5678,
	       "verify: block from another run (generation) at offset 8192, length "
	       "4096: expected 0x00005678, found 0x00001234");

	/* Another method's block. */
	struct verify_method md5 = method("md5", 0, 0, NULL, 4096);

	expect(&md5, &io, 0,
	       "verify: block written with verify=crc32c at offset 8192, length 4096: expected "
	       "verify=md5");
	free(b);
}

/* verify_interval: a header per interval, each naming its own offset. */
static void test_interval(void)
{
	struct verify_method m = method("sha256", 1024, 0, NULL, 8192);
	unsigned char *b = block(8192);
	struct io_unit io = unit(b, 8192, 65536);

	verify_fill(&m, &io, 5, 1, 1);
	for (unsigned at = 0; at < 8192; at += 1024) {
		const struct verify_hdr *h = (const void *)(b + at);

		CHECK_EQ(h->offset, 65536 + at);
		CHECK_EQ(h->len, 1024);
	}
	CHECK_EQ(verify_check(&m, &io, 1, (char[256]){0}, 256), 0);
	b[5000] ^= 1;
	expect_part(&m, &io, "sha256 mismatch at offset 69632, length 1024");
	free(b);
}

/* verify_offset: the header sits there, and checks wherever it sits. */
static void test_offset(void)
{
	struct verify_method m = method("crc64", 0, 512, NULL, 4096);
	unsigned char *b = block(4096);
	struct io_unit io = unit(b, 4096, 4096);

	verify_fill(&m, &io, 5, 1, 1);
	CHECK_EQ(((const struct verify_hdr *)(b + 512))->magic, VERIFY_MAGIC);
	CHECK(((const struct verify_hdr *)b)->magic != VERIFY_MAGIC);
	CHECK_EQ(verify_check(&m, &io, 1, (char[256]){0}, 256), 0);
	free(b);
}

/* verify_pattern: the data after the header with a checksum, the whole
 * block with verify=pattern; a mismatch names its byte. */
static void test_pattern(void)
{
	struct verify_method with_sum = method("crc32c", 0, 0, "\"abc\"", 4096);
	struct verify_method alone = method("pattern", 0, 0, "0xdeadbeef", 4096);
	unsigned char *b = block(4096);
	struct io_unit io = unit(b, 4096, 0);
	size_t hdr = sizeof(struct verify_hdr);

	verify_fill(&with_sum, &io, 5, 1, 1);
	CHECK(!memcmp(b + hdr, "abcabc", 6));
	verify_fill(&alone, &io, 5, 1, 1);
	CHECK(!memcmp(b, "\xde\xad\xbe\xef\xde\xad", 6));
	b[4095] = 0;
	expect(&alone, &io, 0,
	       "verify: pattern mismatch at offset 4095, length 4096: expected 0x000000ef, found "
	       "0x00000000");
	free(b);
}

static void bad(const char *name, uint64_t interval, uint64_t offset, const char *pattern,
                const char *part)
{
	struct job_opts o = opts(name, interval, offset, pattern);
	struct verify_method m;

	CHECK_EQ(verify_method_init(&m, &o, 4096), -EINVAL);
	if (!strstr(tool_last_error(), part))
		TEST_FAIL("message '%s' lacks '%s'", tool_last_error(), part);
}

static void test_bad_options(void)
{
	bad("pattern", 0, 0, NULL, "verify=pattern needs verify_pattern");
	/* A pattern that does not parse never gets this far (pattern.c). */
	CHECK_EQ(pattern_parse(&(struct data_pattern){0}, "0xzz", true), -EINVAL);
	CHECK_EQ(pattern_parse(&(struct data_pattern){0}, "abc", true), -EINVAL);
	bad("crc32c", 3000, 0, NULL, "option 'verify_interval': 3000");
	bad("crc32c", 64, 0, NULL, "option 'verify_interval': 64");
	bad("crc32c", 0, 4090, NULL, "option 'verify_offset': 4090");
}

static const struct test_case cases[] = {
    {"every_kind", test_every_kind, 0},
    {"header", test_header, 0},
    {"data", test_data, 0},
    {"mismatches", test_mismatches, 0},
    {"interval", test_interval, 0},
    {"offset", test_offset, 0},
    {"pattern", test_pattern, 0},
    {"bad_options", test_bad_options, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
