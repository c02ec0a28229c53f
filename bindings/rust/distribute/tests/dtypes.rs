mod common;
use distribute::{sys, Element, Op, BF16, F16};

fn round_trip<T: Element + PartialEq + std::fmt::Debug>(world: &distribute::Comm<'_>, values: Vec<T>) {
    let mut out = values.clone();
    world.all_reduce(&values, &mut out, Op::Prod).unwrap();
    assert_eq!(out, values); // one rank: the product is the value itself
}

#[test]
fn every_rust_type_maps_to_its_dtype() {
    assert_eq!(i8::DTYPE, sys::DIST_DTYPE_I8);
    assert_eq!(u8::DTYPE, sys::DIST_DTYPE_U8);
    assert_eq!(i32::DTYPE, sys::DIST_DTYPE_I32);
    assert_eq!(u32::DTYPE, sys::DIST_DTYPE_U32);
    assert_eq!(i64::DTYPE, sys::DIST_DTYPE_I64);
    assert_eq!(u64::DTYPE, sys::DIST_DTYPE_U64);
    assert_eq!(F16::DTYPE, sys::DIST_DTYPE_F16);
    assert_eq!(BF16::DTYPE, sys::DIST_DTYPE_BF16);
    assert_eq!(f32::DTYPE, sys::DIST_DTYPE_F32);
    assert_eq!(f64::DTYPE, sys::DIST_DTYPE_F64);
    assert_eq!(std::mem::size_of::<F16>(), 2);
    assert_eq!(std::mem::size_of::<BF16>(), 2);
}

#[test]
fn every_dtype_goes_through_the_library() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    round_trip(&world, vec![-3i8, 4]);
    round_trip(&world, vec![200u8, 7]);
    round_trip(&world, vec![-70000i32, 9]);
    round_trip(&world, vec![4_000_000_000u32, 1]);
    round_trip(&world, vec![-(1i64 << 40), 3]);
    round_trip(&world, vec![u64::MAX, 2]);
    round_trip(&world, vec![F16(0x3C00), F16(0x4000)]); // 1.0, 2.0
    round_trip(&world, vec![BF16::from_f32(1.5), BF16::from_f32(-2.0)]);
    round_trip(&world, vec![0.25f32, -8.0]);
    round_trip(&world, vec![1e300f64, -0.5]);
    assert_eq!(BF16::from_f32(1.5).to_f32(), 1.5);
}
