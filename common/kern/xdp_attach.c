// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "base/log.h"
#include "kern/xdp_attach.h"

struct xdp_attachment {
	int link_fd; /* a BPF link: the kernel detaches when the last fd closes */
	struct xdp_program *prog; /* else libxdp's netlink attachment */
	int ifindex;
	enum xdp_attach_mode mode;
	bool single;
};

int xdp_attach_find_holder(const char *key, unsigned int id)
{
	char path[600], line[128], want[48];
	struct dirent *p, *f;
	DIR *proc, *fds;
	int pid = 0;

	snprintf(want, sizeof(want), "%s:\t%u\n", key, id);
	proc = opendir("/proc");
	if (!proc)
		return 0;
	while (!pid && (p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9' || atoi(p->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!pid && (f = readdir(fds))) {
			FILE *fi;

			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", p->d_name, f->d_name);
			fi = fopen(path, "r");
			if (!fi)
				continue;
			while (fgets(line, sizeof(line), fi))
				if (!strcmp(line, want)) {
					pid = atoi(p->d_name);
					break;
				}
			fclose(fi);
		}
		closedir(fds);
	}
	closedir(proc);
	return pid;
}

static int prog_name_by_id(unsigned int id, char *name, unsigned long len)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	int fd, err;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	if (!err)
		snprintf(name, len, "%s", info.name);
	close(fd);
	return err;
}

int xdp_attach_query(int ifindex, unsigned int *prog_id, char *name, unsigned long name_len,
		     int *holder_pid)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p;
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err;

	*prog_id = 0;
	*holder_pid = 0;
	name[0] = '\0';
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err)
		return err;
	if (q.attach_mode == XDP_ATTACHED_NONE)
		return 0;
	*prog_id = q.prog_id ? q.prog_id : (q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id);
	prog_name_by_id(*prog_id, name, name_len);
	/* Behind a libxdp dispatcher, name the first real program instead. */
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (!libxdp_get_error(mp) && mp) {
		if (!xdp_multiprog__is_legacy(mp)) {
			p = xdp_multiprog__next_prog(NULL, mp);
			if (p) {
				snprintf(name, name_len, "%s", xdp_program__name(p));
				*prog_id = xdp_program__id(p);
			}
		}
		xdp_multiprog__close(mp);
	}
	*holder_pid = xdp_attach_find_holder("prog_id", *prog_id);
	return 0;
}

static int detach_existing(int ifindex)
{
	struct xdp_multiprog *mp;
	int err;

	mp = xdp_multiprog__get_from_ifindex(ifindex);
	err = libxdp_get_error(mp);
	if (err || !mp)
		return err ? err : -ENOENT;
	err = xdp_multiprog__detach(mp);
	xdp_multiprog__close(mp);
	return err;
}

/*
 * The BPF link that holds program prog_id on ifindex, as an fd; -ENOENT if the
 * program is attached some other way. Link ids are global and an ifindex is
 * only unique within a namespace, so the program id must match too.
 */
static int xdp_link_of(int ifindex, unsigned int prog_id)
{
	__u32 id = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info;
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_XDP &&
		    info.xdp.ifindex == (__u32)ifindex && info.prog_id == prog_id)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/*
 * --force: take the interface from whatever holds it. A program behind a BPF
 * link cannot be replaced over netlink (the kernel answers EBUSY), so the link
 * itself is detached: its holder keeps a link to nothing and receives no more.
 */
static int take_over(const struct xdp_attach_opts *o, unsigned int id, const char *name, int pid)
{
	int lfd = xdp_link_of(o->ifindex, id), err;

	if (lfd < 0) {
		pr_info("replacing XDP program %s (id %u) on %s (--force)\n", name, id, o->ifname);
		err = detach_existing(o->ifindex);
		if (err)
			pr_warn("cannot remove the XDP program on %s: %s; try 'ip link set dev %s xdp off'\n",
				o->ifname, strerror(-err), o->ifname);
		return err;
	}
	err = bpf_link_detach(lfd) ? -errno : 0;
	close(lfd);
	if (err) {
		if (pid)
			pr_warn("cannot take %s from the BPF link of pid %d: %s; stop that process ('kill %d')\n",
				o->ifname, pid, strerror(-err), pid);
		else
			pr_warn("cannot detach the BPF link that holds %s: %s; stop the process that holds it\n",
				o->ifname, strerror(-err));
		return err;
	}
	if (pid)
		pr_warn("took %s over (--force): detached program %s (id %u) from the BPF link of pid %d, which receives nothing more\n",
			o->ifname, name, id, pid);
	else
		pr_warn("took %s over (--force): detached program %s (id %u) from its BPF link\n",
			o->ifname, name, id);
	return 0;
}

/*
 * Attach through a BPF link where the kernel has them (5.9+): the program is
 * then detached by the kernel when the process ends, however it ends (SIGKILL,
 * a crash), so nothing of ours outlives a run.
 */
static int attach_link(struct xdp_attachment *a, struct bpf_object *obj, const char *prog_name,
		       const struct xdp_attach_opts *o)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts,
		    .flags = o->mode == XDPSG_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog_name);
	int fd;

	if (!p) {
		pr_warn("no program %s in the BPF object\n", prog_name);
		return -ENOENT;
	}
	fd = bpf_link_create(bpf_program__fd(p), o->ifindex, BPF_XDP, &lopts);
	if (fd < 0)
		return fd;
	a->link_fd = fd;
	a->single = true;
	pr_debug("%s attached to %s through a BPF link\n", prog_name, o->ifname);
	return 0;
}

/* Without links: libxdp over netlink; a killed run then leaves its program behind. */
static int attach_libxdp(struct xdp_attachment *a, struct bpf_object *obj, const char *prog_name,
			 const struct xdp_attach_opts *o)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, popts, .obj = obj, .prog_name = prog_name);
	struct xdp_multiprog *mp;
	int err;

	a->prog = xdp_program__create(&popts);
	err = libxdp_get_error(a->prog);
	if (err) {
		a->prog = NULL;
		pr_warn("cannot prepare program %s: %s\n", prog_name, strerror(-err));
		return err;
	}
	/* libxdp tries its dispatcher first; where that fails it falls back quietly. */
	log_libbpf_expect_failures(true);
	err = xdp_program__attach(a->prog, o->ifindex, a->mode, 0);
	log_libbpf_expect_failures(false);
	if (err) {
		/*
		 * veth (and drivers alike) refuse a program that is not frags-aware
		 * where a frame may not fit one page: an MTU above about 3.5 KB.
		 */
		if (err == -ERANGE) {
			char mtu[32] = "";

			if (o->mtu)
				snprintf(mtu, sizeof(mtu), " (%u)", o->mtu);
			pr_warn("cannot attach %s to %s: its MTU%s is too large for a program that takes frames in one buffer (about 3.5 KB on veth); lower it (ip link set dev %s mtu 3000)\n",
				prog_name, o->ifname, mtu, o->ifname);
			err = -EOPNOTSUPP;
		} else if (err == -EOPNOTSUPP && a->mode == XDP_MODE_NATIVE)
			pr_warn("native XDP is not supported on %s; use -m skb\n", o->ifname);
		else if (err == -EOPNOTSUPP || err == -EINVAL)
			pr_warn("cannot attach XDP to %s in %s mode: %s; check the MTU (native XDP on veth needs about 3.5 KB or less) or try the other -m mode\n",
				o->ifname, a->mode == XDP_MODE_NATIVE ? "native" : "skb",
				strerror(-err));
		else if (err != -EBUSY && err != -EEXIST)
			pr_warn("cannot attach %s to %s: %s\n", prog_name, o->ifname,
				strerror(-err));
		xdp_program__close(a->prog);
		a->prog = NULL;
		return err;
	}
	mp = xdp_multiprog__get_from_ifindex(o->ifindex);
	if (!libxdp_get_error(mp) && mp) {
		a->single = xdp_multiprog__is_legacy(mp);
		xdp_multiprog__close(mp);
	}
	if (a->single)
		pr_debug("libxdp's dispatcher is not available here; %s is attached on its own\n",
			 prog_name);
	return 0;
}

int xdp_attachment__create(struct bpf_object *obj, const char *prog_name,
			   const struct xdp_attach_opts *o, struct xdp_attachment **out)
{
	struct xdp_attachment *a;
	unsigned int id;
	char name[64];
	int pid, err;

	*out = NULL;
	err = xdp_attach_query(o->ifindex, &id, name, sizeof(name), &pid);
	if (err) {
		pr_warn("cannot query XDP state of %s: %s\n", o->ifname, strerror(-err));
		return err;
	}
	if (id) {
		bool ours = o->own_prefix && !strncmp(name, o->own_prefix, strlen(o->own_prefix));

		if (!o->force) {
			if (ours && !pid)
				pr_warn("a stale %s program (%s, id %u) that no process holds is still attached to %s (left by a killed run attached by netlink); rerun with --force to replace it, or remove it with 'ip link set dev %s xdp off'\n",
					o->tool, name, id, o->ifname, o->ifname);
			else if (ours)
				pr_warn("%s is in use by a running %s (program %s, id %u, pid %d); stop it first, or use --force to replace its program\n",
					o->ifname, o->tool, name, id, pid);
			else if (pid)
				pr_warn("%s already has an XDP program (%s, id %u, held by pid %d); use --force to replace it\n",
					o->ifname, name[0] ? name : "unnamed", id, pid);
			else
				pr_warn("%s already has an XDP program (%s, id %u); use --force to replace it\n",
					o->ifname, name[0] ? name : "unnamed", id);
			return -EBUSY;
		}
		err = take_over(o, id, name[0] ? name : "unnamed", pid);
		if (err)
			return err;
	}

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->link_fd = -1;
	a->ifindex = o->ifindex;
	a->mode = o->mode == XDPSG_MODE_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	err = attach_link(a, obj, prog_name, o);
	if (err == -EBUSY || err == -EEXIST || err == -ENOENT)
		goto fail;
	if (err) {
		/* No XDP links here (before Linux 5.9), or refused: netlink says why. */
		pr_debug("no BPF link for %s (%s); attaching through libxdp\n", prog_name,
			 strerror(-err));
		err = attach_libxdp(a, obj, prog_name, o);
		if (err)
			goto fail;
	}
	*out = a;
	return 0;
fail:
	if (err == -EBUSY || err == -EEXIST) {
		pr_warn("%s is busy: another XDP program was attached meanwhile; use --force to replace it\n",
			o->ifname);
		err = -EBUSY;
	}
	free(a);
	return err;
}

void xdp_attachment__destroy(struct xdp_attachment *a)
{
	int err;

	if (!a)
		return;
	if (a->link_fd >= 0) {
		close(a->link_fd); /* the last reference: the kernel detaches */
		free(a);
		return;
	}
	err = xdp_program__detach(a->prog, a->ifindex, a->mode, 0);
	if (err)
		pr_warn("detaching the XDP program failed: %s; remove it with 'ip link set dev <if> xdp off'\n",
			strerror(-err));
	xdp_program__close(a->prog);
	free(a);
	/* libxdp's lock directory: removed when empty, so no trace stays in bpffs. */
	rmdir("/sys/fs/bpf/xdp");
}

bool xdp_attachment_is_single(const struct xdp_attachment *a)
{
	return a && a->single;
}

/*
 * Still ours: the link still on the interface (another's --force detaches it,
 * leaving a link to nothing), or the program libxdp attached alone still the
 * one there. A dispatcher's slot cannot be asked cheaply: held, then.
 */
bool xdp_attachment_held(const struct xdp_attachment *a)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info), id = 0;

	if (!a)
		return false;
	if (a->link_fd >= 0) {
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(a->link_fd, &info, &len))
			return true; /* cannot tell: no false alarm */
		return info.xdp.ifindex == (__u32)a->ifindex;
	}
	if (!a->prog || !a->single)
		return true;
	if (bpf_xdp_query_id(a->ifindex,
			     a->mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE,
			     &id))
		return true;
	return id == xdp_program__id(a->prog);
}
