//! `.npy`, safetensors and GGUF files. Every function may be called from any thread: any
//! threads may load and save distinct files at once (and load the same file at once), and
//! loaded arrays may be evaluated on any thread. Writing a file while another thread reads or
//! writes it is the caller's race, as with any file.
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

pub(crate) struct ArrayMap(pub(crate) sys::mlx_map_string_to_array);
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

/// The entries of a C map of arrays (which stays the caller's), as handles of their own.
pub(crate) fn arrays_of(map: sys::mlx_map_string_to_array) -> Result<HashMap<String, Array>> {
    let mut arrays = HashMap::new();
    let iterator = unsafe { sys::mlx_map_string_to_array_iterator_new(map) };
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
        arrays.insert(text(key), value);
    }
    unsafe { sys::mlx_map_string_to_array_iterator_free(iterator) };
    Ok(arrays)
}

/// A C map holding (handles to) the arrays.
pub(crate) fn array_map_of(arrays: &HashMap<String, Array>) -> Result<ArrayMap> {
    let map = ArrayMap(unsafe { sys::mlx_map_string_to_array_new() });
    for (name, array) in arrays {
        let key = error::c_string(name)?;
        check(unsafe { sys::mlx_map_string_to_array_insert(map.0, key.as_ptr(), array.raw) })?;
    }
    Ok(map)
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
    let loaded = arrays_of(arrays.0)?;

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
    let params = array_map_of(arrays)?;
    let meta = StringMap(unsafe { sys::mlx_map_string_to_string_new() });
    for (name, value) in metadata {
        let key = error::c_string(name)?;
        let value = error::c_string(value)?;
        check(unsafe { sys::mlx_map_string_to_string_insert(meta.0, key.as_ptr(), value.as_ptr()) })?;
    }
    check(unsafe { sys::mlx_save_safetensors(file.as_ptr(), params.0, meta.0) })
}

/// A GGUF metadata value, as MLX's `GGUFMetaData` and the values of Python's
/// `mx.load(file, return_metadata=True)`. (MLX's fourth alternative, an empty placeholder, is
/// never loaded and cannot be saved, so it has no variant here.)
#[derive(Debug, Clone)]
pub enum GgufMetadata {
    /// A number (a 0-d array) or a list of numbers (a 1-d array): bool, u8..u64, i8..i64, f32
    /// or f64.
    Array(Array),
    String(String),
    Strings(Vec<String>),
}

impl From<Array> for GgufMetadata {
    fn from(value: Array) -> GgufMetadata {
        GgufMetadata::Array(value)
    }
}

impl From<String> for GgufMetadata {
    fn from(value: String) -> GgufMetadata {
        GgufMetadata::String(value)
    }
}

impl From<&str> for GgufMetadata {
    fn from(value: &str) -> GgufMetadata {
        GgufMetadata::String(value.to_string())
    }
}

impl From<Vec<String>> for GgufMetadata {
    fn from(value: Vec<String>) -> GgufMetadata {
        GgufMetadata::Strings(value)
    }
}

impl GgufMetadata {
    /// The value a C handle holds, copied out of it (the array as another handle).
    fn from_raw(value: sys::mlx_gguf_metadata, key: &str) -> Result<GgufMetadata> {
        match unsafe { sys::mlx_gguf_metadata_get_type(value) } {
            sys::MLX_GGUF_METADATA_ARRAY => {
                let mut array = Array::new_empty();
                check(unsafe { sys::mlx_gguf_metadata_get_array(&mut array.raw, value) })?;
                Ok(GgufMetadata::Array(array))
            }
            sys::MLX_GGUF_METADATA_STRING => {
                let mut string = error::CString::new_empty();
                check(unsafe { sys::mlx_gguf_metadata_get_string(&mut string.raw, value) })?;
                Ok(GgufMetadata::String(string.to_string()))
            }
            sys::MLX_GGUF_METADATA_STRING_VECTOR => {
                let mut strings = VectorString(sys::mlx_vector_string { ctx: std::ptr::null_mut() });
                check(unsafe { sys::mlx_gguf_metadata_get_string_vector(&mut strings.0, value) })?;
                Ok(GgufMetadata::Strings(strings.to_vec()?))
            }
            _ => Err(error::take_error(&format!("braid: GGUF metadata {:?} holds no value", key))),
        }
    }

    /// A new C handle holding the value.
    fn to_raw(&self) -> Result<GgufValue> {
        let raw = match self {
            GgufMetadata::Array(array) => unsafe { sys::mlx_gguf_metadata_new_array(array.raw) },
            GgufMetadata::String(string) => {
                let string = error::c_string(string)?;
                unsafe { sys::mlx_gguf_metadata_new_string(string.as_ptr()) }
            }
            GgufMetadata::Strings(strings) => {
                let strings = VectorString::from_strings(strings)?;
                unsafe { sys::mlx_gguf_metadata_new_string_vector(strings.0) }
            }
        };
        if raw.ctx.is_null() {
            return Err(error::take_error("braid: making a GGUF metadata value failed"));
        }
        Ok(GgufValue(raw))
    }
}

/// A metadata value handle owned by Rust (empty until a C call writes one).
struct GgufValue(sys::mlx_gguf_metadata);
struct GgufMetadataMap(sys::mlx_map_string_to_gguf_metadata);
struct GgufMetadataIterator(sys::mlx_map_string_to_gguf_metadata_iterator);
struct VectorString(sys::mlx_vector_string);

impl Drop for GgufValue {
    fn drop(&mut self) {
        if !self.0.ctx.is_null() {
            unsafe { sys::mlx_gguf_metadata_free(self.0) };
        }
    }
}

impl Drop for GgufMetadataMap {
    fn drop(&mut self) {
        unsafe { sys::mlx_map_string_to_gguf_metadata_free(self.0) };
    }
}

impl Drop for GgufMetadataIterator {
    fn drop(&mut self) {
        unsafe { sys::mlx_map_string_to_gguf_metadata_iterator_free(self.0) };
    }
}

impl Drop for VectorString {
    fn drop(&mut self) {
        if !self.0.ctx.is_null() {
            unsafe { sys::mlx_vector_string_free(self.0) };
        }
    }
}

impl VectorString {
    fn from_strings(strings: &[String]) -> Result<VectorString> {
        let owned = strings.iter().map(|s| error::c_string(s)).collect::<Result<Vec<_>>>()?;
        let mut pointers: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
        let raw = unsafe { sys::mlx_vector_string_new_data(pointers.as_mut_ptr(), pointers.len()) };
        if raw.ctx.is_null() {
            return Err(error::take_error("braid: making a vector of strings failed"));
        }
        Ok(VectorString(raw))
    }

    fn to_vec(&self) -> Result<Vec<String>> {
        let size = unsafe { sys::mlx_vector_string_size(self.0) };
        let mut strings = Vec::with_capacity(size);
        for i in 0..size {
            let mut item: *mut c_char = std::ptr::null_mut();
            check(unsafe { sys::mlx_vector_string_get(&mut item, self.0, i) })?;
            strings.push(text(item));
        }
        Ok(strings)
    }
}

/// A GGUF file's arrays and metadata, as MLX's `load_gguf` (Python: `mx.load(file,
/// return_metadata=True)`). Read when called, into host arrays any stream may use; Q4_0,
/// Q4_1, Q4_K and Q8_0 tensors come as MLX's quantized layout (`<name>`, `<name>.scales`,
/// `<name>.biases`). A missing or malformed file is an `Err` (`[load_gguf] ...`).
pub fn load_gguf(path: impl AsRef<Path>) -> Result<(HashMap<String, Array>, HashMap<String, GgufMetadata>)> {
    error::init();
    let file = c_path(path.as_ref())?;
    let mut arrays = ArrayMap(unsafe { sys::mlx_map_string_to_array_new() });
    let mut metadata = GgufMetadataMap(unsafe { sys::mlx_map_string_to_gguf_metadata_new() });
    check(unsafe {
        sys::mlx_load_gguf(&mut arrays.0, &mut metadata.0, file.as_ptr(), Stream::thread_default().raw)
    })?;
    let loaded = arrays_of(arrays.0)?;

    let mut meta = HashMap::new();
    let iterator =
        GgufMetadataIterator(unsafe { sys::mlx_map_string_to_gguf_metadata_iterator_new(metadata.0) });
    if iterator.0.ctx.is_null() {
        return Err(error::take_error("braid: iterating over GGUF metadata failed"));
    }
    loop {
        let mut key: *const c_char = std::ptr::null();
        let mut value = GgufValue(sys::mlx_gguf_metadata { ctx: std::ptr::null_mut() });
        let status =
            unsafe { sys::mlx_map_string_to_gguf_metadata_iterator_next(&mut key, &mut value.0, iterator.0) };
        // As in mlx-c, this iterator ends with 1 (it could fail only on arguments not passed here).
        if status == 1 {
            break;
        }
        check(status)?;
        let key = text(key);
        let value = GgufMetadata::from_raw(value.0, &key)?;
        meta.insert(key, value);
    }
    Ok((loaded, meta))
}

/// Writes the arrays (evaluated first) and metadata as GGUF version 3, as MLX's `save_gguf`;
/// a name without ".gguf" gets it. Arrays: float32, float16, bfloat16, float64, int8..int64.
/// What GGUF cannot hold (another dtype, a metadata array of more than one dimension or of no
/// elements) is an `Err` (`[save_gguf] ...`) before the file is created.
pub fn save_gguf(
    path: impl AsRef<Path>,
    arrays: &HashMap<String, Array>,
    metadata: &HashMap<String, GgufMetadata>,
) -> Result<()> {
    error::init();
    let file = c_path(path.as_ref())?;
    let params = array_map_of(arrays)?;
    let meta = GgufMetadataMap(unsafe { sys::mlx_map_string_to_gguf_metadata_new() });
    if meta.0.ctx.is_null() {
        return Err(error::take_error("braid: making a GGUF metadata map failed"));
    }
    for (name, value) in metadata {
        let key = error::c_string(name)?;
        let value = value.to_raw()?;
        check(unsafe { sys::mlx_map_string_to_gguf_metadata_insert(meta.0, key.as_ptr(), value.0) })?;
    }
    check(unsafe { sys::mlx_save_gguf(file.as_ptr(), params.0, meta.0) })
}
