// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include <bpf/libbpf.h>

#include "base/fmt.h"
#include "base/log.h"
#include "kern/iface.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

int iface_sysfs_u64(const char *ifname, const char *attr, __u64 *val)
{
	char path[256], buf[64];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, attr);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		err = -EIO;
	else
		*val = strtoull(buf, NULL, 0);
	fclose(f);
	return err;
}

static int ethtool_ioctl(const char *ifname, void *cmd)
{
	struct ifreq ifr = {};
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		err = -errno;
	close(fd);
	return err;
}

unsigned int iface_count_queues(const char *ifname, const char *prefix)
{
	char path[256];
	unsigned int n = 0;

	for (;;) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/%s-%u", ifname, prefix, n);
		if (access(path, F_OK))
			return n;
		n++;
	}
}

int iface_get(const char *name, struct iface *out)
{
	struct ethtool_drvinfo drv = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = {};
	__u64 v;
	int fd, err = 0;

	memset(out, 0, sizeof(*out));
	if (strlen(name) >= IF_NAMESIZE)
		return -ENAMETOOLONG;
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->ifindex = (int)if_nametoindex(name);
	if (!out->ifindex)
		return -ENODEV;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	out->up = !!(ifr.ifr_flags & IFF_UP);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
		out->mtu = (unsigned int)ifr.ifr_mtu;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(out->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ethtool_ioctl(name, &drv) == 0)
		snprintf(out->driver, sizeof(out->driver), "%s", drv.driver);
	out->rx_queues = iface_count_queues(name, "rx");
	out->tx_queues = iface_count_queues(name, "tx");
	out->numa_node = -1;
	if (iface_sysfs_u64(name, "device/numa_node", &v) == 0)
		out->numa_node = (int)(__s64)v;
out:
	close(fd);
	return err;
}

int iface_veth_peer(const struct iface *ifc, char *peer, size_t len)
{
	char name[IF_NAMESIZE];
	__u64 iflink, back;

	if (strcmp(ifc->driver, "veth"))
		return -EOPNOTSUPP;
	if (iface_sysfs_u64(ifc->name, "iflink", &iflink))
		return -ENOENT;
	/*
	 * iflink is the peer's index in the peer's namespace. It is our peer
	 * only if a device here has that index and points back at us.
	 */
	if (!if_indextoname((unsigned int)iflink, name))
		return -ENOENT;
	if (iface_sysfs_u64(name, "iflink", &back) || back != (__u64)ifc->ifindex ||
	    (unsigned int)iflink == (unsigned int)ifc->ifindex)
		return -ENOENT;
	snprintf(peer, len, "%s", name);
	return 0;
}

int iface_napi_state(const char *name, bool *xdp_attached, bool *gro_on)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GGRO };
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int ifindex = (int)if_nametoindex(name), err;

	if (!ifindex)
		return -ENODEV;
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err)
		return err;
	/*
	 * Only a program in the driver gives a veth NAPI; a generic (skb) one
	 * does not (measured: redirected frames are still refused).
	 */
	*xdp_attached = q.attach_mode == XDP_ATTACHED_DRV || q.attach_mode == XDP_ATTACHED_HW ||
			(q.attach_mode == XDP_ATTACHED_MULTI && (q.drv_prog_id || q.hw_prog_id));
	err = ethtool_ioctl(name, &ev);
	if (err)
		return err;
	*gro_on = !!ev.data;
	return 0;
}

int iface_set_gro(const char *name, bool on)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_SGRO, .data = on };

	return ethtool_ioctl(name, &ev);
}

bool iface_still_there(const struct iface *ifc)
{
	char name[IF_NAMESIZE];

	return if_indextoname((unsigned int)ifc->ifindex, name) && !strcmp(name, ifc->name);
}

/*
 * The kernel sizes what ETHTOOL_GSTRINGS and ETHTOOL_GSTATS copy out by the
 * device's count at the time of the call, whatever the caller allocated, and
 * on veth that count follows the channel count (ethtool -L). So the count is
 * asked before every read, buffers get room for twice as many plus a margin
 * (a change between the two calls still fits), and the count the kernel says
 * it copied is checked: a mismatch means the names are stale, so read again.
 */
#define ESTATS_ROOM(n) (2 * (size_t)(n) + 64)
#define ESTATS_TRIES 4

static int estats_count(const char *ifname, unsigned int *n)
{
	struct {
		struct ethtool_sset_info hdr;
		__u32 buf[1];
	} sset = { .hdr = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_STATS } };
	int err = ethtool_ioctl(ifname, &sset);

	if (err)
		return err;
	*n = sset.hdr.sset_mask ? sset.hdr.data[0] : 0;
	return *n > 1000000 ? -E2BIG : 0;
}

/* The counters' names for a device that has n of them now; -EAGAIN if n changed. */
static int estats_load_names(struct iface_estats *st, unsigned int n)
{
	struct ethtool_gstrings *strs;
	char(*names)[ETH_GSTRING_LEN] = NULL;
	__u64 *values = NULL;
	int err = 0;

	strs = calloc(1, sizeof(*strs) + ESTATS_ROOM(n) * ETH_GSTRING_LEN);
	names = calloc(n ? n : 1, sizeof(*names));
	values = calloc(n ? n : 1, sizeof(*values));
	if (!strs || !names || !values) {
		err = -ENOMEM;
		goto out;
	}
	if (n) {
		strs->cmd = ETHTOOL_GSTRINGS;
		strs->string_set = ETH_SS_STATS;
		strs->len = n;
		err = ethtool_ioctl(st->ifname, strs);
		if (!err && strs->len != n)
			err = strs->len > ESTATS_ROOM(n) ? -EOVERFLOW : -EAGAIN;
		if (err)
			goto out;
	}
	for (unsigned int i = 0; i < n; i++) {
		memcpy(names[i], (char *)strs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		names[i][ETH_GSTRING_LEN - 1] = '\0';
	}
	free(st->names);
	free(st->values);
	st->names = names;
	st->values = values;
	st->n = n;
	st->names_gen++;
	names = NULL;
	values = NULL;
out:
	free(strs);
	free(names);
	free(values);
	return err;
}

int iface_estats__open(const char *ifname, struct iface_estats **out)
{
	struct iface_estats *st;
	int err;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	snprintf(st->ifname, sizeof(st->ifname), "%s", ifname);
	err = iface_estats_read(st);
	if (err)
		iface_estats__close(st);
	else
		*out = st;
	return err;
}

void iface_estats__close(struct iface_estats *st)
{
	if (!st)
		return;
	free(st->names);
	free(st->values);
	free(st);
}

/* One try: -EAGAIN when the count changed under it. */
static int estats_read_once(struct iface_estats *st)
{
	struct ethtool_stats *es;
	unsigned int n;
	int err;

	err = estats_count(st->ifname, &n);
	if (!err && (n != st->n || !st->names))
		err = estats_load_names(st, n);
	if (err || !n)
		return err;
	es = calloc(1, sizeof(*es) + ESTATS_ROOM(n) * sizeof(__u64));
	if (!es)
		return -ENOMEM;
	es->cmd = ETHTOOL_GSTATS;
	es->n_stats = n;
	err = ethtool_ioctl(st->ifname, es);
	if (!err && es->n_stats != n)
		err = es->n_stats > ESTATS_ROOM(n) ? -EOVERFLOW : -EAGAIN;
	if (!err)
		memcpy(st->values, es->data, (size_t)n * sizeof(__u64));
	free(es);
	return err;
}

int iface_estats_read(struct iface_estats *st)
{
	int err, i;

	for (i = 0; i < ESTATS_TRIES; i++) {
		err = estats_read_once(st);
		if (err != -EAGAIN)
			return err;
	}
	return err;
}

bool iface_estat(const struct iface_estats *st, const char *name, __u64 *val)
{
	unsigned int i;

	for (i = 0; st && i < st->n; i++) {
		if (!strcmp(st->names[i], name)) {
			*val = st->values[i];
			return true;
		}
	}
	return false;
}

static bool match_queue_stat(const char *name, const char *prefix, const char *suffix,
			     unsigned int *q)
{
	size_t pl = strlen(prefix), sl = strlen(suffix), nl = strlen(name);
	const char *p;
	char *end;

	if (nl <= pl + sl || strncmp(name, prefix, pl) || strcmp(name + nl - sl, suffix))
		return false;
	p = name + pl;
	if (*p < '0' || *p > '9')
		return false;
	*q = (unsigned int)strtoul(p, &end, 10);
	return end == name + nl - sl;
}

__u64 iface_estat_sum(const struct iface_estats *st, const char *prefix, const char *suffix,
		      bool *found)
{
	unsigned int i, q;
	__u64 sum = 0;

	if (found)
		*found = false;
	for (i = 0; st && i < st->n; i++) {
		if (match_queue_stat(st->names[i], prefix, suffix, &q)) {
			sum += st->values[i];
			if (found)
				*found = true;
		}
	}
	return sum;
}

bool iface_estat_queue(const struct iface_estats *st, const char *prefix, unsigned int q,
		       const char *suffix, __u64 *val)
{
	char name[64];

	snprintf(name, sizeof(name), "%s%u%s", prefix, q, suffix);
	return iface_estat(st, name, val);
}

bool iface_have_caps(char *missing, size_t len)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	bool bpf, net_admin, sys_admin;

	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(missing, len, "capabilities unreadable");
		return false;
	}
#define HAS(cap) (!!(data[(cap) / 32].effective & (1U << ((cap) % 32))))
	bpf = HAS(CAP_BPF);
	sys_admin = HAS(CAP_SYS_ADMIN);
	net_admin = HAS(CAP_NET_ADMIN);
#undef HAS
	if ((bpf || sys_admin) && net_admin)
		return true;
	snprintf(missing, len, "%s%s%s", (bpf || sys_admin) ? "" : "CAP_BPF",
		 (!(bpf || sys_admin) && !net_admin) ? " and " : "",
		 net_admin ? "" : "CAP_NET_ADMIN");
	return false;
}

int iface_first_addr(const char *ifname, int family, char *buf, size_t len)
{
	struct ifaddrs *ifa, *p;
	int err = -ENOENT;

	if (getifaddrs(&ifa))
		return -errno;
	for (p = ifa; p; p = p->ifa_next) {
		if (!p->ifa_addr || p->ifa_addr->sa_family != family || strcmp(p->ifa_name, ifname))
			continue;
		if (family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)p->ifa_addr)->sin_addr, buf,
				  (socklen_t)len);
		} else {
			const struct in6_addr *a = &((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr;

			if (a->s6_addr[0] == 0xfe && (a->s6_addr[1] & 0xc0) == 0x80)
				continue;
			inet_ntop(AF_INET6, a, buf, (socklen_t)len);
		}
		err = 0;
		break;
	}
	freeifaddrs(ifa);
	return err;
}

int iface_neigh_lookup(int ifindex, int family, const char *ip, char *ip_out, size_t ip_len,
		       unsigned char mac[6])
{
	struct {
		struct nlmsghdr nh;
		struct ndmsg nd;
	} req = {
		.nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
			.nlmsg_type = RTM_GETNEIGH,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = 1 },
		.nd = { .ndm_family = (__u8)family },
	};
	unsigned char want[16];
	size_t alen = family == AF_INET ? 4 : 16;
	char buf[16384];
	bool done = false;
	int fd, err = -ENOENT;

	if (ip && inet_pton(family, ip, want) != 1)
		return -EINVAL;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		err = -errno;
		goto out;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n <= 0)
			break;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (unsigned int)n);
		     nh = NLMSG_NEXT(nh, n)) {
			struct ndmsg *nd = NLMSG_DATA(nh);
			struct rtattr *rta;
			const void *dst = NULL, *ll = NULL;
			int rlen;

			if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			if (nh->nlmsg_type != RTM_NEWNEIGH || nd->ndm_ifindex != ifindex ||
			    nd->ndm_family != family ||
			    (nd->ndm_state & (NUD_FAILED | NUD_INCOMPLETE | NUD_NOARP)))
				continue;
			rlen = (int)RTM_PAYLOAD(nh);
			for (rta = RTM_RTA(nd); RTA_OK(rta, rlen); rta = RTA_NEXT(rta, rlen)) {
				if (rta->rta_type == NDA_DST && RTA_PAYLOAD(rta) == alen)
					dst = RTA_DATA(rta);
				else if (rta->rta_type == NDA_LLADDR && RTA_PAYLOAD(rta) == 6)
					ll = RTA_DATA(rta);
			}
			if (!dst || !ll || (ip && memcmp(dst, want, alen)))
				continue;
			if (err == 0)
				continue; /* keep the first match, drain the dump */
			memcpy(mac, ll, 6);
			inet_ntop(family, dst, ip_out, (socklen_t)ip_len);
			err = 0;
		}
	}
out:
	close(fd);
	return err;
}

/*
 * Where to look for a missing interface. Inside a lab (testenv.sh exec sets
 * XDPSG_LAB): this namespace's interfaces, by name. Outside: the labs that
 * exist (their state files), so the hint names the user's own lab.
 */
static void say_not_found(const char *name, const char *side)
{
	const char *lab = getenv("XDPSG_LAB"), *dir = getenv("TESTENV_STATE_DIR");
	char here[256] = "", labs[256] = "", first[64] = "";
	struct if_nameindex *ifs, *i;
	unsigned int nlabs = 0;
	struct dirent *e;
	size_t o = 0;
	DIR *d;

	if (lab && *lab) {
		ifs = if_nameindex();
		for (i = ifs; i && i->if_index && o < sizeof(here); i++)
			o += (size_t)snprintf(here + o, sizeof(here) - o, "%s%s", o ? ", " : "",
					      FMT_NAME(i->if_name));
		if (ifs)
			if_freenameindex(ifs);
		pr_warn("interface '%s' not found on the %s side of lab '%s'; its interfaces: %s\n",
			FMT_NAME(name), side, FMT_NAME(lab), here[0] ? here : "none");
		return;
	}
	d = opendir(dir && *dir ? dir : "/run/xdpsg-testenv");
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n <= 6 || strcmp(e->d_name + n - 6, ".state") || n - 6 >= sizeof(first))
			continue;
		if (!nlabs++)
			snprintf(first, sizeof(first), "%.*s", (int)(n - 6), e->d_name);
		if (o < sizeof(labs))
			o += (size_t)snprintf(labs + o, sizeof(labs) - o, "%s%.*s", o ? ", " : "",
					      (int)(n - 6), e->d_name);
	}
	if (d)
		closedir(d);
	if (!nlabs)
		pr_warn("interface '%s' not found in this namespace; check 'ip link' (no lab is set up: testenv/testenv.sh setup makes one)\n",
			FMT_NAME(name));
	else if (nlabs == 1)
		pr_warn("interface '%s' not found in this namespace; check 'ip link', or run in lab '%s': testenv/testenv.sh exec --name %s %s -- ...\n",
			FMT_NAME(name), first, first, side);
	else
		pr_warn("interface '%s' not found in this namespace; check 'ip link', or run in one of the labs (%s): testenv/testenv.sh exec --name NAME %s -- ...\n",
			FMT_NAME(name), labs, side);
}

int iface_preflight(const char *name, const char *side, struct iface *out)
{
	char missing[64], copy[IF_NAMESIZE];
	int err;

	snprintf(copy, sizeof(copy), "%s", name);
	if (!iface_have_caps(missing, sizeof(missing))) {
		pr_warn("missing privileges: needs %s (run as root)\n", missing);
		return -EPERM;
	}
	err = iface_get(copy, out);
	if (err == -ENAMETOOLONG || err == -ENODEV) {
		say_not_found(copy, side);
		return -EINVAL;
	}
	if (err) {
		pr_warn("cannot inspect interface %s: %s\n", copy, strerror(-err));
		return err;
	}
	if (!out->up) {
		pr_warn("interface %s is down; bring it up with 'ip link set dev %s up'\n", copy,
			copy);
		return -EINVAL;
	}
	return 0;
}

int netns_name_of(__u64 inum, char *buf, size_t len)
{
	char path[300];
	struct dirent *e;
	struct stat st;
	int err = -ENOENT;
	DIR *dir;

	dir = opendir("/run/netns");
	if (!dir)
		return -ENOENT;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", e->d_name);
		if (!stat(path, &st) && st.st_ino == inum) {
			snprintf(buf, len, "%s", e->d_name);
			err = 0;
			break;
		}
	}
	closedir(dir);
	return err;
}

int netns_self(char *buf, size_t len)
{
	struct stat self, host;

	buf[0] = '\0';
	if (stat("/proc/self/ns/net", &self))
		return 0;
	/* Inside ip netns exec, init's namespace may not be ours to look at: a name is enough. */
	if (stat("/proc/1/ns/net", &host))
		return !netns_name_of(self.st_ino, buf, len);
	if (self.st_ino == host.st_ino)
		return 0;
	if (netns_name_of(self.st_ino, buf, len))
		buf[0] = '\0';
	return 1;
}
