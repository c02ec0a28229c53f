package distribute

// #include "dist.h"
import "C"

import "unsafe"

// DType is a libdistribute element type.
type DType int32

const (
	DTypeI8   DType = C.DIST_DTYPE_I8
	DTypeU8   DType = C.DIST_DTYPE_U8
	DTypeI32  DType = C.DIST_DTYPE_I32
	DTypeU32  DType = C.DIST_DTYPE_U32
	DTypeI64  DType = C.DIST_DTYPE_I64
	DTypeU64  DType = C.DIST_DTYPE_U64
	DTypeF16  DType = C.DIST_DTYPE_F16
	DTypeBF16 DType = C.DIST_DTYPE_BF16
	DTypeF32  DType = C.DIST_DTYPE_F32
	DTypeF64  DType = C.DIST_DTYPE_F64
)

// F16 is an IEEE binary16 value kept as its bits (Go has no float16).
type F16 uint16

// BF16 is a bfloat16 value kept as its bits: the upper half of a float32.
type BF16 uint16

// Element is every Go type a buffer may hold.
type Element interface {
	int8 | uint8 | int32 | uint32 | int64 | uint64 | F16 | BF16 | float32 | float64
}

// DTypeOf is the dtype of T.
func DTypeOf[T Element]() DType {
	var zero T
	switch any(zero).(type) {
	case int8:
		return DTypeI8
	case uint8:
		return DTypeU8
	case int32:
		return DTypeI32
	case uint32:
		return DTypeU32
	case int64:
		return DTypeI64
	case uint64:
		return DTypeU64
	case F16:
		return DTypeF16
	case BF16:
		return DTypeBF16
	case float32:
		return DTypeF32
	default: // float64, the only type left in Element
		return DTypeF64
	}
}

// Op is a reduction.
type Op int32

const (
	OpSum  Op = C.DIST_OP_SUM
	OpProd Op = C.DIST_OP_PROD
	OpMin  Op = C.DIST_OP_MIN
	OpMax  Op = C.DIST_OP_MAX
	OpMean Op = C.DIST_OP_MEAN // sum / communicator size; integers truncate
)

// dataOf is the address of a slice's first element (nil for an empty slice).
func dataOf[T Element](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}
