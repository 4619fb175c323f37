// SPDX-License-Identifier: MIT
/* Device specs: syntax, escapes, sizes, and the text of every error. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "block/blkdev.h"
#include "test.h"

static struct blkring_spec parse_ok(const char *text)
{
	struct blkring_spec spec;
	int ret = blkring__spec_parse(text, &spec);

	if (ret)
		TEST_FAIL("parse %s: %d (%s)", text, ret, blkring_last_error());
	return spec;
}

/* Expects -EINVAL from open and every fragment in the error text. */
static void open_fails(const char *text, int err, const char *frag1, const char *frag2)
{
	struct blkring_dev *dev = NULL;
	int ret = blkring_dev_open(text, &dev);

	if (ret != err)
		TEST_FAIL("open %s: %d, expected %d (%s)", text, ret, err, blkring_last_error());
	if (!strstr(blkring_last_error(), frag1) || (frag2 && !strstr(blkring_last_error(), frag2)))
		TEST_FAIL("open %s: message '%s' lacks '%s'/'%s'", text, blkring_last_error(),
		          frag1, frag2 ? frag2 : "");
	CHECK(dev == NULL);
}

static void test_syntax(void)
{
	struct blkring_spec s = parse_ok("null:size=1G,name=a\\,b,bs=4096");

	CHECK(!strcmp(s.type, "null"));
	CHECK(s.arg == NULL);
	CHECK_EQ(s.nr, 3);
	CHECK(!strcmp(blkring__spec_str(&s, "name"), "a,b"));
	CHECK(blkring__spec_str(&s, "missing") == NULL);
	blkring__spec_free(&s);

	s = parse_ok("null");
	CHECK(!strcmp(s.type, "null"));
	CHECK_EQ(s.nr, 0);
	blkring__spec_free(&s);

	s = parse_ok("/tmp/a\\,b,direct=1");
	CHECK(!strcmp(s.type, "file"));
	CHECK(!strcmp(s.arg, "/tmp/a,b"));
	CHECK_EQ(s.nr, 1);
	blkring__spec_free(&s);

	s = parse_ok("./rel");
	CHECK(!strcmp(s.type, "file"));
	CHECK(!strcmp(s.arg, "./rel"));
	blkring__spec_free(&s);

	s = parse_ok("table:vol.table,x=\\\\y");
	CHECK(!strcmp(s.arg, "vol.table"));
	CHECK(!strcmp(blkring__spec_str(&s, "x"), "\\y"));
	blkring__spec_free(&s);

	/* A path that starts as one may hold '='. */
	s = parse_ok("table:/srv/a=b.table,ro=1");
	CHECK(!strcmp(s.arg, "/srv/a=b.table"));
	CHECK_EQ(s.nr, 1);
	blkring__spec_free(&s);
	s = parse_ok("./x=y.img");
	CHECK(!strcmp(s.type, "file"));
	CHECK(!strcmp(s.arg, "./x=y.img"));
	CHECK_EQ(s.nr, 0);
	blkring__spec_free(&s);
	s = parse_ok("null:name=a\\\\");
	CHECK(!strcmp(blkring__spec_str(&s, "name"), "a\\"));
	blkring__spec_free(&s);
}

static void test_syntax_errors(void)
{
	struct blkring_spec s;

	CHECK_EQ(blkring__spec_parse("", &s), -EINVAL);
	CHECK(strstr(blkring_last_error(), "empty device spec"));
	CHECK_EQ(blkring__spec_parse(":size=1", &s), -EINVAL);
	CHECK(strstr(blkring_last_error(), "no device type"));
	CHECK_EQ(blkring__spec_parse("null:size=1,size=2", &s), -EINVAL);
	CHECK(strstr(blkring_last_error(), "key 'size' given twice"));
	CHECK_EQ(blkring__spec_parse("null:size=1,oops", &s), -EINVAL);
	CHECK(strstr(blkring_last_error(), "item 2 'oops': expected key=value"));
	CHECK_EQ(blkring__spec_parse("null:=3", &s), -EINVAL);
	CHECK(strstr(blkring_last_error(), "expected key=value"));
	CHECK_EQ(blkring__spec_parse("null:name=a\\", &s), -EINVAL);
	CHECK(strstr(blkring_last_error(), "a '\\' at the end escapes nothing"));
	CHECK_EQ(blkring__spec_parse("table:v.table,ro=1\\", &s), -EINVAL);
	CHECK_EQ(blkring__spec_parse("null:a=1,,b=2", &s), -EINVAL);
}

static void test_sizes(void)
{
	static const struct {
		const char *val;
		uint64_t bytes;
	} ok[] = {{"4096", 4096},     {"4K", 4096},       {"4k", 4096},    {"3M", 3 << 20},
	          {"2G", 2ULL << 30}, {"1T", 1ULL << 40}, {"0x1000", 4096}};
	static const char *const bad[] = {
	    "", "K", "4KB", "4X", "-1", "99999999999999999999", "16777216T"};
	char text[64];

	for (unsigned i = 0; i < ARRAY_SIZE(ok); i++) {
		struct blkring_spec s;
		uint64_t v = 7;

		snprintf(text, sizeof(text), "null:size=%s", ok[i].val);
		s = parse_ok(text);
		CHECK_EQ(blkring__spec_size(&s, "size", &v), 0);
		CHECK_EQ(v, ok[i].bytes);
		blkring__spec_free(&s);
	}
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		struct blkring_spec s;
		uint64_t v = 7;

		snprintf(text, sizeof(text), "null:size=%s", bad[i]);
		s = parse_ok(text);
		CHECK_EQ(blkring__spec_size(&s, "size", &v), -EINVAL);
		CHECK_EQ(v, 7);
		CHECK(strstr(blkring_last_error(),
		             "for key 'size': expected bytes with an optional "
		             "K, M, G or T suffix"));
		blkring__spec_free(&s);
	}
}

static void test_getters(void)
{
	static const char *const modes[] = {"none", "softirq", "timer", NULL};
	struct blkring_spec s = parse_ok("null:n=12,b=yes,c=timer,d=1,e=maybe,f=fast,g=1x");
	uint64_t n = 0;
	unsigned c = 9;
	bool b = false;

	CHECK_EQ(blkring__spec_u64(&s, "n", &n), 0);
	CHECK_EQ(n, 12);
	CHECK_EQ(blkring__spec_bool(&s, "b", &b), 0);
	CHECK(b);
	CHECK_EQ(blkring__spec_choice(&s, "c", modes, &c), 0);
	CHECK_EQ(c, 2);
	CHECK_EQ(blkring__spec_choice(&s, "d", modes, &c), 0);
	CHECK_EQ(c, 1);
	CHECK_EQ(blkring__spec_bool(&s, "e", &b), -EINVAL);
	CHECK(strstr(blkring_last_error(), "bad value 'maybe' for key 'e': expected 0 or 1"));
	CHECK_EQ(blkring__spec_choice(&s, "f", modes, &c), -EINVAL);
	CHECK(strstr(blkring_last_error(),
	             "bad value 'fast' for key 'f': expected none|softirq|timer (or 0..2)"));
	CHECK_EQ(blkring__spec_u64(&s, "g", &n), -EINVAL);
	CHECK(strstr(blkring_last_error(), "for key 'g': expected a non-negative integer"));
	CHECK_EQ(blkring__spec_check_unused(&s, "n, b, c, d, e, f, g"), 0);
	blkring__spec_free(&s);

	/* A leading zero is decimal, not octal; 0x is hex. */
	s = parse_ok("null:a=010,b=08,c=0x10,d=0x");
	CHECK_EQ(blkring__spec_u64(&s, "a", &n), 0);
	CHECK_EQ(n, 10);
	CHECK_EQ(blkring__spec_u64(&s, "b", &n), 0);
	CHECK_EQ(n, 8);
	CHECK_EQ(blkring__spec_u64(&s, "c", &n), 0);
	CHECK_EQ(n, 16);
	CHECK_EQ(blkring__spec_u64(&s, "d", &n), -EINVAL);
	blkring__spec_free(&s);

	s = parse_ok("null:n=1,zz=2");
	CHECK_EQ(blkring__spec_u64(&s, "n", &n), 0);
	CHECK_EQ(blkring__spec_check_unused(&s, "n"), -EINVAL);
	CHECK(strstr(blkring_last_error(), "null: unknown key 'zz'; known keys: n"));
	blkring__spec_free(&s);
}

static void test_open_errors(void)
{
	open_fails("nosuch:size=1", -ENODEV, "unknown device type 'nosuch'", "known types: null");
	open_fails("/dev/shm/x", -ENOENT, "'/dev/shm/x'", "no such file");
	open_fails("null:bogus=1", -EINVAL, "unknown key 'bogus'", "known keys: size, bs,");
	open_fails("null:size=12Q", -EINVAL, "key 'size'", "K, M, G or T");
	open_fails("null:size=1000", -EINVAL, "key 'size'", "multiple of bs");
	open_fails("null:size=0", -EINVAL, "key 'size'", "non-zero");
	open_fails("null:bs=1000", -EINVAL, "key 'bs'", "power of two from 512 to 4096");
	open_fails("null:bs=8K", -EINVAL, "key 'bs'", "power of two");
	open_fails("null:irq_cpu=1024", -EINVAL, "key 'irq_cpu'", "a CPU number below 1024");
	open_fails("null:irq_cpu=1023", -EINVAL, "irq_cpu=1023",
	           "not a CPU this process may run on");
	open_fails("null:submit_queues=4,irq_cpu=1023", -EINVAL, "irq_cpu=1023", "not a CPU");
	open_fails("null:submit_queues=0", -EINVAL, "key 'submit_queues'", "1 to 64");
	open_fails("null:poll_queues=65", -EINVAL, "key 'poll_queues'", "0 to 64");
	open_fails("null:hw_queue_depth=0", -EINVAL, "key 'hw_queue_depth'", "1 to 65536");
	open_fails("null:irqmode=4", -EINVAL, "key 'irqmode'", "none|softirq|timer|signal");
	open_fails("null:irqmode=hard", -EINVAL, "key 'irqmode'", "none|softirq|timer|signal");
	open_fails("null:completion_nsec=-5", -EINVAL, "key 'completion_nsec'", "integer");
	open_fails("null:completion_nsec=10000000001", -EINVAL, "key 'completion_nsec'", "10 s");
	open_fails("null:submit_nsec=10000000001", -EINVAL, "key 'submit_nsec'", "10 s");
	open_fails("null:spin_nsec=18446744073709551615", -EINVAL, "key 'spin_nsec'", "10 s");
	open_fails("null:memory_backed=2", -EINVAL, "key 'memory_backed'", "0 or 1");
	open_fails("null:discard=1", -EINVAL, "key 'discard'", "needs memory_backed=1");
	open_fails("null:write_zeroes=1", -EINVAL, "key 'write_zeroes'", "needs memory_backed=1");
	open_fails("null:bs=4096,max_sectors=4", -EINVAL, "key 'max_sectors'", "bs/512");
	open_fails("null:max_discard_sectors=0", -EINVAL, "key 'max_discard_sectors'", "bs/512");
	open_fails("null:max_write_zeroes_sectors=0", -EINVAL, "key 'max_write_zeroes_sectors'",
	           "bs/512");
	open_fails("null:mbps=x", -EINVAL, "key 'mbps'", "integer");
	open_fails("null:badblocks=5-3", -EINVAL, "key 'badblocks'", "START-END");
	open_fails("null:badblocks=1-2+", -EINVAL, "key 'badblocks'", "START-END");
	open_fails("null:badblocks=a", -EINVAL, "key 'badblocks'", "START-END");
	open_fails("null:badblocks=99999999999999999999999", -EINVAL, "key 'badblocks'",
	           "START-END");
	open_fails("null:ro=2", -EINVAL, "key 'ro'", "0 or 1");
	open_fails("null:/some/path", -EINVAL, "'/some/path': expected key=value", "takes no path");
}

/* A driver whose first item is opaque, as nbd's URI and rbd's POOL/IMAGE;
 * it opens nothing, and says what it was given. */
static char opened_arg[256];
static int opaque_open(struct blkring_spec *spec, struct blkring_dev **devp)
{
	(void)devp;
	snprintf(opened_arg, sizeof(opened_arg), "%s", spec->arg);
	return -ENOTSUP;
}

static const struct blkring_driver opaque = {
    .type = "opq", .arg = SPEC_ARG_OPAQUE, .arg_name = "THING", .open = opaque_open};
static const struct blkring_driver dup_null = {
    .type = "null", .arg = SPEC_ARG_NONE, .open = opaque_open};
/* The nbd driver is registered already: a second of its type is refused. */
static const struct blkring_driver fake_nbd = {
    .type = "nbd", .arg = SPEC_ARG_OPAQUE, .arg_name = "URI", .open = opaque_open};

static void test_opaque_first_item(void)
{
	struct blkring_dev *dev = NULL;
	struct blkring_spec s;

	CHECK_EQ(blkring__driver_register(&opaque), 0);
	CHECK_EQ(blkring__driver_register(&opaque), -EEXIST);
	CHECK_EQ(blkring__driver_register(&dup_null), -EEXIST);
	/* Verbatim up to the first unescaped comma, '=' and all. */
	s = parse_ok("opq:nbd+unix:///?socket=S.sock,a=1");
	CHECK(!strcmp(s.arg, "nbd+unix:///?socket=S.sock"));
	CHECK(!strcmp(blkring__spec_str(&s, "a"), "1"));
	blkring__spec_free(&s);
	s = parse_ok("opq:a\\,b=c");
	CHECK(!strcmp(s.arg, "a,b=c"));
	CHECK_EQ(s.nr, 0);
	blkring__spec_free(&s);
	/* Never made absolute, even when a directory of that name exists. */
	CHECK_EQ(mkdir("rbd", 0755) == 0 || errno == EEXIST, 1);
	CHECK_EQ(blkring_dev_open("opq:rbd/img,x=1", &dev), -ENOTSUP);
	CHECK(!strcmp(opened_arg, "rbd/img"));
	rmdir("rbd");
	open_fails("opq:", -EINVAL, "opq: expected opq:THING[,key=value...]", NULL);
	/* A path's first item is made absolute. */
	open_fails("table:rel-missing.table", -ENOENT, "/rel-missing.table", "cannot read");
}

/* An NBD URI is the nbd driver's spec, the URI its first item, before its
 * module is loaded too. */
static void test_nbd_uri(void)
{
	static const char *const uris[] = {"nbd://127.0.0.1/exp", "nbds://h:10809/e",
	                                   "nbd+unix:///e?socket=/tmp/s.sock",
	                                   "nbds+unix:///?socket=S.sock"};
	struct blkring_spec s;

	for (unsigned i = 0; i < ARRAY_SIZE(uris); i++) {
		char text[128];

		snprintf(text, sizeof(text), "%s,connections=2", uris[i]);
		s = parse_ok(text);
		CHECK(!strcmp(s.type, "nbd"));
		CHECK(!strcmp(s.arg, uris[i]));
		CHECK(!strcmp(blkring__spec_str(&s, "connections"), "2"));
		blkring__spec_free(&s);
		snprintf(text, sizeof(text), "nbd:%s", uris[i]);
		s = parse_ok(text);
		CHECK(!strcmp(s.arg, uris[i]));
		blkring__spec_free(&s);
	}
	/* The parse loaded the nbd module, whose type is then taken. */
	CHECK_EQ(blkring__driver_register(&fake_nbd), -EEXIST);
}

static void format_is(const struct blkring_spec *spec, const char *want)
{
	char buf[256];
	int len = blkring_spec_format(spec, buf, sizeof(buf));

	if (len != (int)strlen(want) || strcmp(buf, want))
		TEST_FAIL("format: '%s' (%d), expected '%s'", buf, len, want);
}

/* The public calls: what the tool and the nbdkit plugin use instead of
 * editing spec text. */
static void test_public_calls(void)
{
	struct blkring_spec *spec = NULL;
	struct blkring_dev *dev, *again;
	char small[8];

	CHECK_EQ(blkring_spec_parse("nosuch:a=1", &spec), -ENODEV);
	CHECK(spec == NULL);
	CHECK(strstr(blkring_last_error(), "unknown device type 'nosuch'"));
	CHECK_EQ(blkring_spec_parse("null:a=1,a=2", &spec), -EINVAL);
	CHECK_EQ(blkring_spec_parse(NULL, &spec), -EINVAL);
	CHECK_EQ(blkring_spec_parse("/tmp/a\\,b,direct=0", &spec), 0);
	CHECK(!strcmp(blkring_spec_type(spec), "file"));
	CHECK(!strcmp(blkring_spec_arg(spec), "/tmp/a,b"));
	CHECK(!strcmp(blkring_spec_get(spec, "direct"), "0"));
	CHECK(blkring_spec_get(spec, "size") == NULL);
	CHECK_EQ(blkring_spec_set(spec, "direct", "1"), 0);
	CHECK_EQ(blkring_spec_set(spec, "name", "x,y\\z"), 0);
	format_is(spec, "file:/tmp/a\\,b,direct=1,name=x\\,y\\\\z");
	CHECK_EQ(blkring_spec_set(spec, "direct", NULL), 0);
	CHECK_EQ(blkring_spec_set(spec, "absent", NULL), 0);
	format_is(spec, "file:/tmp/a\\,b,name=x\\,y\\\\z");
	CHECK_EQ(blkring_spec_set(spec, "a=b", "1"), -EINVAL);
	CHECK(strstr(blkring_last_error(), "key 'a=b': expected a name without '=' or ','"));
	CHECK_EQ(blkring_spec_set(spec, "", "1"), -EINVAL);
	CHECK_EQ(blkring_spec_format(spec, small, sizeof(small)), 27);
	CHECK(!strcmp(small, "file:/t"));
	blkring_spec_free(spec);

	/* Opening a spec opens the device its text names. */
	CHECK_EQ(blkring_spec_parse("null:size=1M,name=pub", &spec), 0);
	CHECK_EQ(blkring_spec_set(spec, "bs", "4096"), 0);
	CHECK_EQ(blkring_dev_open_spec(spec, &dev), 0);
	CHECK_EQ(blkring_dev_open("null:bs=4096,name=pub,size=1M", &again), 0);
	CHECK(dev == again);
	CHECK_EQ(blkring_dev_close(again), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	CHECK_EQ(blkring_spec_set(spec, "bs", "1000"), 0);
	CHECK_EQ(blkring_dev_open_spec(spec, &dev), -EINVAL);
	CHECK(strstr(blkring_last_error(), "key 'bs'"));
	for (unsigned i = 0; i < BLKRING_SPEC_MAX_KEYS - 3; i++) {
		char key[16];

		snprintf(key, sizeof(key), "k%u", i);
		CHECK_EQ(blkring_spec_set(spec, key, "1"), 0);
	}
	CHECK_EQ(blkring_spec_set(spec, "one_more", "1"), -EINVAL);
	CHECK(strstr(blkring_last_error(), "more than 32 keys"));
	blkring_spec_free(spec);
	blkring_spec_free(NULL);

	/* A first item set whole: a relative path with '=' stays a path. */
	CHECK_EQ(blkring_spec_parse("table:", &spec), 0);
	CHECK(blkring_spec_arg(spec) == NULL);
	CHECK_EQ(blkring_spec_set_arg(spec, ""), -EINVAL);
	CHECK_EQ(blkring_spec_set_arg(spec, "a=b,c.table"), 0);
	CHECK_EQ(blkring_spec_set(spec, "ro", "1"), 0);
	format_is(spec, "table:./a=b\\,c.table,ro=1");
	CHECK_EQ(blkring_spec_set_arg(spec, "/abs/x.table"), 0);
	format_is(spec, "table:/abs/x.table,ro=1");
	blkring_spec_free(spec);
	CHECK_EQ(blkring_spec_parse("null:size=1M", &spec), 0);
	CHECK_EQ(blkring_spec_set_arg(spec, "x"), -EINVAL);
	CHECK(strstr(blkring_last_error(), "null: takes no first item ('x')"));
	blkring_spec_free(spec);
}

static const struct test_case cases[] = {
    {"syntax", test_syntax, 0},
    {"syntax_errors", test_syntax_errors, 0},
    {"sizes", test_sizes, 0},
    {"getters", test_getters, 0},
    {"open_errors", test_open_errors, 0},
    {"opaque_first_item", test_opaque_first_item, 0},
    {"nbd_uri", test_nbd_uri, 0},
    {"public_calls", test_public_calls, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
