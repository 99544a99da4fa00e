/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the file protocol's decoders: msg_decode and
 * hello_decode. Whatever decodes must re-encode, and the encoding must
 * equal the input byte for byte (the wire form is canonical: no field is
 * lost or invented between the wire and the structs), and decode again to
 * the same message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/msg.h"

/* The code under test, compiled into this translation unit: the libraries
 * are built without -fsanitize=fuzzer-no-link, so libFuzzer would see no
 * coverage inside ferry_proto (it would fuzz blind). The harness target is
 * compiled with -fsanitize=fuzzer; these definitions win over the archive's
 * (whose objects are then never pulled in). */
#include "proto/wire.c"
#include "proto/msg.c"

static uint8_t enc1[MSG_MAX_ENCODED], enc2[MSG_MAX_ENCODED];

static void check_msg(const uint8_t *data, size_t size)
{
	struct msg *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);

	if (!a || !b)
		abort();
	if (msg_decode(data, size, a) == 0) {
		int n1 = msg_encode(a, enc1, sizeof enc1);
		if (n1 < 0)
			abort();   /* a decoded message must be encodable */
		/* The decoder refuses NULs in strings and trailing bytes, and
		 * every field it reads is written back: the wire form is
		 * canonical, so the bytes must round-trip exactly. */
		if ((size_t)n1 != size || memcmp(enc1, data, size) != 0)
			abort();
		if (msg_decode(enc1, (size_t)n1, b) != 0)
			abort();   /* our own encoding must decode */
		int n2 = msg_encode(b, enc2, sizeof enc2);
		if (n2 != n1 || memcmp(enc1, enc2, (size_t)n1) != 0)
			abort();   /* encode(decode(encode(x))) == encode(x) */
		if (a->type != b->type)
			abort();
	}
	free(a);
	free(b);
}

static void check_hello(const uint8_t *data, size_t size)
{
	struct hello a, b;
	uint8_t e1[256], e2[256];

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (hello_decode(data, size, &a) != 0)
		return;
	int n1 = hello_encode(&a, e1, sizeof e1);
	if (n1 < 0 || (size_t)n1 != size || memcmp(e1, data, size) != 0)
		abort();   /* canonical, as for messages */
	if (hello_decode(e1, (size_t)n1, &b) != 0)
		abort();
	if (a.version != b.version || a.features != b.features || strcmp(a.software, b.software))
		abort();
	int n2 = hello_encode(&b, e2, sizeof e2);
	if (n2 != n1 || memcmp(e1, e2, (size_t)n1) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_msg(data, size);
	check_hello(data, size);
	return 0;
}
