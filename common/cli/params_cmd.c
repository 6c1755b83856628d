// SPDX-License-Identifier: GPL-2.0
/*
 * From argv to a command and its config: the first argument picks the
 * command (or asks for help, the version or the man page's options), the
 * rest are that command's options. Here the answers params_parse() only
 * reports are printed, so parsing never writes to stdout.
 */
#include <stdio.h>
#include <string.h>
#include "cli/params_cmd.h"
#include "cli/params_doc.h"
#include "shared.h"

const struct param_cmd *params_find_cmd(const struct param_cmd *const *cmds, const char *name)
{
	int i;

	for (i = 0; cmds[i]; i++)
		if (!strcmp(cmds[i]->name, name))
			return cmds[i];
	return NULL;
}

static void cmd_names(const struct param_cmd *const *cmds, const char *sep, const char *last,
		      char *buf, size_t len)
{
	size_t off = 0;
	int i, n = 0;

	while (cmds[n])
		n++;
	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i == 0 ? "" : (i == n - 1 ? last : sep), cmds[i]->name);
}

int params_dispatch(const char *prog, const char *summary, const struct param_cmd *const *cmds,
		    const void *defaults, int argc, char **argv, const struct param_cmd **cmd)
{
	char names[256];

	*cmd = NULL;
	if (argc < 2) {
		cmd_names(cmds, "|", "|", names, sizeof(names));
		fprintf(stderr,
			"%s: missing command; usage: %s %s [OPTIONS] IFNAME (see %s --help)\n",
			prog, prog, names, prog);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		params_usage_tool(stdout, prog, summary, cmds);
		return 0;
	}
	if (!strcmp(argv[1], "--man-options")) {
		params_man_tool(stdout, cmds, defaults);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		if (argc > 2 && (!strcmp(argv[2], "--json") || !strcmp(argv[2], "-j")))
			params_version_json(stdout, prog, cmds);
		else
			printf("%s %s\n", prog, XDPSG_VERSION);
		return 0;
	}
	*cmd = params_find_cmd(cmds, argv[1]);
	if (!*cmd) {
		cmd_names(cmds, ", ", " or ", names, sizeof(names));
		fprintf(stderr, "%s: unknown command '%s'; use %s (see %s --help)\n", prog, argv[1],
			names, prog);
		return 2;
	}
	return -1;
}

static bool cmd_takes(const struct param_cmd *cmd, const char *name, size_t len)
{
	const struct param_def *d;
	int i;

	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++)
		for (d = cmd->tables[i]; d->name; d++)
			if (strlen(d->name) == len && !strncmp(d->name, name, len))
				return true;
	return false;
}

/*
 * A long option this command does not take but another does (xdp-gen kernel
 * --stream): one line that names the commands that take it, rather than
 * "unknown", which reads as a typo. 0 if there is none such.
 */
static int other_cmds_option(const char *prog, const struct param_cmd *const *cmds,
			     const struct param_cmd *cmd, int argc, char **argv)
{
	int i, j, n;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		const char *name = argv[i] + 2;
		size_t len = strcspn(name, "=");

		if (strncmp(argv[i], "--", 2) || !len || cmd_takes(cmd, name, len))
			continue;
		for (j = 0, n = 0; cmds[j]; j++)
			n += cmd_takes(cmds[j], name, len);
		if (!n)
			continue;
		fprintf(stderr, "%s %s: --%.*s is an option of", prog, cmd->name, (int)len, name);
		for (j = 0; cmds[j]; j++)
			if (cmd_takes(cmds[j], name, len))
				fprintf(stderr, " %s %s%s", prog, cmds[j]->name, --n ? "," : "");
		fprintf(stderr, ", not of %s; see '%s %s --help'\n", cmd->name, prog, cmd->name);
		return 1;
	}
	return 0;
}

int params_cmdline(const char *prog, const char *summary, const struct param_cmd *const *cmds,
		   const void *defaults, int argc, char **argv, void *cfg,
		   const struct param_cmd **cmd, const char **positional)
{
	int err = params_dispatch(prog, summary, cmds, defaults, argc, argv, cmd);

	if (err >= 0)
		return err;
	if (other_cmds_option(prog, cmds, *cmd, argc, argv))
		return 2;
	return params_command(prog, *cmd, argc - 1, argv + 1, cfg, defaults, positional);
}

int params_command(const char *prog, const struct param_cmd *cmd, int argc, char **argv, void *cfg,
		   const void *defaults, const char **positional)
{
	int err = params_parse(prog, cmd, argc, argv, cfg, positional);

	switch (err) {
	case PARAMS_OK:
		return -1;
	case PARAMS_HELP:
		params_usage(stdout, prog, cmd, defaults);
		return 0;
	case PARAMS_VERSION:
		printf("%s %s\n", prog, XDPSG_VERSION);
		return 0;
	default:
		return 2;
	}
}
