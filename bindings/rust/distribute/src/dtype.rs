//! Which Rust numeric type is which DIST_DTYPE.
use crate::sys;

/// Element types libdistribute can reduce. Implemented for the primitive types
/// with a C counterpart, and for `F16` / `BF16` (the bits of a half float).
///
/// # Safety
/// `DTYPE` must describe the type's in-memory representation exactly.
pub unsafe trait Element: Copy + Send + Sync + 'static {
    const DTYPE: sys::dist_dtype_t;
}

/// IEEE binary16, kept as its bits (Rust has no stable f16).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct F16(pub u16);

/// bfloat16, kept as its bits: the upper half of an f32.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BF16(pub u16);

impl BF16 {
    /// Truncating conversion (exact for values with 8 significant bits).
    pub fn from_f32(value: f32) -> BF16 {
        BF16((value.to_bits() >> 16) as u16)
    }
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        // SAFETY: the C type of $d has the layout of $t.
        unsafe impl Element for $t { const DTYPE: sys::dist_dtype_t = sys::$d; }
    )*};
}
element!(i8 => DIST_DTYPE_I8, u8 => DIST_DTYPE_U8, i32 => DIST_DTYPE_I32, u32 => DIST_DTYPE_U32,
         i64 => DIST_DTYPE_I64, u64 => DIST_DTYPE_U64, F16 => DIST_DTYPE_F16, BF16 => DIST_DTYPE_BF16,
         f32 => DIST_DTYPE_F32, f64 => DIST_DTYPE_F64);

/// Reductions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Sum,
    Prod,
    Min,
    Max,
    /// Sum divided by the communicator size; integers truncate.
    Mean,
}

impl Op {
    pub fn raw(self) -> sys::dist_op_t {
        match self {
            Op::Sum => sys::DIST_OP_SUM,
            Op::Prod => sys::DIST_OP_PROD,
            Op::Min => sys::DIST_OP_MIN,
            Op::Max => sys::DIST_OP_MAX,
            Op::Mean => sys::DIST_OP_MEAN,
        }
    }
}

/// A dist_buffer_t over a slice; the caller keeps the slice borrowed while C uses it.
pub(crate) fn describe<T: Element>(data: *const T, count: usize) -> sys::dist_buffer_t {
    sys::dist_buffer_t {
        data: data as *mut std::ffi::c_void,
        count: count as u64,
        dtype: T::DTYPE,
        memory_kind: sys::DIST_MEMORY_HOST,
        stream: std::ptr::null_mut(),
    }
}
