# Finds the libraries libdistribute builds on and records which were found in
# DIST_HAVE_* variables (they become compile definitions and build features).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.9 REQUIRED)
# HMAC-SHA256 and nonces for the bootstrap handshake.
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

# UCX is the transport between processes: required.
pkg_check_modules(UCX REQUIRED IMPORTED_TARGET ucx)
set(DIST_HAVE_UCX ON)

# A tri-state option: ON fails when the component is missing, AUTO tolerates it.
function(dist_resolve_option option found)
  if(${option} STREQUAL "OFF")
    set(${option}_ENABLED OFF PARENT_SCOPE)
  elseif(${found})
    set(${option}_ENABLED ON PARENT_SCOPE)
  elseif(${option} STREQUAL "ON")
    message(FATAL_ERROR "${option}=ON but it was not found")
  else()
    set(${option}_ENABLED OFF PARENT_SCOPE)
  endif()
endfunction()

pkg_check_modules(HWLOC IMPORTED_TARGET hwloc)
dist_resolve_option(DIST_WITH_HWLOC HWLOC_FOUND)
set(DIST_HAVE_HWLOC ${DIST_WITH_HWLOC_ENABLED})

# CUDA is used when the toolkit is found (usually /usr/local/cuda) and its nvcc
# compiles (the library's device kernels, src/gpu/*.cu); never required.
# DIST_CUDA_WHY says why CUDA is left out.
set(DIST_CUDA_USABLE OFF)
set(DIST_CUDA_WHY "")
if(NOT DIST_WITH_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    set(DIST_CUDA_WHY "no CUDA toolkit was found (set CUDAToolkit_ROOT to its directory)")
  else()
    # check_language tries the compiler in a test project and caches the
    # answer in CMAKE_CUDA_COMPILER (NOTFOUND when it does not work); it finds
    # the compiler through CUDACXX, so point that at the toolkit's nvcc, and
    # nvcc's host compiler at ours, unless the user chose either.
    if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND CUDAToolkit_NVCC_EXECUTABLE)
      set(ENV{CUDACXX} "${CUDAToolkit_NVCC_EXECUTABLE}")
    endif()
    if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER AND NOT DEFINED ENV{CUDAHOSTCXX})
      set(ENV{CUDAHOSTCXX} "${CMAKE_CXX_COMPILER}")
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      set(DIST_CUDA_USABLE ON)
    elseif(NOT CUDAToolkit_NVCC_EXECUTABLE)
      set(DIST_CUDA_WHY "the CUDA toolkit at ${CUDAToolkit_BIN_DIR} has no nvcc")
    else()
      string(CONCAT DIST_CUDA_WHY "the CUDA compiler ${CUDAToolkit_NVCC_EXECUTABLE} does not compile a test "
                   "program (its output is in ${CMAKE_BINARY_DIR}/CMakeFiles/CMakeError.log; the answer is "
                   "cached: unset CMAKE_CUDA_COMPILER to look again)")
    endif()
  endif()
endif()
if(DIST_WITH_CUDA STREQUAL "ON" AND NOT DIST_CUDA_USABLE)
  message(FATAL_ERROR "DIST_WITH_CUDA=ON but ${DIST_CUDA_WHY}")
elseif(DIST_WITH_CUDA STREQUAL "AUTO" AND NOT DIST_CUDA_USABLE)
  message(STATUS "libdistribute: building without CUDA: ${DIST_CUDA_WHY}")
endif()
dist_resolve_option(DIST_WITH_CUDA DIST_CUDA_USABLE)
set(DIST_HAVE_CUDA ${DIST_WITH_CUDA_ENABLED})
if(DIST_HAVE_CUDA)
  # Real code for Ampere and Hopper, and PTX the driver compiles for newer GPUs.
  # -DCMAKE_CUDA_ARCHITECTURES=... (or CUDAARCHS) chooses others.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES "80-real;90-real;90-virtual" CACHE STRING "CUDA architectures to build for")
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
endif()

set(NCCL_FOUND OFF)
if(DIST_HAVE_CUDA AND NOT DIST_WITH_NCCL STREQUAL "OFF")
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(NCCL_FOUND ON)
  endif()
endif()
dist_resolve_option(DIST_WITH_NCCL NCCL_FOUND)
set(DIST_HAVE_NCCL ${DIST_WITH_NCCL_ENABLED})

message(STATUS "libdistribute: UCX ${UCX_VERSION}, hwloc=${DIST_HAVE_HWLOC}, "
               "CUDA=${DIST_HAVE_CUDA}, NCCL=${DIST_HAVE_NCCL}")
