/* list_token.c -- comma-separated token lists (see list_token.h). */
#include "list_token.h"

#include <strings.h>

int ll_list_token_has(const char *v, size_t n, const char *t, size_t tn) {
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ',')) i++;
        size_t s = i;
        while (i < n && v[i] != ',') i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t')) e--;
        if (e - s == tn && strncasecmp(v + s, t, tn) == 0) return 1;
    }
    return 0;
}
