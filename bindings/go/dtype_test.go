package distribute

import (
	"reflect"
	"testing"
)

func roundTrip[T Element](t *testing.T, w *Comm, values []T) {
	t.Helper()
	out := make([]T, len(values))
	if err := AllReduce(w, values, out, OpProd); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, values) { // one rank: the product is the value itself
		t.Errorf("%T: %v != %v", values, out, values)
	}
}

// The expected numbers are the header's DIST_DTYPE_* values.
func TestEveryGoTypeMapsToItsDType(t *testing.T) {
	cases := []struct{ got, want DType }{
		{DTypeOf[int8](), DType(0)}, {DTypeOf[uint8](), DType(1)},
		{DTypeOf[int32](), DType(2)}, {DTypeOf[uint32](), DType(3)},
		{DTypeOf[int64](), DType(4)}, {DTypeOf[uint64](), DType(5)},
		{DTypeOf[F16](), DType(6)}, {DTypeOf[BF16](), DType(7)},
		{DTypeOf[float32](), DType(8)}, {DTypeOf[float64](), DType(9)},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %d != %d", i, c.got, c.want)
		}
	}
}

func TestEveryDTypeGoesThroughTheLibrary(t *testing.T) {
	w := world(t)
	roundTrip(t, w, []int8{-3, 4})
	roundTrip(t, w, []uint8{200, 7})
	roundTrip(t, w, []int32{-70000, 9})
	roundTrip(t, w, []uint32{4000000000, 1})
	roundTrip(t, w, []int64{-(1 << 40), 3})
	roundTrip(t, w, []uint64{1<<64 - 1, 2})
	roundTrip(t, w, []F16{0x3C00, 0x4000})
	roundTrip(t, w, []BF16{0x3FC0, 0xC000})
	roundTrip(t, w, []float32{0.25, -8})
	roundTrip(t, w, []float64{1e300, -0.5})
}
