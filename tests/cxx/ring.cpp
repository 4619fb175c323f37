// SPDX-License-Identifier: MIT
// A C++ program on a ring, the inline helpers included: reads on a null
// device, each CQE found again by its user data.  Built as every C++
// standard by tests/cxx.test.sh.
#include <blkring.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

struct read_io {
	unsigned index;
	bool done;
};

int fail(const char *what, int err)
{
	std::fprintf(stderr, "%s: %s (%s)\n", what, std::strerror(-err), blkring_last_error());
	return 1;
}

} // namespace

int main()
{
	static char buf[8][4096];
	std::vector<read_io> ios(8);
	struct blkring ring;
	struct blkring_dev *dev = nullptr;
	int ret = blkring_dev_open("null:irqmode=softirq,size=1M,name=cxx", &dev);

	if (ret)
		return fail("open", ret);
	ret = blkring_queue_init(8, &ring, 0);
	if (ret)
		return fail("queue_init", ret);
	ret = blkring_register_devices(&ring, &dev, 1);
	if (ret)
		return fail("register", ret);
	for (unsigned i = 0; i < ios.size(); i++) {
		struct blkring_sqe *sqe = blkring_get_sqe(&ring);

		ios[i] = read_io{i, false};
		blkring_prep_read(sqe, 0, buf[i], sizeof(buf[i]), i * 4096ULL);
		blkring_sqe_set_data(sqe, &ios[i]);
	}
	if (blkring_sq_ready(&ring) != ios.size() || blkring_sq_space_left(&ring) != 0)
		return fail("sq counts", -EINVAL);
	ret = blkring_submit_and_wait(&ring, 1);
	if (ret != (int)ios.size())
		return fail("submit", ret < 0 ? ret : -EIO);
	for (unsigned seen = 0; seen < ios.size();) {
		struct blkring_cqe *cqe;
		unsigned head, n = 0;

		ret = blkring_wait_cqe(&ring, &cqe);
		if (ret)
			return fail("wait", ret);
		blkring_for_each_cqe(&ring, head, cqe)
		{
			read_io *io = static_cast<read_io *>(blkring_cqe_get_data(cqe));

			if (cqe->res != 4096 || io->done)
				return fail("cqe", -EIO);
			io->done = true;
			n++;
		}
		blkring_cq_advance(&ring, n);
		seen += n;
	}
	blkring_queue_exit(&ring);
	ret = blkring_dev_close(dev);
	if (ret)
		return fail("close", ret);
	std::printf("ok\n");
	return 0;
}
