/* form.h -- a multipart/form-data body described part by part (form.c):
 * each part a name, an optional filename and Content-Type, and its data as
 * a body source of its own (bytes in memory, a file region, a generator),
 * so a transport can stream a form whose file parts never sit in memory
 * (libcurl: curl_mime with read callbacks). */
#ifndef LL_FORM_H
#define LL_FORM_H

#include "body.h"

typedef struct ll_form_part {
    char *name;
    char *filename;            /* NULL: a plain field */
    char *content_type;        /* NULL: none given */
    ll_body data;
} ll_form_part;

typedef struct ll_form {
    ll_form_part *parts;
    int n, cap;
} ll_form;

/* Appends a part; data is copied as ll_body_copy does (memory duplicated,
 * file and generator shared). Returns 0, or -1 when out of memory. */
int ll_form_add(ll_form *f, const char *name, const char *filename, const char *content_type, const ll_body *data);
void ll_form_free(ll_form *f);

#endif
