//! Transforms over Rust closures: vjp, jvp, vmap, checkpoint, custom_vjp, custom_function, and
//! closures applied directly.
mod common;

use std::sync::Arc;
use std::thread;

use braid::{checkpoint, custom_function, custom_vjp, jvp, ops, vjp, vmap, Array, Closure, Error};
use common::{assert_close, thread_count, watchdog};

fn cube(x: &[Array]) -> braid::Result<Vec<Array>> {
    Ok(vec![ops::power(&x[0], &Array::from(3.0f32))?])
}

#[test]
fn a_closure_applies_the_rust_function() {
    let closure = Closure::new(|x: &[Array]| Ok(vec![&x[0] + &x[1], &x[0] * &x[1]])).unwrap();
    let out = closure.apply(&[Array::from(2.0f32), Array::from(5.0f32)]).unwrap();
    assert_eq!((out[0].item::<f32>().unwrap(), out[1].item::<f32>().unwrap()), (7.0, 10.0));
    let copy = closure.clone();
    drop(closure);
    assert_eq!(
        copy.apply(&[Array::from(1.0f32), Array::from(1.0f32)]).unwrap()[0].item::<f32>().unwrap(),
        2.0
    );
}

#[test]
fn vjp_and_jvp_differentiate_a_closure() {
    let x = Array::from(2.0f32);
    let (out, grads) = vjp(cube, std::slice::from_ref(&x), &[Array::from(1.0f32)]).unwrap();
    assert_eq!(out[0].item::<f32>().unwrap(), 8.0);
    assert_eq!(grads[0].item::<f32>().unwrap(), 12.0);
    let (_, tangents) = jvp(cube, &[x], &[Array::from(2.0f32)]).unwrap();
    assert_eq!(tangents[0].item::<f32>().unwrap(), 24.0);
}

#[test]
fn vmap_maps_over_an_axis() {
    let row_sums = vmap(|x: &[Array]| Ok(vec![ops::sum(&x[0], false)?]), &[0], &[0]).unwrap();
    let m = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    assert_eq!(row_sums.apply(&[m]).unwrap()[0].to_vec::<f32>().unwrap(), vec![3.0, 7.0]);
}

#[test]
fn checkpoint_keeps_the_gradient() {
    let checkpointed = checkpoint(cube).unwrap();
    let gradient = braid::value_and_grad(move |x: &[Array]| checkpointed.apply(x), &[0]).unwrap();
    let (_, grads) = gradient.apply(&[Array::from(3.0f32)]).unwrap();
    assert_eq!(grads[0].item::<f32>().unwrap(), 27.0);
}

#[test]
fn custom_vjp_replaces_the_gradient() {
    // Identity forward, gradient scaled by 10.
    let f = custom_vjp(
        |x: &[Array]| Ok(vec![x[0].clone()]),
        |_primals: &[Array], cotangents: &[Array], _outputs: &[Array]| Ok(vec![&cotangents[0] * 10.0]),
    )
    .unwrap();
    let (_, grads) = vjp(
        move |x: &[Array]| f.apply(x),
        &[Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap()],
        &[Array::from_slice(&[1.0f32, 1.0], &[2]).unwrap()],
    )
    .unwrap();
    assert_close(&grads[0].to_vec::<f32>().unwrap(), &[10.0, 10.0]);
}

#[test]
fn value_and_grad_with_respect_to_chosen_arguments() {
    let gradient =
        braid::value_and_grad(|x: &[Array]| Ok(vec![ops::sum(&ops::multiply(&x[0], &x[1])?, false)?]), &[1])
            .unwrap();
    let a = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let b = Array::from_slice(&[3.0f32, 4.0], &[2]).unwrap();
    let (values, grads) = gradient.apply(&[a, b]).unwrap();
    assert_eq!(values[0].item::<f32>().unwrap(), 11.0);
    assert_eq!(grads.len(), 1);
    assert_close(&grads[0].to_vec::<f32>().unwrap(), &[1.0, 2.0]);
}

fn row(values: &[f32]) -> Array {
    Array::from_slice(values, &[values.len() as i32]).unwrap()
}

#[test]
fn a_custom_vjp_rule_replaces_the_gradient() {
    // d(x^3) would be 3x^2; the rule returns outputs * cotangents instead.
    let f = custom_function(
        cube,
        Some(Box::new(|primals, cotangents, outputs| {
            assert_eq!(primals.len(), 1);
            Ok(vec![ops::multiply(&outputs[0], &cotangents[0])?])
        })),
        None,
        None,
    )
    .unwrap();
    let (out, grads) = vjp(move |x: &[Array]| f.apply(x), &[row(&[1.0, 2.0])], &[row(&[2.0, 3.0])]).unwrap();
    assert_close(&out[0].to_vec::<f32>().unwrap(), &[1.0, 8.0]);
    assert_close(&grads[0].to_vec::<f32>().unwrap(), &[2.0, 24.0]);
}

#[test]
fn a_custom_jvp_rule_replaces_the_tangent() {
    // d(x^3) at 2 along 2 would be 24; the rule scales the tangent by 10.
    let f = custom_function(
        cube,
        None,
        Some(Box::new(|_primals, tangents, argnums| {
            if argnums != [0] {
                return Err(Error { message: format!("unexpected argnums {:?}", argnums) });
            }
            Ok(vec![&tangents[0] * 10.0])
        })),
        None,
    )
    .unwrap();
    let (out, tangents) =
        jvp(move |x: &[Array]| f.apply(x), &[Array::from(2.0f32)], &[Array::from(2.0f32)]).unwrap();
    assert_eq!(out[0].item::<f32>().unwrap(), 8.0);
    assert_eq!(tangents[0].item::<f32>().unwrap(), 20.0);
}

#[test]
fn a_custom_vmap_rule_replaces_the_vectorization() {
    // The function doubles; the rule multiplies by 100 and keeps each input's mapped axis.
    let f = custom_function(
        |x: &[Array]| Ok(vec![&x[0] * 2.0]),
        None,
        None,
        Some(Box::new(|inputs, axes| Ok((vec![&inputs[0] * 100.0], vec![axes[0]])))),
    )
    .unwrap();
    let mapped = vmap(move |x: &[Array]| f.apply(x), &[1], &[0]).unwrap();
    let m = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let out = mapped.apply(&[m]).unwrap();
    assert_eq!(out[0].shape(), vec![3, 2]);
    assert_close(&out[0].to_vec::<f32>().unwrap(), &[100.0, 400.0, 200.0, 500.0, 300.0, 600.0]);
}

#[test]
fn a_custom_function_without_rules_behaves_like_the_function() {
    let f = Arc::new(custom_function(cube, None, None, None).unwrap());
    let x = row(&[1.0, 2.0]);
    assert_close(&f.apply(std::slice::from_ref(&x)).unwrap()[0].to_vec::<f32>().unwrap(), &[1.0, 8.0]);
    let g = Arc::clone(&f);
    let (_, grads) =
        vjp(move |x: &[Array]| g.apply(x), std::slice::from_ref(&x), &[row(&[1.0, 1.0])]).unwrap();
    assert_close(&grads[0].to_vec::<f32>().unwrap(), &[3.0, 12.0]);
    let g = Arc::clone(&f);
    let (_, tangents) =
        jvp(move |x: &[Array]| g.apply(x), std::slice::from_ref(&x), &[row(&[1.0, 2.0])]).unwrap();
    assert_close(&tangents[0].to_vec::<f32>().unwrap(), &[3.0, 24.0]);
    let mapped = vmap(move |x: &[Array]| f.apply(x), &[1], &[0]).unwrap();
    let m = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    assert_close(&mapped.apply(&[m]).unwrap()[0].to_vec::<f32>().unwrap(), &[1.0, 27.0, 8.0, 64.0]);
}

#[test]
fn an_err_from_a_custom_rule_comes_back_from_the_transform() {
    let f = custom_function(
        cube,
        Some(Box::new(|_, _, _| Err(Error { message: "my vjp rule failed".to_string() }))),
        None,
        None,
    )
    .unwrap();
    let f = Arc::new(f);
    let g = Arc::clone(&f);
    let err = vjp(move |x: &[Array]| g.apply(x), &[Array::from(2.0f32)], &[Array::from(1.0f32)]).unwrap_err();
    assert_eq!(err.message, "my vjp rule failed");
    // The closure is still usable.
    assert_eq!(f.apply(&[Array::from(2.0f32)]).unwrap()[0].item::<f32>().unwrap(), 8.0);
}

#[test]
fn a_panicking_custom_rule_is_an_err_not_an_abort() {
    let f = Arc::new(
        custom_function(
            cube,
            None,
            Some(Box::new(|_, _, _| panic!("jvp rule exploded"))),
            Some(Box::new(|_, _| panic!("vmap rule exploded"))),
        )
        .unwrap(),
    );
    let g = Arc::clone(&f);
    let err = jvp(move |x: &[Array]| g.apply(x), &[Array::from(2.0f32)], &[Array::from(1.0f32)]).unwrap_err();
    assert!(err.message.contains("panicked") && err.message.contains("jvp rule exploded"), "{}", err);
    let mapped = vmap(move |x: &[Array]| f.apply(x), &[0], &[0]).unwrap();
    let err = mapped.apply(&[row(&[1.0, 2.0])]).unwrap_err();
    assert!(err.message.contains("panicked") && err.message.contains("vmap rule exploded"), "{}", err);
}

#[test]
fn custom_rules_are_dropped_with_the_last_copy_of_the_closure() {
    let witness = Arc::new(());
    let (a, b, c) = (Arc::clone(&witness), Arc::clone(&witness), Arc::clone(&witness));
    let f = custom_function(
        cube,
        Some(Box::new(move |_, cotangents, _| {
            let _ = &a;
            Ok(vec![cotangents[0].clone()])
        })),
        Some(Box::new(move |_, tangents, _| {
            let _ = &b;
            Ok(vec![tangents[0].clone()])
        })),
        Some(Box::new(move |inputs, axes| {
            let _ = &c;
            Ok((vec![inputs[0].clone()], axes.to_vec()))
        })),
    )
    .unwrap();
    assert_eq!(Arc::strong_count(&witness), 4);
    let (_, grads) =
        vjp(move |x: &[Array]| f.apply(x), &[Array::from(3.0f32)], &[Array::from(5.0f32)]).unwrap();
    assert_eq!(grads[0].item::<f32>().unwrap(), 5.0);
    drop(grads);
    assert_eq!(Arc::strong_count(&witness), 1);
}

#[test]
fn one_custom_function_is_differentiated_by_many_threads_at_once() {
    let _guard = watchdog("custom_function threads", 120);
    let f = Arc::new(
        custom_function(
            cube,
            Some(Box::new(|primals, cotangents, _| Ok(vec![ops::add(&primals[0], &cotangents[0])?]))),
            None,
            None,
        )
        .unwrap(),
    );
    let workers: Vec<_> = (0..thread_count())
        .map(|t| {
            let f = Arc::clone(&f);
            thread::spawn(move || {
                for i in 0..20 {
                    let (x, cotangent) = (t as f32, i as f32);
                    let g = Arc::clone(&f);
                    let (out, grads) =
                        vjp(move |x: &[Array]| g.apply(x), &[Array::from(x)], &[Array::from(cotangent)])
                            .unwrap();
                    assert_eq!(out[0].item::<f32>().unwrap(), x * x * x);
                    assert_eq!(grads[0].item::<f32>().unwrap(), x + cotangent);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}
