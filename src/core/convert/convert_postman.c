/* convert_postman.c -- SCAFFOLD on a helper branch, replaced by the converter
 * before it reaches main. */
#include "convert.h"

#include <stdio.h>

int ll_convert_postman(const cJSON *doc, const ll_convert_opts *o, ll_convert_out *out, char *err, size_t errlen) {
    (void)doc;
    (void)out;
    snprintf(err, errlen, "%s: the postman converter is not written yet", o->input);
    return -1;
}
