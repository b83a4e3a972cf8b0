/* body.h -- where a request body comes from: nothing, bytes in memory, a
 * region of an open file (read with pread, so many transfers can send the
 * same file at once, each at its own offset), a generator callback, or a
 * multipart form (form.h) whose parts are such sources. Transports read
 * the first kinds through ll_body_read and stream a form part by part;
 * none is held whole in memory unless it is a memory body. */
#ifndef LL_BODY_H
#define LL_BODY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum { LL_BODY_NONE, LL_BODY_MEMORY, LL_BODY_FILE, LL_BODY_GENERATOR, LL_BODY_FORM } ll_body_kind;

struct ll_form;

/* Fills buf with up to n bytes of the body from position pos; returns the
 * number written (0 only at the end) or -1 on an error. Over HTTP/2 on
 * the native transport it may also return LL_BODY_LATER: nothing yet (a
 * gRPC stream's messages); the transport's resume op says when there is. */
#define LL_BODY_LATER (-2)
/* A generator body's len when it is not known beforehand (a stream): sent
 * without Content-Length, HTTP/2 only. */
#define LL_BODY_LEN_UNKNOWN UINT64_MAX
typedef ssize_t ll_body_gen_fn(void *ud, uint64_t pos, char *buf, size_t n);

typedef struct ll_body {
    ll_body_kind kind;
    uint64_t len;        /* bytes the source gives */
    char *mem;           /* MEMORY: owned, NUL-terminated after len */
    int fd;              /* FILE: not owned; the region starts at offset */
    uint64_t offset;
    ll_body_gen_fn *gen; /* GENERATOR: not owned */
    void *gen_ud;
    const struct ll_form *form; /* FORM: not owned; len is 0 (the transport knows) */
} ll_body;

/* Replaces b with a copy of n bytes at p. Returns 0, or -1 when out of
 * memory (a user-sized allocation: b is then empty). */
int ll_body_set_memory(ll_body *b, const char *p, size_t n);
/* Replaces b with len bytes of fd from offset (fd must outlive the body). */
void ll_body_set_file(ll_body *b, int fd, uint64_t offset, uint64_t len);
/* Replaces b with len bytes made by gen (gen_ud must outlive the body). */
void ll_body_set_generator(ll_body *b, ll_body_gen_fn *gen, void *gen_ud, uint64_t len);
/* Replaces b with the multipart form f (f must outlive the body). */
void ll_body_set_form(ll_body *b, const struct ll_form *f);
/* Copies src into dst (memory is duplicated, file, generator and form shared).
 * Returns 0 or -1 when out of memory. */
int ll_body_copy(ll_body *dst, const ll_body *src);
void ll_body_clear(ll_body *b);

/* Reads up to n bytes from position pos (0 <= pos <= len). Returns the bytes
 * read, 0 at the end, -1 on an error (errno set; a file that got shorter is
 * EIO). A form is read part by part, not through this. */
ssize_t ll_body_read(const ll_body *b, uint64_t pos, char *buf, size_t n);

#endif
