// SPDX-License-Identifier: MIT
/* The header in strict ISO C: built as C11, C17 and gnu11 by tests/cxx.test.sh. */
#include <blkring.h>

int main(void)
{
	struct blkring ring;

	memset(&ring, 0, sizeof(ring));
	return (int)sizeof(struct blkring_sqe) - 64;
}
