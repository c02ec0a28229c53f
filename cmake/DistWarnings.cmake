# -DDIST_WARNINGS_AS_ERRORS=ON turns every warning of every target (library,
# tools, tests, examples, benchmarks, fuzzers) into an error. The project's own
# builds (scripts/setup.sh's dist_build, hence scripts/test and CI) turn it on;
# a packager's or user's build leaves it off, so a newer compiler's new warning
# does not stop them.
option(DIST_WARNINGS_AS_ERRORS "Treat compiler warnings as errors in every target" OFF)
if(DIST_WARNINGS_AS_ERRORS)
  # C and C++ only: a CUDA compiler spells -Werror differently.
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-Werror>)
endif()
