#!/usr/bin/env bash
# What a consumer of an installed ic meets, on any machine (no GPU needed): installs the
# build tree into a temp prefix, then builds and runs a small program (ic_version, a graph
# compiled and run on the ref backend) through
#   - find_package(ic CONFIG) -> ic::ic (shared) and ic::ic_static (static);
#   - pkg-config ic (shared) and pkg-config --static ic (libic.a);
# and checks that
#   - the shared consumer configures without pkg-config, and the static one then stops with
#     a message naming pkg-config and libxxhash (likewise without the libxxhash module);
#   - the installed libic.a defines no global symbol outside ic_*;
#   - README.md's "A short example" compiles as written.
#
#   bash tests/cli/test_consumer.sh BUILD_DIR SOURCE_DIR [GENERATOR [C_COMPILER [CFLAGS]]]
#
# Run by ctest (test_consumer); CFLAGS carries the sanitizer flags of an IC_SANITIZE build.
set -u

BUILD=${1:?usage: test_consumer.sh BUILD_DIR SOURCE_DIR [GENERATOR [C_COMPILER [CFLAGS]]]}
SRC=${2:?usage: test_consumer.sh BUILD_DIR SOURCE_DIR [GENERATOR [C_COMPILER [CFLAGS]]]}
GEN=${3:-Unix Makefiles}
CC=${4:-cc}
CFLAGS=${5:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export IC_CACHE=0 IC_LOG=error
unset IC_ARCH

failures=0
checks=0
fail() {
  echo "FAIL: $*"
  [ -f "$TMP/log" ] && { echo "--- output"; tail -n 40 "$TMP/log"; }
  failures=$((failures + 1))
}
# step DESCRIPTION COMMAND...: runs COMMAND (output in $TMP/log); a failure is reported.
step() {
  local what=$1
  shift
  checks=$((checks + 1))
  "$@" >"$TMP/log" 2>&1 || { fail "$what (exit $?): $*"; return 1; }
}
# refuses DESCRIPTION TEXT... -- COMMAND...: COMMAND must fail, its output naming each TEXT.
refuses() {
  local what=$1 texts=()
  shift
  while [ "$1" != -- ]; do texts+=("$1"); shift; done
  shift
  checks=$((checks + 1))
  if "$@" >"$TMP/log" 2>&1; then fail "$what: succeeded: $*"; return 1; fi
  for t in "${texts[@]}"; do grep -qiF -- "$t" "$TMP/log" || fail "$what: '$t' not in the message"; done
}

PREFIX=$TMP/prefix
step "cmake --install" cmake --install "$BUILD" --prefix "$PREFIX" || exit 1

# ---------------------------------------------------------------- the consumer
mkdir -p "$TMP/app"
cat >"$TMP/app/consumer.c" <<'EOF'
#include <ic/ic.h>
#include <stdio.h>

int main(void) {
  if (ic_version() != IC_VERSION_NUMBER) {
    fprintf(stderr, "header %d, library %d\n", IC_VERSION_NUMBER, ic_version());
    return 1;
  }
  ic_context *ctx; /* no GPU needed: the context serves the ref backend */
  ic_graph *g;
  if (ic_context_create(NULL, &ctx) != IC_OK || ic_graph_create(&g) != IC_OK) goto error;
  ic_value x = ic_graph_input(g, "x", IC_F32, 1, (ic_dim[]){ic_graph_symbol(g, "n")}, IC_LAYOUT_CONTIGUOUS);
  if (ic_graph_output(g, "y", ic_graph_binary(g, IC_OP_MUL, x, x)) != IC_OK) goto error;
  ic_compile_options opts = {.struct_size = sizeof opts, .backend = "ref"};
  ic_program *p;
  if (ic_compile(ctx, g, &opts, &p) != IC_OK) goto error;
  float hx[4] = {1, 2, 3, -4}, hy[4] = {0};
  int64_t shape[1] = {4};
  ic_tensor in[1] = {{hx, IC_F32, 1, shape, NULL}}, out[1] = {{hy, IC_F32, 1, shape, NULL}};
  if (ic_program_run(p, in, 1, out, 1, NULL) != IC_OK) goto error;
  printf("consumer ok: ic %d, y = %g %g %g %g\n", ic_version(), hy[0], hy[1], hy[2], hy[3]);
  ic_program_release(p);
  ic_graph_destroy(g);
  ic_context_destroy(ctx);
  return hy[3] == 16.0f ? 0 : 1;
error:
  fprintf(stderr, "consumer: %s\n", ic_last_error());
  return 1;
}
EOF
cat >"$TMP/app/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(consumer LANGUAGES C)
if(IC_COMPONENTS)
  find_package(ic 0.1 CONFIG REQUIRED COMPONENTS ${IC_COMPONENTS})
else()
  find_package(ic 0.1 CONFIG REQUIRED)
endif()
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE ${IC_TARGET})
EOF

# cmake_consumer NAME ARGS...: configures $TMP/app into $TMP/NAME.
cmake_consumer() {
  local name=$1
  shift
  CFLAGS=$CFLAGS cmake -S "$TMP/app" -B "$TMP/$name" -G "$GEN" -DCMAKE_C_COMPILER="$CC" \
    -DCMAKE_PREFIX_PATH="$PREFIX" "$@"
}

expect_ok() { grep -q "consumer ok: ic" "$TMP/log" || fail "$1: no 'consumer ok' line"; }

# find_package(ic CONFIG): ic::ic and ic::ic_static, built and run.
for kind in shared static; do
  target=ic::ic
  [ $kind = static ] && target=ic::ic_static
  step "cmake $kind: configure" cmake_consumer cmake-$kind -DIC_TARGET=$target &&
    step "cmake $kind: build" cmake --build "$TMP/cmake-$kind" &&
    step "cmake $kind: run" "$TMP/cmake-$kind/consumer" && expect_ok "cmake $kind"
done
if [ -x "$TMP/cmake-static/consumer" ] && readelf -d "$TMP/cmake-static/consumer" | grep -q 'libic\.so'; then
  fail "cmake static: the consumer needs libic.so"
fi

# Without pkg-config: the shared consumer needs nothing; ic::ic_static says what is missing.
NOPC=-DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON
step "shared without pkg-config: configure" cmake_consumer nopc-shared -DIC_TARGET=ic::ic $NOPC &&
  step "shared without pkg-config: build" cmake --build "$TMP/nopc-shared" &&
  step "shared without pkg-config: run" "$TMP/nopc-shared/consumer" && expect_ok "shared without pkg-config"
refuses "static without pkg-config" "pkg-config" "libxxhash" -- \
  cmake_consumer nopc-static -DIC_TARGET=ic::ic_static $NOPC
refuses "COMPONENTS static without pkg-config" "pkg-config" "libxxhash" -- \
  cmake_consumer nopc-comp -DIC_TARGET=ic::ic_static -DIC_COMPONENTS=static $NOPC
step "COMPONENTS shared without pkg-config" cmake_consumer nopc-comp-shared -DIC_TARGET=ic::ic -DIC_COMPONENTS=shared $NOPC
# No pkg-config module anywhere: also no CMAKE_PREFIX_PATH (pkg_check_modules searches its
# lib/pkgconfig) and no sysroot, which a build machine may set to bring its own libxxhash.
no_modules() (
  unset CMAKE_PREFIX_PATH
  export PKG_CONFIG_LIBDIR="$TMP/nothing" PKG_CONFIG_PATH="" PKG_CONFIG_SYSROOT_DIR=""
  "$@"
)
refuses "static without the libxxhash module" "libxxhash-dev" -- \
  no_modules cmake_consumer noxx-static -DIC_TARGET=ic::ic_static

# pkg-config: -lic is the shared library; the static link names libic.a (-l:libic.a).
PC=$(find "$PREFIX" -name ic.pc | head -n 1)
if [ -z "$PC" ]; then
  fail "no ic.pc under $PREFIX"
elif command -v pkg-config >/dev/null; then
  # The installed ic.pc holds real paths: a sysroot (set on machines that bring their own
  # packages under a prefix) must not be prepended to them.
  export PKG_CONFIG_SYSROOT_DIR=
  export PKG_CONFIG_PATH
  PKG_CONFIG_PATH=$(dirname "$PC")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  libdir=$(pkg-config --variable=libdir ic)
  # shellcheck disable=SC2046,SC2086 # pkg-config's and CFLAGS' words are separate arguments
  step "pkg-config shared: build" $CC $CFLAGS -std=c11 -o "$TMP/pc-shared" "$TMP/app/consumer.c" \
    $(pkg-config --cflags --libs ic) &&
    step "pkg-config shared: run" env LD_LIBRARY_PATH="$libdir" "$TMP/pc-shared" && expect_ok "pkg-config shared"
  # shellcheck disable=SC2046,SC2086
  step "pkg-config --static: build" $CC $CFLAGS -std=c11 -o "$TMP/pc-static" "$TMP/app/consumer.c" \
    $(pkg-config --cflags ic) $(pkg-config --static --libs ic | sed 's/-lic\b/-l:libic.a/') &&
    step "pkg-config --static: run" "$TMP/pc-static" && expect_ok "pkg-config --static"
fi

# libic.a: no global symbol outside ic_* (internal ones would clash in a static link).
ARCHIVE=$(find "$PREFIX" -name libic.a | head -n 1)
checks=$((checks + 1))
if [ -z "$ARCHIVE" ]; then
  fail "no libic.a under $PREFIX"
else
  nm -g --defined-only "$ARCHIVE" | awk 'NF == 3 && $3 !~ /^ic_/' >"$TMP/log"
  [ -s "$TMP/log" ] && fail "libic.a defines $(wc -l <"$TMP/log") global symbols outside ic_*"
fi

# README.md's "A short example" compiles as written (the first ```c block after it).
awk '/^## A short example/ { on = 1 } on && /^```c$/ { code = 1; next } code && /^```$/ { exit } code' \
  "$SRC/README.md" >"$TMP/readme_example.c"
checks=$((checks + 1))
if [ ! -s "$TMP/readme_example.c" ]; then
  fail "no C code block under '## A short example' in README.md"
else
  # shellcheck disable=SC2086
  step "README example: compile" $CC $CFLAGS -std=c11 -Wall -Wextra -Wpedantic -Werror -c \
    -I"$PREFIX/include" -o "$TMP/readme_example.o" "$TMP/readme_example.c"
fi

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
