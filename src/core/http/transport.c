/* transport.c -- the transports luaload has, by name. */
#include "transport.h"

#include <string.h>

#include "transport_curl.h"

static const ll_transport_ops *const transports[] = {&ll_transport_curl};

const ll_transport_ops *ll_transport_find(const char *name) {
    for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
        if (strcmp(transports[i]->name, name) == 0) return transports[i];
    return NULL;
}

const ll_transport_ops *ll_transport_default(void) { return &ll_transport_curl; }
