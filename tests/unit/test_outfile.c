// SPDX-License-Identifier: GPL-2.0
/*
 * Output files: written beside the target and renamed at the end, so a run
 * that fails keeps the old file; a symlink target is refused, never followed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/outfile.h"
#include "test.h"

static char dir[64];

static void mkdir_tmp(void)
{
	snprintf(dir, sizeof(dir), "/tmp/xdpsg-outfile.XXXXXX");
	if (!mkdtemp(dir))
		dir[0] = '\0';
}

static void rm_tmp(void)
{
	char path[400];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool holds(const char *path, const char *text)
{
	char buf[128] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return !strcmp(buf, text);
}

/* Files in dir, the test's own ones included. */
static int entries(void)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void test_commit_replaces(void)
{
	char path[128];
	struct outfile o;

	mkdir_tmp();
	snprintf(path, sizeof(path), "%s/h.csv", dir);
	put(path, "old\n");
	ASSERT_OK(outfile_check("--hist", path), "check an existing file");
	if (ASSERT_OK(outfile_open(&o, "--hist", path), "open")) {
		fputs("new\n", o.f);
		ASSERT_TRUE(holds(path, "old\n"), "old content until the commit");
		ASSERT_OK(outfile_commit(&o), "commit");
	}
	ASSERT_TRUE(holds(path, "new\n"), "new content after it");
	ASSERT_EQ(entries(), 1, "no temporary file left");
	rm_tmp();
}

static void test_abort_keeps_old(void)
{
	char path[128];
	struct outfile o;

	mkdir_tmp();
	snprintf(path, sizeof(path), "%s/h.csv", dir);
	put(path, "old\n");
	if (ASSERT_OK(outfile_open(&o, "--hist", path), "open")) {
		fputs("half", o.f);
		outfile_abort(&o);
	}
	ASSERT_TRUE(holds(path, "old\n"), "a failed run keeps the old file");
	ASSERT_EQ(entries(), 1, "no temporary file left");
	rm_tmp();
}

static void test_symlink_refused(void)
{
	char path[128], target[128];
	struct outfile o;

	mkdir_tmp();
	snprintf(path, sizeof(path), "%s/link.csv", dir);
	snprintf(target, sizeof(target), "%s/target", dir);
	put(target, "precious\n");
	ASSERT_OK(symlink(target, path), "make a symlink");
	ASSERT_ERR(outfile_check("--hist", path), -EINVAL, "check refuses a symlink");
	ASSERT_ERR(outfile_open(&o, "--hist", path), -EINVAL, "open refuses a symlink");
	ASSERT_TRUE(holds(target, "precious\n"), "the symlink's target is untouched");
	/* A dangling symlink too: following it would create a file elsewhere. */
	unlink(target);
	ASSERT_ERR(outfile_check("--hist", path), -EINVAL, "check refuses a dangling symlink");
	ASSERT_TRUE(access(target, F_OK) != 0, "nothing created through it");
	rm_tmp();
}

/*
 * A symlink put at the path after the open (the check passed, the run is
 * writing) is replaced by the commit's rename: the data lands at the path
 * and the file the symlink named is never opened.
 */
static void test_symlink_after_open_replaced(void)
{
	char path[128], victim[128];
	struct outfile o;
	struct stat st;

	mkdir_tmp();
	snprintf(path, sizeof(path), "%s/c.pcap", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	put(path, "old\n");
	put(victim, "precious\n");
	if (ASSERT_OK(outfile_open(&o, "--capture", path), "open")) {
		fputs("new\n", o.f);
		unlink(path);
		ASSERT_OK(symlink(victim, path), "symlink swapped in");
		ASSERT_OK(outfile_commit(&o), "commit replaces the symlink");
	}
	ASSERT_TRUE(holds(victim, "precious\n"), "the symlink's target is untouched");
	ASSERT_TRUE(!lstat(path, &st) && S_ISREG(st.st_mode), "the path is a regular file again");
	ASSERT_TRUE(holds(path, "new\n"), "with the new content");
	ASSERT_EQ(entries(), 2, "no temporary file left");
	rm_tmp();
}

static void test_bad_places(void)
{
	char path[128];

	mkdir_tmp();
	snprintf(path, sizeof(path), "%s/missing/h.csv", dir);
	ASSERT_ERR(outfile_check("--hist", path), -EINVAL, "missing directory");
	ASSERT_ERR(outfile_check("--hist", dir), -EINVAL, "a directory is not a file");
	rm_tmp();
}

static const struct test_case cases[] = {
	TEST_CASE(commit_replaces), TEST_CASE(abort_keeps_old),
	TEST_CASE(symlink_refused), TEST_CASE(symlink_after_open_replaced),
	TEST_CASE(bad_places),
};

TEST_MAIN("outfile", cases)
