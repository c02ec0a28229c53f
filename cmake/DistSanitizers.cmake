# -DDIST_SANITIZE=address,undefined or =thread instruments every target.
if(DIST_SANITIZE)
  if(DIST_SANITIZE MATCHES "thread" AND DIST_SANITIZE MATCHES "address")
    message(FATAL_ERROR "DIST_SANITIZE: thread and address cannot be combined")
  endif()
  # C and C++ only: nvcc rejects these options (the host code of the few .cu
  # files stays uninstrumented, which the sanitizers tolerate).
  add_compile_options(
    "$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${DIST_SANITIZE};-fno-omit-frame-pointer;-fno-sanitize-recover=all>")
  add_link_options(-fsanitize=${DIST_SANITIZE})
endif()
if(DIST_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "DIST_FUZZ=ON needs clang (CC=clang CXX=clang++)")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link,address,undefined;-fno-omit-frame-pointer>")
  add_link_options(-fsanitize=address,undefined)
endif()
