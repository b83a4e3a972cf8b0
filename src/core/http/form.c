/* form.c -- multipart form descriptions (see form.h). */
#include "form.h"

#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s, int *failed) {
    char *d = s ? strdup(s) : NULL;
    if (s && !d) *failed = 1;
    return d;
}

static void part_free(ll_form_part *p) {
    free(p->name);
    free(p->filename);
    free(p->content_type);
    ll_body_clear(&p->data);
}

int ll_form_add(ll_form *f, const char *name, const char *filename, const char *content_type, const ll_body *data) {
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 4;
        ll_form_part *p = realloc(f->parts, (size_t)cap * sizeof(*p));
        if (!p) return -1;
        f->parts = p;
        f->cap = cap;
    }
    ll_form_part *p = &f->parts[f->n];
    memset(p, 0, sizeof(*p));
    p->data.fd = -1;
    int failed = 0;
    p->name = dup_or_null(name, &failed);
    p->filename = dup_or_null(filename, &failed);
    p->content_type = dup_or_null(content_type, &failed);
    if (failed || ll_body_copy(&p->data, data) < 0) {
        part_free(p);
        return -1;
    }
    f->n++;
    return 0;
}

void ll_form_free(ll_form *f) {
    for (int i = 0; i < f->n; i++) part_free(&f->parts[i]);
    free(f->parts);
    memset(f, 0, sizeof(*f));
}
