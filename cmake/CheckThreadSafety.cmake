cmake_minimum_required(VERSION 3.25)
# Run by scripts/check-thread-safety (cmake -P). Re-runs the compile commands that CMake exported
# for the annotated runtime (src/runtime, src/graph, src/memory) through clang with
# -fsyntax-only -Wthread-safety -Werror, so a missing lock is a build failure.
# Inputs: COMPILE_COMMANDS (compile_commands.json), CLANGXX, JOBS_FILE (where to write the jobs).
foreach(var COMPILE_COMMANDS CLANGXX JOBS_FILE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CheckThreadSafety.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT EXISTS ${COMPILE_COMMANDS})
  message(FATAL_ERROR "${COMPILE_COMMANDS} does not exist: configure the build first")
endif()

file(READ ${COMPILE_COMMANDS} json)
string(JSON count LENGTH "${json}")
math(EXPR last "${count} - 1")
set(jobs "")
set(seen "")
foreach(i RANGE ${last})
  string(JSON entry_file GET "${json}" ${i} file)
  # A unity build (BRAID_UNITY_BUILD) lists its batches, each including several sources: the
  # batch's command, with the batch replaced by each annotated source it includes.
  set(sources "")
  if(entry_file MATCHES "/Unity/unity_[0-9]+_cxx\\.cxx$")
    file(STRINGS ${entry_file} includes REGEX "^#include \"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*$" "\\1" included "${line}")
      list(APPEND sources ${included})
    endforeach()
  else()
    set(sources ${entry_file})
  endif()
  string(JSON dir GET "${json}" ${i} directory)
  string(JSON command ERROR_VARIABLE no_command GET "${json}" ${i} command)
  if(no_command)
    message(FATAL_ERROR "${COMPILE_COMMANDS}: entry ${i} has no \"command\" string")
  endif()
  separate_arguments(args UNIX_COMMAND "${command}")
  list(POP_FRONT args)  # the build's own compiler

  # Keep defines, include paths and language flags; drop the output, the build's warning set
  # (so only thread safety is judged here), sanitizer flags and the TLS dialect (code generation,
  # which the syntax pass does not do; clang 14 does not know GCC's flag).
  set(kept "")
  set(skip_next FALSE)
  foreach(arg IN LISTS args)
    if(skip_next)
      set(skip_next FALSE)
    elseif(arg STREQUAL "-o" OR arg STREQUAL "-MF" OR arg STREQUAL "-MT" OR arg STREQUAL "-MQ"
           OR arg STREQUAL "-include")
      # -include: the library's precompiled header (GCC's file, which clang cannot read).
      set(skip_next TRUE)
    elseif(arg STREQUAL "-c" OR arg MATCHES "^-W" OR arg MATCHES "^-fsanitize" OR arg MATCHES "^-M"
           OR arg MATCHES "^-mtls-dialect" OR arg STREQUAL "${entry_file}")
    else()
      list(APPEND kept "${arg}")
    endif()
  endforeach()
  list(JOIN kept " " flags)
  foreach(file IN LISTS sources)
    if(NOT file MATCHES "/src/(runtime|graph|memory)/[^/]+\\.cpp$" OR file IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${file})
    # One job per line: directory, then the clang command; the shell script runs them in parallel.
    string(APPEND jobs "${dir}\t${CLANGXX} ${flags} -fsyntax-only -Wthread-safety -Werror ${file}\n")
  endforeach()
endforeach()

if(jobs STREQUAL "")
  message(FATAL_ERROR "${COMPILE_COMMANDS} lists no file under src/runtime, src/graph or src/memory")
endif()
file(WRITE ${JOBS_FILE} "${jobs}")
