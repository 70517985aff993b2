//! Transforms over Rust closures: vjp, jvp, vmap, checkpoint, custom_vjp, and closures applied
//! directly.
mod common;

use braid::{checkpoint, custom_vjp, jvp, ops, vjp, vmap, Array, Closure};
use common::assert_close;

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
