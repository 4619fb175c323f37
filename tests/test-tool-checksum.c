// SPDX-License-Identifier: MIT
/* Each verify checksum against its catalogue check value ("123456789"), and
 * the same sum wherever the block is split into its two spans. */
#include <string.h>

#include "../tools/checksum.h"
#include "test.h"

static void hex(const uint8_t *p, unsigned len, char *out)
{
	for (unsigned i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void check_value(const char *name, const char *expected)
{
	const struct checksum *c = checksum_find(name);
	uint8_t out[CHECKSUM_MAX];
	char text[2 * CHECKSUM_MAX + 1];

	CHECK(c);
	c->sum("1234", 4, "56789", 5, out);
	hex(out, c->len, text);
	if (strcmp(text, expected))
		TEST_FAIL("%s: %s, expected %s", name, text, expected);
}

/* Integers are stored in host order (little-endian here): the hex reads
 * backwards for the CRCs. */
static void catalogue(void)
{
	check_value("crc32c", "839206e3");
	check_value("crc32c-intel", "839206e3");
	check_value("crc32", "2639f4cb");
	check_value("crc64", "fa3919dfbbc95d99");
	check_value("crc16", "dbd0");
	check_value("crc7", "75");
	check_value("md5", "25f9e794323b453885f5181f1b624d0b");
	check_value("sha1", "f7c3bc1d808e04732adf679965ccc34ca7ae3441");
	check_value("sha256", "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225");
	check_value("sha512", "d9e6762dd1c8eaf6d61b3c6192fc408d4d6d5f1176d0c29169bc24e71c3f274a"
	                      "d27fcd5811b313d681f7e55ec02d73d499c95455b6b5bb503acf574fba8ffe85");
	check_value("xxhash", "67ad7b93");
	CHECK(!checksum_find("crc33"));
}

/* Any split of a block gives its sum; any flipped bit changes it. */
static void splits_and_flips(void)
{
	uint8_t block[512], whole[CHECKSUM_MAX], part[CHECKSUM_MAX];

	for (unsigned i = 0; i < sizeof(block); i++)
		block[i] = (uint8_t)(i * 131 + 7);
	for (const struct checksum *c = checksums; c->name; c++) {
		c->sum(block, 0, block, sizeof(block), whole);
		for (unsigned cut = 1; cut < sizeof(block); cut += 97) {
			c->sum(block, cut, block + cut, sizeof(block) - cut, part);
			if (memcmp(whole, part, c->len))
				TEST_FAIL("%s: split at %u changes the sum", c->name, cut);
		}
		block[300] ^= 0x10;
		c->sum(block, 0, block, sizeof(block), part);
		block[300] ^= 0x10;
		if (!memcmp(whole, part, c->len))
			TEST_FAIL("%s: a flipped bit goes unseen", c->name);
	}
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"checksum-catalogue", catalogue, 0},
	    {"checksum-splits-and-flips", splits_and_flips, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
