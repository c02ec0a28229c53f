package distribute

// #include <stdlib.h>
import "C"

import "unsafe"

func unsafePointer(p *C.char) unsafe.Pointer { return unsafe.Pointer(p) }

// cArray copies values into C memory (freed by the caller with C.free).
func cArray[T any](values []T) unsafe.Pointer {
	if len(values) == 0 {
		return nil
	}
	size := C.size_t(len(values)) * C.size_t(unsafe.Sizeof(values[0]))
	p := C.malloc(size)
	copy(unsafe.Slice((*T)(p), len(values)), values)
	return p
}
