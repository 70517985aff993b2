# Defines the imported target braid::lapacke: LAPACKE's library and lapacke.h (Debian:
# liblapacke-dev), the C interface to the LAPACK that OpenBLAS provides. Used by braid's own
# build and, when braid is installed as a static library, by braidConfig.cmake so that
# consumers link it too.
if(TARGET braid::lapacke)
  return()
endif()

find_path(BRAID_LAPACKE_INCLUDE_DIR lapacke.h PATH_SUFFIXES lapacke)
find_library(BRAID_LAPACKE_LIBRARY NAMES lapacke)

if(NOT BRAID_LAPACKE_INCLUDE_DIR OR NOT BRAID_LAPACKE_LIBRARY)
  set(_braid_lapacke_message
    "braid needs LAPACKE (library and lapacke.h) for linalg; on Debian install liblapacke-dev. "
    "Found library: '${BRAID_LAPACKE_LIBRARY}', lapacke.h directory: '${BRAID_LAPACKE_INCLUDE_DIR}'.")
  if(BRAID_LAPACKE_FROM_PACKAGE_CONFIG)
    # Inside braidConfig.cmake: report not-found instead of stopping the consumer's configure.
    set(braid_FOUND FALSE)
    set(braid_NOT_FOUND_MESSAGE ${_braid_lapacke_message})
    return()
  endif()
  message(FATAL_ERROR ${_braid_lapacke_message})
endif()

add_library(braid::lapacke UNKNOWN IMPORTED)
set_target_properties(braid::lapacke PROPERTIES
  IMPORTED_LOCATION "${BRAID_LAPACKE_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${BRAID_LAPACKE_INCLUDE_DIR}")
