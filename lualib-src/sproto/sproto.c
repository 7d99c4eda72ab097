/*
 * sproto core without Lua: schema loading, the struct reader, 0-packing and
 * the process-wide slots.
 *
 * Wire format of a struct: a u16 count n, n u16 field words, then the data
 * area (all little-endian). Walking the words from tag -1, each word first
 * moves to the next tag; an odd word 2k+1 then skips k more tags, an even
 * non-zero word 2(v+1) gives the current tag the inline value v, and a zero
 * word takes the next data item (u32 length, then that many bytes). Tags only
 * grow, so a reader sees each tag at most once.
 *
 * Schema binary: a struct of the meta-schema
 *   group    { type 0 : *type  protocol 1 : *protocol }
 *   type     { name 0 : string  fields 1 : *field }
 *   field    { name 0 : string  buildin 1 : integer  type 2 : integer
 *              tag 3 : integer  array 4 : boolean  key 5 : integer  map 6 : boolean }
 *   protocol { name 0 : string  tag 1 : integer  request 2 : integer
 *              response 3 : integer  confirm 4 : boolean }
 * where an array of records is a data item holding (u32 length, record)
 * items. A builtin field carries its decimal digits (integer) or binary
 * flag (string) in the `type` slot. The loader reads every record by tag,
 * takes integers only inline and strings and arrays only as data items, and
 * refuses what it could not use safely: field tags not strictly ascending,
 * protocol tags not strictly ascending, a type id out of range, a key that
 * is not a scalar builtin field of the element type, a map whose element
 * type has not exactly two fields keyed by the first. Unknown tags are
 * ignored. Every read is bounds-checked, so any bytes are safe to load.
 *
 * Slots: 16 pointers, one array per process. A store swaps the pointer and
 * pushes the old schema on a list of retired ones, so a schema handed out
 * once stays valid (and reachable) until the process exits.
 */
#include "sproto.h"

#include "atomic.h"
#include "skynet_malloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define META_TAGS 7 // the widest meta record (field) has tags 0..6

static inline uint16_t
rd16(const uint8_t *p) {
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
rd32(const uint8_t *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

bool
sproto_reader_init(struct sproto_reader *r, const void *buf, size_t size) {
	const uint8_t *p = buf;
	if (size < 2)
		return false;
	size_t n = rd16(p);
	if (size - 2 < n * 2)
		return false;
	r->start = p;
	r->word = p + 2;
	r->words_left = (int)n;
	r->data = p + 2 + n * 2;
	r->data_left = size - 2 - n * 2;
	r->tag = -1;
	return true;
}

int
sproto_reader_next(struct sproto_reader *r, struct sproto_value *v) {
	while (r->words_left > 0) {
		uint16_t w = rd16(r->word);
		r->word += 2;
		r->words_left--;
		r->tag++;
		if (w & 1) {
			r->tag += w / 2;
			continue;
		}
		v->tag = r->tag;
		if (w != 0) {
			v->is_inline = true;
			v->inline_value = w / 2 - 1;
			v->data = NULL;
			v->len = 0;
			return 1;
		}
		if (r->data_left < 4)
			return -1;
		uint32_t len = rd32(r->data);
		if (len > r->data_left - 4)
			return -1;
		v->is_inline = false;
		v->inline_value = 0;
		v->data = r->data + 4;
		v->len = len;
		r->data += 4 + (size_t)len;
		r->data_left -= 4 + (size_t)len;
		return 1;
	}
	return 0;
}

/* ---- Schema loading ---- */

/* The fields 0..META_TAGS-1 of one meta record. */
struct meta {
	bool has[META_TAGS];
	bool is_inline[META_TAGS];
	int value[META_TAGS];
	const uint8_t *data[META_TAGS];
	uint32_t len[META_TAGS];
};

static bool
meta_read(struct meta *m, const uint8_t *p, size_t size) {
	memset(m, 0, sizeof(*m));
	struct sproto_reader r;
	struct sproto_value v;
	if (!sproto_reader_init(&r, p, size))
		return false;
	int rc;
	while ((rc = sproto_reader_next(&r, &v)) == 1) {
		if (v.tag >= META_TAGS)
			continue;
		int t = (int)v.tag;
		m->has[t] = true;
		m->is_inline[t] = v.is_inline;
		m->value[t] = v.inline_value;
		m->data[t] = v.data;
		m->len[t] = v.len;
	}
	return rc == 0;
}

/* Field t must be absent or inline; *out keeps its value (else stays). */
static bool
meta_int(const struct meta *m, int t, int *out) {
	if (!m->has[t])
		return true;
	if (!m->is_inline[t])
		return false;
	*out = m->value[t];
	return true;
}

static bool
meta_is_data(const struct meta *m, int t) {
	return m->has[t] && !m->is_inline[t];
}

/* Items (u32 length, bytes) exactly filling p[0, len): their count, or -1. */
static int
item_count(const uint8_t *p, size_t len) {
	int n = 0;
	while (len > 0) {
		if (len < 4)
			return -1;
		uint32_t sz = rd32(p);
		if (sz > len - 4)
			return -1;
		p += 4 + (size_t)sz;
		len -= 4 + (size_t)sz;
		n++;
	}
	return n;
}

/* The item at *p (already validated by item_count); advances *p past it. */
static const uint8_t *
item_next(const uint8_t **p, uint32_t *len) {
	*len = rd32(*p);
	const uint8_t *item = *p + 4;
	*p = item + *len;
	return item;
}

static char *
copy_name(const struct meta *m, size_t *len) {
	char *s = skynet_malloc((size_t)m->len[0] + 1);
	memcpy(s, m->data[0], m->len[0]);
	s[m->len[0]] = '\0';
	*len = m->len[0];
	return s;
}

static double
power_of_ten(int n) {
	double s = 1.0;
	for (int i = 0; i < n && i < 400; i++) // past 10^308 it is infinity anyway
		s *= 10.0;
	return s;
}

/* key_tag: the field's key (-1 none); *is_map: its map flag. */
static bool
load_field(struct sproto *sp, struct sproto_field *f, const uint8_t *p, size_t size, int *key_tag,
           bool *is_map) {
	struct meta m;
	if (!meta_read(&m, p, size) || !meta_is_data(&m, 0) || !m.has[3])
		return false;
	f->name = copy_name(&m, &f->name_len);
	int buildin = -1, type = -1, tag = -1, array = 0, map = 0;
	*key_tag = -1;
	if (!meta_int(&m, 1, &buildin) || !meta_int(&m, 2, &type) || !meta_int(&m, 3, &tag) ||
	    !meta_int(&m, 4, &array) || !meta_int(&m, 5, key_tag) || !meta_int(&m, 6, &map))
		return false;
	f->tag = tag;
	f->decimal = -1;
	f->scale = 1.0;
	f->array = array != 0;
	*is_map = map != 0;
	if (buildin < 0) {
		if (type < 0 || type >= sp->type_n)
			return false;
		f->kind = SPROTO_TSTRUCT;
		f->st = &sp->types[type];
	} else if (buildin == SPROTO_TINTEGER) {
		f->kind = SPROTO_TINTEGER;
		if (type >= 0) {
			f->decimal = type;
			f->scale = power_of_ten(type);
		}
	} else if (buildin == SPROTO_TSTRING) {
		f->kind = SPROTO_TSTRING;
		f->binary = type > 0;
	} else if (buildin == SPROTO_TBOOLEAN || buildin == SPROTO_TDOUBLE) {
		if (type >= 0)
			return false;
		f->kind = (enum sproto_kind)buildin;
	} else {
		return false;
	}
	if (*key_tag >= 0 && (!f->array || f->kind != SPROTO_TSTRUCT))
		return false;
	return !*is_map || *key_tag >= 0;
}

/* Keys are looked up once every type is loaded: the element type may come later. */
struct pending_key {
	struct sproto_field *f;
	int tag;
	bool map;
};

static bool
load_type(struct sproto *sp, struct sproto_type *st, const uint8_t *p, size_t size,
          struct pending_key **keys, size_t *nkeys, size_t *capkeys) {
	struct meta m;
	if (!meta_read(&m, p, size) || !meta_is_data(&m, 0))
		return false;
	st->name = copy_name(&m, &st->name_len);
	st->base = -1;
	if (!m.has[1])
		return true;
	if (m.is_inline[1])
		return false;
	int n = item_count(m.data[1], m.len[1]);
	if (n < 0)
		return false;
	st->f = skynet_calloc((size_t)n, sizeof(struct sproto_field));
	st->n = n;
	const uint8_t *it = m.data[1];
	for (int i = 0; i < n; i++) {
		uint32_t len;
		const uint8_t *rec = item_next(&it, &len);
		struct sproto_field *f = &st->f[i];
		int key_tag;
		bool is_map;
		if (!load_field(sp, f, rec, len, &key_tag, &is_map))
			return false;
		if (i > 0 && f->tag <= st->f[i - 1].tag)
			return false;
		if (key_tag >= 0) {
			if (*nkeys == *capkeys) {
				*capkeys = *capkeys ? *capkeys * 2 : 8;
				*keys = skynet_realloc(*keys, *capkeys * sizeof(**keys));
			}
			(*keys)[(*nkeys)++] = (struct pending_key){f, key_tag, is_map};
		}
	}
	if (n > 0 && st->f[n - 1].tag - st->f[0].tag == n - 1)
		st->base = st->f[0].tag;
	return true;
}

static bool
resolve_key(struct pending_key *k) {
	struct sproto_field *f = k->f;
	const struct sproto_field *key = sproto_field_bytag(f->st, k->tag);
	if (key == NULL || key->kind == SPROTO_TSTRUCT || key->array)
		return false;
	if (k->map) {
		if (f->st->n != 2 || key != &f->st->f[0])
			return false;
		f->value = &f->st->f[1];
	}
	f->key = key;
	return true;
}

static bool
load_types(struct sproto *sp, const uint8_t *p, size_t size) {
	int n = item_count(p, size);
	if (n < 0)
		return false;
	sp->types = skynet_calloc((size_t)n, sizeof(struct sproto_type));
	sp->type_n = n;
	struct pending_key *keys = NULL;
	size_t nkeys = 0, capkeys = 0;
	bool ok = true;
	for (int i = 0; i < n && ok; i++) {
		uint32_t len;
		const uint8_t *rec = item_next(&p, &len);
		ok = load_type(sp, &sp->types[i], rec, len, &keys, &nkeys, &capkeys);
	}
	for (size_t i = 0; i < nkeys && ok; i++)
		ok = resolve_key(&keys[i]);
	skynet_free(keys);
	return ok;
}

static bool
load_protocol(struct sproto *sp, struct sproto_protocol *pr, const uint8_t *p, size_t size) {
	struct meta m;
	if (!meta_read(&m, p, size) || !meta_is_data(&m, 0) || !m.has[1])
		return false;
	pr->name = copy_name(&m, &pr->name_len);
	int tag = -1, request = -1, response = -1, confirm = 0;
	if (!meta_int(&m, 1, &tag) || !meta_int(&m, 2, &request) || !meta_int(&m, 3, &response) ||
	    !meta_int(&m, 4, &confirm))
		return false;
	if (request >= sp->type_n || response >= sp->type_n)
		return false;
	pr->tag = tag;
	pr->request = request >= 0 ? &sp->types[request] : NULL;
	pr->response = response >= 0 ? &sp->types[response] : NULL;
	pr->confirm = confirm != 0;
	return true;
}

static bool
load_protocols(struct sproto *sp, const uint8_t *p, size_t size) {
	int n = item_count(p, size);
	if (n < 0)
		return false;
	sp->protocols = skynet_calloc((size_t)n, sizeof(struct sproto_protocol));
	sp->protocol_n = n;
	for (int i = 0; i < n; i++) {
		uint32_t len;
		const uint8_t *rec = item_next(&p, &len);
		if (!load_protocol(sp, &sp->protocols[i], rec, len))
			return false;
		if (i > 0 && sp->protocols[i].tag <= sp->protocols[i - 1].tag)
			return false;
	}
	return true;
}

struct sproto *
sproto_create(const void *bin, size_t sz) {
	struct meta m;
	if (!meta_read(&m, bin, sz))
		return NULL;
	if ((m.has[0] && m.is_inline[0]) || (m.has[1] && m.is_inline[1]))
		return NULL;
	struct sproto *sp = skynet_calloc(1, sizeof(*sp));
	if ((m.has[0] && !load_types(sp, m.data[0], m.len[0])) ||
	    (m.has[1] && !load_protocols(sp, m.data[1], m.len[1]))) {
		sproto_release(sp);
		return NULL;
	}
	return sp;
}

void
sproto_release(struct sproto *sp) {
	if (sp == NULL)
		return;
	for (int i = 0; i < sp->type_n; i++) {
		struct sproto_type *st = &sp->types[i];
		for (int j = 0; j < st->n; j++)
			skynet_free((char *)st->f[j].name);
		skynet_free(st->f);
		skynet_free((char *)st->name);
	}
	skynet_free(sp->types);
	for (int i = 0; i < sp->protocol_n; i++)
		skynet_free((char *)sp->protocols[i].name);
	skynet_free(sp->protocols);
	skynet_free(sp);
}

/* ---- Lookups ---- */

struct sproto_type *
sproto_type_find(const struct sproto *sp, const char *name, size_t name_len) {
	for (int i = 0; i < sp->type_n; i++) {
		struct sproto_type *st = &sp->types[i];
		if (st->name_len == name_len && memcmp(st->name, name, name_len) == 0)
			return st;
	}
	return NULL;
}

const struct sproto_protocol *
sproto_protocol_bytag(const struct sproto *sp, int64_t tag) {
	int lo = 0, hi = sp->protocol_n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		const struct sproto_protocol *pr = &sp->protocols[mid];
		if (pr->tag == tag)
			return pr;
		if (pr->tag < tag)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

const struct sproto_protocol *
sproto_protocol_byname(const struct sproto *sp, const char *name, size_t name_len) {
	for (int i = 0; i < sp->protocol_n; i++) {
		const struct sproto_protocol *pr = &sp->protocols[i];
		if (pr->name_len == name_len && memcmp(pr->name, name, name_len) == 0)
			return pr;
	}
	return NULL;
}

const struct sproto_field *
sproto_field_bytag(const struct sproto_type *st, int64_t tag) {
	if (st->base >= 0) {
		int64_t i = tag - st->base;
		return i >= 0 && i < st->n ? &st->f[i] : NULL;
	}
	int lo = 0, hi = st->n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		const struct sproto_field *f = &st->f[mid];
		if (f->tag == tag)
			return f;
		if (f->tag < tag)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* ---- 0-packing ----
 * Every 8-byte word (the input is zero-padded to a multiple of 8) becomes a
 * tag byte whose bit i says byte i is non-zero, then its non-zero bytes.
 * A word with 8 non-zero bytes instead opens a raw run: ff, a count byte
 * (words - 1), then the words verbatim; later words with 6 to 8 non-zero
 * bytes join the run, up to 256 words. */

#define RUN_MAX_WORDS 256

size_t
sproto_pack(const uint8_t *src, size_t n, uint8_t *dst) {
	uint8_t *out = dst;
	uint8_t *run_count = NULL; // the open run's count byte
	int run_words = 0;
	for (size_t off = 0; off < n; off += 8) {
		uint8_t w[8] = {0};
		memcpy(w, src + off, n - off < 8 ? n - off : 8);
		int nonzero = 0;
		uint8_t bits = 0;
		for (int i = 0; i < 8; i++) {
			if (w[i] != 0) {
				nonzero++;
				bits |= (uint8_t)(1u << i);
			}
		}
		if (run_count != NULL) {
			if (nonzero >= 6 && run_words < RUN_MAX_WORDS) {
				memcpy(out, w, 8);
				out += 8;
				run_words++;
				continue;
			}
			*run_count = (uint8_t)(run_words - 1);
			run_count = NULL;
		}
		if (nonzero == 8) {
			*out++ = 0xff;
			run_count = out++;
			memcpy(out, w, 8);
			out += 8;
			run_words = 1;
			continue;
		}
		*out++ = bits;
		for (int i = 0; i < 8; i++) {
			if (w[i] != 0)
				*out++ = w[i];
		}
	}
	if (run_count != NULL)
		*run_count = (uint8_t)(run_words - 1);
	return (size_t)(out - dst);
}

ptrdiff_t
sproto_unpack(const uint8_t *src, size_t n, uint8_t *dst) {
	size_t i = 0, out = 0;
	while (i < n) {
		uint8_t bits = src[i++];
		if (bits == 0xff) {
			if (i >= n)
				return -1;
			size_t len = ((size_t)src[i++] + 1) * 8;
			if (n - i < len)
				return -1;
			if (dst != NULL)
				memcpy(dst + out, src + i, len);
			i += len;
			out += len;
			continue;
		}
		for (int b = 0; b < 8; b++) {
			uint8_t c = 0;
			if (bits & (1u << b)) {
				if (i >= n)
					return -1;
				c = src[i++];
			}
			if (dst != NULL)
				dst[out] = c;
			out++;
		}
	}
	return (ptrdiff_t)out;
}

/* ---- Slots ---- */

static ATOM_POINTER SLOTS[SPROTO_SLOTS];
static ATOM_POINTER RETIRED; // struct sproto *, linked by retired_next

void
sproto_slot_save(int slot, struct sproto *sp) {
	struct sproto *old = ATOM_XCHG(&SLOTS[slot], sp);
	if (old == NULL)
		return;
	struct sproto *head;
	do {
		head = ATOM_LOAD(&RETIRED);
		old->retired_next = head;
	} while (!ATOM_CAS(&RETIRED, head, old));
}

struct sproto *
sproto_slot_load(int slot) {
	return ATOM_LOAD(&SLOTS[slot]);
}
