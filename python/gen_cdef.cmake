# Generates a cffi-ready declaration of ic.h (ic_cdef.h): the C preprocessor's output of
# ic.h with its #include lines removed (cffi knows size_t and the stdint types; system
# headers would bring compiler attributes cffi cannot parse) and IC_API empty
# (IC_STATIC_DEFINE), without line markers (-P); so the X-macro enums (IC_STATUS_LIST,
# IC_DTYPE_LIST, IC_OP_LIST) come out as plain enums. The numeric #defines of ic.h
# (IC_VERSION_*, IC_MAX_DIMS, IC_INVALID_VALUE, IC_DIM_INFER) follow as the constants of
# one anonymous enum, which cffi's ABI mode reads without the library.
#
#   cmake -DCC=<C compiler> -DINPUT=include/ic/ic.h -DOUTPUT=.../ic_cdef.h -P gen_cdef.cmake
foreach(v IN ITEMS CC INPUT OUTPUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "gen_cdef.cmake: -D${v}=... is required")
  endif()
endforeach()

file(READ "${INPUT}" header)
string(REGEX REPLACE "\n[ \t]*#[ \t]*include[^\n]*" "\n" header "${header}")

# Object-like macros with a value: evaluated by the preprocessor, then by math(EXPR).
string(REGEX MATCHALL "\n#define[ \t]+IC_[A-Z0-9_]+[ \t]+[^\n]+" defines "${header}")
set(names "")
set(probe "")
foreach(d IN LISTS defines)
  string(REGEX REPLACE "^\n#define[ \t]+(IC_[A-Z0-9_]+).*" "\\1" name "${d}")
  list(APPEND names ${name})
  string(APPEND probe "ic_cdef_constant \"${name}\" = ${name} @@\n")
endforeach()

get_filename_component(dir "${OUTPUT}" DIRECTORY)
file(MAKE_DIRECTORY "${dir}")
set(tmp "${OUTPUT}.in.h")
file(WRITE "${tmp}" "${header}\n/* ic_cdef constants */\n${probe}")
execute_process(
  COMMAND "${CC}" -E -P -DIC_STATIC_DEFINE -x c "${tmp}"
  OUTPUT_VARIABLE pre
  ERROR_VARIABLE err
  RESULT_VARIABLE rc)
file(REMOVE "${tmp}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen_cdef.cmake: ${CC} -E failed on ${INPUT}:\n${err}")
endif()

# Split the declarations from the probe lines.
string(FIND "${pre}" "ic_cdef_constant " at)
if(at LESS 0)
  message(FATAL_ERROR "gen_cdef.cmake: the preprocessor dropped the constants")
endif()
string(SUBSTRING "${pre}" 0 ${at} decls)
string(SUBSTRING "${pre}" ${at} -1 probes)

set(constants "")
string(REGEX MATCHALL "ic_cdef_constant \"[A-Z0-9_]+\" = [^@]*@@" lines "${probes}")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^ic_cdef_constant \"([A-Z0-9_]+)\" = ([^@]*)@@$" "\\1" name "${line}")
  string(REGEX REPLACE "^ic_cdef_constant \"([A-Z0-9_]+)\" = ([^@]*)@@$" "\\2" value "${line}")
  string(STRIP "${value}" value)
  # Casts to ic's integer types go; INT64_MIN (stdint.h is not included) is spelled out.
  string(REGEX REPLACE "\\((ic_[a-z_]+|u?int[0-9]+_t)\\)" "" value "${value}")
  if(value MATCHES "INT64_MIN")
    set(constants "${constants}  ${name} = -9223372036854775808,\n")
    continue()
  endif()
  if(NOT value MATCHES "^[-+*/() 0-9]+$")
    continue() # strings (IC_VERSION_STRING), empty macros (IC_API, the include guard)
  endif()
  math(EXPR number "${value}")
  set(constants "${constants}  ${name} = ${number},\n")
endforeach()

# IC_API leaves a leading space on each declaration; blank lines come from comments.
string(REGEX REPLACE "\n ([^ \n])" "\n\\1" decls "\n${decls}")
string(REGEX REPLACE "\n\n+" "\n" decls "${decls}")
string(STRIP "${decls}" decls)

file(WRITE "${OUTPUT}.tmp"
"/* ic_cdef.h: the declarations of ic/ic.h for cffi (ffi.cdef), generated from ic.h at
 * build time by python/gen_cdef.cmake. Not a C header: use ic/ic.h from C.
 * Load the library with ffi.dlopen(\"libic.so.0\"); ic.cdef() in the Python binding
 * returns this text. */
${decls}
enum {
${constants}};
")
# Rewritten only when it changed, so that dependents do not rebuild for nothing.
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
