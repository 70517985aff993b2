//! Functions saved to a file and loaded back (MLX's `export_function` and `import_function`):
//! the graph a Rust function builds on example arguments is written once, then any process
//! or thread can run it without the Rust code. The file format is braid's
//! (docs/porting-from-mlx.md).
use crate::array::VectorArray;
use crate::error::{self, c_string, check, Result};
use crate::transforms::Closure;
use crate::{sys, Array};

/// Traces `function` on `args` and writes its graph to `path`. With `shapeless`, the file
/// also accepts arguments of other shapes (of the same ranks and dtypes).
pub fn export_function<F>(path: &str, function: F, args: &[Array], shapeless: bool) -> Result<()>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let file = c_string(path)?;
    let closure = Closure::new(function)?;
    let args = VectorArray::from_arrays(args)?;
    check(unsafe { sys::mlx_export_function(file.as_ptr(), closure.raw, args.raw, shapeless) })
}

/// A function read from a file written by [`export_function`] (or by braid's C++, C or Python
/// export). `Send + Sync`: any number of threads may call the same one at once; each call
/// runs on the calling thread's default stream of the device the function was traced on.
pub struct ImportedFunction {
    raw: sys::mlx_imported_function,
}

unsafe impl Send for ImportedFunction {}
unsafe impl Sync for ImportedFunction {}

impl ImportedFunction {
    /// Reads the file. Err for a missing, damaged or foreign file.
    pub fn new(path: &str) -> Result<ImportedFunction> {
        error::init();
        let file = c_string(path)?;
        let raw = unsafe { sys::mlx_imported_function_new(file.as_ptr()) };
        if raw.ctx.is_null() {
            return Err(error::take_error("braid: importing a function failed"));
        }
        Ok(ImportedFunction { raw })
    }

    /// The function's outputs for `args`, which must match a trace in the file (their count,
    /// dtypes and shapes, or ranks when it was exported shapeless).
    pub fn apply(&self, args: &[Array]) -> Result<Vec<Array>> {
        let args = VectorArray::from_arrays(args)?;
        let mut outputs = VectorArray::new_empty();
        check(unsafe { sys::mlx_imported_function_apply(&mut outputs.raw, self.raw, args.raw) })?;
        outputs.to_vec()
    }
}

impl Drop for ImportedFunction {
    fn drop(&mut self) {
        unsafe { sys::mlx_imported_function_free(self.raw) };
    }
}
