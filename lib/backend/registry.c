/* The backends ic knows, by name. */
#include <string.h>

#include "backend/backend.h"

static const ic_backend *const backend_list[] = {&ic_backend_cuda, &ic_backend_ref};

const ic_backend *backend_by_name(const char *name) {
  for (size_t i = 0; name && i < IC_ARRAY_LEN(backend_list); i++)
    if (strcmp(backend_list[i]->name, name) == 0) return backend_list[i];
  return NULL;
}
