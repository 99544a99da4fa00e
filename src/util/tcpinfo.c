/* SPDX-License-Identifier: MIT */
/* The kernel's own account of a TCP sender (linux/tcp.h's struct tcp_info,
 * which is newer than libc's netinet/tcp.h: the two cannot be included
 * together, hence a file of its own). */
#include "util/tcpinfo.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

int tcpinfo_get(int fd, struct tcpinfo *t)
{
	struct tcp_info i;
	socklen_t len = sizeof i;

	memset(t, 0, sizeof *t);
	memset(&i, 0, sizeof i);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &i, &len) < 0)
		return -1;
	t->rtt_us = i.tcpi_rtt;
	int v;
	socklen_t vl = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &vl) == 0 && v > 0)
		t->rcvbuf = (uint32_t)v;
	vl = sizeof v;
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &vl) == 0 && v > 0)
		t->sndbuf = (uint32_t)v;
	/* busy / rwnd / sndbuf limited: Linux 4.10 and later; an older kernel
	 * returns a shorter struct and leaves them 0 */
	if (len >= offsetof(struct tcp_info, tcpi_sndbuf_limited) + sizeof i.tcpi_sndbuf_limited) {
		t->busy_us = i.tcpi_busy_time;
		t->rwnd_limited_us = i.tcpi_rwnd_limited;
		t->sndbuf_limited_us = i.tcpi_sndbuf_limited;
		t->have_limits = 1;
	}
	if (len >= offsetof(struct tcp_info, tcpi_bytes_retrans) + sizeof i.tcpi_bytes_retrans) {
		t->bytes_sent = i.tcpi_bytes_sent;
		t->bytes_retrans = i.tcpi_bytes_retrans;
	}
	return 0;
}
