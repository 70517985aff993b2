//! Evaluation and function transforms over Rust closures. A closure handed to braid becomes an
//! mlx_closure whose payload is the boxed Rust function; braid may apply it on several threads
//! at once and drops it (on any thread) once the last copy is gone, hence `Fn + Send + Sync +
//! 'static`. A closure's `Err` or panic never unwinds through the C library: it fails the call
//! that applied it, which returns that message as its own `Err`.
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::array::{vector_to_vec, VectorArray};
use crate::error::{self, check, Result};
use crate::io::arrays_of;
use crate::{sys, Array};

/// Computes the arrays and everything they need. Err with the first failure found.
pub fn eval<'a, I: IntoIterator<Item = &'a Array>>(arrays: I) -> Result<()> {
    let handles: Vec<Array> = arrays.into_iter().cloned().collect();
    let vector = VectorArray::from_arrays(&handles)?;
    check(unsafe { sys::mlx_eval(vector.raw) })
}

/// Submits the arrays for evaluation and returns at once; `eval`, `item` or `to_vec` on them
/// later waits for the work, on any thread, and reports its errors.
pub fn async_eval<'a, I: IntoIterator<Item = &'a Array>>(arrays: I) -> Result<()> {
    let handles: Vec<Array> = arrays.into_iter().cloned().collect();
    let vector = VectorArray::from_arrays(&handles)?;
    check(unsafe { sys::mlx_async_eval(vector.raw) })
}

type ArrayFn = dyn Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync;
type KwargsFn = dyn Fn(&[Array], &HashMap<String, Array>) -> Result<Vec<Array>> + Send + Sync;
/// A custom vector-Jacobian product: (primals, cotangents, outputs) -> one cotangent per primal.
pub type CustomVjpFn = dyn Fn(&[Array], &[Array], &[Array]) -> Result<Vec<Array>> + Send + Sync;
/// A custom Jacobian-vector product: (primals, tangents of the primals at `argnums`, argnums)
/// -> one tangent per output.
pub type CustomJvpFn = dyn Fn(&[Array], &[Array], &[i32]) -> Result<Vec<Array>> + Send + Sync;
/// A custom vectorization: (inputs, the mapped axis of each input, -1 for none) -> (outputs,
/// the mapped axis of each output).
pub type CustomVmapFn = dyn Fn(&[Array], &[i32]) -> Result<(Vec<Array>, Vec<i32>)> + Send + Sync;

/// The payload of a C closure: the boxed function behind a thin pointer, freed by
/// `drop_payload::<T>`, which the library calls once the last copy of the closure is gone.
fn into_payload<T: ?Sized>(function: Box<T>) -> *mut c_void {
    Box::into_raw(Box::new(function)) as *mut c_void
}

unsafe extern "C" fn drop_payload<T: ?Sized>(payload: *mut c_void) {
    let _ = catch_unwind(|| drop(Box::from_raw(payload as *mut Box<T>)));
}

/// The C closure handles that Rust makes only to pass to one call, which copies them.
pub(crate) trait ClosureHandle: Copy {
    const EMPTY: Self;
    fn is_empty(self) -> bool;
    unsafe fn free(self);
}

macro_rules! closure_handle {
    ($($handle:ident => $free:ident),*) => {$(
        impl ClosureHandle for sys::$handle {
            const EMPTY: Self = sys::$handle { ctx: std::ptr::null_mut() };
            fn is_empty(self) -> bool {
                self.ctx.is_null()
            }
            unsafe fn free(self) {
                sys::$free(self);
            }
        }
    )*};
}

closure_handle!(
    mlx_closure_custom => mlx_closure_custom_free,
    mlx_closure_custom_jvp => mlx_closure_custom_jvp_free,
    mlx_closure_custom_vmap => mlx_closure_custom_vmap_free,
    mlx_closure_kwargs => mlx_closure_kwargs_free
);

/// A C closure handle freed on drop; the empty handle when there is no function.
pub(crate) struct OwnedClosure<H: ClosureHandle>(pub(crate) H);

impl<H: ClosureHandle> OwnedClosure<H> {
    /// `make(payload, destructor)` (a `_new_func_payload` constructor) over `function`; the
    /// empty handle for None. Err when the constructor fails, which has then dropped the payload.
    fn new<T: ?Sized>(
        function: Option<Box<T>>,
        what: &str,
        make: impl FnOnce(*mut c_void, Option<unsafe extern "C" fn(*mut c_void)>) -> H,
    ) -> Result<OwnedClosure<H>> {
        let function = match function {
            None => return Ok(OwnedClosure(H::EMPTY)),
            Some(function) => function,
        };
        error::init();
        let raw = make(into_payload(function), Some(drop_payload::<T>));
        if raw.is_empty() {
            return Err(error::take_error(&format!("braid: making {} failed", what)));
        }
        Ok(OwnedClosure(raw))
    }
}

impl<H: ClosureHandle> Drop for OwnedClosure<H> {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            unsafe { self.0.free() };
        }
    }
}

/// Runs a callback body for the C library: 0 on success; otherwise the message is kept for
/// the applying call and a non-zero status makes it fail.
fn run_callback<F: FnOnce() -> Result<()>>(body: F) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            error::set_callback_error(e.message);
            1
        }
        Err(panic) => {
            let text = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string panic".to_string());
            error::set_callback_error(format!("[closure] The Rust function panicked: {}", text));
            2
        }
    }
}

fn set_outputs(res: *mut sys::mlx_vector_array, outputs: &[Array]) -> Result<()> {
    check(unsafe {
        sys::mlx_vector_array_set_data(res, outputs.as_ptr() as *const sys::mlx_array, outputs.len())
    })
}

/// The ints a callback gets as (pointer, count); the pointer may be null when the count is 0.
unsafe fn int_slice<'a>(data: *const c_int, len: usize) -> &'a [i32] {
    if len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(data, len)
    }
}

unsafe extern "C" fn apply_array_fn(
    res: *mut sys::mlx_vector_array,
    input: sys::mlx_vector_array,
    payload: *mut c_void,
) -> c_int {
    let function = &*(payload as *const Box<ArrayFn>);
    run_callback(|| {
        let inputs = vector_to_vec(input)?;
        let outputs = function(&inputs)?;
        set_outputs(res, &outputs)
    })
}

unsafe extern "C" fn apply_custom_vjp(
    res: *mut sys::mlx_vector_array,
    primals: sys::mlx_vector_array,
    cotangents: sys::mlx_vector_array,
    outputs: sys::mlx_vector_array,
    payload: *mut c_void,
) -> c_int {
    let function = &*(payload as *const Box<CustomVjpFn>);
    run_callback(|| {
        let primals = vector_to_vec(primals)?;
        let cotangents = vector_to_vec(cotangents)?;
        let outputs = vector_to_vec(outputs)?;
        let grads = function(&primals, &cotangents, &outputs)?;
        set_outputs(res, &grads)
    })
}

unsafe extern "C" fn apply_custom_jvp(
    res: *mut sys::mlx_vector_array,
    primals: sys::mlx_vector_array,
    tangents: sys::mlx_vector_array,
    argnums: *const c_int,
    argnums_num: usize,
    payload: *mut c_void,
) -> c_int {
    let function = &*(payload as *const Box<CustomJvpFn>);
    run_callback(|| {
        let primals = vector_to_vec(primals)?;
        let tangents = vector_to_vec(tangents)?;
        let products = function(&primals, &tangents, int_slice(argnums, argnums_num))?;
        set_outputs(res, &products)
    })
}

unsafe extern "C" fn apply_custom_vmap(
    res: *mut sys::mlx_vector_array,
    res_axes: *mut sys::mlx_vector_int,
    inputs: sys::mlx_vector_array,
    axes: *const c_int,
    axes_num: usize,
    payload: *mut c_void,
) -> c_int {
    let function = &*(payload as *const Box<CustomVmapFn>);
    run_callback(|| {
        let inputs = vector_to_vec(inputs)?;
        let (outputs, mut out_axes) = function(&inputs, int_slice(axes, axes_num))?;
        set_outputs(res, &outputs)?;
        check(sys::mlx_vector_int_set_data(res_axes, out_axes.as_mut_ptr(), out_axes.len()))
    })
}

unsafe extern "C" fn apply_kwargs_fn(
    res: *mut sys::mlx_vector_array,
    args: sys::mlx_vector_array,
    kwargs: sys::mlx_map_string_to_array,
    payload: *mut c_void,
) -> c_int {
    let function = &*(payload as *const Box<KwargsFn>);
    run_callback(|| {
        let args = vector_to_vec(args)?;
        let kwargs = arrays_of(kwargs)?;
        let outputs = function(&args, &kwargs)?;
        set_outputs(res, &outputs)
    })
}

/// A C closure of positional and keyword arguments over a Rust function (for the exports).
pub(crate) fn kwargs_closure<F>(function: F) -> Result<OwnedClosure<sys::mlx_closure_kwargs>>
where
    F: Fn(&[Array], &HashMap<String, Array>) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let boxed: Box<KwargsFn> = Box::new(function);
    OwnedClosure::new(Some(boxed), "a closure of keyword arguments", |payload, dtor| unsafe {
        sys::mlx_closure_kwargs_new_func_payload(Some(apply_kwargs_fn), payload, dtor)
    })
}

/// A function from arrays to arrays that braid can apply and transform.
/// `Send + Sync`: any number of threads may apply or transform the same Closure at once.
pub struct Closure {
    pub(crate) raw: sys::mlx_closure,
}

unsafe impl Send for Closure {}
unsafe impl Sync for Closure {}

impl Closure {
    /// Wraps a Rust function.
    pub fn new<F>(function: F) -> Result<Closure>
    where
        F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
    {
        error::init();
        let boxed: Box<ArrayFn> = Box::new(function);
        // On failure the library has already called the destructor on the payload.
        let raw = unsafe {
            sys::mlx_closure_new_func_payload(
                Some(apply_array_fn),
                into_payload(boxed),
                Some(drop_payload::<ArrayFn>),
            )
        };
        Closure::from_handle(raw)
    }

    fn from_handle(raw: sys::mlx_closure) -> Result<Closure> {
        if raw.ctx.is_null() {
            return Err(error::take_error("braid: making a closure failed"));
        }
        Ok(Closure { raw })
    }

    /// Calls the function (through braid, so transforms wrapped around it take effect).
    pub fn apply(&self, inputs: &[Array]) -> Result<Vec<Array>> {
        let inputs = VectorArray::from_arrays(inputs)?;
        let mut outputs = VectorArray::new_empty();
        check(unsafe { sys::mlx_closure_apply(&mut outputs.raw, self.raw, inputs.raw) })?;
        outputs.to_vec()
    }
}

impl Clone for Closure {
    fn clone(&self) -> Closure {
        let mut copy = Closure { raw: sys::mlx_closure { ctx: std::ptr::null_mut() } };
        check(unsafe { sys::mlx_closure_set(&mut copy.raw, self.raw) })
            .unwrap_or_else(|e| panic!("braid: cloning a closure failed: {}", e));
        copy
    }
}

impl Drop for Closure {
    fn drop(&mut self) {
        if !self.raw.ctx.is_null() {
            unsafe { sys::mlx_closure_free(self.raw) };
        }
    }
}

/// A function returning a function's values and its gradients (from [`value_and_grad`]).
/// `Send + Sync`: any number of threads may apply it at once; each gets its own result.
pub struct ValueAndGrad {
    raw: sys::mlx_closure_value_and_grad,
}

unsafe impl Send for ValueAndGrad {}
unsafe impl Sync for ValueAndGrad {}

impl ValueAndGrad {
    /// (the function's outputs, the gradients of its first output, which must be a scalar,
    /// with respect to the inputs chosen by `argnums`).
    pub fn apply(&self, inputs: &[Array]) -> Result<(Vec<Array>, Vec<Array>)> {
        let inputs = VectorArray::from_arrays(inputs)?;
        let mut values = VectorArray::new_empty();
        let mut grads = VectorArray::new_empty();
        check(unsafe {
            sys::mlx_closure_value_and_grad_apply(&mut values.raw, &mut grads.raw, self.raw, inputs.raw)
        })?;
        Ok((values.to_vec()?, grads.to_vec()?))
    }
}

impl Clone for ValueAndGrad {
    fn clone(&self) -> ValueAndGrad {
        let mut copy = ValueAndGrad { raw: sys::mlx_closure_value_and_grad { ctx: std::ptr::null_mut() } };
        check(unsafe { sys::mlx_closure_value_and_grad_set(&mut copy.raw, self.raw) })
            .unwrap_or_else(|e| panic!("braid: cloning a value_and_grad failed: {}", e));
        copy
    }
}

impl Drop for ValueAndGrad {
    fn drop(&mut self) {
        if !self.raw.ctx.is_null() {
            unsafe { sys::mlx_closure_value_and_grad_free(self.raw) };
        }
    }
}

/// `function`'s values and the gradient of its first output with respect to the inputs at
/// `argnums` (MLX's `value_and_grad`).
pub fn value_and_grad<F>(function: F, argnums: &[i32]) -> Result<ValueAndGrad>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let closure = Closure::new(function)?;
    let mut raw = sys::mlx_closure_value_and_grad { ctx: std::ptr::null_mut() };
    check(unsafe { sys::mlx_value_and_grad(&mut raw, closure.raw, argnums.as_ptr(), argnums.len()) })?;
    Ok(ValueAndGrad { raw })
}

/// (`function`'s outputs at `primals`, the vector-Jacobian products with `cotangents`).
pub fn vjp<F>(function: F, primals: &[Array], cotangents: &[Array]) -> Result<(Vec<Array>, Vec<Array>)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let closure = Closure::new(function)?;
    let primals = VectorArray::from_arrays(primals)?;
    let cotangents = VectorArray::from_arrays(cotangents)?;
    let mut outputs = VectorArray::new_empty();
    let mut products = VectorArray::new_empty();
    check(unsafe {
        sys::mlx_vjp(&mut outputs.raw, &mut products.raw, closure.raw, primals.raw, cotangents.raw)
    })?;
    Ok((outputs.to_vec()?, products.to_vec()?))
}

/// (`function`'s outputs at `primals`, the Jacobian-vector products with `tangents`).
pub fn jvp<F>(function: F, primals: &[Array], tangents: &[Array]) -> Result<(Vec<Array>, Vec<Array>)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let closure = Closure::new(function)?;
    let primals = VectorArray::from_arrays(primals)?;
    let tangents = VectorArray::from_arrays(tangents)?;
    let mut outputs = VectorArray::new_empty();
    let mut products = VectorArray::new_empty();
    check(unsafe {
        sys::mlx_jvp(&mut outputs.raw, &mut products.raw, closure.raw, primals.raw, tangents.raw)
    })?;
    Ok((outputs.to_vec()?, products.to_vec()?))
}

/// `function` vectorized over axis `in_axes[i]` of input i (-1: not mapped; empty: axis 0 of
/// every input), output j's mapped axis moved to `out_axes[j]` (empty: 0).
pub fn vmap<F>(function: F, in_axes: &[i32], out_axes: &[i32]) -> Result<Closure>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let closure = Closure::new(function)?;
    let mut raw = sys::mlx_closure { ctx: std::ptr::null_mut() };
    check(unsafe {
        sys::mlx_vmap(
            &mut raw,
            closure.raw,
            in_axes.as_ptr(),
            in_axes.len(),
            out_axes.as_ptr(),
            out_axes.len(),
        )
    })?;
    Closure::from_handle(raw)
}

/// `function` whose intermediates are recomputed in the backward pass instead of kept.
pub fn checkpoint<F>(function: F) -> Result<Closure>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let closure = Closure::new(function)?;
    let mut raw = sys::mlx_closure { ctx: std::ptr::null_mut() };
    check(unsafe { sys::mlx_checkpoint(&mut raw, closure.raw) })?;
    Closure::from_handle(raw)
}

/// `function` whose vector-Jacobian product is `vjp_function(primals, cotangents, outputs)`,
/// which returns one cotangent per primal.
pub fn custom_vjp<F, G>(function: F, vjp_function: G) -> Result<Closure>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
    G: Fn(&[Array], &[Array], &[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    custom_function(function, Some(Box::new(vjp_function)), None, None)
}

/// `function` with its vector-Jacobian product, Jacobian-vector product or vectorization
/// replaced by the given rules (MLX's `custom_function`); one left out (`None`) is derived from
/// `function`. braid calls a rule on the thread that runs the transform reaching it (`vjp`,
/// `jvp`, `vmap`, `value_and_grad`), on several threads at once if they share the Closure.
pub fn custom_function<F>(
    function: F,
    vjp: Option<Box<CustomVjpFn>>,
    jvp: Option<Box<CustomJvpFn>>,
    vmap: Option<Box<CustomVmapFn>>,
) -> Result<Closure>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let closure = Closure::new(function)?;
    let vjp = OwnedClosure::new(vjp, "a custom vjp", |payload, dtor| unsafe {
        sys::mlx_closure_custom_new_func_payload(Some(apply_custom_vjp), payload, dtor)
    })?;
    let jvp = OwnedClosure::new(jvp, "a custom jvp", |payload, dtor| unsafe {
        sys::mlx_closure_custom_jvp_new_func_payload(Some(apply_custom_jvp), payload, dtor)
    })?;
    let vmap = OwnedClosure::new(vmap, "a custom vmap", |payload, dtor| unsafe {
        sys::mlx_closure_custom_vmap_new_func_payload(Some(apply_custom_vmap), payload, dtor)
    })?;
    let mut raw = sys::mlx_closure { ctx: std::ptr::null_mut() };
    check(unsafe { sys::mlx_custom_function(&mut raw, closure.raw, vjp.0, jvp.0, vmap.0) })?;
    Closure::from_handle(raw)
}
