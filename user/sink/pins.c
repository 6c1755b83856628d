// SPDX-License-Identifier: GPL-2.0
/* --pin: the maps under /sys/fs/bpf/xdp-sink/IFNAME/, for bpftool while the sink runs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "kern/xdp_attach.h"
#include "sink.h"
#include "xdp_sink.skel.h"

static const struct {
	const char *name;
	unsigned int bit;
} pins[] = {
	{ "stats", SINK_PIN_STATS },
	{ "tx_port", SINK_PIN_TX_PORT },
	{ "xsks", SINK_PIN_XSKS },
	{ "blackhole", SINK_PIN_BLACKHOLE },
	{ "blackhole_stats", SINK_PIN_BLACKHOLE },
};

#define NPINS (sizeof(pins) / sizeof(pins[0]))

static int check_bpffs(void)
{
	struct statfs st;

	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC) {
		pr_warn("bpffs is not mounted at /sys/fs/bpf; mount it with 'mount -t bpf bpf /sys/fs/bpf' (inside 'ip netns exec' too)\n");
		return -ENOENT;
	}
	return 0;
}

void sink_unpin_maps(struct sink *sk, bool rmdir_too)
{
	char path[192];
	unsigned int i;

	for (i = 0; i < NPINS; i++) {
		snprintf(path, sizeof(path), "%s/%s", sk->pin_dir, pins[i].name);
		unlink(path);
	}
	if (rmdir_too) {
		rmdir(sk->pin_dir);
		rmdir(SINK_PIN_ROOT); /* only succeeds when no other sink pins there */
	}
}

static bool pin_dir_busy(const char *dir)
{
	char path[192];
	unsigned int i;

	for (i = 0; i < NPINS; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pins[i].name);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

/*
 * The pid of a process that uses the pinned maps (holds an fd to one), or 0
 * when none does: pins left by --keep-pins or by a sink that was killed.
 */
static int pins_holder(const char *dir)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[192];
	unsigned int i;
	int fd, pid = 0;

	for (i = 0; i < NPINS && !pid; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pins[i].name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			pid = xdp_attach_find_holder("map_id", info.id);
		close(fd);
	}
	return pid;
}

/* 0, -EEXIST (stale pins, usage error) or another -errno. */
int sink_pin_maps(struct sink *sk)
{
	char path[192];
	unsigned int i;
	int err;

	err = check_bpffs();
	if (err)
		return -EEXIST;
	snprintf(sk->pin_dir, sizeof(sk->pin_dir), "%s/%s", SINK_PIN_ROOT, sk->ifc.name);
	if (pin_dir_busy(sk->pin_dir)) {
		int pid = pins_holder(sk->pin_dir);

		if (!sk->cfg->force) {
			if (pid)
				pr_warn("maps pinned in %s are in use by a running xdp-sink (pid %d); stop it first, or use --force to replace its pins\n",
					sk->pin_dir, pid);
			else
				pr_warn("maps from an earlier run are still pinned in %s (--keep-pins, or a sink that was killed); remove them with 'rm -r %s' or use --force\n",
					sk->pin_dir, sk->pin_dir);
			return -EEXIST;
		}
		sink_unpin_maps(sk, false);
	}
	if ((mkdir(SINK_PIN_ROOT, 0700) && errno != EEXIST) ||
	    (mkdir(sk->pin_dir, 0700) && errno != EEXIST)) {
		err = -errno;
		pr_warn("cannot create %s: %s\n", sk->pin_dir, strerror(-err));
		return err;
	}
	sk->pinned = true;
	for (i = 0; i < NPINS; i++) {
		if (!(sk->ops->pins & pins[i].bit))
			continue;
		snprintf(path, sizeof(path), "%s/%s", sk->pin_dir, pins[i].name);
		err = bpf_map__pin(bpf_object__find_map_by_name(sk->skel->obj, pins[i].name), path);
		if (!err && chmod(path, 0600))
			err = -errno;
		if (err) {
			pr_warn("cannot pin %s: %s\n", path, strerror(-err));
			return err;
		}
	}
	pr_info("maps pinned in %s (bpftool map dump pinned %s/stats)\n", sk->pin_dir, sk->pin_dir);
	return 0;
}
