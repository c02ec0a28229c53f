package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

// Version is DIST_VERSION_HEX of the loaded library (0xMMmmpp).
func Version() uint32 { return uint32(C.dist_version()) }

// VersionString is "0.1.0" of the loaded library.
func VersionString() string { return C.GoString(C.dist_version_string()) }

// Features are the optional components built into the library.
type Features uint32

const (
	FeatureUCX   Features = C.DIST_FEATURE_UCX
	FeatureCUDA  Features = C.DIST_FEATURE_CUDA
	FeatureNCCL  Features = C.DIST_FEATURE_NCCL
	FeatureHwloc Features = C.DIST_FEATURE_HWLOC
)

// BuildFeatures reports which of UCX, CUDA, NCCL and hwloc were built in.
func BuildFeatures() Features { return Features(C.dist_build_features()) }

// BuildInfo is the build report as JSON.
func BuildInfo() (string, error) {
	var out *C.char
	if err := call(func() C.dist_status_t { return C.dist_build_info(&out) }); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// takeString copies a string the library handed over and frees it.
func takeString(s *C.char) string {
	defer C.dist_string_free(s)
	return C.GoString(s)
}

// borrowed copies a borrowed C string; NULL is "" and false.
func borrowed(s *C.char) (string, bool) {
	if s == nil {
		return "", false
	}
	return C.GoString(s), true
}

// cStrings holds C copies of Go strings until free.
type cStrings []*C.char

func (c *cStrings) add(s string) *C.char {
	p := C.CString(s)
	*c = append(*c, p)
	return p
}

// addOptional gives NULL for "".
func (c *cStrings) addOptional(s string) *C.char {
	if s == "" {
		return nil
	}
	return c.add(s)
}

func (c cStrings) free() {
	for _, p := range c {
		C.free(unsafePointer(p))
	}
}
