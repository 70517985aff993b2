# Defines the imported target braid::openblas: OpenBLAS's library and its cblas.h.
# Used by braid's own build and, when braid is installed as a static library, by
# braidConfig.cmake so that consumers link OpenBLAS too.
if(TARGET braid::openblas)
  return()
endif()

# Debian puts the threaded variant's cblas.h under an architecture directory.
find_path(BRAID_CBLAS_INCLUDE_DIR cblas.h
  PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread /usr/include/openblas
  NO_DEFAULT_PATH)
find_path(BRAID_CBLAS_INCLUDE_DIR cblas.h)
find_library(BRAID_OPENBLAS_LIBRARY NAMES openblas)

if(NOT BRAID_CBLAS_INCLUDE_DIR OR NOT BRAID_OPENBLAS_LIBRARY)
  set(_braid_openblas_message
    "braid needs OpenBLAS (library and cblas.h); on Debian install libopenblas-dev. "
    "Found library: '${BRAID_OPENBLAS_LIBRARY}', cblas.h directory: '${BRAID_CBLAS_INCLUDE_DIR}'.")
  if(BRAID_OPENBLAS_FROM_PACKAGE_CONFIG)
    # Inside braidConfig.cmake: report not-found instead of stopping the consumer's configure.
    set(braid_FOUND FALSE)
    set(braid_NOT_FOUND_MESSAGE ${_braid_openblas_message})
    return()
  endif()
  message(FATAL_ERROR ${_braid_openblas_message})
endif()

add_library(braid::openblas UNKNOWN IMPORTED)
set_target_properties(braid::openblas PROPERTIES
  IMPORTED_LOCATION "${BRAID_OPENBLAS_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${BRAID_CBLAS_INCLUDE_DIR}")
