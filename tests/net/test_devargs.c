/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_devargs.c - device strings: good ones open the right driver with
 * the right settings; bad ones fail with EINVAL and a message that names
 * the bad part.
 */
#include "net_test.h"

static struct net_env env;

/* Opening @dev fails with EINVAL and a message containing @needle. */
static void bad(const char *dev, const char *needle)
{
	struct pp_port *p;

	pp_test_log_reset();
	errno = 0;
	p = pp_port_open(dev, &env.conf);
	CHECK(p == NULL);
	CHECK_EQ(errno, EINVAL);
	if (!pp_test_log_has(needle)) {
		fprintf(stderr, "device '%s': message lacks '%s'\n", dev, needle);
		pp_test_failures++;
	}
	if (p)
		pp_port_close(p);
}

static void test_bad_strings(void)
{
	bad("", "empty device string");
	bad("foo0", "unknown driver 'foo'");
	bad("foo0", "known drivers: null, veth");
	bad("null0,sz=64", "unknown key 'sz'");
	bad("null0,sz=64", "size=");
	bad("null0,size=abc", "bad value 'abc' for key 'size'");
	bad("null0,size=10", "bad value '10' for key 'size'");
	bad("null0,size=9999", "from 60 to");
	bad("null0,size", "'size' is not key=value");
	bad("null0,size=64,size=65", "key 'size' given twice");
	bad("null0,,size=64", "empty field");
	bad("null0,size=64,", "empty field");
	bad(",size=64", "no port name");
	bad("0,size=64", "no driver part");
	bad("null-0", "only letters, digits");
	bad("veth0", "needs peer=<name>");
	bad("veth0,peer=veth0", "bad value 'veth0' for key 'peer'");
	bad("veth0,peer=veth1,ring=1000", "not a power of two");
	bad("veth0,peer=veth1,ring=16", "bad value '16' for key 'ring'");
	bad("veth0,peer=veth1,_pair=x", "unknown key '_pair'");
	/* frag=: a size from headroom + frame to a page, or auto. */
	bad("null0,frag=0", "bad value '0' for key 'frag'");
	bad("null0,frag=0", "from 320 (headroom 256 + a 64-byte frame) to 4096 bytes");
	bad("null0,frag=4097", "bad value '4097' for key 'frag'");
	bad("null0,frag=8192", "to 4096 bytes (an RX pool page)");
	bad("null0,size=1500,frag=300", "from 320 (headroom 256 + a 64-byte frame)");
	bad("null0,frag=big", "or 'auto' to size each fragment to its frame");
	bad("null0,frag=-1", "bad value '-1' for key 'frag'");
	bad("veth0,peer=veth1,frag=0", "bad value '0' for key 'frag'");
	bad("veth0,peer=veth1,frag=4097", "to 4096 bytes (an RX pool page)");
	bad("veth0,peer=veth1,frag=4294967296", "bad value '4294967296'");
#ifdef PP_HAVE_AF_XDP
	bad("af_xdp:lo,frag=2048", "af_xdp takes no frag=");
#endif
#ifdef PP_HAVE_VIRTIO_USER
	/* Refused before any socket is touched. */
	bad("virtio_user0", "name the vhost-user socket");
	bad("virtio_user:path=/nonexistent,queue_size=100",
	    "queue_size=100 is not a power of two");
	bad("virtio_user:path=/nonexistent,queue_size=32",
	    "bad value '32' for key 'queue_size'");
	bad("virtio_user:path=/nonexistent,queues=2",
	    "queues=2 but the port was opened with 1 RX");
	bad("virtio_user:path=/nonexistent,server=2",
	    "bad value '2' for key 'server'");
	bad("virtio_user:path=/nonexistent,mac=02:00:00:00:00",
	    "is not six hex bytes");
	bad("virtio_user:path=/nonexistent,mac=02:00:00:00:00:100",
	    "is not six hex bytes");
	bad("virtio_user:path=/nonexistent,iface=x", "unknown key 'iface'");
#endif
}

#ifdef PP_HAVE_E1000E
/*
 * The e1000e's PCI address is refused where it enters, before the port's
 * other settings (no conf.dma here) and before any sysfs path is built:
 * no device is needed to see it.
 */
static void test_bad_pci_addr(void)
{
	bad("e1000e:../../../tmp", "'../../../tmp' is not a PCI address");
	bad("e1000e:../../../tmp", "write e1000e:ADDR or e1000e0,pci=ADDR");
	bad("e1000e:../../../tmp", "DDDD:BB:DD.F (hex: domain, bus, device 00-1f, function 0-7");
	bad("e1000e0,pci=0000:00:03.0/../../x", "'0000:00:03.0/../../x' is not");
	bad("e1000e0,pci=0000:00:20.0", "'0000:00:20.0' is not a PCI address");
	bad("e1000e0,pci=0000:00:03.8", "'0000:00:03.8' is not a PCI address");
	/* Good ones, either form and case, pass on to the next check. */
	bad("e1000e:00:03.0", "a PP_IOVA_VFIO domain");
	bad("e1000e0,pci=0000:00:1F.7", "a PP_IOVA_VFIO domain");
}
#endif

static void test_bad_conf(void)
{
	struct pp_port_conf c = env.conf;

	c.allocator = NULL;
	pp_test_log_reset();
	errno = 0;
	CHECK(pp_port_open("null0", &c) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK(pp_test_log_has("allocator is required"));

	c = env.conf;
	c.sz = 3;
	errno = 0;
	CHECK(pp_port_open("null0", &c) == NULL);
	CHECK_EQ(errno, EINVAL);

	c = env.conf;
	c.nr_rxq = 1;
	c.nr_txq = 2;
	pp_test_log_reset();
	CHECK(pp_port_open("veth0,peer=veth1", &c) == NULL);
	CHECK(pp_test_log_has("as many RX as TX queues"));
}

/*
 * A veth ring size from the conf (no ring= key) is checked as ring= is:
 * a ring of 2^31 slots is a bad value (EINVAL, the range named), not an
 * allocation that fails.
 */
static void test_bad_ring_size(void)
{
	static const unsigned int sizes[] = { 1u << 31, 0xffffffffu,
					      1u << 17, 32, 100 };
	struct pp_port_conf c = env.conf;
	struct pp_port *p;

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		c.ring_size = sizes[i];
		pp_test_log_reset();
		errno = 0;
		p = pp_port_open("veth0,peer=veth1", &c);
		CHECK(p == NULL);
		CHECK_EQ(errno, EINVAL);
		if (sizes[i] == 100)
			CHECK(pp_test_log_has("not a power of two"));
		else
			CHECK(pp_test_log_has("64 to 65536"));
		if (p)
			pp_port_close(p);
	}
	/* The key still overrides the conf. */
	c.ring_size = 1u << 31;
	p = pp_port_open("veth0,peer=veth1,ring=64", &c);
	CHECK(p != NULL);
	if (p)
		CHECK_EQ(pp_port_close(p), 0);
	c.ring_size = 65536;
	p = pp_port_open("veth0,peer=veth1", &c);
	CHECK(p != NULL);
	if (p)
		CHECK_EQ(pp_port_close(p), 0);
}

static void test_good_strings(void)
{
	struct pp_frame f[4] = { 0 };
	struct pp_port *p, *v;

	p = net_open(&env, "null7,size=1500");
	CHECK(!strcmp(pp_port_name(p), "null7"));
	CHECK(!strcmp(pp_port_driver(p), "null"));
	CHECK_EQ(pp_port_nr_rxq(p), 1);
	CHECK(pp_port_peer(p) == NULL);
	CHECK_EQ(pp_port_rx_burst(p, 0, f, 4), 4);
	CHECK_EQ(f[0].len, 1500);
	CHECK_EQ(f[0].headroom, PP_FRAME_HEADROOM);
	CHECK_EQ(pp_port_tx_burst(p, 0, f, 4), 4);
	CHECK_EQ(pp_port_close(p), 0);

	/* No digits: the name is the driver. */
	p = net_open(&env, "null");
	CHECK(!strcmp(pp_port_driver(p), "null"));
	CHECK_EQ(pp_port_close(p), 0);

	v = net_open(&env, "veth0,peer=vpeer,ring=64");
	CHECK(!strcmp(pp_port_driver(v), "veth"));
	REQUIRE(pp_port_peer(v) != NULL);
	CHECK(!strcmp(pp_port_name(pp_port_peer(v)), "vpeer"));
	CHECK(pp_port_peer(pp_port_peer(v)) == v);
	CHECK_EQ(pp_port_close(v), 0);
}

int main(void)
{
	pp_test_capture_log();
	net_env_init(&env, 8 << 20);
	RUN_TEST(test_bad_strings);
#ifdef PP_HAVE_E1000E
	RUN_TEST(test_bad_pci_addr);
#endif
	RUN_TEST(test_bad_conf);
	RUN_TEST(test_bad_ring_size);
	RUN_TEST(test_good_strings);
	net_env_fini(&env);
	return pp_test_result();
}
