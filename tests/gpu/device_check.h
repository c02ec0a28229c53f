/* What the GPU suites do first: where no CUDA device is usable they say why
 * and exit 77, ctest's skip. */
#ifndef DIST_TEST_DEVICE_CHECK_H
#define DIST_TEST_DEVICE_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

static void skip_without_device(void) {
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    printf("skipped: no CUDA device (%s)\n",
           error != cudaSuccess ? cudaGetErrorString(error) : "the runtime sees none");
    exit(77);
  }
}

#endif /* DIST_TEST_DEVICE_CHECK_H */
