//! Array: a handle to a node of braid's lazy graph. Building never computes; `eval`, `item`
//! and `to_vec` do, on whichever thread calls them.
use std::fmt;
use std::os::raw::c_int;

use crate::error::{self, check, Error, Result};
use crate::sys;

/// Element type of an array.
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
pub enum Dtype {
    Bool,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Int8,
    Int16,
    Int32,
    Int64,
    Float16,
    Float32,
    Float64,
    Bfloat16,
    Complex64,
}

impl Dtype {
    const ALL: [Dtype; 14] = [
        Dtype::Bool,
        Dtype::Uint8,
        Dtype::Uint16,
        Dtype::Uint32,
        Dtype::Uint64,
        Dtype::Int8,
        Dtype::Int16,
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Float16,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Bfloat16,
        Dtype::Complex64,
    ];

    pub fn to_raw(self) -> sys::mlx_dtype {
        match self {
            Dtype::Bool => sys::MLX_BOOL,
            Dtype::Uint8 => sys::MLX_UINT8,
            Dtype::Uint16 => sys::MLX_UINT16,
            Dtype::Uint32 => sys::MLX_UINT32,
            Dtype::Uint64 => sys::MLX_UINT64,
            Dtype::Int8 => sys::MLX_INT8,
            Dtype::Int16 => sys::MLX_INT16,
            Dtype::Int32 => sys::MLX_INT32,
            Dtype::Int64 => sys::MLX_INT64,
            Dtype::Float16 => sys::MLX_FLOAT16,
            Dtype::Float32 => sys::MLX_FLOAT32,
            Dtype::Float64 => sys::MLX_FLOAT64,
            Dtype::Bfloat16 => sys::MLX_BFLOAT16,
            Dtype::Complex64 => sys::MLX_COMPLEX64,
        }
    }

    /// The Dtype of a C value, or Err for one this crate does not know.
    pub fn from_raw(raw: sys::mlx_dtype) -> Result<Dtype> {
        Dtype::ALL
            .iter()
            .copied()
            .find(|d| d.to_raw() == raw)
            .ok_or_else(|| Error::new(format!("braid: unknown dtype value {}", raw)))
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        unsafe { sys::mlx_dtype_size(self.to_raw()) }
    }
}

/// A complex64 element: real part, then imaginary part (C's `float _Complex`).
pub type Complex64 = sys::mlx_complex64_t;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is an array element: bool, u8..u64, i8..i64, f32, f64 and [`Complex64`].
/// (float16 and bfloat16 arrays are read after `ops::astype` to another type.)
pub trait ArrayElement: sealed::Sealed + Copy + Send + Sync + 'static {
    const DTYPE: Dtype;
    #[doc(hidden)]
    unsafe fn item_raw(out: *mut Self, arr: sys::mlx_array) -> c_int;
    #[doc(hidden)]
    unsafe fn data_raw(arr: sys::mlx_array) -> *const Self;
}

macro_rules! element {
    ($t:ty, $dtype:ident, $item:ident, $data:ident) => {
        impl sealed::Sealed for $t {}
        impl ArrayElement for $t {
            const DTYPE: Dtype = Dtype::$dtype;
            unsafe fn item_raw(out: *mut Self, arr: sys::mlx_array) -> c_int {
                sys::$item(out, arr)
            }
            unsafe fn data_raw(arr: sys::mlx_array) -> *const Self {
                sys::$data(arr)
            }
        }
    };
}
element!(bool, Bool, mlx_array_item_bool, mlx_array_data_bool);
element!(u8, Uint8, mlx_array_item_uint8, mlx_array_data_uint8);
element!(u16, Uint16, mlx_array_item_uint16, mlx_array_data_uint16);
element!(u32, Uint32, mlx_array_item_uint32, mlx_array_data_uint32);
element!(u64, Uint64, mlx_array_item_uint64, mlx_array_data_uint64);
element!(i8, Int8, mlx_array_item_int8, mlx_array_data_int8);
element!(i16, Int16, mlx_array_item_int16, mlx_array_data_int16);
element!(i32, Int32, mlx_array_item_int32, mlx_array_data_int32);
element!(i64, Int64, mlx_array_item_int64, mlx_array_data_int64);
element!(f32, Float32, mlx_array_item_float32, mlx_array_data_float32);
element!(f64, Float64, mlx_array_item_float64, mlx_array_data_float64);
element!(Complex64, Complex64, mlx_array_item_complex64, mlx_array_data_complex64);

/// An N-dimensional array: a cheap handle to a node of a lazy graph.
///
/// `Send + Sync`: any number of threads may build on, evaluate and read the same array at once
/// (braid's contract). `clone()` makes another handle to the same node, never a copy of the
/// data; dropping the last handle (and the last graph that uses it) frees the array.
#[repr(transparent)]
pub struct Array {
    pub(crate) raw: sys::mlx_array,
}

// braid's C API allows any thread to use an array handle; only writing one handle while another
// thread uses it is a race, and Rust's &mut rules that out.
unsafe impl Send for Array {}
unsafe impl Sync for Array {}

impl Array {
    /// A handle that holds nothing yet, for a C call to write into.
    pub(crate) fn new_empty() -> Array {
        Array { raw: sys::mlx_array { ctx: std::ptr::null_mut() } }
    }

    fn from_handle(raw: sys::mlx_array, what: &str) -> Result<Array> {
        if raw.ctx.is_null() {
            return Err(error::take_error(&format!("braid: {} failed", what)));
        }
        Ok(Array { raw })
    }

    /// Takes ownership of a C handle (freed when the Array drops). The handle must hold an array.
    ///
    /// # Safety
    /// `raw` must be a live handle that nothing else frees.
    pub unsafe fn from_raw(raw: sys::mlx_array) -> Array {
        Array { raw }
    }

    /// The C handle, still owned by this Array.
    pub fn as_raw(&self) -> sys::mlx_array {
        self.raw
    }

    /// An array of `shape` holding a copy of `data` (row-major). Err when the sizes differ.
    pub fn from_slice<T: ArrayElement>(data: &[T], shape: &[i32]) -> Result<Array> {
        error::init();
        let expected: i64 = shape.iter().map(|&d| d as i64).product();
        if shape.iter().any(|&d| d < 0) || expected != data.len() as i64 {
            return Err(Error::new(format!(
                "[Array::from_slice] {} elements do not fill shape {:?}",
                data.len(),
                shape
            )));
        }
        let raw = unsafe {
            sys::mlx_array_new_data(
                data.as_ptr() as *const std::os::raw::c_void,
                shape.as_ptr(),
                shape.len() as c_int,
                T::DTYPE.to_raw(),
            )
        };
        Array::from_handle(raw, "Array::from_slice")
    }

    /// A 0-d array of one value of `T`'s dtype.
    pub fn scalar<T: ArrayElement>(value: T) -> Result<Array> {
        Array::from_slice(&[value], &[])
    }

    /// The dimensions.
    pub fn shape(&self) -> Vec<i32> {
        let ndim = self.ndim();
        if ndim == 0 {
            return Vec::new();
        }
        let ptr = unsafe { sys::mlx_array_shape(self.raw) };
        if ptr.is_null() {
            return Vec::new();
        }
        unsafe { std::slice::from_raw_parts(ptr, ndim) }.to_vec()
    }

    pub fn ndim(&self) -> usize {
        unsafe { sys::mlx_array_ndim(self.raw) }
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        unsafe { sys::mlx_array_size(self.raw) }
    }

    pub fn nbytes(&self) -> usize {
        unsafe { sys::mlx_array_nbytes(self.raw) }
    }

    pub fn itemsize(&self) -> usize {
        unsafe { sys::mlx_array_itemsize(self.raw) }
    }

    pub fn dtype(&self) -> Dtype {
        // The library only makes dtypes of its enum, all of which Dtype names.
        Dtype::from_raw(unsafe { sys::mlx_array_dtype(self.raw) }).expect("braid returned an unknown dtype")
    }

    /// Computes the array and what it needs, on the calling thread (and braid's workers).
    /// Err with the kernel's message if a node it depends on failed.
    pub fn eval(&self) -> Result<()> {
        error::init();
        check(unsafe { sys::mlx_array_eval(self.raw) })
    }

    /// Whether the value is computed; never blocks.
    pub fn is_available(&self) -> bool {
        let mut available = false;
        let status = unsafe { sys::_mlx_array_is_available(&mut available, self.raw) };
        status == 0 && available
    }

    /// The single element of a size-1 array, converted to `T` (evaluates first).
    pub fn item<T: ArrayElement>(&self) -> Result<T> {
        error::init();
        let mut value = std::mem::MaybeUninit::<T>::uninit();
        check(unsafe { T::item_raw(value.as_mut_ptr(), self.raw) })?;
        Ok(unsafe { value.assume_init() })
    }

    /// The elements in row-major order (evaluates first). Err when `T` is not the array's dtype.
    pub fn to_vec<T: ArrayElement>(&self) -> Result<Vec<T>> {
        if self.dtype() != T::DTYPE {
            return Err(Error::new(format!(
                "[Array::to_vec] The array is {:?}, not {:?}",
                self.dtype(),
                T::DTYPE
            )));
        }
        self.eval()?;
        let size = self.size();
        if size == 0 {
            return Ok(Vec::new());
        }
        let data = unsafe { T::data_raw(self.raw) };
        let strides_ptr = unsafe { sys::mlx_array_strides(self.raw) };
        if data.is_null() || (strides_ptr.is_null() && self.ndim() > 0) {
            return Err(error::take_error("[Array::to_vec] The array has no data"));
        }
        let shape: Vec<usize> = self.shape().iter().map(|&d| d as usize).collect();
        let strides = if shape.is_empty() {
            &[][..]
        } else {
            unsafe { std::slice::from_raw_parts(strides_ptr, shape.len()) }
        };
        Ok(gather(data, &shape, strides, size))
    }

    /// The array as another dtype.
    pub fn astype(&self, dtype: Dtype) -> Result<Array> {
        crate::ops::astype(self, dtype)
    }

    pub fn reshape(&self, shape: &[i32]) -> Result<Array> {
        crate::ops::reshape(self, shape)
    }

    /// The axes reversed.
    pub fn transpose(&self) -> Result<Array> {
        crate::ops::transpose(self)
    }

    pub fn matmul(&self, other: &Array) -> Result<Array> {
        crate::ops::matmul(self, other)
    }

    /// Sum of all elements, as a 0-d array.
    pub fn sum(&self) -> Result<Array> {
        crate::ops::sum(self, false)
    }

    /// Mean of all elements, as a 0-d array.
    pub fn mean(&self) -> Result<Array> {
        crate::ops::mean(self, false)
    }
}

/// Reads `size` elements laid out with element `strides` (0 for broadcast axes) in row-major order.
fn gather<T: Copy>(data: *const T, shape: &[usize], strides: &[usize], size: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(size);
    let mut index = vec![0usize; shape.len()];
    let mut offset = 0usize;
    for _ in 0..size {
        out.push(unsafe { *data.add(offset) });
        // Advance the multi-index like an odometer, keeping `offset` in step.
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            offset += strides[axis];
            if index[axis] < shape[axis] {
                break;
            }
            offset -= strides[axis] * shape[axis];
            index[axis] = 0;
        }
    }
    out
}

impl Clone for Array {
    /// Another handle to the same node (no data is copied).
    fn clone(&self) -> Array {
        error::init();
        let mut copy = Array::new_empty();
        if let Err(e) = check(unsafe { sys::mlx_array_set(&mut copy.raw, self.raw) }) {
            panic!("braid: cloning an array failed: {}", e);
        }
        copy
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        if !self.raw.ctx.is_null() {
            unsafe { sys::mlx_array_free(self.raw) };
        }
    }
}

impl fmt::Display for Array {
    /// The values as braid prints them (evaluates the array).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        error::init();
        let mut text = error::CString::new_empty();
        match check(unsafe { sys::mlx_array_tostring(&mut text.raw, self.raw) }) {
            Ok(()) => write!(f, "{}", text),
            Err(e) => write!(f, "<array: {}>", e),
        }
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Array(shape {:?}, {:?}", self.shape(), self.dtype())?;
        if self.is_available() {
            write!(f, ", {}", self)?;
        }
        f.write_str(")")
    }
}

macro_rules! from_scalar {
    ($t:ty, $make:ident) => {
        impl From<$t> for Array {
            /// A 0-d array (MLX's scalar constructor).
            fn from(value: $t) -> Array {
                error::init();
                Array::from_handle(unsafe { sys::$make(value) }, "Array::from")
                    .unwrap_or_else(|e| panic!("braid: {}", e))
            }
        }
    };
}
from_scalar!(bool, mlx_array_new_bool);
from_scalar!(i32, mlx_array_new_int);
from_scalar!(f32, mlx_array_new_float32);
from_scalar!(f64, mlx_array_new_float64);

/// A vector of arrays owned by Rust, for the C calls that take or return one.
pub(crate) struct VectorArray {
    pub(crate) raw: sys::mlx_vector_array,
}

impl VectorArray {
    pub(crate) fn new_empty() -> VectorArray {
        VectorArray { raw: sys::mlx_vector_array { ctx: std::ptr::null_mut() } }
    }

    pub(crate) fn from_arrays(arrays: &[Array]) -> Result<VectorArray> {
        error::init();
        // Array is repr(transparent) over mlx_array, so the slice is an array of handles.
        let raw =
            unsafe { sys::mlx_vector_array_new_data(arrays.as_ptr() as *const sys::mlx_array, arrays.len()) };
        if raw.ctx.is_null() && !arrays.is_empty() {
            return Err(error::take_error("braid: making a vector of arrays failed"));
        }
        Ok(VectorArray { raw })
    }

    /// Handles to the arrays the vector holds.
    pub(crate) fn to_vec(&self) -> Result<Vec<Array>> {
        vector_to_vec(self.raw)
    }
}

pub(crate) fn vector_to_vec(raw: sys::mlx_vector_array) -> Result<Vec<Array>> {
    let size = unsafe { sys::mlx_vector_array_size(raw) };
    let mut out = Vec::with_capacity(size);
    for i in 0..size {
        let mut item = Array::new_empty();
        check(unsafe { sys::mlx_vector_array_get(&mut item.raw, raw, i) })?;
        out.push(item);
    }
    Ok(out)
}

impl Drop for VectorArray {
    fn drop(&mut self) {
        if !self.raw.ctx.is_null() {
            unsafe { sys::mlx_vector_array_free(self.raw) };
        }
    }
}

pub(crate) fn raw_or_empty(array: Option<&Array>) -> sys::mlx_array {
    match array {
        Some(a) => a.raw,
        None => sys::mlx_array { ctx: std::ptr::null_mut() },
    }
}

pub(crate) fn optional_int(value: Option<i32>) -> sys::mlx_optional_int {
    sys::mlx_optional_int { value: value.unwrap_or(0), has_value: value.is_some() }
}

pub(crate) fn optional_float(value: Option<f32>) -> sys::mlx_optional_float {
    sys::mlx_optional_float { value: value.unwrap_or(0.0), has_value: value.is_some() }
}

pub(crate) fn optional_dtype(value: Option<crate::Dtype>) -> sys::mlx_optional_dtype {
    sys::mlx_optional_dtype { value: value.unwrap_or(Dtype::Float32).to_raw(), has_value: value.is_some() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_survives_a_trip_through_its_c_value() {
        for dtype in Dtype::ALL {
            assert_eq!(Dtype::from_raw(dtype.to_raw()).unwrap(), dtype);
        }
        assert!(Dtype::from_raw(99).is_err());
        assert_eq!(Dtype::Float32.size(), 4);
        assert_eq!(Dtype::Complex64.size(), 8);
    }

    #[test]
    fn gather_reads_transposed_strides_in_row_major_order() {
        let data = [1, 2, 3, 4, 5, 6]; // 2x3 row-major, read as its 3x2 transpose
        assert_eq!(gather(data.as_ptr(), &[3, 2], &[1, 3], 6), vec![1, 4, 2, 5, 3, 6]);
    }

    #[test]
    fn gather_repeats_broadcast_axes() {
        let data = [7, 8];
        assert_eq!(gather(data.as_ptr(), &[2, 3], &[1, 0], 6), vec![7, 7, 7, 8, 8, 8]);
        assert_eq!(gather(data.as_ptr(), &[], &[], 1), vec![7]);
    }

    #[test]
    fn optionals_carry_their_presence() {
        let some = optional_int(Some(3));
        assert!(some.has_value && some.value == 3);
        assert!(!optional_float(None).has_value);
        assert!(optional_dtype(Some(Dtype::Int8)).value == sys::MLX_INT8);
    }

    #[test]
    fn array_handles_are_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Array>();
        shareable::<crate::Stream>();
        shareable::<crate::Device>();
        shareable::<crate::Closure>();
        shareable::<crate::ValueAndGrad>();
    }
}
