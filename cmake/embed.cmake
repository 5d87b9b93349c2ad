# Embeds a text file into the library as a C array: run at build time with
#
#   cmake -DINPUT=<file> -DOUTPUT=<file.c> -DSYMBOL=<name> -DHEADER=<header> -P embed.cmake
#
# and writes OUTPUT, a C source that #includes "HEADER" (which declares
# `extern const char SYMBOL[];`, so the compiler checks the declaration against this
# definition) and defines
#
#   const char SYMBOL[] = { '\x..', ..., '\0' };
#
# holding the bytes of INPUT after its file comment, then a terminating NUL. Bytes, not a
# string literal: no escaping, and no limit on the length of a string literal (C11
# promises only 4095 characters).
#
# The file comment: every line of INPUT up to and including the first line that reads
# exactly
#
#   // ---- embedded below ----
#
# is dropped; what follows that line is embedded byte for byte. The marker must be
# there (an error otherwise), so that a mistyped marker can never embed the comment.
cmake_minimum_required(VERSION 3.25)

foreach(arg IN ITEMS INPUT OUTPUT SYMBOL HEADER)
  if(NOT DEFINED ${arg} OR "${${arg}}" STREQUAL "")
    message(FATAL_ERROR "embed.cmake: -D${arg}=... is required")
  endif()
endforeach()
cmake_path(ABSOLUTE_PATH INPUT)  # relative to the working directory
cmake_path(ABSOLUTE_PATH OUTPUT)

# All of the work is on the file's bytes, in hex: positions in file(READ)'s text are no
# byte offsets (it drops the \r of a \r\n). "xx " per byte keeps every match of a byte
# sequence on a byte boundary.
set(byte_re "[0-9a-f][0-9a-f]")
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "(${byte_re})" "\\1 " hex "${hex}")
string(HEX "// ---- embedded below ----\n" marker)
string(REGEX REPLACE "(${byte_re})" "\\1 " marker "${marker}")
string(FIND "${hex}" "${marker}" pos)
if(NOT pos EQUAL 0)
  string(FIND "${hex}" "0a ${marker}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "embed.cmake: ${INPUT} has no line \"// ---- embedded below ----\" "
      "ending its file comment")
  endif()
  math(EXPR pos "${pos} + 3") # past the newline before the marker
endif()
string(LENGTH "${marker}" marker_len)
math(EXPR pos "${pos} + ${marker_len}")
string(SUBSTRING "${hex}" ${pos} -1 hex)

# 16 bytes a line, then each byte as '\xNN', (CMake's regex has no {n}).
string(REPEAT "${byte_re} " 16 line_re)
string(REGEX REPLACE "(${line_re})" "\\1\n" hex "${hex}")
string(REGEX REPLACE "(${byte_re}) " "'\\\\x\\1', " bytes "${hex}")
string(REPLACE ", \n" ",\n    " bytes "${bytes}")

file(RELATIVE_PATH input_name "${CMAKE_CURRENT_LIST_DIR}/.." "${INPUT}")
string(CONCAT source
  "/* Generated from ${input_name} by cmake/embed.cmake at build time: do not edit. */\n"
  "#include \"${HEADER}\"\n"
  "\n"
  "const char ${SYMBOL}[] = {\n"
  "    ${bytes}'\\0'\n"
  "};\n")
# Unchanged bytes leave OUTPUT (and its time stamp) alone, so an edit of the file comment
# alone recompiles nothing (Ninja restats custom command outputs).
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL source)
    return()
  endif()
endif()
# Whole or not at all: an interrupted run leaves no half-written OUTPUT behind.
file(WRITE "${OUTPUT}.tmp" "${source}")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
