/*
 * ic — an embeddable JIT compiler for tensor op graphs on NVIDIA GPUs.
 *
 * This header is the specification of the public API. Everything the library exports is
 * declared here; everything else is hidden.
 *
 * Conventions
 *   - Opaque handles: ic_context, ic_graph, ic_program, each with create and destroy; every
 *     destroy accepts NULL. Programs are reference-counted (ic_program_retain/release).
 *   - Every fallible call returns an ic_status; outputs are the last parameters. The
 *     detailed message of the last failure on the calling thread is ic_last_error().
 *   - Graph builder calls return an ic_value. A bad call returns IC_INVALID_VALUE, leaves
 *     the graph as it was and records the first error on the graph (ic_graph_error);
 *     ic_compile refuses a graph that holds an error.
 *   - Option structs begin with `uint32_t struct_size` (set it to sizeof) and only grow.
 *   - The library never aborts, exits, or prints unasked: logging is off unless IC_LOG
 *     or a log callback asks for it.
 *   - A failed call leaves nothing behind: nothing leaks, *out stays NULL, outputs that a
 *     failed ic_program_run allocated are freed (their data NULL again), and the context
 *     stays usable. Running out of memory or disk is a status, never a crash (README,
 *     "Guarantees", says which test shows each).
 *
 * Thread safety: a context may be shared by threads; a graph belongs to one thread; a
 * compiled program is immutable and may run concurrently on several streams.
 *
 * Environment (read when a context is created; options, where they exist, win unless
 * said otherwise):
 *   IC_ARCH=sm_90a       the CUDA target when options.arch is NULL; with no GPU the
 *                        context is compile-only for it.
 *   IC_LOG=LEVEL         error, warn, info, debug (any case) or 0-4: log to stderr (or the
 *                        log callback) when options.log_level is IC_LOG_OFF. Any other
 *                        value leaves logging off and prints one warning line to stderr,
 *                        once per process.
 *   IC_DUMP=DIR          every compile writes its files to DIR/<program key, 32 hex
 *                        digits>/: graph.txt, program.txt and per kernel its .kir and .cu,
 *                        so compiles never overwrite each other (a program from the
 *                        program cache is not written again; IC_COMPILE_NO_CACHE programs
 *                        are keyed the same way). A kernel that NVRTC fails to compile
 *                        leaves DIR/failed/<kernel>.nvrtc.log and <kernel>.failed.cu (the
 *                        program does not exist yet; the latest failure of a kernel name
 *                        is kept).
 *   IC_STRICT=1          (any value but empty or 0) a fused kernel that fails to compile
 *                        is an error instead of falling back to eager kernels.
 *   IC_PTXAS_STRICT=1    (exactly 1, read at each compile) ptxas runs with -v and a kernel
 *                        that spills registers or draws a C7xxx warning fails to compile
 *                        (IC_ERR_COMPILE); the option is part of every kernel key.
 *   IC_NVRTC=PATH        the libnvrtc to load (default: the one of the driver's CUDA
 *                        major, then libnvrtc.so.13, .12).
 *   IC_CACHE_DIR=DIR     the disk kernel cache when options.cache_dir is NULL (default
 *                        $XDG_CACHE_HOME/ic, else ~/.cache/ic).
 *   IC_CACHE=0           (or off, no, false) no disk kernel cache, as
 *                        IC_CONTEXT_NO_DISK_CACHE.
 *   IC_CACHE_MAX_BYTES=N the disk cache's cap in bytes, least recently used out first
 *                        (this one overrides options.cache_max_bytes; default 1 GiB).
 */
#ifndef IC_IC_H
#define IC_IC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(IC_STATIC_DEFINE)
#define IC_API
#elif defined(_WIN32)
#define IC_API __declspec(dllexport)
#else
#define IC_API __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------- version */

#define IC_VERSION_MAJOR 0
#define IC_VERSION_MINOR 1
#define IC_VERSION_PATCH 0
#define IC_VERSION_NUMBER (IC_VERSION_MAJOR * 10000 + IC_VERSION_MINOR * 100 + IC_VERSION_PATCH)
#define IC_VERSION_STRING "0.1.0"

/* The version of the loaded library, IC_VERSION_NUMBER's form. */
IC_API int ic_version(void);

/* ---------------------------------------------------------------- status */

/* X(name, value, description) */
#define IC_STATUS_LIST(X)                                                                  \
  X(IC_OK, 0, "success")                                                                   \
  X(IC_ERR_INVALID_ARGUMENT, 1, "invalid argument")                                        \
  X(IC_ERR_INVALID_GRAPH, 2, "invalid graph")                                              \
  X(IC_ERR_OUT_OF_MEMORY, 3, "out of memory")                                              \
  X(IC_ERR_NO_DEVICE, 4, "no CUDA device or driver")                                       \
  X(IC_ERR_NO_NVRTC, 5, "NVRTC library not found")                                         \
  X(IC_ERR_COMPILE, 6, "kernel compilation failed")                                        \
  X(IC_ERR_CUDA, 7, "CUDA driver error")                                                   \
  X(IC_ERR_UNSUPPORTED, 8, "unsupported operation, dtype or target")                       \
  X(IC_ERR_SHAPE_MISMATCH, 9, "tensor does not match the compiled shape, dtype or layout") \
  X(IC_ERR_INTERNAL, 10, "internal error")

typedef enum ic_status {
#define IC_STATUS_ENUM_(name, value, desc) name = value,
  IC_STATUS_LIST(IC_STATUS_ENUM_)
#undef IC_STATUS_ENUM_
} ic_status;

/* A static description of a status ("invalid argument"); never NULL. */
IC_API const char *ic_status_string(ic_status status);

/* The detailed message of the last failed call on this thread ("" if none). The string
 * stays valid until the next ic call on this thread.
 *
 * Dtype mismatches: where two dtypes that must agree do not, the message begins
 *   "dtype mismatch: A vs B: "
 * (A and B dtype names as ic_dtype_name gives them), then says where. This prefix is part
 * of the API (bindings classify by it; the Python binding raises ic.DTypeMismatchError);
 * the rest of the message is not. It appears in
 *   - the graph builder (status IC_ERR_INVALID_GRAPH, also ic_graph_error's message): an
 *     op's operands of different dtypes (A the first operand's, B the differing one's,
 *     after IC_DTYPE_AUTO constants took theirs; the norms' weight and bias included),
 *     where's condition not bool (A its dtype, B bool), concat's values (A value i's, B
 *     value 0's), matmul's operands (A a's, B b's). ic_graph_parse puts its "line L,
 *     column C: " before the prefix;
 *   - ic_program_run and ic_program_output_shape (status IC_ERR_SHAPE_MISMATCH): an input
 *     or output tensor whose dtype is not the compiled one (A the tensor's, B compiled).
 * A dtype an op does not take at all (exp of an i32: "dtype i32 not accepted") is no
 * mismatch and has no prefix. */
IC_API const char *ic_last_error(void);

/* ---------------------------------------------------------------- dtypes */

/* X(name, bytes, spelling). Storage of f16/bf16/f8 is the IEEE-style bit pattern. The
 * unsigned u16, u32 and u64 come last so that the older dtypes keep their numbers; hosts
 * iterate every dtype as IC_BOOL .. IC_DTYPE_COUNT - 1 (or over this list). */
#define IC_DTYPE_LIST(X)  \
  X(BOOL, 1, "bool")      \
  X(U8, 1, "u8")          \
  X(I8, 1, "i8")          \
  X(I16, 2, "i16")        \
  X(I32, 4, "i32")        \
  X(I64, 8, "i64")        \
  X(F16, 2, "f16")        \
  X(BF16, 2, "bf16")      \
  X(F32, 4, "f32")        \
  X(F64, 8, "f64")        \
  X(F8E4M3, 1, "f8e4m3")  \
  X(F8E5M2, 1, "f8e5m2")  \
  X(U16, 2, "u16")        \
  X(U32, 4, "u32")        \
  X(U64, 8, "u64")

typedef enum ic_dtype {
  IC_DTYPE_INVALID = 0,
#define IC_DTYPE_ENUM_(name, bytes, spelling) IC_##name,
  IC_DTYPE_LIST(IC_DTYPE_ENUM_)
#undef IC_DTYPE_ENUM_
  IC_DTYPE_COUNT,
  /* For ic_graph_constant only: the constant takes the dtype of the tensor it meets. */
  IC_DTYPE_AUTO = 100
} ic_dtype;

/* "f32", ...; "invalid" for anything else. */
IC_API const char *ic_dtype_name(ic_dtype dtype);
/* Bytes per element; 0 for an invalid dtype. */
IC_API size_t ic_dtype_size(ic_dtype dtype);
/* One element on the host, for hosts that fill or read f16, bf16 and fp8 arrays:
 * ic_element_store writes `value` in dtype's storage at dst (ic_dtype_size bytes, any
 * alignment), converted as ic_graph_cast converts an f64 (floats round once to nearest
 * even, overflow gives inf or, for f8e4m3, NaN; integers truncate and saturate, NaN
 * gives 0; bool is value != 0); IC_ERR_INVALID_ARGUMENT for an invalid dtype or NULL
 * dst. ic_element_load reads one back as a double (exact but for i64 and u64 values beyond
 * 2^53); NaN for an invalid dtype or NULL src. */
IC_API ic_status ic_element_store(ic_dtype dtype, double value, void *dst);
IC_API double ic_element_load(ic_dtype dtype, const void *src);

/* ---------------------------------------------------------------- ops
 *
 * The semantics table. X(name, spelling, arity, accepted dtypes, result).
 * Dtype classes: FLOAT = f16 bf16 f32 f64 f8e4m3 f8e5m2; INT = u8 u16 u32 u64 i8 i16 i32 i64;
 * NUM = FLOAT + INT; ANY = NUM + bool; BITS = INT + bool.
 * Result SAME = the operands' dtype; BOOL = bool; TARGET = the dtype the conversion names.
 *
 * Numerics (both backends, fused and eager alike). Every op computes in a compute type
 * and rounds its result to its dtype:
 *   f16, bf16, f32, f8e4m3, f8e5m2: computed in f32, rounded to the dtype to nearest even
 *       (f8e4m3 is PyTorch's e4m3fn: no infinities; an overflow gives its NaN, stored as
 *       0x7f like every NaN result (PyTorch keeps the sign: 0xff); f8e5m2 overflows to
 *       +-inf);
 *   f64: computed in f64;
 *   u8, u16, u32, u64, i8, i16, i32, i64: exact integer arithmetic, wrapped to the width
 *       (two's complement; the unsigned dtypes wrap modulo 2^width: u8 modulo 256, u64
 *       modulo 2^64). Unsigned operands are their unsigned values everywhere: division,
 *       remainder, comparisons, maximum/minimum/clamp, shifts and reductions never see
 *       a u32 or u64 above the signed range as negative.
 * f16/bf16/fp8 intermediates are rounded even when they stay in registers, so eager and
 * fused results are bitwise identical. No floating-point contraction (NVRTC -fmad=false);
 * division and sqrt are IEEE-rounded.
 *
 *   maximum      NaN-propagating (either operand NaN gives NaN); maximum(-0, +0) = +0
 *   relu         x > 0 ? x : +0; NaN gives NaN
 * NaN results of f32-computed ops: the canonical NaN (0x7fffffff, as GPU arithmetic
 * gives), stored as 0x7fff (f16, bf16) or 0x7f (fp8); neg flips the sign bit; where, and
 * casts to the same dtype or to f32, pass their operand's bits through (f64 -> f32 gives
 * the canonical NaN). f64 NaN results are a NaN (the bits of f64 NaNs are not specified).
 *   sigmoid      1 / (1 + exp(-x))
 *   gelu_tanh    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 *   exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos, atan, sinh,
 *   cosh, asinh, acosh, atanh, erf, erfc, tanh, sigmoid, silu, softplus, gelu_tanh,
 *   gelu_erf: CUDA device math (expf, ...; exp, ... for f64), within 4 ulp (of the
 *                result dtype) of the host's libm on the same operand (the ref backend
 *                uses libm)
 *   silu         x / (1 + exp(-x));  softplus: x > 20 ? x : log1p(exp(x))
 *   gelu_erf     0.5 x (1 + erf(x / sqrt(2)))
 *   rsqrt        1 / sqrt(x), each IEEE-rounded; reciprocal: 1 / x, IEEE-rounded
 *   abs          clears the sign bit (NaN too); integers wrap (abs(INT_MIN) = INT_MIN);
 *                unsigned dtypes: x.  neg: 0 - x, wrapped (unsigned: 2^width - x for
 *                x != 0, as PyTorch's uint8); relu: x for unsigned dtypes
 *   floor, ceil, trunc, round (half to even), frac (x - trunc(x)): exact
 *   sign         1, -1, or x itself for +-0; NaN gives NaN; integers: 1, -1, 0 (unsigned:
 *                1 or 0)
 *   logical_not  x == 0;  bitwise_not: ~x (bool: !x)
 *   isnan, isinf, isfinite: bool; false, false, true for integers
 *   minimum      NaN-propagating; minimum(-0, +0) = -0
 *   fmax, fmin   NaN-ignoring (a NaN operand gives the other), +0 over -0 as maximum
 *   copysign     |a| with b's sign bit
 *   pow, atan2, hypot: CUDA device math, within 4 ulp of libm (as exp above)
 *   fmod         C fmod (exact; the sign of a); integers: a - b * trunc(a / b);
 *                unsigned dtypes: fmod and remainder are a % b, floor_divide and
 *                trunc_divide a / b
 *   remainder    Python's: a - b * floor(a / b) (the sign of b), each step IEEE-rounded
 *   floor_divide floor(a / b); trunc_divide: trunc(a / b)
 *   integer division by zero gives 0 (floor_divide, trunc_divide, fmod, remainder);
 *   MIN / -1 wraps to MIN (i8: -128 / -1 = -128), and its remainder is 0
 *   logical_and/or/xor: operands != 0, bool result; bitwise_and/or/xor: integers or bool
 *   shift_left   a << b; b < 0 or b >= the width (8, 16, 32, 64 bits) gives 0
 *   shift_right  a >> b, arithmetic for signed dtypes, logical for u8, u16, u32, u64; b < 0
 *                or b >= the width gives 0, or -1 for a negative a (an unsigned b is never
 *                negative: u32 0xffffffff is 2^32 - 1, past the width)
 *   clamp        minimum(maximum(x, lo), hi): NaN-propagating
 *   lerp         w < 0.5 ? a + w (b - a) : b - (b - a)(1 - w), each step IEEE-rounded
 *   fma          a * b + c with one rounding (the one contraction a graph asks for)
 *   div          true division, floating dtypes only
 *   eq..ge       bool result; comparisons with NaN are false except ne; unsigned dtypes
 *                compare their unsigned values (u64 2^63 > 1)
 *   where        where(cond: bool, a, b); a and b of one dtype
 *   cast         ic_graph_cast, PyTorch's semantics, every dtype to every dtype:
 *                float -> integer truncates toward zero and saturates to the target's
 *                range, NaN -> 0 (as PTX cvt.rzi.sat; PyTorch leaves these undefined):
 *                an unsigned target takes negative values to 0 and values from 2^width
 *                up to 2^width - 1; integer -> integer wraps to the target's width (a
 *                signed source sign-extends first: i8 -2 -> u64 is 2^64 - 2); x -> bool is x != 0
 *                (NaN -> true); bool -> x is 0 or 1; anything -> a float dtype rounds once,
 *                to nearest even (i64 -> f16, u64 -> bf16 and f64 -> bf16 included),
 *                overflowing to inf (NaN for f8e4m3)
 *   cast_saturate as cast, but out-of-range values clamp to the target's finite range:
 *                integer -> integer clamps by value (u64 2^63 -> i64 is INT64_MAX, i32 -1
 *                -> u32 is 0); overflow and +-inf going to a float dtype
 *                give +-its largest finite value (f8e4m3 448, f8e5m2 57344, f16 65504,
 *                ...), NaN stays NaN (as PTX cvt .satfinite)
 *   bitcast      reinterprets the bits as a dtype of the same width (not bool); a NaN of
 *                f16, bf16 or fp8 comes out as that dtype's canonical NaN, every other
 *                value bit for bit
 * Binary ops need equal dtypes (a constant of IC_DTYPE_AUTO takes the tensor's; else
 * "dtype mismatch: A vs B: ", see ic_last_error) and broadcast numpy-style. There is no
 * implicit promotion: where PyTorch promotes mixed dtypes (u8 + i8 -> i16, i32 + f16 ->
 * f16) a graph casts explicitly. Signed with unsigned of the same width (i32 with u32,
 * i64 with u64) is a dtype mismatch like any other pair (PyTorch refuses to promote u16,
 * u32 and u64 with other dtypes too): cast one operand, with cast (wrapping) or
 * cast_saturate (clamping), to say which values are meant. Constants
 * are doubles: i64 and u64 constants beyond 2^53 are rounded, and like every constant
 * they are rounded to their dtype as a cast from f64 would (u64 2^64 - 1 is no double:
 * it saturates to 2^64 - 1; a negative u16 constant is 0).
 */
#define IC_OP_LIST(X)                              \
  X(NEG, "neg", 1, NUM, SAME)                      \
  X(EXP, "exp", 1, FLOAT, SAME)                    \
  X(LOG, "log", 1, FLOAT, SAME)                    \
  X(SQRT, "sqrt", 1, FLOAT, SAME)                  \
  X(TANH, "tanh", 1, FLOAT, SAME)                  \
  X(SIGMOID, "sigmoid", 1, FLOAT, SAME)            \
  X(RELU, "relu", 1, NUM, SAME)                    \
  X(GELU_TANH, "gelu_tanh", 1, FLOAT, SAME)        \
  X(ABS, "abs", 1, NUM, SAME)                      \
  X(EXP2, "exp2", 1, FLOAT, SAME)                  \
  X(EXPM1, "expm1", 1, FLOAT, SAME)                \
  X(LOG2, "log2", 1, FLOAT, SAME)                  \
  X(LOG10, "log10", 1, FLOAT, SAME)                \
  X(LOG1P, "log1p", 1, FLOAT, SAME)                \
  X(RSQRT, "rsqrt", 1, FLOAT, SAME)                \
  X(RECIPROCAL, "reciprocal", 1, FLOAT, SAME)      \
  X(SIN, "sin", 1, FLOAT, SAME)                    \
  X(COS, "cos", 1, FLOAT, SAME)                    \
  X(TAN, "tan", 1, FLOAT, SAME)                    \
  X(ASIN, "asin", 1, FLOAT, SAME)                  \
  X(ACOS, "acos", 1, FLOAT, SAME)                  \
  X(ATAN, "atan", 1, FLOAT, SAME)                  \
  X(SINH, "sinh", 1, FLOAT, SAME)                  \
  X(COSH, "cosh", 1, FLOAT, SAME)                  \
  X(ASINH, "asinh", 1, FLOAT, SAME)                \
  X(ACOSH, "acosh", 1, FLOAT, SAME)                \
  X(ATANH, "atanh", 1, FLOAT, SAME)                \
  X(ERF, "erf", 1, FLOAT, SAME)                    \
  X(ERFC, "erfc", 1, FLOAT, SAME)                  \
  X(SILU, "silu", 1, FLOAT, SAME)                  \
  X(SOFTPLUS, "softplus", 1, FLOAT, SAME)          \
  X(GELU_ERF, "gelu_erf", 1, FLOAT, SAME)          \
  X(FLOOR, "floor", 1, FLOAT, SAME)                \
  X(CEIL, "ceil", 1, FLOAT, SAME)                  \
  X(ROUND, "round", 1, FLOAT, SAME)                \
  X(TRUNC, "trunc", 1, FLOAT, SAME)                \
  X(FRAC, "frac", 1, FLOAT, SAME)                  \
  X(SIGN, "sign", 1, NUM, SAME)                    \
  X(LOGICAL_NOT, "logical_not", 1, ANY, BOOL)      \
  X(BITWISE_NOT, "bitwise_not", 1, BITS, SAME)      \
  X(ISNAN, "isnan", 1, NUM, BOOL)                  \
  X(ISINF, "isinf", 1, NUM, BOOL)                  \
  X(ISFINITE, "isfinite", 1, NUM, BOOL)            \
  X(ADD, "add", 2, NUM, SAME)                      \
  X(SUB, "sub", 2, NUM, SAME)                      \
  X(MUL, "mul", 2, NUM, SAME)                      \
  X(DIV, "div", 2, FLOAT, SAME)                    \
  X(MAXIMUM, "maximum", 2, NUM, SAME)              \
  X(MINIMUM, "minimum", 2, NUM, SAME)              \
  X(FMAX, "fmax", 2, NUM, SAME)                    \
  X(FMIN, "fmin", 2, NUM, SAME)                    \
  X(COPYSIGN, "copysign", 2, FLOAT, SAME)          \
  X(POW, "pow", 2, FLOAT, SAME)                    \
  X(ATAN2, "atan2", 2, FLOAT, SAME)                \
  X(HYPOT, "hypot", 2, FLOAT, SAME)                \
  X(FMOD, "fmod", 2, NUM, SAME)                    \
  X(REMAINDER, "remainder", 2, NUM, SAME)          \
  X(FLOOR_DIVIDE, "floor_divide", 2, NUM, SAME)    \
  X(TRUNC_DIVIDE, "trunc_divide", 2, NUM, SAME)    \
  X(LOGICAL_AND, "logical_and", 2, ANY, BOOL)      \
  X(LOGICAL_OR, "logical_or", 2, ANY, BOOL)        \
  X(LOGICAL_XOR, "logical_xor", 2, ANY, BOOL)      \
  X(BITWISE_AND, "bitwise_and", 2, BITS, SAME)      \
  X(BITWISE_OR, "bitwise_or", 2, BITS, SAME)        \
  X(BITWISE_XOR, "bitwise_xor", 2, BITS, SAME)      \
  X(SHIFT_LEFT, "shift_left", 2, INT, SAME)        \
  X(SHIFT_RIGHT, "shift_right", 2, INT, SAME)      \
  X(EQ, "eq", 2, ANY, BOOL)                        \
  X(NE, "ne", 2, ANY, BOOL)                        \
  X(LT, "lt", 2, NUM, BOOL)                        \
  X(LE, "le", 2, NUM, BOOL)                        \
  X(GT, "gt", 2, NUM, BOOL)                        \
  X(GE, "ge", 2, NUM, BOOL)                        \
  X(WHERE, "where", 3, ANY, SAME)                  \
  X(CLAMP, "clamp", 3, NUM, SAME)                  \
  X(LERP, "lerp", 3, FLOAT, SAME)                  \
  X(FMA, "fma", 3, FLOAT, SAME)                    \
  X(CAST, "cast", 1, ANY, TARGET)                  \
  X(CAST_SATURATE, "cast_saturate", 1, ANY, TARGET) \
  X(BITCAST, "bitcast", 1, NUM, TARGET)

typedef enum ic_op {
#define IC_OP_ENUM_(name, spelling, arity, types, result) IC_OP_##name,
  IC_OP_LIST(IC_OP_ENUM_)
#undef IC_OP_ENUM_
  IC_OP_COUNT
} ic_op;

/* "add", ...; "invalid" for anything else. */
IC_API const char *ic_op_name(ic_op op);
/* The number of operands (cast: 1); 0 for anything else. */
IC_API int32_t ic_op_arity(ic_op op);

/* ---------------------------------------------------------------- context */

typedef struct ic_context ic_context;

typedef enum ic_log_level {
  IC_LOG_OFF = 0,
  IC_LOG_ERROR = 1,
  IC_LOG_WARN = 2,
  IC_LOG_INFO = 3,
  IC_LOG_DEBUG = 4
} ic_log_level;

/* A log callback may be called from any thread that uses the context, and from ic's own
 * compile threads (parallel NVRTC batch parts, IC_CONTEXT_WARM_COMPILER): make it
 * thread-safe. */
typedef void (*ic_log_fn)(void *user, ic_log_level level, const char *message);
typedef struct ic_cache_stats ic_cache_stats;

enum {
  /* Never touch the driver: compile for options.arch (or IC_ARCH) even where a GPU is
   * present, e.g. to build kernels for another machine. Running on cuda is
   * IC_ERR_NO_DEVICE; the ref backend runs. Without an arch only ref compiles. */
  IC_CONTEXT_COMPILE_ONLY = 1u << 0,
  /* No disk kernel cache for this context (as IC_CACHE=0). */
  IC_CONTEXT_NO_DISK_CACHE = 1u << 1,
  /* Start NVRTC on a thread of its own while the caller goes on: load the library and
   * compile an empty kernel for the target, so that the first ic_compile does not pay
   * NVRTC's one-time start-up (measured on 2 cores: loading ~7 ms, first use ~8 ms; a
   * compile that starts before the thread is done waits for the load only). Never
   * blocks ic_context_create; ic_context_destroy joins the thread. No effect without a
   * target arch. */
  IC_CONTEXT_WARM_COMPILER = 1u << 2
};

typedef struct ic_context_options {
  uint32_t struct_size;  /* sizeof(ic_context_options) */
  int32_t device;        /* CUDA device ordinal (default 0) */
  /* Target architecture, e.g. "sm_90a". NULL: IC_ARCH, else the device's own. With an
   * explicit arch and no GPU the context is compile-only: everything but running. */
  const char *arch;
  ic_log_fn log_fn;        /* NULL: stderr, when a level is enabled */
  void *log_user;          /* passed to log_fn */
  ic_log_level log_level;  /* IC_LOG_OFF: take IC_LOG from the environment */
  uint32_t flags;          /* IC_CONTEXT_* */
  const char *cache_dir;   /* disk kernel cache directory; NULL: IC_CACHE_DIR or the default */
  uint64_t cache_max_bytes; /* disk cache cap; 0: IC_CACHE_MAX_BYTES or 1 GiB */
} ic_context_options;

/* options may be NULL (defaults). A context needs neither a GPU nor libnvrtc: without a
 * usable GPU it is compile-only for options.arch / IC_ARCH, or, with no arch either, it
 * serves the ref backend only. Backends open on first use: the first compile for "cuda"
 * loads NVRTC and fails with IC_ERR_NO_DEVICE when there is neither a GPU nor an arch,
 * IC_ERR_NO_NVRTC when libnvrtc cannot be loaded, IC_ERR_UNSUPPORTED when NVRTC cannot
 * target the arch (each time it is asked, with the reason in ic_last_error()).
 * ic_context_create itself fails with IC_ERR_INVALID_ARGUMENT for a malformed arch or a
 * device ordinal that does not exist (where a driver can tell: without one, a context for
 * any ordinal is compile-only or ref-only), IC_ERR_UNSUPPORTED when an explicit arch differs
 * from the device's (use IC_CONTEXT_COMPILE_ONLY to compile for another GPU) or is older
 * than sm_80. Use ic_context_has_device to know whether programs can run on cuda. */
IC_API ic_status ic_context_create(const ic_context_options *options, ic_context **out);
/* Releases the context and the programs its program cache holds. Programs compiled by the
 * context must be released before it is destroyed. */
IC_API void ic_context_destroy(ic_context *ctx);
/* The cuda target architecture ("sm_90a"), "" for a context without GPU and arch (ref
 * only); valid for the context's lifetime. */
IC_API const char *ic_context_arch(const ic_context *ctx);
/* 1 when the context has a GPU to run on, 0 in compile-only mode. */
IC_API int ic_context_has_device(const ic_context *ctx);

/* ---------------------------------------------------------------- device memory
 * So C hosts need no CUDA runtime. All fail with IC_ERR_NO_DEVICE in compile-only mode.
 * ic_free accepts NULL and frees outputs that ic_program_run allocated; when it fails
 * (the driver could not make the context current, say) the memory is still allocated
 * and still the caller's: free it again later. */
IC_API ic_status ic_malloc(ic_context *ctx, size_t bytes, void **out);
IC_API ic_status ic_free(ic_context *ctx, void *ptr);
IC_API ic_status ic_memcpy_htod(ic_context *ctx, void *dst, const void *src, size_t bytes);
IC_API ic_status ic_memcpy_dtoh(ic_context *ctx, void *dst, const void *src, size_t bytes);
IC_API ic_status ic_memset_d8(ic_context *ctx, void *dst, uint8_t value, size_t bytes);
/* Waits for all work on `stream` (NULL: the legacy default stream). */
IC_API ic_status ic_stream_synchronize(ic_context *ctx, void *stream);

/* ---------------------------------------------------------------- graphs */

typedef struct ic_graph ic_graph;
/* A node of a graph; IC_INVALID_VALUE (-1) after a failed builder call. */
typedef int32_t ic_value;
#define IC_INVALID_VALUE ((ic_value)-1)

/* A dimension: >= 0 is a constant size, a negative value is a symbol made by
 * ic_graph_symbol. Sizes 0 and 1 are legal everywhere.
 *
 * Sizes never wrap. Every value's constant dims (its nonzero ones) multiply to at most
 * INT64_MAX elements, and those times its element size to at most INT64_MAX bytes (an
 * i64[n, 2^60] is refused for every n); a size a builder computes (concat's sum, pad's
 * padded dim, a dim expression of the text format) whose constants pass int64 is refused
 * when built (IC_ERR_INVALID_GRAPH; the message names the op and the sizes, "add up past
 * INT64_MAX" or "overflows 64-bit integers"). A size that depends on symbols is evaluated
 * with checked arithmetic once they are bound: where it passes int64 for the inputs
 * given, ic_program_output_shape, ic_program_run and ic_program_eval return
 * IC_ERR_INVALID_ARGUMENT with "overflows 64-bit integers" (never a wrapped or negative
 * size); a run also refuses any tensor spanning more than 2^62 bytes. */
typedef int64_t ic_dim;
#define IC_MAX_DIMS 8

/* The layout an input is compiled for; the actual strides arrive at run time.
 *   CONTIGUOUS        row-major, no gaps (dims of size 1 may have any stride)
 *   INNER_CONTIGUOUS  innermost stride 1, outer strides free (a slice of a wider tensor)
 *   STRIDED           any strides (>= 0) */
typedef enum ic_layout {
  IC_LAYOUT_CONTIGUOUS = 0,
  IC_LAYOUT_INNER_CONTIGUOUS = 1,
  IC_LAYOUT_STRIDED = 2
} ic_layout;

IC_API ic_status ic_graph_create(ic_graph **out);
IC_API void ic_graph_destroy(ic_graph *graph);
/* IC_OK, or the first error a builder call recorded (message in *message if non-NULL;
 * valid until the graph is destroyed). */
IC_API ic_status ic_graph_error(const ic_graph *graph, const char **message);

/* A named size symbol; the same name gives the same symbol. Returns a negative ic_dim,
 * or 0 after an error. */
IC_API ic_dim ic_graph_symbol(ic_graph *graph, const char *name);
/* The graph's symbols in the order they were made: symbol i is the ic_dim -(i + 1). The
 * name is valid until the graph is destroyed; NULL for an i out of range. A NULL graph
 * has none. */
IC_API int32_t ic_graph_symbol_count(const ic_graph *graph);
IC_API const char *ic_graph_symbol_name(const ic_graph *graph, int32_t i);

/* A named input (names are unique). dims: ndim constants or symbols. */
IC_API ic_value ic_graph_input(ic_graph *graph, const char *name, ic_dtype dtype, int32_t ndim,
                               const ic_dim *dims, ic_layout layout);
/* A scalar (0-d) constant, rounded to its dtype. IC_DTYPE_AUTO takes the dtype of the
 * tensor it is combined with (f32 if it never meets one). */
IC_API ic_value ic_graph_constant(ic_graph *graph, double value, ic_dtype dtype);

/* Elementwise ops. ic_graph_op takes arity(op) arguments; the others are shorthands. */
IC_API ic_value ic_graph_op(ic_graph *graph, ic_op op, int32_t nargs, const ic_value *args);
IC_API ic_value ic_graph_unary(ic_graph *graph, ic_op op, ic_value a);
IC_API ic_value ic_graph_binary(ic_graph *graph, ic_op op, ic_value a, ic_value b);
IC_API ic_value ic_graph_where(ic_graph *graph, ic_value cond, ic_value a, ic_value b);
/* Conversions (the table above): cast, cast_saturate, and bitcast between dtypes of equal
 * width (bool excluded). ic_graph_op refuses these three: they name a target dtype. */
IC_API ic_value ic_graph_cast(ic_graph *graph, ic_value a, ic_dtype dtype);
IC_API ic_value ic_graph_cast_saturate(ic_graph *graph, ic_value a, ic_dtype dtype);
IC_API ic_value ic_graph_bitcast(ic_graph *graph, ic_value a, ic_dtype dtype);

/* Views: folded into indexing, never copies. A view of a computed value fuses with its
 * reader: the pointwise ops behind it are recomputed in the reader's kernel at the
 * moved index, with the same bits (graph outputs, reductions and asm results are read
 * from memory instead). A transposed read is tiled through shared memory by the cuda
 * backend (the kernel IR dump says "strategy tiled").
 * reshape: same element count, provably (one dim may be IC_DIM_INFER);
 * permute: perm[i] = the source dim that becomes dim i;
 * expand: size-1 dims (and new leading dims) broadcast to dims. */
#define IC_DIM_INFER ((ic_dim)INT64_MIN)
IC_API ic_value ic_graph_reshape(ic_graph *graph, ic_value a, int32_t ndim, const ic_dim *dims);
IC_API ic_value ic_graph_permute(ic_graph *graph, ic_value a, int32_t ndim, const int32_t *perm);
IC_API ic_value ic_graph_expand(ic_graph *graph, ic_value a, int32_t ndim, const ic_dim *dims);
/* Shorthands for reshapes (they build reshape nodes). dim may be negative, counting from
 * the end (-1: the last dim; for unsqueeze, the new dim's place in the result).
 * squeeze drops a dim of constant size 1; unsqueeze inserts one; flatten merges the dims
 * start..end (inclusive) into one. */
IC_API ic_value ic_graph_squeeze(ic_graph *graph, ic_value a, int32_t dim);
IC_API ic_value ic_graph_unsqueeze(ic_graph *graph, ic_value a, int32_t dim);
IC_API ic_value ic_graph_flatten(ic_graph *graph, ic_value a, int32_t start, int32_t end);

/* Slice along dim (negative counts from the end): the points start, start + step, ...
 * before stop, as Python's and numpy's a[start:stop:step], negative steps included.
 * A negative start or stop counts from the end (adds the dim's size); then both are
 * clamped into the dim ([0, size] for step > 0, [-1, size - 1] for step < 0), so
 * INT64_MIN and INT64_MAX are open ends: slice(a, d, INT64_MAX, INT64_MIN, -1) reverses
 * the dim. The result's size along dim is ceil((stop - start) / step) after clamping, or
 * 0 (an empty result is legal); point i reads source point start + i * step. step 0 and
 * INT64_MIN are errors. On a symbolic dim every form works, and the result's size is an
 * expression of min/max (a[1:] of size n has size max(n - 1, 0)), so it broadcasts only
 * against the same expression; a step beyond 2^31 - 1 in magnitude there is
 * IC_ERR_UNSUPPORTED. A slice that keeps every point, in order, returns a. Errors of
 * slice, concat and pad are recorded like every builder call's (IC_ERR_INVALID_GRAPH,
 * or IC_ERR_UNSUPPORTED where said). */
IC_API ic_value ic_graph_slice(ic_graph *graph, ic_value a, int32_t dim, int64_t start, int64_t stop, int64_t step);
/* Concatenation of n values (n >= 1, not scalars) along dim (negative counts from the
 * end): equal dtypes and ranks, all other dims equal (the same constant or the same
 * expression of symbols; no broadcasting). The result's size along dim is the sum:
 * constant parts that add up past INT64_MAX are refused here, a sum of symbols that
 * passes it when run (see ic_dim).
 * Each point reads exactly one operand: operands of size 0 are never read. n == 1
 * returns values[0]. */
IC_API ic_value ic_graph_concat(ic_graph *graph, int32_t n, const ic_value *values, int32_t dim);
/* Constant padding, as PyTorch's F.pad(a, pad, value="constant"): lo_hi holds 2 * npads
 * amounts (npads <= a's ndim), in pairs (before, after) for the last dim first, then the
 * second to last, and so on: {1, 2} pads the last dim by 1 before and 2 after. Points
 * outside the source get value, rounded to a's dtype as ic_graph_constant rounds (NaN
 * only for floating dtypes); the others read the source, which is not read elsewhere.
 * Negative amounts crop, on dims of constant size only, and at most the whole dim (the
 * two crops of a dim together); a symbolic dim takes amounts >= 0 (a crop there is
 * IC_ERR_UNSUPPORTED). Each amount lies in [-2^61, 2^61], both ends accepted (beyond:
 * IC_ERR_INVALID_GRAPH, "out of range"); a constant dim whose padded size passes
 * INT64_MAX is refused ("overflows 64-bit integers"). No padding at all returns a. */
IC_API ic_value ic_graph_pad(ic_graph *graph, ic_value a, int32_t npads, const int64_t *lo_hi, double value);

/* ---------------------------------------------------------------- reductions
 *
 * ic_graph_reduce reduces a over a set of axes: naxes of them (negative counts from the
 * end; each at most once), or every dim when naxes is 0 (axes may then be NULL: a full
 * reduction; a scalar reduces over its one element). keepdim != 0 keeps the reduced dims
 * with size 1; else they disappear. The reduced elements are numbered row-major over the
 * reduced axes (in the order of a's dims): r = 0 .. N-1, N the product of their sizes
 * (constants or symbols; N = 0 is legal unless said).
 *
 *   op       operand dtypes   result      value
 *   sum      ANY              float: a's  the sum; integers and bool: i64 (wrapping)
 *   prod     ANY              float: a's  the product; integers and bool: i64 (wrapping)
 *                             (unsigned dtypes too, as PyTorch sums integers: the i64
 *                             holds the sum modulo 2^64, so for u64 its bits are the
 *                             u64 sum: ic_graph_bitcast it to u64)
 *   mean     FLOAT            a's         sum / N  (integers are refused, as PyTorch: cast)
 *   max, min ANY              a's         NaN-propagating, as maximum/minimum
 *   argmax   NUM              i64         r of the largest element, the first on ties; a NaN
 *   argmin                                counts as larger (argmax) or smaller (argmin)
 *                                         than every number: the first NaN wins, as PyTorch
 *   any, all ANY              bool        some / every element != 0 (NaN is != 0)
 * Empty reductions (N = 0): sum 0, prod 1, mean NaN, any false, all true; max, min, argmax
 * and argmin of nothing are an error: at build time when N is a constant, else
 * IC_ERR_SHAPE_MISMATCH from ic_program_run before anything launches.
 *
 * Accumulation: f16, bf16, f8e4m3, f8e5m2 and f32 accumulate in f32 and round once, at
 * the end, to the result dtype; f64 in f64; integers and bool in i64 (sum and prod wrap
 * modulo 2^64; max, min, argmax and argmin compare exactly, by unsigned value for the
 * unsigned dtypes). mean and var divide the f32 (f64) sum by
 * the count converted once to f32 (f64), IEEE-rounded.
 *
 * One summation order, everywhere (sum, mean, prod; max, min, any, all and the arg
 * reductions give the same bits in any order). Element r belongs to chunk c = r / 8;
 * there are L = 1024 * G lanes, G = max(1, ceil(C / 32768)) for C = ceil(N / 8) chunks,
 * and lane j owns chunks j, j + L, j + 2L, ...; each lane accumulates its elements in
 * increasing r, starting from the identity (-0 for sums, so that an all -0 input sums to
 * -0 and padding changes nothing; 1 for products); then lane results combine in a
 * pairwise tree over the lanes (lanes 2i and 2i+1 first, then pairs of pairs, ...; lanes
 * past the last chunk hold the identity). The order depends only on N: never on what the
 * reduction is fused with, the launch configuration or eager vs fused, and the ref
 * backend follows it exactly, so cuda and ref agree bit for bit (sum of an empty set: +0).
 * Error bound of a sum in f32: |error| <= (k + log2(L)) * 2^-24 * sum |x_r| to first
 * order, k <= 8 * ceil(C / L) the longest lane (k <= 256 elements).
 *
 * Since the order depends only on N and the row-major numbering, spellings that number
 * the same elements alike are one reduction: over adjacent dims or over their flattened
 * product, with or without kept dims of size 1, keepdim or a reshape of the result. A
 * fused compile gives them the same kernels (as many, with the same source), and fuses a
 * reduction with pointwise ops over any reshape of its operand whose dims group into
 * equal constant products (group norm's per-channel affine over [n, C, HW] with
 * statistics over [n, G, C/G * HW]). An output that is a reshape of a computed value is
 * stored by the kernel computing it, and a value of inputs and constants read through a
 * broadcast (cast(w) used as a [n, k] operand) is recomputed in its reader's kernel: the
 * kernel count does not depend on where a cast, a view or a keepdim is written.
 *
 * Full reductions and other reductions of few, long rows (at most 256 rows, more than
 * 262144 elements a row or a symbolic count) run in two stages on the cuda backend:
 * partials over aligned blocks of 256 lanes into a workspace temporary, then one block a
 * row combining them in the same pairwise tree. Each partial is a subtree of the lanes'
 * tree, so the bits are those of one stage (no atomics). A fused kernel of such rows with
 * several reductions or element stores (softmax of a vector, std over every element)
 * runs as a kernel a reduction, each reading the earlier ones' results back from a
 * temporary, then a pointwise kernel for the element stores (for a symbolic length, only
 * where the length bound at run time is more than 262144): the same bits again. Column
 * reductions (the last dim kept) whose later reductions read earlier ones (var and std
 * over dim 0) run the same way where few column blocks would walk many rows, each pass
 * in two stages: the columns are read once a reduction either way.
 *
 * Reductions fuse: the pointwise ops that feed one (a prologue), the ops on its result
 * and broadcasts of the result back over the reduced axes (an epilogue), and several
 * reductions over the same axes of the same shape become one kernel (softmax, layer
 * norm and RMS norm are one kernel each), computing the same bits as eager mode. */
#define IC_REDUCE_LIST(X) \
  X(SUM, "sum")           \
  X(MEAN, "mean")         \
  X(PROD, "prod")         \
  X(MAX, "max")           \
  X(MIN, "min")           \
  X(ARGMAX, "argmax")     \
  X(ARGMIN, "argmin")     \
  X(ANY, "any")           \
  X(ALL, "all")

typedef enum ic_reduce_op {
#define IC_REDUCE_ENUM_(name, spelling) IC_REDUCE_##name,
  IC_REDUCE_LIST(IC_REDUCE_ENUM_)
#undef IC_REDUCE_ENUM_
  IC_REDUCE_COUNT
} ic_reduce_op;

/* "sum", ...; "invalid" for anything else. */
IC_API const char *ic_reduce_name(ic_reduce_op op);
IC_API ic_value ic_graph_reduce(ic_graph *graph, ic_reduce_op op, ic_value a, int32_t naxes, const int32_t *axes,
                                int keepdim);
/* The sum divided by max(N - correction, 0) (mean is correction 0; var's last step):
 * the reduction `mean` with a correction, printed "mean(x, [1], correction=1)". */
IC_API ic_value ic_graph_mean_correction(ic_graph *graph, ic_value a, int32_t naxes, const int32_t *axes,
                                         double correction, int keepdim);
/* Shorthands that build ordinary nodes (printing shows the decomposition; fusion makes
 * each one kernel). a must have a FLOAT dtype; axes as ic_graph_reduce's.
 *   var(a)     = mean_correction((a - m) * (a - m), correction), m = mean(a, keepdim)
 *                (PyTorch's two-pass var; correction 1 is Bessel's)
 *   std(a)     = sqrt(var(a))
 *   softmax(a, axis)     = e / sum(e, axis, keepdim), e = exp(a - max(a, axis, keepdim))
 *   log_softmax(a, axis) = (a - m) - log(sum(exp(a - m), axis, keepdim)), m = max(...)
 *   layer_norm(a, nlast, w, b, eps): over the last nlast dims,
 *                y = (a - m) * rsqrt(var + eps), m = mean, var = mean((a - m)^2) (biased),
 *                then y * w if w is given, then + b if b is given (w, b: the normalized
 *                shape, broadcast); IC_INVALID_VALUE for no weight or no bias
 *   rms_norm(a, nlast, w, eps): a * rsqrt(mean(a * a) + eps) [* w]
 * eps is a constant of a's dtype. Work repeated inside one fused kernel (mean(x) beside
 * var(x) and std(x) of the same x and axes, or any op applied twice to the same operands)
 * is done once: the kernel makes one pass over the rows for each distinct reduction, and
 * the results have the bits each copy would have had (eager kernels agree). */
IC_API ic_value ic_graph_var(ic_graph *graph, ic_value a, int32_t naxes, const int32_t *axes, double correction,
                             int keepdim);
IC_API ic_value ic_graph_std(ic_graph *graph, ic_value a, int32_t naxes, const int32_t *axes, double correction,
                             int keepdim);
IC_API ic_value ic_graph_softmax(ic_graph *graph, ic_value a, int32_t axis);
IC_API ic_value ic_graph_log_softmax(ic_graph *graph, ic_value a, int32_t axis);
IC_API ic_value ic_graph_layer_norm(ic_graph *graph, ic_value a, int32_t nlast, ic_value weight, ic_value bias,
                                    double eps);
IC_API ic_value ic_graph_rms_norm(ic_graph *graph, ic_value a, int32_t nlast, ic_value weight, double eps);

/* ---------------------------------------------------------------- matmul
 *
 * ic_graph_matmul(a, b) is torch.matmul: products of a and b summed over K, a's last dim
 * and b's last dim but one (b's only dim when it is 1-D).
 *
 *   a              b              result
 *   [K]            [K]            []              the dot product
 *   [K]            [K, N]         [N]
 *   [M, K]         [K]            [M]
 *   [M, K]         [K, N]         [M, N]
 *   [..., M, K]    [..., K, N]    [..., M, N]     the batch dims broadcast
 *   [M, K]         [B..., K, N]   [B..., M, N]    (a 2-D operand has none)
 *   [K]            [B..., K, N]   [B..., N]       a 1-D a is a row [1, K], a 1-D b a
 *   [B..., M, K]   [K]            [B..., M]       column [K, 1]; the added dim leaves the
 *                                                 result, as in torch
 * The batch dims are an operand's dims before its last two. They broadcast numpy-style:
 * aligned at their ends, a pair is the same size (the same constant or the same
 * expression of symbols) or one of them the constant 1 (a missing dim counts as 1). K of
 * a and K of b are the same constant or expression (a K of 1 does not broadcast). 0-dim
 * operands are an error (mul scales by a scalar). Sizes of 0 are legal: a K of 0 gives
 * zeros (+0), an M, N or batch dim of 0 an empty result. The operands are taken as given
 * (no reshape or expand node is added; the printed text is "matmul(a, b)").
 *
 * Dtypes: a and b have one dtype (no implicit promotion; else "dtype mismatch: A vs B: ",
 * A a's dtype and B b's, as ic_last_error says):
 *   a, b              result
 *   bf16, f16         the same dtype   (f32 accumulation, below)
 *   f32, f64          the same dtype
 *   i8                i32              (exact)
 * Any other dtype is IC_ERR_UNSUPPORTED ("matmul: dtype i32 is not supported"). Shape
 * errors are IC_ERR_INVALID_GRAPH, recorded on the graph like every builder call's, and
 * name both operands: "matmul: a f32[4, 5] and b f32[6, 7]: K differs (5 vs 6)".
 *
 * Numerics: each result element sums a[k] * b[k], k = 0 .. K-1, over its row of a and
 * column of b, from acc = +0:
 *   bf16, f16  products accumulate in f32 along K in chunks of 16 consecutive k (chunk c
 *              holds k = 16c .. 16c+15; past K the elements are zero): acc = acc + s_c for
 *              c = 0, 1, ..., s_c the chunk's 16 products summed as the tensor cores'
 *              mma.m16n8k16 instruction sums them; acc rounds once to the result dtype
 *              (nearest even).
 *   f32        exact IEEE f32: acc = fma(a[k], b[k], acc) for k = 0, 1, ..., K-1 in order;
 *              every backend gives these bits. With IC_COMPILE_ALLOW_TF32 the inputs are
 *              rounded to TF32 (10 mantissa bits, to nearest) and summed as bf16's are, in
 *              chunks of 8 as mma.m16n8k8.tf32 sums them.
 *   f64        acc = fma(a[k], b[k], acc) in f64, k in order.
 *   i8         exact in i32 (products and sums wrap modulo 2^32, which cannot happen for
 *              K < 2^17).
 * The order along K depends on K and the dtype only (and the TF32 flag): no tile size,
 * fusion or split of the work changes it, so eager and fused programs and every tile
 * configuration give the same bits; there are no atomics, so every run gives them too.
 * Error bound of the floating dtypes, against the exact result computed in f64 from the
 * same inputs:
 *   |c - exact| <= u * |exact| + (ceil(K / 16) + 16) * 2^-23 * sum_k |a[k] * b[k]|,
 * u the result's unit roundoff (2^-8 bf16, 2^-11 f16, 2^-24 f32), TF32 adding
 * 2^-11 * sum_k |a[k] * b[k]|; f32 without TF32 and f64 are bitwise the sequential fma
 * above, i8 is exact. The ref backend computes f32, f64 and i8 matmuls bit for bit as the
 * cuda backend, bf16 and f16 within the bound (it sums each chunk's products in f64 and
 * rounds the chunk sum to f32).
 *
 * Fusion: elementwise ops on an operand that read only inputs and constants (casts,
 * scales, negation, a per-row or per-column broadcast scale) are computed inside the
 * matmul's kernel as it loads the operand (a prologue); pointwise ops on the result (a
 * bias, an activation, a residual add, casts, several outputs of the same tile) share its
 * kernel (an epilogue) and see the result rounded to its dtype, as a separate kernel
 * would; reductions over the result run in a following kernel; views of the operands
 * (permute and transpose, slice, expand) are read in place. */
IC_API ic_value ic_graph_matmul(ic_graph *graph, ic_value a, ic_value b);

/* ---------------------------------------------------------------- inline PTX
 *
 * ic_graph_inline_asm runs user PTX elementwise, as Triton's inline_asm_elementwise does,
 * and fuses with the ops around it: pointwise ops, and reductions (prologue and
 * epilogue) when the asm is pure and its pack is 1, or its pack is at most 8 and the
 * reduction is over the last dim alone (a reduction kernel walks rows in chunks of 8
 * and may evaluate an element in several passes). Other asm nodes next to a reduction
 * run as pointwise kernels of their own. Its n_inputs values (1 to IC_ASM_MAX_OPERANDS, any
 * dtypes; constants need a dtype) broadcast together like a pointwise op's operands; it
 * makes n_outputs values (1 to IC_ASM_MAX_OPERANDS) of the broadcast shape, outputs[k]
 * of desc->output_dtypes[k]. Strided and transposed inputs work as for every op.
 *
 * pack: the asm runs once per group of pack elements (1, 2, 4, 8 or 16): consecutive
 * elements of the last dim of the broadcast shape, from index 0 of every last-dim row; a
 * row whose length is not a multiple of pack ends with a short group, padded with zeros
 * that no output keeps. The grouping depends only on the node's shape, so eager and
 * fused runs group alike.
 *
 * Registers: operands are numbered as Triton numbers them: the registers of output 0,
 * then of output 1, ..., then of input 0, input 1, ...; the asm names them $0, $1, ...
 * (`$$` is a literal $; a % is a literal percent). constraints lists one letter a
 * register in that order, comma-separated (spaces ignored), outputs with '=':
 *   h, r, l   16-, 32- and 64-bit registers holding the elements' storage bits: an
 *             operand of b-bit elements (bool: 8) holds min(W / b, pack) elements a
 *             register, element 0 in the low bits, and has pack / that many registers
 *             ("=r,r" at pack 2 on f16: two f16 in each r); b > W is an error. u16,
 *             u32 and u64 go in h, r and l (as Triton's uint32 tests do); the PTX says
 *             how it reads them (add.u32, shr.u64, min.u32)
 *   f         f32: one element a register, pack registers; an f16 or bf16 input is
 *             converted to f32 first (exactly), as PyTorch's compiled path does; outputs
 *             must be f32
 *   d         f64, one element a register
 * NVRTC has no 8-bit constraint ('c' is an error): bind 8-bit elements to h or r. Output
 * bits through h, r and l are taken as the output dtype's storage (an f16 output from h
 * is that bit pattern; a bool output is its byte != 0; a NaN of a float dtype is stored
 * as ic's canonical NaN, as every op's NaN is).
 *
 * Eager and fused runs give the same bits. ic compiles with -fmad=false, and NVRTC
 * passes it to ptxas: a mul.f32 and an add.f32 without .rn in two asm nodes of one fused
 * kernel are not contracted into an fma (gpu_asm checks it on the device; measured with
 * NVRTC 13.0 on sm_90a). The .rn forms never contract, whatever the compiler.
 *
 * is_pure != 0: the asm depends only on its operands; ic may evaluate it once for
 * several consumers. is_pure == 0: it is emitted as `asm volatile`, never merged with
 * another node or moved across another impure one. Either way a node is evaluated once
 * per group of elements, and all its outputs come from that one evaluation.
 *
 * Build-time errors (IC_ERR_INVALID_GRAPH, recorded like every builder error, and
 * returned): no inputs or outputs, too many, a pack that is not a power of two up to 16,
 * an unknown letter, a constraint count that differs from the operands' registers, a
 * dtype that does not fit its letter, a $N past the registers, inputs that do not
 * broadcast. An asm that NVRTC or ptxas rejects fails ic_compile with the compiler's
 * message (IC_ERR_COMPILE); the ref backend cannot run PTX and refuses graphs with asm
 * nodes (IC_ERR_UNSUPPORTED). The asm, constraints, dtypes, pack and purity are part of
 * the kernel and its cache key. In the text format:
 *   y, s = inline_asm("cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;", "=h,r,f,f", [a, b], [f8e4m3, i32], pack=2)
 * with `impure` after the pack for is_pure == 0, and C-style escapes in the strings. */
#define IC_ASM_MAX_OPERANDS 8
typedef struct ic_inline_asm_desc {
  uint32_t struct_size;         /* sizeof(ic_inline_asm_desc) */
  const char *asm_text;         /* PTX, one or more lines */
  const char *constraints;      /* "=r,=h,r,f" */
  const ic_dtype *output_dtypes; /* n_outputs of them */
  int32_t is_pure;
  int32_t pack;
} ic_inline_asm_desc;
/* Fills outputs[0 .. n_outputs) (IC_INVALID_VALUE on error) and returns IC_OK or the
 * error, which the graph also records. */
IC_API ic_status ic_graph_inline_asm(ic_graph *graph, const ic_inline_asm_desc *desc, int32_t n_inputs,
                                     const ic_value *inputs, int32_t n_outputs, ic_value *outputs);

/* Marks a value as a named program output (names are unique). Returns IC_OK or the
 * graph's error status. */
IC_API ic_status ic_graph_output(ic_graph *graph, const char *name, ic_value value);

/* Shape queries on a built value (for hosts and tests). */
IC_API ic_dtype ic_graph_value_dtype(const ic_graph *graph, ic_value v);
IC_API int32_t ic_graph_value_ndim(const ic_graph *graph, ic_value v);
/* Writes ndim dims; a dim that is an expression of symbols (not a plain symbol or a
 * constant) is written as IC_DIM_INFER. */
IC_API ic_status ic_graph_value_dims(const ic_graph *graph, ic_value v, ic_dim *dims);

/* ---------------------------------------------------------------- compile */

typedef struct ic_program ic_program;

typedef enum ic_compile_mode {
  IC_MODE_FUSED = 0, /* fuse pointwise chains and siblings into few kernels */
  IC_MODE_EAGER = 1  /* one kernel per op, through the same path */
} ic_compile_mode;

enum {
  /* A fusion that fails to compile is an error instead of falling back to eager
   * kernels (also IC_STRICT=1). Without it the fallback runs once per fusion, and never
   * for a kernel with inline asm: that fails the compile as a strict one would. */
  IC_COMPILE_STRICT = 1u << 0,
  /* Neither look up nor store this compile in the program and kernel caches. */
  IC_COMPILE_NO_CACHE = 1u << 1,
  /* f32 matmuls may run on tensor cores in TF32 (inputs rounded to 10 mantissa bits, f32
   * accumulation; ic.h "matmul"); without it an f32 matmul is exact f32 FMA. */
  IC_COMPILE_ALLOW_TF32 = 1u << 2
};

typedef struct ic_compile_options {
  uint32_t struct_size; /* sizeof(ic_compile_options) */
  ic_compile_mode mode;
  uint32_t flags; /* IC_COMPILE_* */
  /* "cuda" (NULL: the default) runs on the GPU with device pointers; "ref" is the
   * reference backend: it interprets the same kernel IR on the host, with host pointers,
   * needs no GPU, and is the test oracle. Outputs the ref backend allocates come from
   * malloc: release them with free(). */
  const char *backend;
  /* The fusion budget: the most graph ops (after lowering) one fused kernel holds, and
   * with it at most 4 dependent reductions chained in a kernel (each is a pass over the
   * row that recomputes the ops before it; softmax, layer and RMS norm chain 2 at most).
   * A group that would grow past it goes on in a new kernel; the values crossing that
   * boundary are stored in their own dtype, as in eager mode, so results stay bitwise
   * equal. It bounds the size of a kernel's source and with it NVRTC's time (0.2-0.4 ms
   * an op on a 1000-op chain; bench: `ic-bench compile`). 0: the default,
   * IC_FUSION_BUDGET_DEFAULT; -1: no budget. Part of the program cache key (eager
   * programs, a kernel an op, ignore it). */
  int32_t fusion_budget;
} ic_compile_options;

#define IC_FUSION_BUDGET_DEFAULT 512

/* Compiles a graph for the context's target. options may be NULL. The graph may be
 * destroyed afterwards. *out holds one reference (ic_program_release). */
IC_API ic_status ic_compile(ic_context *ctx, const ic_graph *graph, const ic_compile_options *options,
                            ic_program **out);
IC_API void ic_program_retain(ic_program *program);
IC_API void ic_program_release(ic_program *program);

IC_API int32_t ic_program_input_count(const ic_program *program);
IC_API int32_t ic_program_output_count(const ic_program *program);
/* Index of a named input/output, or -1. */
IC_API int32_t ic_program_input_index(const ic_program *program, const char *name);
IC_API int32_t ic_program_output_index(const ic_program *program, const char *name);
IC_API int32_t ic_program_kernel_count(const ic_program *program);
/* Generated source of kernel i (NULL if out of range); valid for the program's life. */
IC_API const char *ic_program_kernel_source(const ic_program *program, int32_t i);
/* The kernel IR of kernel i as text (NULL if out of range). */
IC_API const char *ic_program_kernel_ir(const ic_program *program, int32_t i);

/* ---------------------------------------------------------------- inspection
 *
 * The program (wrapper) IR, for humans (ic_program_dump) and for runtimes that execute a
 * compiled program themselves (the step walk). Buffers: inputs first (buffer i = input
 * i), then outputs, then temporaries. Sizes and grids are expressions of the size
 * symbols; ic_program_eval evaluates them for symbol values bound from input shapes. */

/* Frees a string ic returned (dumps, printed graphs). Accepts NULL. */
IC_API void ic_string_free(char *s);

/* The program as text: one line a buffer and a step, kernel IR and sources after. */
IC_API ic_status ic_program_dump(const ic_program *program, char **out);

typedef enum ic_buffer_kind { IC_BUFFER_INPUT, IC_BUFFER_OUTPUT, IC_BUFFER_TEMP } ic_buffer_kind;

typedef struct ic_buffer_info {
  ic_buffer_kind kind;
  int32_t index;          /* input, output or temporary number */
  ic_dtype dtype;
  int32_t ndim;
  int32_t dims_expr[IC_MAX_DIMS]; /* expression handles of its ndim dims (ic_program_eval) */
  int32_t bytes_expr;     /* expression handle of its size in bytes (ic_program_eval) */
  int32_t slot;           /* temporaries: the memory slot the plan gives it (slots are
                             reused by temporaries whose lives do not overlap) */
  const char *name;       /* inputs and outputs */
} ic_buffer_info;

typedef enum ic_step_kind {
  IC_STEP_OUTPUT, /* bind output buffer: the caller's memory, or allocate it */
  IC_STEP_ALLOC,  /* allocate a temporary (or its slot's memory, first use) */
  IC_STEP_LAUNCH, /* launch a kernel */
  IC_STEP_FREE    /* a temporary's last use has passed */
} ic_step_kind;

typedef enum ic_arg_kind {
  IC_ARG_BUFFER, /* a pointer: index = buffer */
  IC_ARG_SYMBOL, /* an int64 size: index = symbol */
  IC_ARG_STRIDE, /* an int64 element stride: index = input * IC_MAX_DIMS + dim */
  IC_ARG_SIZE    /* an int64 size: index = its expression handle (ic_program_eval) */
} ic_arg_kind;

typedef struct ic_step_arg {
  ic_arg_kind kind;
  int32_t index;
} ic_step_arg;

typedef struct ic_step {
  ic_step_kind kind;
  int32_t buffer;           /* OUTPUT, ALLOC, FREE */
  int32_t kernel;           /* LAUNCH: kernel index */
  const char *kernel_name;  /* LAUNCH: entry point */
  const char *source;       /* LAUNCH: generated source (NULL for backends without) */
  const void *binary;       /* LAUNCH: CUBIN (NULL for backends without) */
  size_t binary_size;
  int32_t block;            /* LAUNCH: threads per block */
  int32_t grid_expr;        /* LAUNCH: expression handle of the block count */
  int32_t nargs;            /* LAUNCH: kernel parameters, in order */
  const ic_step_arg *args;
  int32_t shared_bytes;     /* LAUNCH: dynamic shared memory a block (0: none); past 48 KB the kernel
                             * must be opted in first (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) */
  int32_t cluster;          /* LAUNCH: blocks a cluster, fixed in the kernel (__cluster_dims__, sm_90);
                             * the block count is a multiple of it; 1: no cluster */
} ic_step;

IC_API int32_t ic_program_buffer_count(const ic_program *program);
IC_API ic_status ic_program_buffer(const ic_program *program, int32_t i, ic_buffer_info *out);
IC_API int32_t ic_program_step_count(const ic_program *program);
/* Fills *out; its pointers stay valid for the program's lifetime. */
IC_API ic_status ic_program_step(const ic_program *program, int32_t i, ic_step *out);
IC_API int32_t ic_program_symbol_count(const ic_program *program);
IC_API const char *ic_program_symbol_name(const ic_program *program, int32_t i);
/* Evaluates an expression handle for symbol values (ic_program_symbol_count of them),
 * with checked arithmetic: IC_ERR_INVALID_ARGUMENT when a step overflows int64 (the
 * message says "overflows 64-bit integers") or divides by zero ("divides by zero"). */
IC_API ic_status ic_program_eval(const ic_program *program, int32_t expr, const int64_t *symbols, int64_t *value);

/* ---------------------------------------------------------------- graph text format
 *
 * One statement a line; '#' starts a comment. Names are [A-Za-z_%][A-Za-z0-9_%.]*.
 *   symbol n
 *   input x : f32[n, 4096]              layout after the type: contiguous (default),
 *   input w : f32[4096] strided         inner_contiguous or strided
 *   c = const 0.5                       an IC_DTYPE_AUTO constant; "const 0.5 : f16" typed
 *   h = mul(x, w)                       any op by its name (ic_op_name), numpy broadcasting
 *   s = cast(h, f16)                    also cast_saturate(h, f8e4m3), bitcast(h, i32)
 *   r = reshape(x, [n, 64, ?])          ? infers a dim
 *   p = permute(r, [0, 2, 1])
 *   e = expand(w, [n, 4096])
 *   v = slice(x, 1, 0, 10, 2)           dim, start, stop, step: ic_graph_slice's arguments
 *   c = concat([x, e], 0)               the values, then the dim
 *   s = sum(x, [1], keepdim)            any reduction (ic_reduce_name): the axes, then
 *   v = mean(q, [0, 1], correction=1)   keepdim and correction (mean only) if wanted;
 *                                       [] reduces over no dim (a scalar's form)
 *   q = pad(x, [1, 2, 0, 0], 0.5)       ic_graph_pad's lo_hi (last dim first), the value
 *   p = softmax(x, 1)                   the shorthands (ic_graph_softmax ...), built by
 *   l = log_softmax(x, -1)              their builders: softmax and log_softmax take an
 *   v = var(x, [1], keepdim)            axis; var and std a reduction's axes and options
 *   d = std(x, [0, 1], correction=0)    (correction 1 unless given; [] a scalar's only);
 *   z = layer_norm(x, 1, weight=w)      the norms the number of last dims, then weight=,
 *   r = rms_norm(x, 1, eps=1e-5)        bias= (layer_norm) and eps= in any order, each
 *                                       optional (eps 1e-5 for layer_norm, 1e-6 rms_norm)
 *   y = matmul(x, w)                    ic_graph_matmul: a and b
 *   output y = s                        "output s" names the output after its value
 * ic_graph_print writes every node (implicit broadcasts as expand, adopted constants as
 * typed constants, a shorthand as its decomposition), naming unnamed values %<n>; parsing
 * that text and printing it again gives the same text.
 *
 * Details: a name that begins with '%' labels an unnamed value; symbols, inputs, outputs
 * and named values are [A-Za-z_][A-Za-z0-9_.]*. A value name is unique among values and
 * inputs; outputs and symbols have namespaces of their own. Symbols are declared before
 * use. Constants are decimal numbers, inf, -inf or nan. Dims in lists are expressions of
 * integers and symbols with + - * / (floor division), ic_min(a, b), ic_max(a, b) and
 * parentheses, e.g. [4 * n, 64], and must be non-negative for all sizes; an input's dims
 * are sizes or symbols. Slice bounds and steps, pad amounts and the dims of slice and
 * concat are integers, '-' allowed (from -9223372036854775808 up). */

/* Names value v (not an input: inputs are named by ic_graph_input) so that the printed
 * text calls it `name`; name is [A-Za-z_][A-Za-z0-9_.]* and not yet the name of a value
 * or input. A value is named once. Errors are recorded on the graph like a builder
 * call's and return IC_ERR_INVALID_GRAPH. */
IC_API ic_status ic_graph_name_value(ic_graph *graph, ic_value v, const char *name);

/* Parses text into a new graph. Errors (IC_ERR_INVALID_GRAPH) name the line and column,
 * as "line 3, column 7: unknown op 'mull'"; *out is then NULL. */
IC_API ic_status ic_graph_parse(const char *text, ic_graph **out);
/* The graph as text (malloc'd; ic_string_free). IC_ERR_UNSUPPORTED when a symbol, input
 * or output name is not a text-format name (the builder takes any string). */
IC_API ic_status ic_graph_print(const ic_graph *graph, char **out);

/* ---------------------------------------------------------------- caches
 *
 * Kernels are cached by a content key (XXH3-128 of the generated source, the NVRTC
 * options, version and library, the target arch, the ic version, the cache schema and the
 * backend's configuration) in memory per context and on disk: IC_CACHE_DIR, else
 * $XDG_CACHE_HOME/ic, else ~/.cache/ic (created 0700; entries of other users ignored;
 * IC_CACHE=0 turns it off; IC_CACHE_MAX_BYTES caps it, least recently used out first).
 * Programs are cached per context by a canonical hash of the graph's structure and the
 * compile options: compiling the same graph again, even rebuilt from scratch, returns the
 * cached program (another reference). IC_COMPILE_NO_CACHE bypasses both. A context keeps
 * at most 1024 programs, least recently used out first: evicting drops the cache's
 * reference only, so a program the caller still holds stays valid and is freed with the
 * caller's last release. */

typedef struct ic_cache_stats {
  uint32_t struct_size;   /* sizeof(ic_cache_stats) */
  uint64_t memory_hits;   /* kernels found in the context's memory cache */
  uint64_t memory_misses;
  uint64_t disk_hits;     /* kernels loaded from the disk cache */
  uint64_t disk_misses;
  uint64_t compiles;      /* kernels compiled by NVRTC */
  double compile_ms;      /* total milliseconds in those compiles */
  uint64_t program_hits;  /* ic_compile calls answered by the program cache */
  uint64_t program_misses;
  /* Programs the program cache dropped, least recently used first, to stay under its
   * cap of 1024 programs per context. An evicted program lives on while a user holds a
   * reference; compiling its graph again is a miss. */
  uint64_t program_evictions;
} ic_cache_stats;

IC_API ic_status ic_cache_stats_get(ic_context *ctx, ic_cache_stats *out);

/* ---------------------------------------------------------------- run */

typedef struct ic_tensor {
  void *data;             /* device pointer; for outputs NULL asks ic to allocate */
  ic_dtype dtype;
  int32_t ndim;
  const int64_t *shape;   /* ndim sizes; NULL only for 0 dims or an output ic allocates */
  const int64_t *strides; /* in elements; NULL = contiguous */
} ic_tensor;

/* Output i's shape for the given inputs (symbols bound from their shapes): writes
 * *ndim and up to IC_MAX_DIMS sizes into shape. The inputs are checked as
 * ic_program_run checks them; a size that overflows int64 for them is
 * IC_ERR_INVALID_ARGUMENT ("overflows 64-bit integers"), and *ndim is then unchanged. */
IC_API ic_status ic_program_output_shape(const ic_program *program, int32_t output,
                                         const ic_tensor *inputs, int32_t *ndim, int64_t *shape);

/* Runs the program asynchronously on `stream` (a CUstream; NULL = legacy default).
 * Inputs and outputs bind by position. Each input must match its compiled dtype (else
 * IC_ERR_SHAPE_MISMATCH with "dtype mismatch: GIVEN vs COMPILED: ..."), rank,
 * shape (symbols bind from the first input that has them) and layout; outputs must be
 * contiguous. An output whose data is NULL is allocated by ic (stream-ordered) and
 * written back to outputs[i].data; it belongs to the caller (ic_free); its shape may be
 * NULL. An output in the caller's memory (data not NULL) must give its shape
 * (IC_ERR_INVALID_ARGUMENT if NULL with ndim > 0), and every given shape must equal the
 * computed one. Inputs need a shape (unless of 0 dims) with sizes >= 0. Outputs must not
 * overlap inputs. Any mismatch is an error before anything is launched. */
IC_API ic_status ic_program_run(ic_program *program, const ic_tensor *inputs, int32_t ninputs,
                                ic_tensor *outputs, int32_t noutputs, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* IC_IC_H */
