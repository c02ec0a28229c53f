# Checks of what libdistribute ships: the public header, the exported symbols
# of the shared library, and programs built against an installed tree.
# Included from tests/CMakeLists.txt; every check is a python3 driver here.

find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(DIST_PACKAGING_DIR ${CMAKE_CURRENT_SOURCE_DIR}/packaging)
set(DIST_PACKAGING_WORK ${CMAKE_CURRENT_BINARY_DIR}/packaging)
set(DIST_PUBLIC_HEADER ${PROJECT_SOURCE_DIR}/include/c_api.h)
# -B: no __pycache__ written into the source tree.
set(DIST_PACKAGING_PYTHON ${Python3_EXECUTABLE} -B)

foreach(tool NM OBJDUMP READELF)
  if(NOT CMAKE_${tool})
    string(TOLOWER ${tool} program)
    find_program(CMAKE_${tool} ${program} REQUIRED)
  endif()
endforeach()

# A sanitized library needs the sanitizer runtime in the programs that load it.
set(DIST_CONSUMER_FLAGS "")
if(DIST_SANITIZE)
  set(DIST_CONSUMER_FLAGS "-fsanitize=${DIST_SANITIZE}")
endif()

# ---- The header compiles as strict C99 and C++17 -------------------------------
foreach(language IN ITEMS c99 cxx17)
  if(language STREQUAL "c99")
    set(flags --language c --compiler ${CMAKE_C_COMPILER})
  else()
    set(flags --language c++ --compiler ${CMAKE_CXX_COMPILER})
  endif()
  add_test(NAME header_${language}
    COMMAND ${DIST_PACKAGING_PYTHON} ${DIST_PACKAGING_DIR}/check_header.py ${flags}
      --nm ${CMAKE_NM} --header ${DIST_PUBLIC_HEADER} --include-dir ${DIST_HEADER_VIEW_DIR}
      --workdir ${DIST_PACKAGING_WORK}/header_${language}
      ${DIST_PACKAGING_DIR}/header_alone.c ${DIST_PACKAGING_DIR}/header_twice.c)
  set_tests_properties(header_${language} PROPERTIES TIMEOUT 120)
endforeach()

# ---- The library exports dist_* only, versioned, under the right SONAME ----------
add_test(NAME exports_only_dist
  COMMAND ${DIST_PACKAGING_PYTHON} ${DIST_PACKAGING_DIR}/check_exports.py
    --library $<TARGET_FILE:distribute> --header ${DIST_PUBLIC_HEADER}
    --nm ${CMAKE_NM} --readelf ${CMAKE_READELF} --objdump ${CMAKE_OBJDUMP})
set_tests_properties(exports_only_dist PROPERTIES TIMEOUT 60)

# ---- Consumers of an installed tree ----------------------------------------------
# install_tree installs once into a private prefix (a fixture), so the two
# consumer tests can run in parallel without installing over each other.
set(DIST_TEST_PREFIX ${DIST_PACKAGING_WORK}/install-prefix)
set(DIST_INSTALL_TESTS install_tree install_consumer_pkgconfig install_consumer_cmake)
set(install_config "")
if(CMAKE_CONFIGURATION_TYPES)
  set(install_config --install-config $<CONFIG>)
endif()

add_test(NAME install_tree
  COMMAND ${DIST_PACKAGING_PYTHON} ${DIST_PACKAGING_DIR}/install_tree.py
    --cmake ${CMAKE_COMMAND} --build-dir ${PROJECT_BINARY_DIR}
    --source-dir ${PROJECT_SOURCE_DIR} --prefix ${DIST_TEST_PREFIX}
    --libdir ${CMAKE_INSTALL_LIBDIR} --includedir ${CMAKE_INSTALL_INCLUDEDIR}
    --header ${DIST_PUBLIC_HEADER} --version ${PROJECT_VERSION} --abi ${DIST_ABI_VERSION}
    --readelf ${CMAKE_READELF} ${install_config})
set_tests_properties(install_tree PROPERTIES TIMEOUT 300
  FIXTURES_SETUP dist_installed_tree)

add_test(NAME install_consumer_pkgconfig
  COMMAND ${DIST_PACKAGING_PYTHON} ${DIST_PACKAGING_DIR}/check_consumer_pkgconfig.py
    --pkg-config ${PKG_CONFIG_EXECUTABLE} --compiler ${CMAKE_C_COMPILER}
    --prefix ${DIST_TEST_PREFIX} --libdir ${CMAKE_INSTALL_LIBDIR}
    --source ${DIST_PACKAGING_DIR}/consumer.c
    --workdir ${DIST_PACKAGING_WORK}/consumer-pkgconfig
    --version ${PROJECT_VERSION} "--extra-flags=${DIST_CONSUMER_FLAGS}")
set_tests_properties(install_consumer_pkgconfig PROPERTIES TIMEOUT 300
  FIXTURES_REQUIRED dist_installed_tree)

add_test(NAME install_consumer_cmake
  COMMAND ${DIST_PACKAGING_PYTHON} ${DIST_PACKAGING_DIR}/check_consumer_cmake.py
    --cmake ${CMAKE_COMMAND} --generator ${CMAKE_GENERATOR}
    "--make-program=${CMAKE_MAKE_PROGRAM}" --compiler ${CMAKE_C_COMPILER}
    --prefix ${DIST_TEST_PREFIX} --libdir ${CMAKE_INSTALL_LIBDIR}
    --project ${DIST_PACKAGING_DIR}/cmake_consumer
    --workdir ${DIST_PACKAGING_WORK}/consumer-cmake
    --version ${PROJECT_VERSION} "--extra-flags=${DIST_CONSUMER_FLAGS}")
set_tests_properties(install_consumer_cmake PROPERTIES TIMEOUT 300
  FIXTURES_REQUIRED dist_installed_tree)

# An absolute install libdir or includedir ignores --prefix, so installing would
# write outside the private prefix: such builds keep the tests but skip them.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set_tests_properties(${DIST_INSTALL_TESTS} PROPERTIES DISABLED TRUE)
endif()

# ---- pip: the Python package built, installed into a fresh venv and run ---------
# pyproject.toml's build (scikit-build-core, this CMake project, Release, library
# only) into a wheel, installed into a fresh virtual environment where `import
# distribute` and a two-process all-reduce must work with no paths set. Needs the
# package index (skipped, saying so, without it); its CMake build stays in
# packaging/pip/build for the next run, and ccache is used when there is one.
add_test(NAME pip_install
  COMMAND bash ${DIST_PACKAGING_DIR}/pip_install.sh ${PROJECT_SOURCE_DIR}
    ${DIST_PACKAGING_WORK}/pip ${PROJECT_VERSION})
set_tests_properties(pip_install PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77
  LABELS packaging PROCESSORS 2)

# ---- The sources as builds without NCCL, or without CUDA, compile them ----------
# (a build compiles only its own combination of the optional parts)
if(DIST_HAVE_CUDA AND DIST_HAVE_NCCL)
  add_test(NAME feature_variants
    COMMAND ${DIST_PACKAGING_PYTHON} ${DIST_PACKAGING_DIR}/check_feature_variants.py
      --source-dir ${PROJECT_SOURCE_DIR} --build-dir ${PROJECT_BINARY_DIR} --compiler ${CMAKE_CXX_COMPILER})
  set_tests_properties(feature_variants PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
