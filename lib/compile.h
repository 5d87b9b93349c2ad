/* The compile pipeline below ic_compile, for tests that bring a backend of their own
 * (e.g. one whose fused kernels fail to compile, to exercise the eager fallback). */
#ifndef IC_COMPILE_H
#define IC_COMPILE_H

#include "backend/backend.h"

/* ic_compile on a given backend; opts is complete (struct_size and mode checked). */
ic_status compile_graph(ic_context *ctx, const ic_graph *g, const ic_compile_options *opts,
                        const backend_vtable *backend, ic_program **out);

#endif
