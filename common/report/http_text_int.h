/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_HTTP_TEXT_INT_H
#define XDPSG_HTTP_TEXT_INT_H

/* Between http_text.c and http_text_listen.c. */
#include "report/http_text.h"

/*
 * A non-blocking listening socket on o->spec (a port alone: 127.0.0.1), the
 * address it is bound to in addr as ADDR:PORT or [ADDR6]:PORT; or -1 after
 * one line on stderr naming o->prog, o->option and the fix.
 */
int http_text_listen(const struct http_text_opts *o, char *addr, size_t len);

#endif
