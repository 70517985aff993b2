//! `.npy` and safetensors files. Any threads may load and save distinct files at once, and
//! loaded arrays may be evaluated on any thread.
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::{self, check, Error, Result};
use crate::{sys, Array, Stream};

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::new(format!("braid: path {:?} contains a NUL byte", path)))
}

/// Reads a `.npy` file (read when called).
pub fn load(path: impl AsRef<Path>) -> Result<Array> {
    error::init();
    let file = c_path(path.as_ref())?;
    let mut array = Array::new_empty();
    check(unsafe { sys::mlx_load(&mut array.raw, file.as_ptr(), Stream::thread_default().raw) })?;
    Ok(array)
}

/// Writes `array` (evaluated first) as `.npy`; a name without ".npy" gets it.
pub fn save(path: impl AsRef<Path>, array: &Array) -> Result<()> {
    error::init();
    let file = c_path(path.as_ref())?;
    check(unsafe { sys::mlx_save(file.as_ptr(), array.raw) })
}

struct ArrayMap(sys::mlx_map_string_to_array);
struct StringMap(sys::mlx_map_string_to_string);

impl Drop for ArrayMap {
    fn drop(&mut self) {
        unsafe { sys::mlx_map_string_to_array_free(self.0) };
    }
}

impl Drop for StringMap {
    fn drop(&mut self) {
        unsafe { sys::mlx_map_string_to_string_free(self.0) };
    }
}

fn text(ptr: *const c_char) -> String {
    unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned()
}

/// A safetensors file's arrays (read when evaluated) and metadata.
pub fn load_safetensors(path: impl AsRef<Path>) -> Result<(HashMap<String, Array>, HashMap<String, String>)> {
    error::init();
    let file = c_path(path.as_ref())?;
    let mut arrays = ArrayMap(unsafe { sys::mlx_map_string_to_array_new() });
    let mut metadata = StringMap(unsafe { sys::mlx_map_string_to_string_new() });
    check(unsafe {
        sys::mlx_load_safetensors(&mut arrays.0, &mut metadata.0, file.as_ptr(), Stream::thread_default().raw)
    })?;

    let mut loaded = HashMap::new();
    let iterator = unsafe { sys::mlx_map_string_to_array_iterator_new(arrays.0) };
    loop {
        let mut key: *const c_char = std::ptr::null();
        let mut value = Array::new_empty();
        let status =
            unsafe { sys::mlx_map_string_to_array_iterator_next(&mut key, &mut value.raw, iterator) };
        if status == 2 {
            break;
        }
        if let Err(e) = check(status) {
            unsafe { sys::mlx_map_string_to_array_iterator_free(iterator) };
            return Err(e);
        }
        loaded.insert(text(key), value);
    }
    unsafe { sys::mlx_map_string_to_array_iterator_free(iterator) };

    let mut meta = HashMap::new();
    let iterator = unsafe { sys::mlx_map_string_to_string_iterator_new(metadata.0) };
    loop {
        let mut key: *const c_char = std::ptr::null();
        let mut value: *const c_char = std::ptr::null();
        let status = unsafe { sys::mlx_map_string_to_string_iterator_next(&mut key, &mut value, iterator) };
        if status == 2 {
            break;
        }
        if let Err(e) = check(status) {
            unsafe { sys::mlx_map_string_to_string_iterator_free(iterator) };
            return Err(e);
        }
        meta.insert(text(key), text(value));
    }
    unsafe { sys::mlx_map_string_to_string_iterator_free(iterator) };
    Ok((loaded, meta))
}

/// Writes the arrays (evaluated first) and metadata as safetensors; a name without
/// ".safetensors" gets it.
pub fn save_safetensors(
    path: impl AsRef<Path>,
    arrays: &HashMap<String, Array>,
    metadata: &HashMap<String, String>,
) -> Result<()> {
    error::init();
    let file = c_path(path.as_ref())?;
    let params = ArrayMap(unsafe { sys::mlx_map_string_to_array_new() });
    for (name, array) in arrays {
        let key = error::c_string(name)?;
        check(unsafe { sys::mlx_map_string_to_array_insert(params.0, key.as_ptr(), array.raw) })?;
    }
    let meta = StringMap(unsafe { sys::mlx_map_string_to_string_new() });
    for (name, value) in metadata {
        let key = error::c_string(name)?;
        let value = error::c_string(value)?;
        check(unsafe { sys::mlx_map_string_to_string_insert(meta.0, key.as_ptr(), value.as_ptr()) })?;
    }
    check(unsafe { sys::mlx_save_safetensors(file.as_ptr(), params.0, meta.0) })
}
