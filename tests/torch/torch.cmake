# The torch.distributed suite (issue 19): pytest over tests/torch, the DDP
# example under torchrun, and torchrun across two emulated hosts, each in the
# torch environment of this build tree (BUILD/torch-venv, made by
# scripts/torch_env on first use; the install takes minutes, hence the
# timeouts). Every script skips (77), saying why, where torch cannot be
# installed or this tree has no backend. Included from tests/CMakeLists.txt.

set(DIST_TORCH_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/torch)

# Makes the environment once, before the tests that share it.
add_test(NAME test_torch_env COMMAND ${PROJECT_SOURCE_DIR}/scripts/torch_env ${PROJECT_BINARY_DIR}/torch-venv)
set_tests_properties(test_torch_env PROPERTIES LABELS torch TIMEOUT 1200 SKIP_RETURN_CODE 77
  FIXTURES_SETUP dist_torch_env)

# DDP and FSDP2 against gloo: jobs of 2 and 3 processes, one at a time.
add_test(NAME test_torch COMMAND ${DIST_TORCH_TESTS}/run.sh ${PROJECT_BINARY_DIR})
set_tests_properties(test_torch PROPERTIES LABELS torch TIMEOUT 1200 SKIP_RETURN_CODE 77
  RUN_SERIAL TRUE FIXTURES_REQUIRED dist_torch_env)

add_test(NAME test_torch_example COMMAND ${DIST_TORCH_TESTS}/example.sh ${PROJECT_BINARY_DIR})
set_tests_properties(test_torch_example PROPERTIES LABELS torch TIMEOUT 900 SKIP_RETURN_CODE 77
  PROCESSORS 2 FIXTURES_REQUIRED dist_torch_env)

add_test(NAME test_torch_multihost COMMAND ${DIST_TORCH_TESTS}/multihost.sh ${PROJECT_BINARY_DIR})
set_tests_properties(test_torch_multihost PROPERTIES LABELS "multihost;torch" TIMEOUT 900 SKIP_RETURN_CODE 77
  FIXTURES_REQUIRED "dist_torch_env;multihost_hosts" RESOURCE_LOCK dist_emulated_hosts)
