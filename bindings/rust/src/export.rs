//! Functions saved to a file and loaded back (MLX's `export_function` and `import_function`):
//! the graph a Rust function builds on example arguments is written once, then any process
//! or thread can run it without the Rust code. The file format is braid's
//! (docs/porting-from-mlx.md). A file holds one trace per signature: the count of positional
//! arguments, the names of the keyword ones, and each argument's dtype and shape (its rank when
//! shapeless).
use std::collections::HashMap;

use crate::array::VectorArray;
use crate::error::{self, c_string, check, Result};
use crate::io::array_map_of;
use crate::transforms::{kwargs_closure, Closure};
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

/// Traces `function` on positional `args` and keyword `kwargs` and writes its graph to `path`;
/// the imported function takes the same keywords ([`ImportedFunction::apply_kwargs`]).
pub fn export_function_kwargs<F>(
    path: &str,
    function: F,
    args: &[Array],
    kwargs: &HashMap<String, Array>,
    shapeless: bool,
) -> Result<()>
where
    F: Fn(&[Array], &HashMap<String, Array>) -> Result<Vec<Array>> + Send + Sync + 'static,
{
    let file = c_string(path)?;
    let closure = kwargs_closure(function)?;
    let args = VectorArray::from_arrays(args)?;
    let kwargs = array_map_of(kwargs)?;
    check(unsafe { sys::mlx_export_function_kwargs(file.as_ptr(), closure.0, args.raw, kwargs.0, shapeless) })
}

/// Writes several traces of one Rust function to one file, a trace per [`apply`] with a new
/// signature (MLX's `exporter`); the file is complete after every call, and dropping the
/// exporter closes it. `Send + Sync`: any threads may add traces to the same exporter at once;
/// braid runs one trace at a time.
///
/// [`apply`]: FunctionExporter::apply
pub struct FunctionExporter {
    raw: sys::mlx_function_exporter,
}

unsafe impl Send for FunctionExporter {}
unsafe impl Sync for FunctionExporter {}

impl FunctionExporter {
    /// An exporter of `function` writing to `path`, created (or emptied) now: Err when it
    /// cannot be written. With `shapeless`, each trace accepts other shapes of its ranks.
    pub fn new<F>(path: &str, function: F, shapeless: bool) -> Result<FunctionExporter>
    where
        F: Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
    {
        let file = c_string(path)?;
        let closure = Closure::new(function)?;
        let raw = unsafe { sys::mlx_function_exporter_new(file.as_ptr(), closure.raw, shapeless) };
        if raw.ctx.is_null() {
            return Err(error::take_error("braid: making a function exporter failed"));
        }
        Ok(FunctionExporter { raw })
    }

    /// Traces the function on `args` and adds the trace to the file. Err when the file already
    /// has a trace for this signature, or the function fails.
    pub fn apply(&self, args: &[Array]) -> Result<()> {
        let args = VectorArray::from_arrays(args)?;
        check(unsafe { sys::mlx_function_exporter_apply(self.raw, args.raw) })
    }

    /// [`apply`](FunctionExporter::apply) with keyword arguments too. The function takes
    /// positional arguments only (as the C API's exporter), so any keyword is an Err.
    pub fn apply_kwargs(&self, args: &[Array], kwargs: &HashMap<String, Array>) -> Result<()> {
        let args = VectorArray::from_arrays(args)?;
        let kwargs = array_map_of(kwargs)?;
        check(unsafe { sys::mlx_function_exporter_apply_kwargs(self.raw, args.raw, kwargs.0) })
    }
}

impl Drop for FunctionExporter {
    fn drop(&mut self) {
        unsafe { sys::mlx_function_exporter_free(self.raw) };
    }
}

/// A function read from a file written by [`export_function`], [`export_function_kwargs`] or a
/// [`FunctionExporter`] (or by braid's C++, C or Python export). `Send + Sync`: any number of
/// threads may call the same one at once; each call runs on the calling thread's default
/// stream of the device the function was traced on.
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

    /// The function's outputs for positional `args` and keyword `kwargs`, which must match a
    /// trace in the file (keyword names included).
    pub fn apply_kwargs(&self, args: &[Array], kwargs: &HashMap<String, Array>) -> Result<Vec<Array>> {
        let args = VectorArray::from_arrays(args)?;
        let kwargs = array_map_of(kwargs)?;
        let mut outputs = VectorArray::new_empty();
        check(unsafe {
            sys::mlx_imported_function_apply_kwargs(&mut outputs.raw, self.raw, args.raw, kwargs.0)
        })?;
        outputs.to_vec()
    }
}

impl Drop for ImportedFunction {
    fn drop(&mut self) {
        unsafe { sys::mlx_imported_function_free(self.raw) };
    }
}
