//! The cross-thread scenarios that MLX-based Rust projects meet, each run under libtest's
//! default parallelism with no lock in the tests: braid's streams are process-wide queues, so
//! none of them needs one.
mod common;

use std::sync::Arc;
use std::thread;

use braid::{ops, value_and_grad, Array, Device, Stream};
use common::{assert_close, thread_count, watchdog};

fn lazy_sum_graph() -> Array {
    let mut x = ops::ones(&[256], braid::Dtype::Float32).unwrap();
    for _ in 0..50 {
        x = &x + 2.0; // 1 + 100 in the end
    }
    ops::sum(&x, false).unwrap()
}

#[test]
fn graph_built_on_one_thread_evaluates_on_another() {
    let _dog = watchdog("graph_built_on_one_thread_evaluates_on_another", 60);
    let graph = lazy_sum_graph();
    assert!(!graph.is_available(), "building must not compute");
    let value = thread::spawn(move || graph.item::<f32>().unwrap()).join().unwrap();
    assert_eq!(value, 256.0 * 101.0);
}

#[test]
fn graph_built_on_an_exited_thread_evaluates_on_many() {
    let _dog = watchdog("graph_built_on_an_exited_thread_evaluates_on_many", 60);
    let graph = thread::spawn(lazy_sum_graph).join().unwrap(); // its builder has exited
    let graph = Arc::new(graph);
    let readers: Vec<_> = (0..thread_count())
        .map(|_| {
            let graph = Arc::clone(&graph);
            thread::spawn(move || graph.item::<f32>().unwrap())
        })
        .collect();
    for reader in readers {
        assert_eq!(reader.join().unwrap(), 256.0 * 101.0);
    }
}

#[test]
fn evaluation_runs_on_spawned_threads() {
    let _dog = watchdog("evaluation_runs_on_spawned_threads", 60);
    let workers: Vec<_> = (0..thread_count())
        .map(|i| {
            thread::spawn(move || {
                let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
                let y = ops::matmul(&x, &x).unwrap() * (i as f32);
                braid::eval([&y]).unwrap();
                y.to_vec::<f32>().unwrap()
            })
        })
        .collect();
    for (i, worker) in workers.into_iter().enumerate() {
        let k = i as f32;
        assert_close(&worker.join().unwrap(), &[7.0 * k, 10.0 * k, 15.0 * k, 22.0 * k]);
    }
}

#[test]
fn evaluated_array_is_used_from_other_threads() {
    let _dog = watchdog("evaluated_array_is_used_from_other_threads", 60);
    let base = ops::arange(0.0, 1000.0, 1.0, braid::Dtype::Float32).unwrap();
    base.eval().unwrap();
    assert!(base.is_available());
    let base = Arc::new(base);
    let users: Vec<_> = (0..thread_count())
        .map(|i| {
            let base = Arc::clone(&base);
            thread::spawn(move || {
                // Read it, and build new graphs on it.
                let values = base.to_vec::<f32>().unwrap();
                assert_eq!(values[999], 999.0);
                let shifted = ops::sum(&(&*base + i as f32), false).unwrap();
                shifted.item::<f32>().unwrap()
            })
        })
        .collect();
    for (i, user) in users.into_iter().enumerate() {
        assert_eq!(user.join().unwrap(), 499500.0 + 1000.0 * i as f32);
    }
}

#[test]
fn arrays_cross_threads_through_channels() {
    let _dog = watchdog("arrays_cross_threads_through_channels", 60);
    let (to_worker, from_main) = std::sync::mpsc::channel::<Array>();
    let (to_main, from_worker) = std::sync::mpsc::channel::<Array>();
    let worker = thread::spawn(move || {
        for x in from_main {
            to_main.send(&x * &x).unwrap(); // lazy: evaluated by the main thread
        }
    });
    for i in 0..16 {
        to_worker.send(Array::from(i as f32)).unwrap();
        let squared = from_worker.recv().unwrap();
        assert_eq!(squared.item::<f32>().unwrap(), (i * i) as f32);
    }
    drop(to_worker);
    worker.join().unwrap();
}

/// f(x, y) = sum(x * x * y): grad x = 2 x y, grad y = x * x.
fn product_loss(inputs: &[Array]) -> braid::Result<Vec<Array>> {
    let square = ops::multiply(&inputs[0], &inputs[0])?;
    Ok(vec![ops::sum(&ops::multiply(&square, &inputs[1])?, false)?])
}

#[test]
fn value_and_grad_is_applied_on_many_threads_at_once() {
    let _dog = watchdog("value_and_grad_is_applied_on_many_threads_at_once", 60);
    let gradient = Arc::new(value_and_grad(product_loss, &[0, 1]).unwrap());
    let appliers: Vec<_> = (0..thread_count())
        .map(|i| {
            let gradient = Arc::clone(&gradient);
            thread::spawn(move || {
                let k = i as f32 + 1.0;
                let x = Array::from_slice(&[1.0f32 * k, 2.0 * k], &[2]).unwrap();
                let y = Array::from_slice(&[3.0f32, 4.0], &[2]).unwrap();
                for _ in 0..20 {
                    let (values, grads) = gradient.apply(&[x.clone(), y.clone()]).unwrap();
                    assert_eq!(values[0].item::<f32>().unwrap(), k * k * (3.0 + 16.0));
                    assert_close(&grads[0].to_vec::<f32>().unwrap(), &[6.0 * k, 16.0 * k]);
                    assert_close(&grads[1].to_vec::<f32>().unwrap(), &[k * k, 4.0 * k * k]);
                }
            })
        })
        .collect();
    for applier in appliers {
        applier.join().unwrap();
    }
}

#[test]
fn value_and_grad_made_on_one_thread_differentiates_a_graph_built_on_another() {
    let _dog = watchdog("value_and_grad_made_on_one_thread_differentiates_a_graph_built_on_another", 60);
    // The weights come from another thread's lazy graph; the function captures them.
    let weights =
        thread::spawn(|| Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap() * 2.0).join().unwrap();
    let gradient = value_and_grad(
        move |inputs: &[Array]| Ok(vec![ops::sum(&ops::multiply(&inputs[0], &weights)?, false)?]),
        &[0],
    )
    .unwrap();
    let x = Array::from_slice(&[1.0f32, 1.0, 1.0], &[3]).unwrap();
    let (values, grads) = thread::spawn(move || gradient.apply(&[x]).unwrap()).join().unwrap();
    assert_eq!(values[0].item::<f32>().unwrap(), 12.0);
    assert_close(&grads[0].to_vec::<f32>().unwrap(), &[2.0, 4.0, 6.0]);
}

#[test]
fn a_stream_made_on_one_thread_is_used_on_others() {
    let _dog = watchdog("a_stream_made_on_one_thread_is_used_on_others", 60);
    let stream = thread::spawn(|| Stream::new(&Device::cpu()).unwrap()).join().unwrap();
    let stream = Arc::new(stream);
    let users: Vec<_> = (0..thread_count())
        .map(|i| {
            let stream = Arc::clone(&stream);
            thread::spawn(move || {
                let x =
                    ops::full_device(&[4], &Array::from(i as f32), braid::Dtype::Float32, &stream).unwrap();
                let total = ops::sum_device(&x, false, &stream).unwrap();
                total.item::<f32>().unwrap()
            })
        })
        .collect();
    for (i, user) in users.into_iter().enumerate() {
        assert_eq!(user.join().unwrap(), 4.0 * i as f32);
    }
    stream.synchronize().unwrap();
}
