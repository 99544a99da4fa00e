/* SPDX-License-Identifier: MIT */
/* What the kernel says limited a TCP sender (TCP_INFO), for ferry bench. */
#ifndef FERRY_UTIL_TCPINFO_H
#define FERRY_UTIL_TCPINFO_H

#include <stddef.h>
#include <stdint.h>

/* Cumulative since the connection began (µs); have_limits 0 on a kernel
 * older than 4.10, which does not keep them. */
struct tcpinfo {
	uint64_t busy_us, rwnd_limited_us, sndbuf_limited_us;
	uint32_t rtt_us;
	uint32_t rcvbuf, sndbuf;   /* SO_RCVBUF, SO_SNDBUF now (what the kernel counts) */
	int have_limits;
	/* bytes sent and of them sent again (cumulative; 0 before Linux 4.19) */
	uint64_t bytes_sent, bytes_retrans;
};

/* 0, or -1 when fd is not a TCP socket (or the call failed). */
int tcpinfo_get(int fd, struct tcpinfo *t);

#endif
