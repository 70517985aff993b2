//! Errors as Results. braid's C API reports a failure by calling a process-wide handler and
//! returning non-zero; the handler installed here stores the message in a thread-local slot of
//! the thread that made the call, and `check` turns the non-zero return into `Err` with it.
//! So concurrent failures on different threads never see each other's messages.
use std::cell::RefCell;
use std::ffi::CStr;
use std::fmt;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Once;

use crate::sys;

/// A failed call: braid's message, which starts with the failing function (`[matmul] ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub message: String,
}

impl Error {
    pub(crate) fn new(message: impl Into<String>) -> Error {
        Error { message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

thread_local! {
    /// The last message the C API reported on this thread.
    static LAST_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The error a Rust closure returned (or its panic) while the C API ran it on this thread:
    /// more useful than the C API's own "the callback returned 1".
    static CALLBACK_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
}

unsafe extern "C" fn store_error(message: *const c_char, _data: *mut c_void) {
    // Must not unwind into the library: nothing here panics but a failed allocation, which aborts.
    let text = if message.is_null() {
        String::from("braid: unknown error")
    } else {
        CStr::from_ptr(message).to_string_lossy().into_owned()
    };
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = Some(text);
        }
    });
}

static INSTALL: Once = Once::new();

/// Installs the handler before the first call into the C API (which would otherwise print the
/// message and exit the process). Cheap after the first time: one atomic load.
pub(crate) fn init() {
    INSTALL.call_once(|| unsafe {
        sys::mlx_set_error_handler(Some(store_error), std::ptr::null_mut(), None);
    });
}

/// Ok for a zero return; else the message the handler stored on this thread.
pub(crate) fn check(status: c_int) -> Result<()> {
    if status == 0 {
        return Ok(());
    }
    Err(take_error(&format!("braid: call failed with status {}", status)))
}

/// The stored message (the closure's own error first), or `fallback`.
pub(crate) fn take_error(fallback: &str) -> Error {
    let reported = LAST_ERROR.with(|slot| slot.borrow_mut().take());
    let from_callback = CALLBACK_ERROR.with(|slot| slot.borrow_mut().take());
    match (from_callback, reported) {
        (Some(own), _) => Error::new(own),
        (None, Some(reported)) => Error::new(reported),
        (None, None) => Error::new(fallback),
    }
}

/// Records what a Rust closure failed with, for the call that is applying it on this thread.
pub(crate) fn set_callback_error(message: String) {
    CALLBACK_ERROR.with(|slot| *slot.borrow_mut() = Some(message));
}

/// A C string for the API, or Err if `text` holds a NUL byte.
pub(crate) fn c_string(text: &str) -> Result<std::ffi::CString> {
    std::ffi::CString::new(text)
        .map_err(|_| Error::new(format!("braid: string {:?} contains a NUL byte", text)))
}

/// An owned mlx_string, freed on drop.
pub(crate) struct CString {
    pub(crate) raw: sys::mlx_string,
}

impl CString {
    pub(crate) fn new_empty() -> CString {
        CString { raw: sys::mlx_string { ctx: std::ptr::null_mut() } }
    }
}

impl fmt::Display for CString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = unsafe { CStr::from_ptr(sys::mlx_string_data(self.raw)) };
        f.write_str(&text.to_string_lossy())
    }
}

impl Drop for CString {
    fn drop(&mut self) {
        unsafe { sys::mlx_string_free(self.raw) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_status_is_ok() {
        assert!(check(0).is_ok());
    }

    #[test]
    fn a_failure_without_a_message_says_so() {
        let err = check(5).unwrap_err();
        assert!(err.message.contains("status 5"), "{}", err);
    }

    #[test]
    fn a_callback_error_wins_over_the_library_message_once() {
        set_callback_error("from the closure".to_string());
        unsafe {
            store_error(
                b"[mlx_closure] The callback returned 1\0".as_ptr() as *const c_char,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(check(1).unwrap_err().message, "from the closure");
        assert!(check(1).unwrap_err().message.contains("status 1"), "both slots are emptied");
    }

    #[test]
    fn a_nul_in_a_string_is_an_err() {
        assert!(c_string("a\0b").is_err());
        assert_eq!(c_string("ab").unwrap().as_bytes(), b"ab");
    }
}
