//! 64 tests that share one stream. libtest runs them on its own threads, in parallel by
//! default; each submits its work to the same process-wide stream, with no lock.
mod common;

use std::sync::atomic::{AtomicPtr, Ordering};

use braid::{ops, Array, Device, Dtype, Stream};
use common::watchdog;

/// The one stream of this file, made by whichever test comes first (the others drop theirs).
fn shared_stream() -> &'static Stream {
    static SHARED: AtomicPtr<Stream> = AtomicPtr::new(std::ptr::null_mut());
    // Acquire pairs with the winner's AcqRel exchange, so the stream it made is visible here.
    let current = SHARED.load(Ordering::Acquire);
    if !current.is_null() {
        return unsafe { &*current };
    }
    let made = Box::into_raw(Box::new(Stream::new(&Device::cpu()).unwrap()));
    match SHARED.compare_exchange(std::ptr::null_mut(), made, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => unsafe { &*made },
        Err(winner) => {
            drop(unsafe { Box::from_raw(made) });
            unsafe { &*winner }
        }
    }
}

/// Test `n`'s graph on the shared stream: a chain of ops whose result depends on n.
fn run_on_shared_stream(n: i32) {
    let _dog = watchdog("shared stream test", 60);
    let stream = shared_stream();
    if n % 2 == 1 {
        // Half of the tests also make it their thread's default, so the plain functions use it.
        stream.set_as_default().unwrap();
        assert_eq!(Stream::default_for(&Device::cpu()).unwrap(), *stream);
    }
    let x = ops::arange_device(0.0, 64.0, 1.0, Dtype::Float32, stream).unwrap();
    let x = ops::reshape_device(&x, &[8, 8], stream).unwrap();
    let scaled = ops::multiply_device(&x, &Array::from(n as f32), stream).unwrap();
    let product = ops::matmul_device(&scaled, &ops::transpose_device(&x, stream).unwrap(), stream).unwrap();
    let mut trace = ops::trace_device(&product, 0, 0, 1, Dtype::Float32, stream).unwrap();
    for _ in 0..n % 8 {
        trace = ops::add_device(&trace, &Array::from(1.0f32), stream).unwrap();
    }
    let sum = ops::sum_device(&product, false, stream).unwrap();
    braid::eval([&trace, &sum]).unwrap();
    // trace(x x^T) is the sum of the squares of 0..63 (exact in float32 for every n here);
    // sum(x x^T) is the sum of the squared column sums 224 + 8k of x.
    let squares: f32 = (0..64).map(|v| (v * v) as f32).sum();
    assert_eq!(trace.item::<f32>().unwrap(), n as f32 * squares + (n % 8) as f32);
    let expected: f64 = n as f64 * (0..8).map(|k| ((224 + 8 * k) as f64).powi(2)).sum::<f64>();
    let actual = sum.item::<f32>().unwrap() as f64;
    assert!((actual - expected).abs() <= 1e-6 * expected.max(1.0), "{} vs {}", actual, expected);
}

macro_rules! shared_stream_tests {
    ($($name:ident = $n:expr,)*) => {
        $(
            #[test]
            fn $name() {
                run_on_shared_stream($n);
            }
        )*
    };
}

shared_stream_tests! {
    shared_stream_00 = 0, shared_stream_01 = 1, shared_stream_02 = 2, shared_stream_03 = 3,
    shared_stream_04 = 4, shared_stream_05 = 5, shared_stream_06 = 6, shared_stream_07 = 7,
    shared_stream_08 = 8, shared_stream_09 = 9, shared_stream_10 = 10, shared_stream_11 = 11,
    shared_stream_12 = 12, shared_stream_13 = 13, shared_stream_14 = 14, shared_stream_15 = 15,
    shared_stream_16 = 16, shared_stream_17 = 17, shared_stream_18 = 18, shared_stream_19 = 19,
    shared_stream_20 = 20, shared_stream_21 = 21, shared_stream_22 = 22, shared_stream_23 = 23,
    shared_stream_24 = 24, shared_stream_25 = 25, shared_stream_26 = 26, shared_stream_27 = 27,
    shared_stream_28 = 28, shared_stream_29 = 29, shared_stream_30 = 30, shared_stream_31 = 31,
    shared_stream_32 = 32, shared_stream_33 = 33, shared_stream_34 = 34, shared_stream_35 = 35,
    shared_stream_36 = 36, shared_stream_37 = 37, shared_stream_38 = 38, shared_stream_39 = 39,
    shared_stream_40 = 40, shared_stream_41 = 41, shared_stream_42 = 42, shared_stream_43 = 43,
    shared_stream_44 = 44, shared_stream_45 = 45, shared_stream_46 = 46, shared_stream_47 = 47,
    shared_stream_48 = 48, shared_stream_49 = 49, shared_stream_50 = 50, shared_stream_51 = 51,
    shared_stream_52 = 52, shared_stream_53 = 53, shared_stream_54 = 54, shared_stream_55 = 55,
    shared_stream_56 = 56, shared_stream_57 = 57, shared_stream_58 = 58, shared_stream_59 = 59,
    shared_stream_60 = 60, shared_stream_61 = 61, shared_stream_62 = 62, shared_stream_63 = 63,
}
