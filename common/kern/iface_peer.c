// SPDX-License-Identifier: GPL-2.0
/*
 * The veth peer's side: which namespace holds it, whether it runs NAPI, and
 * turning GRO on there (xdp-gen kernel --fix-peer), from a thread that enters
 * the peer's namespace so the caller's stays as it was.
 */
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
#include "base/log.h"
#include "kern/iface.h"

/* One netlink request, one reply: the attribute 'type' of the reply's payload. */
static int nl_request(void *req, __u32 len, int want_type, int attr, void *val, size_t vlen,
		      size_t hdrlen)
{
	char buf[8192];
	struct nlmsghdr *nh;
	int fd, err = -ENOENT;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, req, len, 0) < 0) {
		err = -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (unsigned int)n); nh = NLMSG_NEXT(nh, n)) {
		struct rtattr *rta;
		int rlen;

		if (nh->nlmsg_type == NLMSG_ERROR) {
			err = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			break;
		}
		if (nh->nlmsg_type != want_type)
			continue;
		rta = (struct rtattr *)((char *)NLMSG_DATA(nh) + NLMSG_ALIGN(hdrlen));
		rlen = (int)(nh->nlmsg_len - NLMSG_LENGTH(hdrlen));
		for (; RTA_OK(rta, rlen); rta = RTA_NEXT(rta, rlen)) {
			if (rta->rta_type == attr && RTA_PAYLOAD(rta) >= vlen) {
				memcpy(val, RTA_DATA(rta), vlen);
				err = 0;
			}
		}
		break;
	}
out:
	close(fd);
	return err;
}

/* The netns id (seen from here) of the namespace the link's peer is in. */
static int link_peer_nsid(int ifindex, __s32 *nsid)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
			.nlmsg_type = RTM_GETLINK,
			.nlmsg_flags = NLM_F_REQUEST },
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
	};

	return nl_request(&req, req.nh.nlmsg_len, RTM_NEWLINK, IFLA_LINK_NETNSID, nsid,
			  sizeof(*nsid), sizeof(struct ifinfomsg));
}

/* The netns id of the namespace behind fd, as this namespace numbers it. */
static int nsid_of_fd(int nsfd, __s32 *nsid)
{
	struct {
		struct nlmsghdr nh;
		struct rtgenmsg g;
		char pad[3];
		struct rtattr rta;
		__u32 fd;
	} req = {
		.nh = { .nlmsg_len = sizeof(req),
			.nlmsg_type = RTM_GETNSID,
			.nlmsg_flags = NLM_F_REQUEST },
		.g = { .rtgen_family = AF_UNSPEC },
		.rta = { .rta_len = RTA_LENGTH(sizeof(__u32)), .rta_type = NETNSA_FD },
		.fd = (__u32)nsfd,
	};

	return nl_request(&req, sizeof(req), RTM_NEWNSID, NETNSA_NSID, nsid, sizeof(*nsid),
			  sizeof(struct rtgenmsg));
}

struct peer_job {
	int nsfd;
	int ifindex;
	int gro; /* -1 leave, 0 off, 1 on */
	bool fix;
	struct peer_napi *out;
	int err;
};

/* Runs in its own thread: setns() changes only the calling thread. */
static void *peer_job_run(void *arg)
{
	struct peer_job *j = arg;

	if (j->nsfd >= 0 && setns(j->nsfd, CLONE_NEWNET)) {
		j->err = -errno;
		return NULL;
	}
	if (!if_indextoname((unsigned int)j->ifindex, j->out->name)) {
		j->err = -ENOENT;
		return NULL;
	}
	if (j->gro >= 0) {
		j->err = iface_set_gro(j->out->name, j->gro);
		return NULL;
	}
	j->err = iface_napi_state(j->out->name, &j->out->xdp, &j->out->gro);
	if (!j->err && j->fix && !j->out->xdp && !j->out->gro) {
		j->err = iface_set_gro(j->out->name, true);
		j->out->fixed = !j->err;
	}
	return NULL;
}

/* Open the named namespace holding the peer; -1 in *nsfd when it is ours. */
static int find_peer_ns(const struct iface *ifc, int *nsfd, char *name, size_t len)
{
	struct dirent *d;
	__s32 want, got;
	DIR *dir;
	int fd, err;

	*nsfd = -1;
	name[0] = '\0';
	err = link_peer_nsid(ifc->ifindex, &want);
	if (err == -ENOENT)
		return 0; /* no IFLA_LINK_NETNSID: the peer is here */
	if (err)
		return err;
	dir = opendir("/run/netns");
	if (!dir)
		return -ENOENT;
	err = -ENOENT;
	while ((d = readdir(dir))) {
		char path[300];

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", d->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!nsid_of_fd(fd, &got) && got == want) {
			*nsfd = fd;
			snprintf(name, len, "%.*s", (int)(len - 1), d->d_name);
			err = 0;
			break;
		}
		close(fd);
	}
	closedir(dir);
	return err;
}

static int peer_job(const struct iface *ifc, int gro, bool fix, struct peer_napi *out)
{
	struct peer_job j = { .gro = gro, .fix = fix, .out = out };
	pthread_t th;
	__u64 iflink;
	int err;

	memset(out, 0, sizeof(*out));
	if (strcmp(ifc->driver, "veth"))
		return -EOPNOTSUPP;
	if (iface_sysfs_u64(ifc->name, "iflink", &iflink))
		return -ENOENT;
	j.ifindex = (int)iflink;
	err = find_peer_ns(ifc, &j.nsfd, out->netns, sizeof(out->netns));
	if (err)
		return err;
	err = -pthread_create(&th, NULL, peer_job_run, &j);
	if (!err) {
		pthread_join(th, NULL);
		err = j.err;
	}
	if (j.nsfd >= 0)
		close(j.nsfd);
	return err;
}

int iface_peer_napi(const struct iface *ifc, bool fix, struct peer_napi *out)
{
	return peer_job(ifc, -1, fix, out);
}

int iface_peer_set_gro(const struct iface *ifc, bool on)
{
	struct peer_napi tmp;

	return peer_job(ifc, on, false, &tmp);
}
