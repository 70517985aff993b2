cmake_minimum_required(VERSION 3.25)
# Run by the InstallAndConsume test (cmake -P). Installs the braid build in BRAID_BINARY_DIR
# into WORK_DIR/prefix, then proves the installed package works for its two kinds of users:
#   1. examples/consumer, a separate CMake project, via find_package(braid CONFIG REQUIRED);
#   2. a one-line program compiled with `pkg-config --cflags --libs braid`.
foreach(var BRAID_SOURCE_DIR BRAID_BINARY_DIR WORK_DIR CONFIG GENERATOR CXX SHARED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "TestInstall.cmake: ${var} is not set")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run_step what)
  message(STATUS "== ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}): ${ARGN}")
  endif()
endfunction()

run_step("install braid into ${prefix}"
  ${CMAKE_COMMAND} --install ${BRAID_BINARY_DIR} --config ${CONFIG} --prefix ${prefix})

foreach(installed include/braid/braid.h)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "install did not produce ${prefix}/${installed}")
  endif()
endforeach()
file(GLOB_RECURSE config_file ${prefix}/*/braidConfig.cmake)
file(GLOB_RECURSE version_file ${prefix}/*/braidConfigVersion.cmake)
file(GLOB_RECURSE pc_file ${prefix}/*/braid.pc)
if(NOT config_file OR NOT version_file OR NOT pc_file)
  message(FATAL_ERROR "install is missing braidConfig.cmake, braidConfigVersion.cmake or braid.pc")
endif()
get_filename_component(pc_dir ${pc_file} DIRECTORY)
get_filename_component(lib_dir ${pc_dir} DIRECTORY)

# 1. A separate CMake project that finds the installed package by prefix alone.
set(consumer_build ${WORK_DIR}/consumer-build)
run_step("configure examples/consumer"
  ${CMAKE_COMMAND} -S ${BRAID_SOURCE_DIR}/examples/consumer -B ${consumer_build}
    -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=${CONFIG}
    -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
file(STRINGS ${consumer_build}/CMakeCache.txt found_dir REGEX "^braid_DIR:")
string(REGEX REPLACE "^braid_DIR:[A-Z]*=" "" found_dir "${found_dir}")
string(FIND "${found_dir}" "${prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "examples/consumer found braid at '${found_dir}', not in ${prefix}")
endif()
run_step("build examples/consumer" ${CMAKE_COMMAND} --build ${consumer_build} --config ${CONFIG})
find_program(consumer_exe braid_consumer PATHS ${consumer_build} ${consumer_build}/${CONFIG} NO_DEFAULT_PATH
  NO_CACHE)
if(NOT consumer_exe)
  message(FATAL_ERROR "examples/consumer built no braid_consumer")
endif()
run_step("run examples/consumer" ${consumer_exe})

# 2. pkg-config: a one-line program, compiled and linked with the flags braid.pc gives.
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config was not found (Debian: apt-get install pkg-config)")
endif()
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
set(static_flag)
if(NOT SHARED)
  set(static_flag --static)
endif()
execute_process(COMMAND ${PKG_CONFIG} ${static_flag} --cflags --libs braid
  OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs braid failed (${rc})")
endif()
message(STATUS "pkg-config --cflags --libs braid: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
file(WRITE ${WORK_DIR}/one_line.cpp
  "#include <braid/braid.h>\n"
  "int main() { return (braid::array({1.0f, 2.0f}) + 1.0f).data<float>()[1] == 3.0f ? 0 : 1; }\n")
run_step("compile one_line.cpp with pkg-config flags"
  ${CXX} -std=c++20 ${WORK_DIR}/one_line.cpp -o ${WORK_DIR}/one_line ${pc_flags})
run_step("run one_line" ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${lib_dir} ${WORK_DIR}/one_line)

message(STATUS "installed braid works through find_package and pkg-config")
