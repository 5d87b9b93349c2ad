/* The backends ic knows, by name. */
#include <string.h>

#include "backend/backend.h"

static const backend_vtable *const backend_list[] = {&backend_cuda, &backend_ref};

const backend_vtable *backend_by_name(const char *name) {
  for (size_t i = 0; name && i < ARRAY_LEN(backend_list); i++)
    if (strcmp(backend_list[i]->name, name) == 0) return backend_list[i];
  return NULL;
}
