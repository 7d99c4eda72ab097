#ifndef SKYNET_SPROTO_H
#define SKYNET_SPROTO_H

/*
 * The Lua-free half of sproto.core (luaclib/sproto.so): a loaded schema,
 * the reader of the struct wire format, the 0-packer and the process-wide
 * schema slots. lua-sproto.c builds the Lua functions on top of it.
 *
 * A schema is immutable once sproto_create returns it, so any number of
 * threads may read it at once; whoever created it frees it with
 * sproto_release, unless it went into a slot (then it lives until the
 * process exits).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sproto_kind {
	SPROTO_TINTEGER = 0,
	SPROTO_TBOOLEAN = 1,
	SPROTO_TSTRING = 2, // also binary
	SPROTO_TDOUBLE = 3,
	SPROTO_TSTRUCT = 4,
};

#define SPROTO_SLOTS 16

struct sproto_type;

struct sproto_field {
	int tag;
	enum sproto_kind kind;
	const char *name; // NUL-terminated, owned by the schema
	size_t name_len;
	struct sproto_type *st; // the struct type (SPROTO_TSTRUCT), else NULL
	int decimal;            // digits after the point of integer(N), else -1
	double scale;           // 10^decimal
	bool binary;            // a string declared as binary
	bool array;
	/* Keyed array *T(k): key is k's field in st. Map *T(): key is st's
	 * first field and value its second. Both NULL for anything else. */
	const struct sproto_field *key;
	const struct sproto_field *value;
};

struct sproto_type {
	const char *name; // full name, owned by the schema
	size_t name_len;
	int n;                  // fields, sorted by ascending tag
	int base;               // fields[i].tag == base + i for all i, or -1
	struct sproto_field *f; // n fields
};

struct sproto_protocol {
	const char *name; // owned by the schema
	size_t name_len;
	int tag;
	struct sproto_type *request;  // NULL: no request type
	struct sproto_type *response; // NULL: no response type
	bool confirm;                 // "response nil": an empty response is expected
};

struct sproto {
	int type_n;
	struct sproto_type *types; // in the binary's order (by name)
	int protocol_n;
	struct sproto_protocol *protocols; // by ascending tag
	struct sproto *retired_next;       // private: the slots' list of replaced schemas
};

/*
 * Loads a schema binary (the output of sprotoparser.parse) of sz bytes.
 * Returns the schema, owned by the caller, or NULL when the bytes are not a
 * valid binary. Never reads outside bin[0, sz).
 */
struct sproto *sproto_create(const void *bin, size_t sz);

/* Frees a schema from sproto_create; NULL does nothing. */
void sproto_release(struct sproto *sp);

/* The type of that full name (name_len bytes), or NULL. Borrowed from sp. */
struct sproto_type *sproto_type_find(const struct sproto *sp, const char *name, size_t name_len);

/* The protocol with that tag / name, or NULL. Borrowed from sp. */
const struct sproto_protocol *sproto_protocol_bytag(const struct sproto *sp, int64_t tag);
const struct sproto_protocol *sproto_protocol_byname(const struct sproto *sp, const char *name,
                                                     size_t name_len);

/* The field of st with that tag, or NULL. */
const struct sproto_field *sproto_field_bytag(const struct sproto_type *st, int64_t tag);

/*
 * Reader of one encoded struct: the field words, then the data area.
 * sproto_reader_init fails (false) when the buffer cannot hold the header;
 * sproto_reader_next then yields the fields one by one and never reads past
 * the buffer.
 */
struct sproto_reader {
	const uint8_t *start; // private
	const uint8_t *word;  // private: next field word
	int words_left;       // private
	const uint8_t *data;  // private: next data item
	size_t data_left;     // private
	int64_t tag;          // private: tag of the last word read
};

struct sproto_value {
	int64_t tag;
	bool is_inline;
	int inline_value;    // 0..0x7ffe when is_inline
	const uint8_t *data; // a data item's bytes (borrowed from the buffer) otherwise
	uint32_t len;
};

bool sproto_reader_init(struct sproto_reader *r, const void *buf, size_t size);

/* 1: *v is the next field; 0: no more fields; -1: a data item overruns the buffer. */
int sproto_reader_next(struct sproto_reader *r, struct sproto_value *v);

/* Bytes of the buffer the struct used so far (header and data items read). */
static inline size_t
sproto_reader_used(const struct sproto_reader *r) {
	return (size_t)(r->data - r->start);
}

/* Upper bound of sproto_pack's output for n input bytes. */
static inline size_t
sproto_pack_bound(size_t n) {
	return (n + 7) / 8 * 10;
}

/* 0-packs src[0, n) into dst (sproto_pack_bound(n) bytes); returns the packed size. */
size_t sproto_pack(const uint8_t *src, size_t n, uint8_t *dst);

/*
 * Unpacks src[0, n). Returns the unpacked size (a multiple of 8), or -1 when
 * the stream ends inside a word or a run. With dst NULL it only measures;
 * otherwise dst must hold the measured size.
 */
ptrdiff_t sproto_unpack(const uint8_t *src, size_t n, uint8_t *dst);

/*
 * Process-wide slots 0 .. SPROTO_SLOTS-1. sproto_slot_save takes ownership
 * of sp: a schema once stored is never freed (a replaced one stays valid for
 * whoever still uses it). sproto_slot_load returns the slot's schema or
 * NULL. Both thread-safe.
 */
void sproto_slot_save(int slot, struct sproto *sp);
struct sproto *sproto_slot_load(int slot);

#endif
