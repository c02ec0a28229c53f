// Version and build-feature queries.
#include <distribute/c_api.h>

#define DIST_STRINGIFY_(x) #x
#define DIST_STRINGIFY(x) DIST_STRINGIFY_(x)

extern "C" {

DIST_EXPORT uint32_t dist_version(void) { return DIST_VERSION_HEX; }

DIST_EXPORT const char* dist_version_string(void) {
  return DIST_STRINGIFY(DIST_VERSION_MAJOR) "." DIST_STRINGIFY(DIST_VERSION_MINOR) "." DIST_STRINGIFY(
      DIST_VERSION_PATCH);
}

DIST_EXPORT dist_features_t dist_build_features(void) {
  dist_features_t features = 0;
#ifdef DIST_HAVE_UCX
  features |= DIST_FEATURE_UCX;
#endif
#ifdef DIST_HAVE_CUDA
  features |= DIST_FEATURE_CUDA;
#endif
#ifdef DIST_HAVE_NCCL
  features |= DIST_FEATURE_NCCL;
#endif
#ifdef DIST_HAVE_HWLOC
  features |= DIST_FEATURE_HWLOC;
#endif
  return features;
}

}  // extern "C"
