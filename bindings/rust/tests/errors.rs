//! Errors come back as Results, with braid's message, on the thread that made the call; a
//! failing closure's own error or panic comes back from the transform that applied it.
mod common;

use std::thread;

use braid::{ops, value_and_grad, Array, Closure, Dtype, Error};
use common::{thread_count, watchdog};

#[test]
fn an_invalid_reshape_is_an_err_with_the_op_name() {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6]).unwrap();
    let err = ops::reshape(&x, &[4]).unwrap_err();
    assert!(err.message.contains("[reshape]"), "{}", err);
}

#[test]
fn shapes_that_do_not_broadcast_are_an_err() {
    let a = ops::ones(&[2, 3], Dtype::Float32).unwrap();
    let b = ops::ones(&[4, 5], Dtype::Float32).unwrap();
    assert!(ops::add(&a, &b).is_err());
    let err = ops::matmul(&a, &b).unwrap_err();
    assert!(err.message.contains("[matmul]"), "{}", err);
}

#[test]
fn an_operator_on_invalid_shapes_panics_with_the_message() {
    let a = ops::ones(&[2], Dtype::Float32).unwrap();
    let b = ops::ones(&[3], Dtype::Float32).unwrap();
    let panic = std::panic::catch_unwind(|| &a + &b).unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("broadcast") || message.contains("[add]"), "{}", message);
}

#[test]
fn data_of_the_wrong_size_or_type_is_an_err() {
    assert!(Array::from_slice(&[1.0f32, 2.0, 3.0], &[2, 2]).is_err());
    let x = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    assert!(x.to_vec::<f32>().is_err());
    assert_eq!(x.to_vec::<i32>().unwrap(), vec![1, 2]);
    assert!(x.item::<f32>().is_err(), "item of a 2-element array");
}

#[test]
fn a_missing_file_is_an_err() {
    assert!(braid::io::load("/nonexistent/braid-rust-test.npy").is_err());
    assert!(braid::io::load_safetensors("/nonexistent/braid-rust-test.safetensors").is_err());
}

#[test]
fn a_string_with_a_nul_is_an_err() {
    let w = ops::ones(&[8, 8], Dtype::Float32).unwrap();
    assert!(ops::quantize(&w, Some(4), Some(4), "affi\0ne", None).is_err());
}

#[test]
fn an_err_from_a_closure_comes_back_from_the_transform() {
    let gradient =
        value_and_grad(|_: &[Array]| Err(Error { message: "my loss failed".to_string() }), &[0]).unwrap();
    let err = gradient.apply(&[Array::from(1.0f32)]).unwrap_err();
    assert_eq!(err.message, "my loss failed");
    // The next call on this thread starts clean.
    let ok = value_and_grad(|x: &[Array]| Ok(vec![ops::square(&x[0])?]), &[0]).unwrap();
    let (_, grads) = ok.apply(&[Array::from(3.0f32)]).unwrap();
    assert_eq!(grads[0].item::<f32>().unwrap(), 6.0);
}

#[test]
fn a_panic_in_a_closure_is_an_err_not_an_abort() {
    let closure = Closure::new(|_: &[Array]| -> braid::Result<Vec<Array>> { panic!("boom") }).unwrap();
    let err = closure.apply(&[Array::from(1.0f32)]).unwrap_err();
    assert!(err.message.contains("boom"), "{}", err);
}

#[test]
fn an_op_error_inside_a_closure_keeps_its_message() {
    let closure = Closure::new(|x: &[Array]| Ok(vec![ops::reshape(&x[0], &[7])?])).unwrap();
    let err = closure.apply(&[ops::ones(&[2, 3], Dtype::Float32).unwrap()]).unwrap_err();
    assert!(err.message.contains("[reshape]"), "{}", err);
}

#[test]
fn a_gradient_of_a_non_scalar_is_an_err() {
    let gradient = value_and_grad(|x: &[Array]| Ok(vec![ops::multiply(&x[0], &x[0])?]), &[0]).unwrap();
    assert!(gradient.apply(&[ops::ones(&[3], Dtype::Float32).unwrap()]).is_err());
}

#[test]
fn threads_failing_at_once_each_get_their_own_message() {
    let _dog = watchdog("threads_failing_at_once_each_get_their_own_message", 60);
    let workers: Vec<_> = (0..thread_count())
        .map(|i| {
            thread::spawn(move || {
                for round in 0..50 {
                    let size = 2 + i as i32;
                    let x = ops::ones(&[size], Dtype::Float32).unwrap();
                    let err = ops::reshape(&x, &[size + 1]).unwrap_err();
                    assert!(
                        err.message.contains(&format!("size {}", size)),
                        "thread {} round {}: {}",
                        i,
                        round,
                        err
                    );
                    // A success in between leaves nothing stale behind.
                    assert_eq!(ops::sum(&x, false).unwrap().item::<f32>().unwrap(), size as f32);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
}

#[test]
fn an_unavailable_device_is_an_err_where_there_is_no_gpu() {
    let gpu = braid::Device::gpu();
    if !gpu.is_available() {
        assert!(braid::Stream::new(&gpu).is_err());
    }
}
