/* SPDX-License-Identifier: MIT */
/* The messages of ferry's file protocol (docs/PROTOCOL.md). Each control
 * message is one channel record: a type byte, then the fields in order,
 * integers big-endian, strings as u16 length + bytes (no NUL). msg_decode
 * checks every length against the limits here before anything is used. */
#ifndef FERRY_PROTO_MSG_H
#define FERRY_PROTO_MSG_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION 1
#define MSG_MAX_NAME 255
#define MSG_MAX_PATH 4096
#define MSG_MAX_TEXT 1024
#define MSG_MAX_SOFTWARE 64
#define MSG_HASH_LEN 16

/* The window (docs/PROTOCOL.md, 4.3): what a sender may have outstanding and
 * so what a receiver has to remember. Both ends count the same way (wire
 * paths of the files, and of the directories whose DIR_META waits for them),
 * so a correct sender never exceeds a limit and a receiver refuses one that
 * does: a peer cannot make either side hold more than a few MiB. */
#define PROTO_WINDOW_FILES 2048            /* regular files undecided or wanted, data not sent */
#define PROTO_WINDOW_PATH_BYTES (1u << 20) /* the bytes of their wire paths */
#define PROTO_META_PENDING 1024            /* DIR_META sent while files before it were open */
#define PROTO_META_PATH_BYTES (1u << 20)   /* the bytes of their paths */
#define PROTO_LINK_GROUPS 4096             /* -H: hard-link groups open (a member still to come) */
#define PROTO_LINK_PATH_BYTES (1u << 20)   /* the bytes of their first members' paths */

/* Delta transfer (docs/PROTOCOL.md, 4.3): a signature is a block size and,
 * per whole block of the basis, a 32-bit rolling sum and the first 8 bytes
 * of its xxh3-64; it travels in SIG records of at most SIG_MAX_BLOCKS. */
#define DELTA_MIN_BLOCK 2048u
#define DELTA_MAX_BLOCK (128u << 10)
#define SIG_MAX_BLOCKS 4096u
#define SIG_ENTRY_LEN 12u
/* Two levels: a WANT_DELTA's coarse entries each cover `group` blocks, at
 * most DELTA_MAX_GROUP of them and DELTA_MAX_COARSE bytes. */
#define DELTA_MAX_GROUP 64u
#define DELTA_MAX_COARSE (1u << 20)

/* Compressed file data (docs/PROTOCOL.md, 4.5): one independent zstd frame
 * per ZDATA, of at most ZDATA_MAX_RAW bytes of the file; its compressed
 * length never exceeds zstd's bound for that (ZSTD_COMPRESSBOUND(128 KiB),
 * checked against zstd.h in src/proto/zchunk.c), and its window is at most
 * 2^ZDATA_WINDOW_LOG bytes, so a box decodes in a fixed few hundred KiB. */
/* Filter rules (docs/FILTERS.md, wire form): after a REQUEST with
 * REQ_FILTER, FILTER records carry the encoded list in order, each piece at
 * most FILTER_MAX_PIECE bytes, the whole at most MSG_FILTER_MAX_TOTAL (what
 * util/filter.h's largest list encodes to fits; session/xfilter.c checks). */
#define MSG_FILTER_MAX_TOTAL (1u << 17)
#define FILTER_MAX_PIECE (32u << 10)

#define ZDATA_MAX_RAW (128u << 10)
#define ZDATA_MAX_ZLEN (ZDATA_MAX_RAW + (ZDATA_MAX_RAW >> 8))
#define ZDATA_WINDOW_LOG 17

/* A control message never exceeds this: the largest are a full XMETA and a
 * full SIG (a REQUEST with every string at its limit is about 9 KiB); all
 * fit in one channel record (65517 bytes after their length). */
#define MSG_MAX_REQUEST (1 + 1 + 1 + 4 + 3 * (2 + MSG_MAX_NAME) + 2 * (2 + MSG_MAX_PATH) + 4 + 4 + 16)
#define XMETA_MAX_COUNT 1024          /* xattrs of one entry */
#define XMETA_MAX_XATTR_BYTES 60000u   /* the records' bytes: one channel record holds them */
#define XMETA_MAX_IDNAME 64            /* a user or group name */
#define MSG_MAX_SIG (1 + 4 + 4 + 2 + SIG_MAX_BLOCKS * SIG_ENTRY_LEN)
#define MSG_MAX_XMETA (1 + 1 + 2 * (4 + 2 + XMETA_MAX_IDNAME) + 2 + XMETA_MAX_XATTR_BYTES)
#define MSG_MAX_ENCODED (MSG_MAX_SIG > MSG_MAX_XMETA ? MSG_MAX_SIG : MSG_MAX_XMETA)

enum msg_type {
	MSG_REQUEST = 0x01, MSG_ACCEPT = 0x02, MSG_REFUSE = 0x03, MSG_FILTER = 0x04,
	MSG_DIR_BEGIN = 0x10, MSG_ENTRY = 0x11, MSG_DIR_END = 0x12,
	MSG_DIR_META = 0x13, MSG_END = 0x14, MSG_TOTALS = 0x15, MSG_XMETA = 0x16,
	MSG_SNAP = 0x17,
	MSG_FILE_BEGIN = 0x20, MSG_DATA = 0x21, MSG_HOLE = 0x22, MSG_FILE_END = 0x23,
	MSG_COPY = 0x24, MSG_ZDATA = 0x25,
	MSG_WANT = 0x30, MSG_DECIDED = 0x31, MSG_CHANGE = 0x32, MSG_RESULT = 0x33,
	MSG_WANT_DELTA = 0x34, MSG_SIG = 0x35, MSG_REDO = 0x36,
	MSG_WANT_SIG = 0x37, MSG_FILE_SIG = 0x38, MSG_NEED = 0x39, MSG_NEED_END = 0x3a,
	MSG_REFINE = 0x3b, MSG_REFINE_END = 0x3c, MSG_NOOP = 0x3d,
	MSG_BENCH = 0x50, MSG_BENCH_DONE = 0x51, MSG_BENCH_STAGE = 0x52,
	MSG_VERIFY = 0x53, MSG_VERIFY_BAD = 0x54, MSG_VERIFY_STATUS = 0x55,
	MSG_PAKE = 0x56, MSG_PAKE_TAG = 0x57,
	MSG_ERROR = 0x40,
};

/* ACCEPT flags: what the server decided for the session. */
#define ACC_COMPRESS  0x01u   /* -z asked and the module compresses: the sender may send ZDATA */
#define ACC_COMPRESS_AUTO 0x02u /* with ACC_COMPRESS: only while the link is slower than the compressor */
#define ACC_KNOWN     0x03u

enum op { OP_PUSH = 1, OP_PULL = 2, OP_LIST = 3, OP_BENCH = 4, OP_VERIFY = 5, OP_PAIR = 6 };

/* REQUEST flags: what the client asks of the transfer. */
#define REQ_DELETE    0x01u   /* --delete: the receiver removes what the sender lacks */
#define REQ_DRY_RUN   0x02u   /* -n: decide and report, change nothing */
#define REQ_CHECKSUM  0x04u   /* -c: compare contents (hashes), not size+mtime */
#define REQ_FSYNC     0x08u   /* --fsync: fdatasync each file before its rename */
#define REQ_CHANGES   0x10u   /* report each change (CHANGE messages) to the client */
#define REQ_TOTALS    0x20u   /* the sender first counts files and bytes (TOTALS) */
#define REQ_NO_RECURSE 0x40u  /* list one level only (ls) */
#define REQ_SLASH     0x80u   /* the remote path was written with a trailing "/" */
#define REQ_NO_VERIFY 0x100u  /* at protection none: no whole-file hash; sendfile/splice */
#define REQ_UPDATE    0x200u  /* -u: keep files that are newer on the receiver */
#define REQ_SIZE_ONLY 0x400u  /* --size-only: equal size is up to date, whatever the mtime */
#define REQ_IGNORE_TIMES 0x800u   /* -I: every file is sent, even with equal size and mtime */
#define REQ_IGNORE_EXISTING 0x1000u /* --ignore-existing: what exists is not updated */
#define REQ_EXISTING  0x2000u /* --existing: nothing new is created */
#define REQ_BACKUP    0x4000u /* -b: what is replaced or deleted is kept (suffix, backup dir) */
#define REQ_WHOLE_FILE 0x8000u /* -W: no delta transfer */
#define REQ_COMPRESS  0x10000u /* -z: file data may travel zstd-compressed (ZDATA) */
#define REQ_NO_RESUME 0x20000u /* --no-resume: an interrupted file leaves no partial */
#define REQ_FILTER    0x40000u /* filter rules follow the REQUEST in FILTER records */
#define REQ_OWNER     0x80000u  /* -o: owners travel (XMETA) and the receiver keeps them */
#define REQ_GROUP     0x100000u /* -g: groups, likewise */
#define REQ_DEVICES   0x200000u /* --devices: character and block devices are sent (ENT_SPECIAL) */
#define REQ_SPECIALS  0x400000u /* --specials: FIFOs and sockets are sent (ENT_SPECIAL) */
#define REQ_XATTRS    0x800000u /* -X: extended attributes travel (XMETA) */
#define REQ_ACLS      0x1000000u /* -A: POSIX ACLs travel, as the xattrs Linux keeps them in */
#define REQ_NUMERIC_IDS 0x2000000u /* --numeric-ids: ids only, never mapped through names */
#define REQ_HARD_LINKS 0x4000000u /* -H: files sharing an inode are linked on the receiver */
#define REQ_FORCE     0x8000000u /* --force: a non-empty directory may go for a non-directory
				      * without --delete (as rsync; never without one of them) */
#define REQ_ONE_FS    0x10000000u /* -x: the sender lists a directory on another file system
				       * than its source's root as empty (as rsync) */
#define REQ_MAX_DELETE 0x20000000u /* --max-delete: the REQUEST ends with the limit (u32) */
#define REQ_MORE      0x40000000u /* then flags2 (u32, REQ2_*, not 0) and the fields they add */
#define REQ_KNOWN     0x7fffffffu
/* flags2: the fields follow in this order */
#define REQ2_MAX_SIZE 0x1u   /* --max-size: max_size u64; larger files are not transferred */
#define REQ2_MIN_SIZE 0x2u   /* --min-size: min_size u64; smaller files are not transferred */
#define REQ2_VANISHED 0x4u   /* the receiver knows FILE_END's FILE_VANISHED (no field) */
#define REQ2_SAFE_LINKS 0x8u  /* --safe-links, to a push's receiver (no field): a symlink that
				* could point outside the transfer is not made (util/safelink.h) */
#define REQ2_MODIFY_WINDOW 0x10u /* --modify-window: modify_window u32 (seconds); a push's
				  * receiver takes mtimes that far apart as equal, seconds only */
#define REQ2_DELETE_DELAY 0x20u /* --delete-delay, to a push's receiver (no field): --delete's
				   * deletions are done once every file is in, none if the
				   * transfer does not get there */
#define REQ2_CHG_CSUM 0x40u /* this client knows CHANGE bit 0x80 (-i's 'c' column; no field) */
#define REQ2_DELETE_AFTER 0x80u /* --delete-after, with 0x20 (no field): the rules are asked
				   * again as each deletion comes, and protect what a filter file
				   * of this transfer (-F, dir-merge) excludes */
#define REQ2_CHG_TARGET 0x100u /* this client knows CHANGE's target and kinds 10 and 11
				     * (-i's "-> target" and "=> first"; no field) */
#define REQ2_NOOP     0x200u /* this client skips NOOP, which a busy box sends it every second
				  * (-c's hash of a large file, --delete-delay's deletions) so
				  * that its I/O timeout does not end the session (no field) */
#define REQ2_KNOWN    0x3ffu
/* What makes the sender describe entries with XMETA. */
#define REQ_XMETA (REQ_OWNER | REQ_GROUP | REQ_XATTRS | REQ_ACLS)

enum entry_type { ENT_REG = 1, ENT_DIR = 2, ENT_LNK = 3, ENT_SPECIAL = 4 };
/* ENT_SPECIAL's mode has the file type in these (Linux's, on every platform)
 * bits, and a device number follows. */
#define WIRE_IFMT   0170000u
#define WIRE_IFSOCK 0140000u
#define WIRE_IFBLK  0060000u
#define WIRE_IFCHR  0020000u
#define WIRE_IFIFO  0010000u
#define ENT_HAS_HASH 0x01u
/* -H (regular files only, one or the other): the first of a hard-link
 * group, with how many other links may follow; or another name of the group
 * first sent as entry `link` (no data of its own). */
#define ENT_LINK_FIRST 0x02u
#define ENT_LINK_TO    0x04u
#define ENT_KNOWN      0x07u

/* DIR_BEGIN flags */
#define DIRB_SYNTHETIC 0x01u  /* the root listing made of the sources given: never --delete here */
#define DIRB_SINGLE    0x02u  /* the root listing is one regular file named on the command line */
#define DIRB_PARTIAL   0x04u  /* some of the directory's entries only (-R, --files-from): a
			       * directory on the way to what is sent: never --delete here */
#define DIRB_KNOWN     0x07u

/* FILE_DAMAGED: the box's copy no longer matches the hash recorded when it
 * was stored (a snapshot module; bit rot, or a change made behind ferry).
 * FILE_VANISHED: the file was gone when its turn came to be read (sent
 * only to a receiver that asked with REQ2_VANISHED; others get READ_ERROR) */
enum file_status { FILE_OK = 0, FILE_CHANGED = 1, FILE_READ_ERROR = 2, FILE_DAMAGED = 3,
		   FILE_VANISHED = 4 };

enum change_kind { CHG_NEW = 1, CHG_UPDATE = 2, CHG_DELETE = 3, CHG_MKDIR = 4,
		   CHG_LINK = 5, CHG_META = 6, CHG_ERROR = 7, CHG_RETRY = 8,
		   CHG_UNSAFE = 9 /* --safe-links: a symlink not made (only to who asked) */,
		   /* only to a client that asked with REQ2_CHG_TARGET, with a target: */
		   CHG_HLINK = 10 /* -H: a hard link made where nothing was (to the first name) */,
		   CHG_HLINK_UPD = 11 /* -H: an existing name replaced by a hard link */ };
/* CHANGE's kind byte: a target follows the path (a symlink's, with kinds 5,
 * 6 and 9, or a hard link's first name, with 10 and 11, which always have
 * one); only to a client that asked with REQ2_CHG_TARGET */
#define CHG_F_TARGET 0x80u
/* What differed, for rsync's -i (">f.st......"): */
#define CHGB_SIZE  0x01u
#define CHGB_TIME  0x02u
#define CHGB_PERMS 0x04u
#define CHGB_OWNER 0x08u
#define CHGB_GROUP 0x10u
#define CHGB_ACL   0x20u
#define CHGB_XATTR 0x40u
#define CHGB_CSUM  0x80u   /* -c found the contents differ: only to a client whose REQUEST had
			    * flags2 0x40 */
#define CHGB_KNOWN 0xffu

/* XMETA: what the next ENTRY, DIR_META or FILE_BEGIN has beyond mode and
 * mtime. The xattrs are `count` records of (name length u8, name, value
 * length u16, value), names sorted bytewise and unique, in the namespaces
 * user., trusted., security. and system.posix_acl_{access,default}. */
#define XM_OWNER  0x01u
#define XM_GROUP  0x02u
#define XM_XATTRS 0x04u
#define XM_KNOWN  0x07u

/* REFUSE / ERROR codes; the client maps them to exit codes (docs/PROTOCOL.md). */
enum refuse_code { REF_UNKNOWN_MODULE = 1, REF_NOT_AUTHORIZED = 2, REF_READ_ONLY = 3,
		   REF_PROTECTION = 4, REF_BAD_PATH = 5, REF_NOT_FOUND = 6,
		   REF_BUSY = 7, REF_INTERNAL = 8, REF_PROTOCOL = 9, REF_IO = 10 };

/* HELLO features: what this end knows beyond version 1's first form (a peer
 * ignores the bits it does not know) */
#define HELLO_REQ_MORE 0x1u   /* REQUEST flags 0x20000000 and 0x40000000 (flags2), and
			       * FILE_END status 4: a client sends them only to such a server */
#define HELLO_MORE2    0x2u   /* DIR_BEGIN's DIRB_PARTIAL, REQUEST flags2 0x8, 0x10 and CHANGE kind
			       * 9: a client pushes a part of its source (-R, --files-from)
			       * with --delete, or asks for --safe-links, only of such a server
			       * (one that did not know DIRB_PARTIAL would mirror a part) */
#define HELLO_MORE3    0x4u   /* REQUEST flags2 0x20, 0x40 and 0x80: a client asks for
			       * --delete-delay or --delete-after, or says it knows CHANGE bit
			       * 0x80, only to such a server */
#define HELLO_MORE4    0x8u   /* REQUEST flags2 0x100 and 0x200: a client says it knows
			       * CHANGE's target and kinds 10 and 11, and NOOP, only to such
			       * a server */

struct hello {
	uint8_t version;
	uint32_t features;
	char software[MSG_MAX_SOFTWARE + 1];
};

struct m_request {
	uint8_t op, protection;
	uint32_t flags;
	char module[MSG_MAX_NAME + 1];
	char path[MSG_MAX_PATH + 1];
	char backup_dir[MSG_MAX_PATH + 1];   /* --backup-dir, relative to the transfer root */
	char suffix[MSG_MAX_NAME + 1];       /* --suffix ("" = the default) */
	char chmod[MSG_MAX_NAME + 1];        /* --chmod, applied by the receiver */
	uint32_t max_delete;                 /* with REQ_MAX_DELETE only */
	uint32_t flags2;                     /* REQ2_*; the encoder sets REQ_MORE for it */
	uint64_t max_size, min_size;         /* with REQ2_MAX_SIZE, REQ2_MIN_SIZE only */
	uint32_t modify_window;              /* with REQ2_MODIFY_WINDOW only: seconds */
};

/* FILTER: bytes [offset, offset + len) of a filter list of total bytes. */
struct m_filter { uint32_t total, offset; uint16_t len; const uint8_t *bytes; };
struct m_accept { uint8_t protection; uint32_t flags; char comment[MSG_MAX_NAME + 1]; };
struct m_refuse { uint16_t code; char reason[MSG_MAX_TEXT + 1]; };   /* also MSG_ERROR */
struct m_dir_begin { uint8_t flags; char path[MSG_MAX_PATH + 1]; };

struct m_entry {
	uint8_t type, flags;
	uint32_t mode;
	uint64_t size;
	int64_t mtime_s;
	uint32_t mtime_ns;
	char name[MSG_MAX_NAME + 1];
	char target[MSG_MAX_PATH + 1];   /* ENT_LNK only */
	uint8_t hash[MSG_HASH_LEN];      /* ENT_HAS_HASH only */
	uint32_t rdev_major, rdev_minor; /* ENT_SPECIAL only */
	uint32_t link;                   /* ENT_LINK_FIRST: links still to come; ENT_LINK_TO: the first's index */
};

/* XMETA; `xattrs` points into the received record (valid until the next
 * receive): xattr_bytes bytes holding `count` records, already checked. */
struct m_xmeta {
	uint8_t flags;
	uint32_t uid, gid;
	char user[XMETA_MAX_IDNAME + 1], group[XMETA_MAX_IDNAME + 1];   /* "" = no name */
	uint16_t count;
	uint32_t xattr_bytes;
	const uint8_t *xattrs;
};

/* One record of an XMETA xattr list: the next after *off, or 0 at the end. */
struct xattr_rec { char name[256]; const uint8_t *value; uint16_t len; };
int xmeta_next(const uint8_t *list, size_t bytes, size_t *off, struct xattr_rec *x);
/* 1 if `name` is in a namespace XMETA may carry. */
int xmeta_name_ok(const char *name);

struct m_dir_meta { uint32_t mode; int64_t mtime_s; uint32_t mtime_ns; char path[MSG_MAX_PATH + 1]; };
struct m_totals { uint64_t files, bytes; };
/* SNAP: one snapshot of a module, in `ferry ls HOST:MODULE@` (oldest first) */
struct m_snap {
	int64_t time;
	uint64_t files, bytes;
	uint64_t failed;                  /* files the push did not bring: a partial snapshot */
	char name[MSG_MAX_NAME + 1];
	char client[MSG_MAX_NAME + 1];
};
struct m_file_begin { uint32_t index; uint64_t size; uint32_t mode; int64_t mtime_s; uint32_t mtime_ns; };
struct m_len { uint64_t len; };                                      /* DATA, HOLE */
/* ZDATA: raw_len bytes of the file, as one zstd frame of zlen bytes that
 * follow as file data (like DATA's bytes). */
struct m_zdata { uint32_t raw_len, zlen; };
struct m_file_end { uint8_t status, has_hash; uint8_t hash[MSG_HASH_LEN]; };
/* WANT, DECIDED, REDO, WANT_SIG, NEED_END, REFINE_END */
struct m_index { uint32_t index; };
/* WANT_DELTA: send entry `index` as a delta against my basis of `size`
 * bytes, whose signature (size / block whole blocks) follows in SIGs; with
 * group > 1 (two levels) the SIGs first hold one entry per group of that
 * many blocks, and the fine entries come for the groups REFINE asks.
 * FILE_SIG: the same fields, group always 0. */
struct m_want_delta { uint32_t index, block; uint64_t size; uint8_t group; };
/* SIG: signature entries first .. first + count - 1 of entry `index`;
 * `entries` points into the received record (valid until the next receive):
 * count * SIG_ENTRY_LEN bytes, u32 weak then 8 bytes of strong, each. */
struct m_sig { uint32_t index, first; uint16_t count; const uint8_t *entries; };
/* COPY: `count` blocks of the basis from block `block` come next in the file. */
struct m_copy { uint32_t block, count; };
/* NEED: blocks block .. block + count - 1 of entry `index` the receiver lacks.
 * REFINE: the fine entries of groups block .. block + count - 1, please. */
struct m_need { uint32_t index, block, count; };
struct m_change {
	uint8_t kind, bits;
	char path[MSG_MAX_PATH + 1];
	char target[MSG_MAX_PATH + 1];   /* "" = none (CHG_F_TARGET on the wire) */
};
/* END: the sender's own failures the receiver did not see (a directory it
 * could not list, a link it could not read), so the receiver's RESULT can
 * count every failure exactly once. */
struct m_end { uint32_t errors; char message[MSG_MAX_TEXT + 1]; };
/* RESULT: what the receiver did. files/bytes: committed (renamed into
 * place); uptodate: compared and found equal; kept: left as they were by
 * -u, --existing or --ignore-existing; deleted: by --delete; errors: every
 * failure once. */
struct m_result {
	uint32_t errors;
	uint64_t files, bytes, uptodate, kept, deleted;
	char message[MSG_MAX_TEXT + 1];
	uint64_t del_skipped;   /* --max-delete's skipped entries; on the wire only when not 0 */
};

/* ferry bench HOST:MODULE (docs/BENCH.md, PROTOCOL.md 9): the client asks
 * for one stage at a time; the server answers BENCH_DONE (and, for the
 * disk, a BENCH_STAGE per disk stage before it). */
enum bench_step {
	BSTEP_PING = 1,        /* answer at once: the round trip */
	BSTEP_NET_UP = 2,      /* `bytes` of DATA follow from the client, from memory */
	BSTEP_NET_DOWN = 3,    /* send `bytes` of DATA from memory */
	BSTEP_DISK = 4,        /* the disk stages in the module, `bytes` the test size */
	BSTEP_E2E_UP = 5,      /* `bytes` of DATA follow: into a file in the module, synced */
	BSTEP_E2E_DOWN = 6,    /* that file back, read past the page cache */
	BSTEP_LAST = 6,
};
/* BENCH_DONE status */
#define BENCH_OK 0
#define BENCH_REFUSED 1        /* note says why (read-only module, no space, ...) */
#define BENCH_MAX_NOTE 200
struct m_bench { uint8_t step; uint64_t bytes; };
/* What the server did: bytes, its own elapsed time and CPU (getrusage,
 * µs) for the step, how long it waited for a CPU while it wanted one
 * (schedstat's run delay: a CPU quota or other tasks), and its sender's
 * TCP_INFO times (µs; all 0 when the kernel does not say) where it sent. */
struct m_bench_done {
	uint8_t step, status;
	uint64_t bytes, ns, user_us, sys_us, wait_us;
	uint64_t tcp_busy_us, tcp_rwnd_us, tcp_sndbuf_us;
	uint64_t tcp_sent, tcp_retrans;   /* bytes its TCP sent, and sent again (lost) */
	uint32_t rcvbuf, sndbuf;   /* its socket's buffers at the end (SO_RCVBUF, SO_SNDBUF) */
	char note[BENCH_MAX_NOTE + 1];
};
/* One disk stage measured on the server (rates in thousandths of the
 * stage's unit, times in µs). */
struct m_bench_stage {
	uint8_t unit, verdict, cliff;
	uint64_t rate_m, seconds_us, bytes, ops, dev_bytes, burst_m, sustained_m, cliff_bytes;
	char name[32], label[40], method[40], note[128];
};

/* ferry verify HOST:MODULE (PROTOCOL.md section 10): the client's options,
 * each damaged file the pass finds, and how far it got (about once a
 * second, and once with `final` at the end). */
struct m_verify { uint64_t if_older; uint8_t restart; };      /* seconds; 0/1 */
struct m_verify_bad {
	char where[MSG_MAX_NAME + 1];   /* "the tree", "snapshot NAME" */
	char path[MSG_MAX_PATH + 1];
};
struct m_verify_status {
	uint8_t final, skipped_run;
	uint64_t files, bytes, bad, unhashed, skipped, ms;
};

/* ferry pair (PROTOCOL.md section 11): the CPace shares, then the
 * confirmation tags, the client's first; the box's names the module that
 * now authorizes the client's key. */
#define MSG_PAKE_SHARE_LEN 32u
#define MSG_PAKE_TAG_LEN 64u
struct m_pake { uint8_t share[MSG_PAKE_SHARE_LEN]; };
struct m_pake_tag {
	uint8_t tag[MSG_PAKE_TAG_LEN];
	char module[MSG_MAX_NAME + 1];   /* "" from the client */
};

struct msg {
	uint8_t type;
	union {
		struct m_request request;
		struct m_accept accept;
		struct m_filter filter;
		struct m_refuse refuse;
		struct m_dir_begin dir_begin;
		struct m_entry entry;
		struct m_xmeta xmeta;
		struct m_dir_meta dir_meta;
		struct m_totals totals;
		struct m_snap snap;
		struct m_file_begin file_begin;
		struct m_len len;
		struct m_zdata zdata;
		struct m_file_end file_end;
		struct m_index index;
		struct m_change change;
		struct m_result result;
		struct m_end end;
		struct m_want_delta want_delta;
		struct m_sig sig;
		struct m_copy copy;
		struct m_need need;
		struct m_bench bench;
		struct m_bench_done bench_done;
		struct m_bench_stage bench_stage;
		struct m_verify verify;
		struct m_verify_bad verify_bad;
		struct m_verify_status verify_status;
		struct m_pake pake;
		struct m_pake_tag pake_tag;
	} u;
};

/* Decodes one control message. -EBADMSG (with err_msg naming the message
 * type and what was wrong) on anything malformed, unknown or oversized. */
int msg_decode(const uint8_t *p, size_t n, struct msg *m);
/* Encodes m into out (cap >= MSG_MAX_ENCODED suffices); returns the length or <0. */
int msg_encode(const struct msg *m, uint8_t *out, size_t cap);
const char *msg_type_name(uint8_t type);

int hello_decode(const uint8_t *p, size_t n, struct hello *h);
int hello_encode(const struct hello *h, uint8_t *out, size_t cap);

_Static_assert(MSG_MAX_REQUEST < MSG_MAX_ENCODED && MSG_MAX_ENCODED <= 65517,
	       "every message fits one channel record");

#endif
