//go:build !distribute_pkgconfig

package distribute

// The build tree of this checkout (CGO_LDFLAGS="-L$DIST_BUILD_DIR/src" for another);
// build with -tags distribute_pkgconfig to use an installed copy instead.

// #cgo LDFLAGS: -L${SRCDIR}/../../build/src -Wl,-rpath,${SRCDIR}/../../build/src -ldistribute
import "C"
