/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PARAMS_CMD_H
#define XDPSG_PARAMS_CMD_H

/*
 * A tool's command line from first argument to parsed config: which command
 * runs, and the answers to --help, --version and --man-options, which
 * params_parse() only reports.
 */
#include "cli/params.h"

const struct param_cmd *params_find_cmd(const struct param_cmd *const *cmds, const char *name);

/*
 * The first argument of a multi-command tool: --help, --version and the
 * hidden --man-options are answered here, as are a missing or unknown
 * command (one line, exit 2). Returns -1 with *cmd set when the tool should
 * go on parsing, otherwise the exit code.
 */
int params_dispatch(const char *prog, const char *summary, const struct param_cmd *const *cmds,
		    const void *defaults, int argc, char **argv, const struct param_cmd **cmd);

/*
 * A multi-command tool's command line in one call: params_dispatch(), then
 * params_parse() of the chosen command into cfg. Returns -1 with *cmd and
 * *positional set when the tool should run, otherwise its exit code (0 after
 * --help or --version, 2 after a usage error).
 */
int params_cmdline(const char *prog, const char *summary, const struct param_cmd *const *cmds,
		   const void *defaults, int argc, char **argv, void *cfg,
		   const struct param_cmd **cmd, const char **positional);

/*
 * params_parse() of one command, with --help and --version answered on
 * stdout. Returns -1 when the tool should run, otherwise its exit code (0
 * after --help or --version, 2 after a usage error).
 */
int params_command(const char *prog, const struct param_cmd *cmd, int argc, char **argv, void *cfg,
		   const void *defaults, const char **positional);

#endif
