/* SPDX-License-Identifier: MIT */
/*
 * What a job's writes carry, fio's buffer options: random data (the
 * default), zeroes (zero_buffers), buffer_pattern, data that compresses to
 * about buffer_compress_percentage (random bytes, then zeroes or the
 * pattern, in every buffer_compress_chunk), and dedupe_percentage's
 * repeated blocks.  As in fio, buffers are filled once at set-up; with
 * refill_buffers (which compression, dedupe and buffer_pattern with reads
 * imply) every write gets new data, and otherwise scramble_buffers (on by
 * default) writes each 512-byte sector's offset and the time into it.
 * verify= fills its own blocks and leaves all this out.
 *
 * A job whose writes need either runs its engine wrapped, as verify's
 * does: the wrapper fills the written units before they are submitted, so
 * the other jobs never pass through here.
 */
#ifndef BLKRING_TOOLS_DATA_H
#define BLKRING_TOOLS_DATA_H

struct job;

/* Fills the job's buffers at set-up, then wraps its engine if its writes
 * need new data each: 0 or -ENOMEM. */
int data_setup(struct job *j);
void data_teardown(struct job *j);

#endif
