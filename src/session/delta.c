/* SPDX-License-Identifier: MIT */
#include "session/delta.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "channel/channel.h"
#include "session/filedata.h"
#include "session/progress.h"
#include "session/zdata.h"
#include "util/err.h"

/* A literal run is sent once it is this long, so the scan buffer stays bounded. */
#define LIT_MAX (256u << 10)
#define SCAN_CAP (LIT_MAX + DELTA_MAX_BLOCK + (1u << 20))
/* Weak-sum candidates checked per offset: a basis of equal blocks (an
 * all-zero image) must not make the scan quadratic, as it once did rsync. */
#define MAX_CANDIDATES 16

uint32_t delta_block_size(uint64_t size)
{
	uint64_t b = 1;

	while (b * b < size)
		b <<= 1;
	/* between a power of two and the next: the square root, rounded to 64 */
	while (b > 64 && (b / 2) * (b / 2) >= size)
		b >>= 1;
	b = (b + 63) & ~(uint64_t)63;
	if (b < DELTA_MIN_BLOCK)
		b = DELTA_MIN_BLOCK;
	if (b > DELTA_MAX_BLOCK)
		b = DELTA_MAX_BLOCK;
	return (uint32_t)b;
}

/* b = sum((len - i) * p[i]). Over 16 bytes at a time: b grows by 16 times
 * the sum before them plus sum((16 - j) * p[j]), and a byte at a time:
 * a += p, b += a. Every step is exact mod 2^32, so each way of summing
 * gives the definition's value. The box sums every block of its basis (and
 * the PC every window after a match): this was 72 % of the box's CPU in a
 * pull before SSE2 did 16 bytes at once. */
#if defined(__SSE2__)
#include <emmintrin.h>

static uint32_t hsum32(__m128i v)
{
	v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
	v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
	return (uint32_t)_mm_cvtsi128_si32(v);
}

static uint32_t sum16(const uint8_t *p, uint32_t chunks, uint32_t *pa, uint32_t *pb)
{
	const __m128i zero = _mm_setzero_si128();
	const __m128i w_lo = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9);
	const __m128i w_hi = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
	__m128i va = zero, vprefix = zero, vw = zero;

	for (uint32_t c = 0; c < chunks; c++, p += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		vprefix = _mm_add_epi32(vprefix, va);
		va = _mm_add_epi32(va, _mm_sad_epu8(v, zero));
		vw = _mm_add_epi32(vw, _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), w_lo));
		vw = _mm_add_epi32(vw, _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), w_hi));
	}
	*pa = hsum32(va);
	*pb = 16 * hsum32(vprefix) + hsum32(vw);
	return chunks * 16;
}
#else
static uint32_t sum16(const uint8_t *p, uint32_t chunks, uint32_t *pa, uint32_t *pb)
{
	uint32_t a = 0, b = 0;

	for (uint32_t c = 0; c < chunks; c++, p += 16) {
		uint32_t s = 0, w = 0;
		for (uint32_t j = 0; j < 16; j++) {
			s += p[j];
			w += (16 - j) * (uint32_t)p[j];
		}
		b += 16 * a + w;
		a += s;
	}
	*pa = a;
	*pb = b;
	return chunks * 16;
}
#endif

void roll_init(struct roll *r, const uint8_t *p, uint32_t len)
{
	uint32_t a, b, i = sum16(p, len / 16, &a, &b);

	for (; i < len; i++) {
		a += p[i];
		b += a;
	}
	r->len = len;
	r->a = a;
	r->b = b;
}

uint64_t delta_strong(const uint8_t *p, size_t len)
{
	return XXH3_64bits(p, len);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* --- the receiver's side: the basis's signature ---------------------------- */

uint32_t delta_group(uint32_t block, uint32_t nblocks)
{
	uint32_t g = DELTA_GROUP;

	if (nblocks < DELTA_TWO_LEVEL_BLOCKS)
		return 0;
	while (g > 1 && (uint64_t)block * g > DELTA_MAX_COARSE)
		g /= 2;
	return g >= 2 ? g : 0;
}

/* The rolling sum of x then y, from theirs: every byte of x weighs len(y)
 * more (b = sum((len - i) * p[i])), exact mod 2^32 like the sums. */
static void roll_cat(struct roll *x, const struct roll *y)
{
	x->b += y->len * x->a + y->b;
	x->a += y->a;
	x->len += y->len;
}

/* Reads what is needed to sign, and carries the whole-file hash along. */
struct signer {
	const struct basis *b;
	uint32_t block;
	uint8_t *buf;              /* owned, block bytes */
	XXH3_state_t *whole;       /* borrowed, or NULL */
	XXH3_state_t *part;        /* owned: a coarse entry's strong sum */
};

static void read_block(struct signer *g, uint64_t k)
{
	/* a file that shrank: zeros, which the final hash check rejects */
	if (basis_read(g->b, g->buf, g->block, k * g->block) < 0)
		memset(g->buf, 0, g->block);
	if (g->whole)
		XXH3_128bits_update(g->whole, g->buf, g->block);
}

/* One entry: the sums of `per` blocks from block `first`. */
static void sign_entry(struct signer *g, uint64_t first, uint32_t per, uint8_t *out)
{
	struct roll r = { 0 }, one;
	uint64_t strong;

	if (per > 1)
		XXH3_64bits_reset(g->part);
	for (uint32_t i = 0; i < per; i++) {
		read_block(g, first + i);
		roll_init(&one, g->buf, g->block);
		if (i == 0)
			r = one;
		else
			roll_cat(&r, &one);
		if (per > 1)
			XXH3_64bits_update(g->part, g->buf, g->block);
	}
	strong = per > 1 ? XXH3_64bits_digest(g->part) : delta_strong(g->buf, g->block);
	put32(out, roll_sum(&r));
	put64(out + 4, strong);
}

/* SIG records for entries first .. first + count - 1, each of `per` blocks
 * (per 1: entry k is block k). */
static int sign_run(struct conn *c, struct signer *g, uint32_t index, uint32_t first,
		    uint32_t count, uint32_t per)
{
	static uint8_t ent[SIG_MAX_BLOCKS * SIG_ENTRY_LEN];
	struct msg m = { .type = MSG_SIG };
	int rc = 0;

	while (rc == 0 && count) {
		uint16_t k = (uint16_t)(count < SIG_MAX_BLOCKS ? count : SIG_MAX_BLOCKS);
		for (uint16_t i = 0; i < k; i++)
			sign_entry(g, (uint64_t)(first + i) * per, per, ent + i * SIG_ENTRY_LEN);
		m.u.sig = (struct m_sig){ .index = index, .first = first, .count = k, .entries = ent };
		rc = conn_send(c, &m);
		first += k;
		count -= k;
	}
	return rc;
}

static int signer_open(struct signer *g, const struct basis *b, uint32_t block,
		       XXH3_state_t *whole)
{
	*g = (struct signer){ .b = b, .block = block, .whole = whole };
	g->buf = malloc(block);
	g->part = XXH3_createState();
	if (!g->buf || !g->part) {
		free(g->buf);
		if (g->part)
			XXH3_freeState(g->part);
		return err_set(-ENOMEM, "out of memory");
	}
	return 0;
}

static void signer_close(struct signer *g)
{
	free(g->buf);
	XXH3_freeState(g->part);
}

/* FILE_SIG or WANT_DELTA, then the signature of the basis in SIG records
 * (per group of `group` blocks when group > 1); with h, the whole file (its
 * tail too) goes into h on the same read. */
static int sig_stream(struct conn *c, uint8_t type, const struct basis *b, uint32_t index,
		      uint32_t block, uint64_t size, uint32_t group, XXH3_state_t *h)
{
	uint32_t n = (uint32_t)(size / block), per = group > 1 ? group : 1;
	struct msg m = { .type = type };
	struct signer g;
	int rc = signer_open(&g, b, block, h);

	if (rc < 0)
		return rc;
	m.u.want_delta = (struct m_want_delta){ .index = index, .block = block, .size = size,
						.group = (uint8_t)(group > 1 ? group : 0) };
	rc = conn_send(c, &m);
	if (rc == 0)
		rc = sign_run(c, &g, index, 0, n / per, per);
	uint64_t tail = size - (uint64_t)n * block;
	if (rc == 0 && h && tail) {
		if (basis_read(b, g.buf, (size_t)tail, (uint64_t)n * block) < 0)
			memset(g.buf, 0, (size_t)tail);
		XXH3_128bits_update(h, g.buf, (size_t)tail);
	}
	signer_close(&g);
	return rc;
}

int delta_sig_send(struct conn *c, const struct basis *b, uint32_t index, uint32_t group)
{
	return sig_stream(c, MSG_WANT_DELTA, b, index, b->block, (uint64_t)b->nblocks * b->block,
			  group, NULL);
}

int delta_refine_send(struct conn *c, const struct basis *b, uint32_t index, uint32_t group,
		      uint32_t first, uint32_t count)
{
	uint64_t from = (uint64_t)first * group, to = (uint64_t)(first + count) * group;
	struct signer g;
	int rc;

	if (to > b->nblocks)
		to = b->nblocks;
	if (from >= to)
		return 0;
	if ((rc = signer_open(&g, b, b->block, NULL)) < 0)
		return rc;
	rc = sign_run(c, &g, index, (uint32_t)from, (uint32_t)(to - from), 1);
	signer_close(&g);
	return rc;
}

int delta_file_sig_send(struct conn *c, int fd, uint32_t index, uint64_t size,
			uint8_t hash[MSG_HASH_LEN])
{
	XXH3_state_t *h = XXH3_createState();
	struct basis b;
	int rc;

	if (!h)
		return err_set(-ENOMEM, "out of memory");
	basis_init(&b);
	b.fd[0] = fd;   /* borrowed */
	b.size[0] = size;
	basis_layout_bytes(&b);
	XXH3_128bits_reset(h);
	rc = sig_stream(c, MSG_FILE_SIG, &b, index, delta_block_size(size), size, 0, h);
	filedata_hash_out(h, hash);
	XXH3_freeState(h);
	return rc;
}

/* --- the sender's side: the signature as it arrives ------------------------- */

static int bit(const uint8_t *bits, uint64_t k)
{
	return bits[k / 8] >> (k % 8) & 1;
}

static void set_bit(uint8_t *bits, uint64_t k)
{
	bits[k / 8] |= (uint8_t)(1u << (k % 8));
}

int delta_sig_init(struct delta_sig *s, const struct m_want_delta *w)
{
	memset(s, 0, sizeof *s);
	s->index = w->index;
	s->block = w->block;
	s->size = w->size;
	s->n = (uint32_t)(w->size / w->block);
	if (w->size / w->block > DELTA_MAX_BLOCKS)
		return err_set(-EBADMSG, "protocol: a signature of %llu blocks (the most is %u)",
			       (unsigned long long)(w->size / w->block), DELTA_MAX_BLOCKS);
	if (w->group > 1) {   /* the decoder checked it against the block and size */
		s->group = w->group;
		s->ng = s->n / s->group;
	}
	/* calloc: with two levels only the fine entries that came are set */
	if (s->n && (!(s->weak = calloc(s->n, sizeof *s->weak)) ||
		     !(s->strong = calloc(s->n, sizeof *s->strong))))
		goto oom;
	if (s->group && (!(s->cweak = malloc((size_t)s->ng * sizeof *s->cweak)) ||
			 !(s->cstrong = malloc((size_t)s->ng * sizeof *s->cstrong)) ||
			 !(s->asked = calloc(s->ng / 8 + 1, 1)) ||
			 !(s->known = calloc(s->n / 8 + 1, 1))))
		goto oom;
	return 0;
oom:
	delta_sig_free(s);
	return err_set(-ENOMEM, "out of memory for a signature of %u blocks", s->n);
}

/* A fine entry while refining: only blocks of groups asked, each once, in
 * order (the receiver answers the REFINEs in the order they went). */
static int fine_add(struct delta_sig *s, const struct m_sig *m)
{
	if (m->first < s->fine_next || m->first > s->n || m->count > s->n - m->first ||
	    m->count > s->fine_left)
		goto bad;
	for (uint32_t i = 0; i < m->count; i++) {
		uint32_t k = m->first + i;
		if (!bit(s->asked, k / s->group))
			goto bad;
		s->weak[k] = get32(m->entries + i * SIG_ENTRY_LEN);
		s->strong[k] = get64(m->entries + i * SIG_ENTRY_LEN + 4);
		set_bit(s->known, k);
	}
	s->fine_next = m->first + m->count;
	s->fine_left -= m->count;
	return 0;
bad:
	return err_set(-EBADMSG, "protocol: SIG for entry %u blocks %u..%u, which were not asked "
		       "(or came twice)", m->index, m->first, m->first + m->count);
}

int delta_sig_add(struct delta_sig *s, const struct m_sig *m)
{
	uint32_t total = s->group ? s->ng : s->n;

	if (m->index != s->index)
		goto bad;
	if (s->refining)
		return fine_add(s, m);
	if (m->first != s->have || m->count > total - s->have)
		goto bad;
	for (uint16_t i = 0; i < m->count; i++) {
		const uint8_t *e = m->entries + i * SIG_ENTRY_LEN;
		if (s->group) {
			s->cweak[s->have + i] = get32(e);
			s->cstrong[s->have + i] = get64(e + 4);
		} else {
			s->weak[s->have + i] = get32(e);
			s->strong[s->have + i] = get64(e + 4);
		}
	}
	s->have += m->count;
	return 0;
bad:
	return err_set(-EBADMSG, "protocol: SIG for entry %u blocks %u..%u, expected %u of %u",
		       m->index, m->first, m->first + m->count, s->have,
		       s->group ? s->ng : s->n);
}

int delta_sig_coarse_done(const struct delta_sig *s)
{
	return s->have == (s->group ? s->ng : s->n);
}

int delta_sig_ready(const struct delta_sig *s)
{
	return delta_sig_coarse_done(s) && (!s->group || (s->refining && !s->fine_left));
}

void delta_sig_free(struct delta_sig *s)
{
	free(s->weak);
	free(s->strong);
	free(s->cweak);
	free(s->cstrong);
	free(s->asked);
	free(s->known);
	free(s->cm);
	s->weak = s->cweak = NULL;
	s->strong = s->cstrong = NULL;
	s->asked = s->known = NULL;
	s->cm = NULL;
}

/* --- the sender's side: matching ------------------------------------------- */

/* The entries one scan matches with: the fine ones (one block each, those
 * that came), or the coarse ones (a group of `per` blocks each). */
struct sums {
	uint32_t len, n, per;      /* bytes an entry covers, entries, blocks an entry */
	const uint32_t *weak;
	const uint64_t *strong;
	const uint8_t *known;      /* NULL: all */
};

static struct sums fine_sums(const struct delta_sig *s)
{
	return (struct sums){ .len = s->block, .n = s->n, .per = 1, .weak = s->weak,
			      .strong = s->strong, .known = s->group ? s->known : NULL };
}

static struct sums coarse_sums(const struct delta_sig *s)
{
	return (struct sums){ .len = s->block * s->group, .n = s->ng, .per = s->group,
			      .weak = s->cweak, .strong = s->cstrong };
}

static int usable(const struct sums *u, int32_t i)
{
	return i >= 0 && (uint32_t)i < u->n && (!u->known || bit(u->known, (uint32_t)i));
}

/* Chained hash table of the signature's weak sums. */
struct index {
	uint32_t mask;
	int32_t *head, *next;      /* owned */
};

static uint32_t bucket(const struct index *x, uint32_t weak)
{
	return (weak * 0x9e3779b1u) >> 7 & x->mask;
}

static int index_build(struct index *x, const struct sums *u)
{
	uint32_t nb = 1024;

	while (nb < 2 * u->n && nb < (1u << 26))
		nb <<= 1;
	x->mask = nb - 1;
	x->head = malloc(nb * sizeof *x->head);
	x->next = malloc((u->n ? u->n : 1) * sizeof *x->next);
	if (!x->head || !x->next) {
		free(x->head);
		free(x->next);
		return err_set(-ENOMEM, "out of memory for the delta index");
	}
	memset(x->head, 0xff, nb * sizeof *x->head);
	/* backwards, so that a chain lists its blocks in file order */
	for (uint32_t i = u->n; i-- > 0;) {
		if (!usable(u, (int32_t)i))
			continue;
		uint32_t b = bucket(x, u->weak[i]);
		x->next[i] = x->head[b];
		x->head[b] = (int32_t)i;
	}
	return 0;
}

static void index_free(struct index *x)
{
	free(x->head);
	free(x->next);
}

/* The entry equal to the window, or -1: the one after the last match
 * first (runs of equal blocks then coalesce into one COPY). */
static int32_t find(const struct index *x, const struct sums *u, uint32_t weak,
		    const uint8_t *win, int32_t prefer)
{
	uint64_t strong = 0;
	int have_strong = 0, tries = 0;

	if (usable(u, prefer) && u->weak[prefer] == weak) {
		strong = delta_strong(win, u->len);
		have_strong = 1;
		if (u->strong[prefer] == strong)
			return prefer;
	}
	for (int32_t i = x->head[bucket(x, weak)]; i >= 0 && tries < MAX_CANDIDATES; i = x->next[i]) {
		if (u->weak[i] != weak)
			continue;
		tries++;
		if (!have_strong) {
			strong = delta_strong(win, u->len);
			have_strong = 1;
		}
		if (u->strong[i] == strong)
			return i;
	}
	return -1;
}

/* The new file, read through a bounded buffer: bytes [base, base + len). */
struct scan {
	struct conn *c;
	int fd;
	uint64_t size, base;
	uint8_t *buf;              /* owned, SCAN_CAP */
	size_t len;
	uint8_t status;            /* FILE_OK, or why the data is not the file's */
	XXH3_state_t *h;           /* owned */
	uint32_t copy_block, copy_count;   /* a COPY not sent yet */
	int32_t last;              /* the last entry matched, -1: none */
	struct delta_sig *found;   /* a dry scan (pass one): matches go here, nothing is sent */
	struct xfer_stats *st;
	struct progress *pg;
};

/* Makes [from, to) available, keeping what is at or after `keep`. */
static int fill(struct scan *sc, uint64_t keep, uint64_t to)
{
	if (to <= sc->base + sc->len)
		return 0;
	if (keep >= sc->base + sc->len) {   /* nothing to keep: start afresh there */
		sc->base = keep;
		sc->len = 0;
	}
	size_t drop = (size_t)(keep - sc->base);
	memmove(sc->buf, sc->buf + drop, sc->len - drop);
	sc->len -= drop;
	sc->base = keep;
	while (sc->base + sc->len < to) {
		size_t want = SCAN_CAP - sc->len;
		uint64_t left = sc->size - (sc->base + sc->len);
		if (want > left)
			want = (size_t)left;
		ssize_t k = pread(sc->fd, sc->buf + sc->len, want, (off_t)(sc->base + sc->len));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {   /* shrank or failed: zeros, and the receiver is told */
			if (sc->status == FILE_OK)
				sc->status = k < 0 ? FILE_READ_ERROR : FILE_CHANGED;
			memset(sc->buf + sc->len, 0, want);
			k = (ssize_t)want;
		}
		sc->len += (size_t)k;
	}
	return 0;
}

static int flush_copy(struct scan *sc)
{
	struct msg m = { .type = MSG_COPY };

	if (!sc->copy_count)
		return 0;
	m.u.copy = (struct m_copy){ .block = sc->copy_block, .count = sc->copy_count };
	sc->copy_count = 0;
	return conn_send(sc->c, &m);
}

static int send_literal(struct scan *sc, uint64_t from, uint64_t to)
{
	int rc;

	if (from == to || sc->found)
		return 0;
	const uint8_t *p = sc->buf + (from - sc->base);
	size_t n = (size_t)(to - from);
	if ((rc = flush_copy(sc)) < 0 || (rc = zdata_send_buf(sc->c, p, n, sc->st)) < 0)
		return rc;
	XXH3_128bits_update(sc->h, p, n);
	sc->st->bytes_data += n;
	if (sc->pg)
		progress_bytes(sc->pg, n);
	return 0;
}

/* Pass one remembers where a group is; nothing is sent. */
static int note_found(struct delta_sig *s, uint64_t pos, uint32_t group)
{
	if (s->ncm == s->cmcap) {
		size_t cap = s->cmcap ? 2 * s->cmcap : 256;
		void *p = realloc(s->cm, cap * sizeof *s->cm);
		if (!p)
			return err_set(-ENOMEM, "out of memory");
		s->cm = p;
		s->cmcap = cap;
	}
	s->cm[s->ncm++] = (struct delta_coarse_match){ .pos = pos, .group = group };
	return 0;
}

/* Blocks block .. block + count - 1 of the basis are the `len` bytes at win. */
static int add_copy(struct scan *sc, uint32_t block, uint32_t count, const uint8_t *win,
		    uint32_t len)
{
	int rc;

	XXH3_128bits_update(sc->h, win, len);
	sc->st->bytes_matched += len;
	if (sc->pg)
		progress_matched(sc->pg, len);
	if (sc->copy_count && block == sc->copy_block + sc->copy_count) {
		sc->copy_count += count;
		return 0;
	}
	if ((rc = flush_copy(sc)) < 0)
		return rc;
	sc->copy_block = block;
	sc->copy_count = count;
	return 0;
}

static int matched(struct scan *sc, const struct sums *u, int32_t k, uint64_t pos,
		   const uint8_t *win)
{
	sc->last = k;
	if (sc->found)
		return note_found(sc->found, pos, (uint32_t)k);
	return add_copy(sc, (uint32_t)k * u->per, u->per, win, u->len);
}

/* rsync's scan over [from, to): a window of one entry's length rolls over
 * the file a byte at a time; where it equals an entry, its blocks are
 * copied and the window jumps. */
static int scan_range(struct scan *sc, const struct index *x, const struct sums *u,
		      uint64_t from, uint64_t to)
{
	const uint32_t bs = u->len;
	uint64_t pos = from, lit = from;
	struct roll r;
	int rolled = 0, rc = 0;

	while (rc == 0 && u->n && pos + bs <= to) {
		if (pos - lit >= LIT_MAX) {   /* a long run: send it now */
			if ((rc = send_literal(sc, lit, pos)) < 0)
				break;
			lit = pos;
		}
		uint64_t need = pos + bs + (pos + bs < to);
		if ((rc = fill(sc, lit, need)) < 0)
			break;
		const uint8_t *win = sc->buf + (pos - sc->base);
		if (!rolled) {
			roll_init(&r, win, bs);
			rolled = 1;
		}
		int32_t k = find(x, u, roll_sum(&r), win, sc->last + 1);
		if (k >= 0) {
			if ((rc = send_literal(sc, lit, pos)) < 0 ||
			    (rc = matched(sc, u, k, pos, win)) < 0)
				break;
			pos += bs;
			lit = pos;
			rolled = 0;
			continue;
		}
		if (pos + bs < to)
			roll_rotate(&r, win[0], win[bs]);
		pos++;
	}
	/* the tail (or all of a range with no whole block), in pieces */
	while (rc == 0 && !sc->found && lit < to) {
		uint64_t end = to - lit > LIT_MAX ? lit + LIT_MAX : to;
		if ((rc = fill(sc, lit, end)) == 0)
			rc = send_literal(sc, lit, end);
		lit = end;
	}
	return rc;
}

/* Pass two: a group pass one found, read again for the whole-file hash. */
static int copy_group(struct scan *sc, const struct delta_sig *s,
		      const struct delta_coarse_match *m)
{
	uint64_t len = (uint64_t)s->block * s->group;
	int rc = fill(sc, m->pos, m->pos + len);

	if (rc == 0)
		rc = add_copy(sc, m->group * s->group, s->group, sc->buf + (m->pos - sc->base),
			      (uint32_t)len);
	sc->last = (int32_t)((m->group + 1) * s->group - 1);
	return rc;
}

/* Sends the file: one level, a single scan; two, the groups pass one found
 * and the fine entries over the gaps between them. */
static int scan_file(struct scan *sc, const struct index *x, const struct delta_sig *s)
{
	struct sums u = fine_sums(s);
	uint64_t from = 0;
	int rc = 0;

	sc->last = -1;
	for (size_t i = 0; rc == 0 && s->group && i < s->ncm; i++) {
		if ((rc = scan_range(sc, x, &u, from, s->cm[i].pos)) == 0)
			rc = copy_group(sc, s, &s->cm[i]);
		from = s->cm[i].pos + (uint64_t)s->block * s->group;
	}
	if (rc == 0)
		rc = scan_range(sc, x, &u, from, sc->size);
	return rc < 0 ? rc : flush_copy(sc);
}

static int scan_open(struct scan *sc, int fd)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		return -EINVAL;
	sc->fd = fd;
	sc->size = (uint64_t)sb.st_size;
	sc->buf = malloc(SCAN_CAP);
	sc->h = XXH3_createState();
	if (!sc->buf || !sc->h) {
		free(sc->buf);
		if (sc->h)
			XXH3_freeState(sc->h);
		return err_set(-ENOMEM, "out of memory for a delta");
	}
	XXH3_128bits_reset(sc->h);
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

static void scan_close(struct scan *sc)
{
	free(sc->buf);
	XXH3_freeState(sc->h);
}

/* Which groups to ask fine entries for: those pass one did not find, and
 * the short one after the whole groups; none when those entries would
 * cost more than they can save, i.e. more than the bytes no group matched
 * (a file cut to a fraction of its basis). Returns the fine entries. */
static uint64_t pick_groups(struct delta_sig *s, uint32_t total, uint64_t size)
{
	uint64_t fine = 0, found = (uint64_t)s->ncm * s->block * s->group;

	memset(s->asked, 0xff, total / 8 + 1);
	for (size_t i = 0; i < s->ncm; i++)
		s->asked[s->cm[i].group / 8] &= (uint8_t)~(1u << (s->cm[i].group % 8));
	for (uint32_t g = 0; g < total; g++)
		if (bit(s->asked, g))
			fine += g < s->ng ? s->group : s->n % s->group;
	if (fine * SIG_ENTRY_LEN > size - (found < size ? found : size)) {
		memset(s->asked, 0, total / 8 + 1);
		return 0;
	}
	return fine;
}

/* REFINE for each run of groups picked, then REFINE_END. */
static int ask_fine(struct conn *c, struct delta_sig *s, uint64_t size)
{
	uint32_t total = s->ng + (s->n % s->group ? 1 : 0);
	struct msg m = { .type = MSG_REFINE };
	int rc = 0;

	s->fine_left = (uint32_t)pick_groups(s, total, size);
	s->refining = 1;
	for (uint32_t g = 0; rc == 0 && g < total;) {
		uint32_t e = g;
		while (e < total && bit(s->asked, e))
			e++;
		if (e > g) {
			m.u.need = (struct m_need){ .index = s->index, .block = g, .count = e - g };
			rc = conn_send(c, &m);
		}
		g = e + 1;
	}
	if (rc == 0)
		rc = conn_send_len(c, MSG_REFINE_END, s->index);
	return rc < 0 ? rc : conn_flush(c);
}

int delta_refine(struct conn *c, int fd, struct delta_sig *s)
{
	struct scan sc = { .c = c, .found = s };
	struct sums u = coarse_sums(s);
	struct index x = { 0 };
	int rc;

	if (!s->group || s->refining)
		return 0;
	if ((rc = scan_open(&sc, fd)) < 0)
		return rc == -EINVAL ? ask_fine(c, s, 0) : rc;   /* the send will say */
	if ((rc = index_build(&x, &u)) == 0) {
		sc.last = -1;
		rc = scan_range(&sc, &x, &u, 0, sc.size);
		index_free(&x);
	}
	scan_close(&sc);
	return rc < 0 ? rc : ask_fine(c, s, sc.size);
}

int delta_send(struct conn *c, int fd, uint32_t index, const char *path,
	       const struct delta_sig *sig, struct xfer_stats *st, struct progress *pg)
{
	struct index x = { 0 };
	struct scan sc = { .c = c, .st = st, .pg = pg };
	struct sums u = fine_sums(sig);
	uint8_t hash[MSG_HASH_LEN];
	int rc = scan_open(&sc, fd);

	if (rc == -EINVAL) {
		xfer_note(st, "%s: no longer a regular file", path);
		return filedata_send_failed(c, index);
	}
	if (rc < 0)
		return rc;
	if ((rc = index_build(&x, &u)) < 0) {
		scan_close(&sc);
		return rc;
	}
	if (pg)
		progress_file(pg, path, sc.size);
	struct stat sb;
	rc = fstat(fd, &sb) < 0 ? err_sys(-errno, "%s: fstat", path)
				: filedata_send_begin(c, index, fd, &sb);
	if (rc == 0)
		rc = scan_file(&sc, &x, sig);
	if (rc == 0) {
		filedata_hash_out(sc.h, hash);
		rc = filedata_send_end(c, sc.status, hash);
	}
	if (rc == 0 && sc.status != FILE_OK)
		xfer_note(st, "%s: %s while it was sent", path,
			  sc.status == FILE_CHANGED ? "file shrank" : "read error");
	index_free(&x);
	scan_close(&sc);
	return rc;
}

/* --- the inverted flow (a pull: the box sends block hashes, the PC rolls) --- */

/* Rolls over one piece of the basis (fd, size bytes, at virtual offset
 * base) for the blocks not found yet. */
static int find_in(int fd, uint64_t size, uint64_t base, const struct index *x,
		   const struct sums *s, uint64_t *match)
{
	struct scan sc = { .fd = fd, .size = size };
	const uint32_t bs = s->len;
	uint64_t pos = 0;
	struct roll r;
	int rolled = 0;
	int32_t last = -1;

	if (size < bs)
		return 0;
	if (!(sc.buf = malloc(SCAN_CAP)))
		return err_set(-ENOMEM, "out of memory");
	while (pos + bs <= size) {
		fill(&sc, pos, pos + bs + (pos + bs < size));
		const uint8_t *win = sc.buf + (pos - sc.base);
		if (!rolled) {
			roll_init(&r, win, bs);
			rolled = 1;
		}
		int32_t k = find(x, s, roll_sum(&r), win, last + 1);
		/* a window equal to a block found before (a run of zeros) jumps
		 * too: stepping a byte at a time there hashed every offset of the
		 * run, and a degenerate basis took minutes */
		if (k >= 0) {
			if (match[k] == DELTA_NO_MATCH)
				match[k] = base + pos;
			pos += bs;
			rolled = 0;
			last = k;
			continue;
		}
		if (pos + bs < size)
			roll_rotate(&r, win[0], win[bs]);
		pos++;
	}
	free(sc.buf);
	return 0;
}

int delta_find_blocks(const struct basis *b, const struct delta_sig *s, uint64_t *match)
{
	struct index x = { 0 };
	struct sums u = fine_sums(s);
	int rc = 0;

	for (uint32_t k = 0; k < s->n; k++)
		match[k] = DELTA_NO_MATCH;
	if (!s->n || !basis_any(b))
		return 0;
	if ((rc = index_build(&x, &u)) < 0)
		return rc;
	for (int i = 0; rc == 0 && i < 2; i++)
		if (b->fd[i] >= 0)
			rc = find_in(b->fd[i], b->size[i], i ? b->split : 0, &x, &u, match);
	/* blocks equal to one found (zeros, repeated records) are there too */
	for (uint32_t k = 0; rc == 0 && k < s->n; k++) {
		if (match[k] != DELTA_NO_MATCH)
			continue;
		for (int32_t j = x.head[bucket(&x, s->weak[k])]; j >= 0; j = x.next[j])
			if (match[j] != DELTA_NO_MATCH && s->weak[j] == s->weak[k] &&
			    s->strong[j] == s->strong[k]) {
				match[k] = match[j];
				break;
			}
	}
	free(x.head);
	free(x.next);
	return rc;
}

/* Sends bytes [from, to) of fd as DATA (or, with -z, ZDATA) of at most 1 MiB each. */
static int send_range(struct conn *c, int fd, uint64_t from, uint64_t to, uint8_t *buf,
		      uint8_t *status, struct xfer_stats *st, struct progress *pg)
{
	int rc = 0;

	while (rc == 0 && from < to) {
		size_t n = to - from > (1u << 20) ? (1u << 20) : (size_t)(to - from);
		if (basis_pread_all(fd, buf, n, from) < 0) {
			memset(buf, 0, n);
			*status = FILE_CHANGED;
		}
		rc = zdata_send_buf(c, buf, n, st);
		st->bytes_data += n;
		if (pg)
			progress_bytes(pg, n);
		from += n;
	}
	return rc;
}

int delta_send_needed(struct conn *c, int fd, uint32_t index, const struct delta_need *d,
		      struct xfer_stats *st, struct progress *pg)
{
	struct stat sb;
	uint8_t status = FILE_OK, *buf = malloc(1u << 20);
	int rc;

	if (!buf)
		return err_set(-ENOMEM, "out of memory");
	if (fstat(fd, &sb) < 0 || (uint64_t)sb.st_size != d->size)
		status = FILE_CHANGED;   /* the receiver discards it and asks again whole */
	sb.st_size = (off_t)d->size;
	if (pg)
		progress_file(pg, d->path, d->size);
	rc = filedata_send_begin(c, index, fd, &sb);
	for (uint32_t k = 0; rc == 0 && k < d->n;) {
		if (!(d->bits[k / 8] & (1u << (k % 8)))) {
			st->bytes_matched += d->block;
			if (pg)
				progress_matched(pg, d->block);
			k++;
			continue;
		}
		uint32_t e = k;
		while (e < d->n && (d->bits[e / 8] & (1u << (e % 8))))
			e++;
		rc = send_range(c, fd, (uint64_t)k * d->block, (uint64_t)e * d->block, buf, &status,
				st, pg);
		k = e;
	}
	if (rc == 0)   /* the tail after the last whole block always travels */
		rc = send_range(c, fd, (uint64_t)d->n * d->block, d->size, buf, &status, st, pg);
	if (rc == 0 && status == FILE_OK && d->damaged)
		status = FILE_DAMAGED;
	if (rc == 0)
		rc = filedata_send_end(c, status, d->hash);
	if (rc == 0 && status == FILE_DAMAGED)
		xfer_note(st, "%s: %s", d->path, filedata_status_word(status));
	free(buf);
	return rc;
}

/* The file data of a delta's stream, taken a piece at a time. The channel
 * gives whole records only (the caller asks for all that DATA announced),
 * so what a record holds past the piece waits in carry. */
struct stream {
	uint64_t left;              /* announced by the current DATA, not yet received */
	uint64_t room;              /* the file's bytes no DATA or ZDATA has announced yet */
	uint8_t carry[CHAN_MAX_PLAIN];
	const uint8_t *cp;          /* carry, or a decoded ZDATA (session/zdata.c's buffer) */
	size_t carry_off, carry_len;
	struct xfer_stats *st;
};

/* Exactly n bytes of file data from the stream, across DATA messages. */
static int take(struct conn *c, struct stream *in, uint8_t *out, size_t n)
{
	struct msg m;
	int rc;

	while (n) {
		if (in->carry_len) {
			size_t k = n < in->carry_len ? n : in->carry_len;
			memcpy(out, in->cp + in->carry_off, k);
			in->carry_off += k;
			in->carry_len -= k;
			out += k;
			n -= k;
			continue;
		}
		if (!in->left) {
			if ((rc = conn_recv(c, &m)) < 0)
				return rc;
			if (m.type == MSG_ZDATA) {
				if ((rc = zdata_recv(c, &m.u.zdata, in->room, &in->cp, in->st)) < 0)
					return rc;
				in->room -= m.u.zdata.raw_len;
				in->carry_off = 0;
				in->carry_len = m.u.zdata.raw_len;
				continue;
			}
			if (m.type != MSG_DATA)
				return err_set(-EBADMSG, "protocol: %s where a delta's data was due",
					       msg_type_name(m.type));
			in->left = m.u.len.len;
			in->room -= in->left < in->room ? in->left : in->room;
		}
		const uint8_t *p;
		size_t k = 0;
		/* a record never holds more than CHAN_MAX_PLAIN; at protection none the
		 * channel would hand over all it has buffered: ask for what fits */
		size_t max = in->left < sizeof in->carry ? (size_t)in->left : sizeof in->carry;
		if ((rc = chan_data_recv(c->ch, max, &p, &k)) < 0)
			return rc;
		in->left -= k;
		memcpy(in->carry, p, k);
		in->cp = in->carry;
		in->carry_off = 0;
		in->carry_len = k;
	}
	return 0;
}

/* The file is put together in runs of up to ASSEMBLE_CHUNK: blocks that
 * follow each other in the basis too (one read, one write), or bytes from the
 * stream (whole blocks not found, then the tail). Small writes cost far more
 * per byte than large ones (tmpfs: 6x at 32 KiB against 128 KiB and more). */
#define ASSEMBLE_CHUNK ((size_t)256 << 10)

static size_t run_len(const struct delta_plan *pl, uint64_t size, uint64_t off)
{
	uint64_t body = (uint64_t)pl->n * pl->block, end = off;
	uint32_t k = off < body ? (uint32_t)(off / pl->block) : 0;

	if (off >= body)   /* the tail */
		end = size;
	else if (pl->match[k] != DELTA_NO_MATCH) {
		uint64_t from = pl->match[k];
		/* a read never spans the basis's two files */
		uint64_t stop = from < pl->b->split ? pl->b->split : UINT64_MAX;
		do {
			end += pl->block;
			k++;
		} while (k < pl->n && end - off + pl->block <= ASSEMBLE_CHUNK &&
			 pl->match[k] == from + (end - off) && pl->match[k] + pl->block <= stop);
	} else {
		do {
			end += pl->block;
			k++;
		} while (k < pl->n && end - off + pl->block <= ASSEMBLE_CHUNK &&
			 pl->match[k] == DELTA_NO_MATCH);
		if (k == pl->n)   /* the tail joins the last unmatched run */
			end = size;
	}
	if (end - off > ASSEMBLE_CHUNK)
		end = off + ASSEMBLE_CHUNK;
	return (size_t)(end - off);
}

int delta_recv_assembled(struct conn *c, const struct m_file_begin *fb, struct afile *f,
			 const struct delta_plan *pl, struct xfer_stats *st, struct progress *pg,
			 const char **why)
{
	static _Thread_local char reason[256];
	uint64_t body = (uint64_t)pl->n * pl->block;
	struct stream *in = calloc(1, sizeof *in);
	uint8_t *buf = malloc(ASSEMBLE_CHUNK);
	XXH3_state_t *h = XXH3_createState();
	int ok = f != NULL, rc = 0;
	struct msg m;

	*why = reason;
	snprintf(reason, sizeof reason, "not written");
	if (!buf || !h || !in) {
		free(buf);
		free(in);
		if (h)
			XXH3_freeState(h);
		return err_set(-ENOMEM, "out of memory");
	}
	XXH3_128bits_reset(h);
	in->room = fb->size;
	in->st = st;
	if (fb->size < body)
		rc = err_set(-EBADMSG, "protocol: a file of %llu bytes for a signature of %llu",
			     (unsigned long long)fb->size, (unsigned long long)body);
	for (uint64_t off = 0; rc == 0 && off < fb->size;) {
		int matched = off < body && pl->match[off / pl->block] != DELTA_NO_MATCH;
		size_t piece = run_len(pl, fb->size, off);
		if (matched) {
			if (basis_read(pl->b, buf, piece, pl->match[off / pl->block]) < 0) {
				memset(buf, 0, piece);
				snprintf(reason, sizeof reason, "the old version changed meanwhile");
				ok = 0;
			}
			st->bytes_matched += piece;
			if (pg)
				progress_matched(pg, piece);
		} else {
			if ((rc = take(c, in, buf, piece)) < 0)
				break;
			st->bytes_data += piece;
			if (pg)
				progress_bytes(pg, piece);
		}
		XXH3_128bits_update(h, buf, piece);
		if (ok && f && afile_write(f, buf, piece) < 0) {
			ok = 0;
			snprintf(reason, sizeof reason, "%s", err_msg());
		}
		off += piece;
	}
	if (rc == 0 && (in->left || in->carry_len))
		rc = err_set(-EBADMSG, "protocol: more data than the delta asked for");
	if (rc == 0 && (rc = conn_recv(c, &m)) == 0 && m.type != MSG_FILE_END)
		rc = err_set(-EBADMSG, "protocol: %s after a delta's data", msg_type_name(m.type));
	if (rc == 0 && (m.u.file_end.status != FILE_OK || !m.u.file_end.has_hash)) {
		snprintf(reason, sizeof reason, "%s",
			 filedata_end_reason(m.u.file_end.status,
					     "the sender's file changed while it was sent"));
		st->vanished += m.u.file_end.status == FILE_VANISHED;   /* the caller may undo */
		ok = 0;
	}
	if (rc == 0 && ok) {
		uint8_t mine[MSG_HASH_LEN];
		filedata_hash_out(h, mine);
		if (memcmp(mine, m.u.file_end.hash, MSG_HASH_LEN)) {
			snprintf(reason, sizeof reason, "whole-file hash mismatch");
			ok = 0;
		}
	}
	free(buf);
	free(in);
	XXH3_freeState(h);
	return rc < 0 ? rc : ok;
}
