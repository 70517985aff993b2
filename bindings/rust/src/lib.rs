//! braid from Rust: lazy N-dimensional arrays with MLX's API, through braid's C API
//! (libbraid_c, mlx-c's interface).
//!
//! Threading follows braid's contract (docs/threading.md): a [`Stream`] is a process-wide
//! queue, not a thread, so an [`Array`] may be built on one thread and evaluated, read or
//! differentiated on any other, and any number of threads may share one stream, with no lock
//! of your own. [`Array`], [`Stream`], [`Device`], [`Closure`], [`ValueAndGrad`],
//! [`ImportedFunction`] and [`FunctionExporter`] are `Send + Sync`; cloning one of the first
//! five clones a reference to the same object.
//!
//! Every fallible call returns [`Result`]: braid's message (e.g. `[reshape] Cannot reshape
//! array of size 6 into shape (4).`) comes back as an [`Error`] on the thread that made the
//! call. The arithmetic operators (`&a + &b`) panic with that message instead; use the
//! functions of [`ops`] to get a `Result`.
//!
//! ```
//! use braid::{ops, Array};
//! let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
//! let y = &x * &x + 1.0;
//! let total = ops::sum(&y, false).unwrap();
//! assert_eq!(total.item::<f32>().unwrap(), 17.0);
//! ```

/// The C API as generated from `<braid/c.h>` by generate.py: every function, handle and enum.
#[allow(non_camel_case_types, non_upper_case_globals, dead_code, clippy::all)]
pub mod sys {
    include!(concat!(env!("OUT_DIR"), "/sys.rs"));
}

mod array;
mod device;
mod error;
mod export;
pub mod io;
pub mod memory;
mod operators;
mod transforms;

pub use array::{Array, ArrayElement, Complex64, Dtype};
pub use device::{Device, DeviceType, Stream};
pub use error::{Error, Result};
pub use export::{export_function, export_function_kwargs, FunctionExporter, ImportedFunction};
pub use transforms::{
    async_eval, checkpoint, custom_function, custom_vjp, eval, jvp, value_and_grad, vjp, vmap, Closure,
    CustomJvpFn, CustomVjpFn, CustomVmapFn, ValueAndGrad,
};

/// Every op of braid's `ops.h` (generated from `braid/c/ops.h`): `name(..)` runs on the calling
/// thread's default stream, `name_device(.., &stream)` on the given one. `where` is `where_`.
#[allow(clippy::too_many_arguments)]
pub mod ops {
    include!(concat!(env!("OUT_DIR"), "/ops.rs"));
}

/// Random numbers (generated from `braid/c/random.h`). Without a key, a draw advances braid's
/// process-wide key sequence, which is thread-safe: two draws never get the same key, whichever
/// threads make them. With a key ([`random::key`], [`random::split`]) the numbers are the same
/// under any threading.
#[allow(clippy::too_many_arguments)]
pub mod random {
    include!(concat!(env!("OUT_DIR"), "/random.rs"));
}

/// Fused ops (generated from `braid/c/fast.h`): layer and RMS norm, RoPE, attention.
#[allow(clippy::too_many_arguments)]
pub mod fast {
    include!(concat!(env!("OUT_DIR"), "/fast.rs"));
}

/// The normalization of a Fourier transform: MLX's `fft::FFTNorm`, the C API's `mlx_fft_norm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FftNorm {
    /// The inverse transform scaled by 1/n (NumPy's and MLX's default).
    Backward,
    /// Both directions scaled by 1/sqrt(n).
    Ortho,
    /// The forward transform scaled by 1/n.
    Forward,
}

impl FftNorm {
    pub fn to_raw(self) -> sys::mlx_fft_norm {
        match self {
            FftNorm::Backward => sys::MLX_FFT_NORM_BACKWARD,
            FftNorm::Ortho => sys::MLX_FFT_NORM_ORTHO,
            FftNorm::Forward => sys::MLX_FFT_NORM_FORWARD,
        }
    }
}

/// Discrete Fourier transforms (generated from `braid/c/fft.h`), as MLX's `mlx::core::fft`:
/// `fft(a, n, axis, norm)` and the like, and `fft_default_norm(a, n, axis)` without `norm`.
#[allow(clippy::too_many_arguments)]
pub mod fft {
    include!(concat!(env!("OUT_DIR"), "/fft.rs"));
}

/// Linear algebra (generated from `braid/c/linalg.h`), as MLX's `mlx::core::linalg`: norms and
/// `cross` on any device, the factorizations and solves on CPU streams.
#[allow(clippy::too_many_arguments)]
pub mod linalg {
    include!(concat!(env!("OUT_DIR"), "/linalg.rs"));
}

/// braid's version, "major.minor.patch".
pub fn version() -> Result<String> {
    error::init();
    let mut text = error::CString::new_empty();
    error::check(unsafe { sys::mlx_version(&mut text.raw) })?;
    Ok(text.to_string())
}
