//go:build distribute_pkgconfig

package distribute

// An installed libdistribute, found by `pkg-config distribute`.

// #cgo pkg-config: distribute
// #cgo CFLAGS: -DDIST_INSTALLED
import "C"
