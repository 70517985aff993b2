//! The allocator's counters and limits, in bytes. Every function is thread-safe.
use crate::error::{self, check, Result};
use crate::sys;

fn read(get: unsafe extern "C" fn(*mut usize) -> std::os::raw::c_int) -> Result<usize> {
    error::init();
    let mut value = 0;
    check(unsafe { get(&mut value) })?;
    Ok(value)
}

/// Bytes held by live arrays.
pub fn active_memory() -> Result<usize> {
    read(sys::mlx_get_active_memory)
}

/// Bytes kept in the cache for reuse.
pub fn cache_memory() -> Result<usize> {
    read(sys::mlx_get_cache_memory)
}

/// The largest active memory since start or the last reset.
pub fn peak_memory() -> Result<usize> {
    read(sys::mlx_get_peak_memory)
}

/// The active-memory guideline.
pub fn memory_limit() -> Result<usize> {
    read(sys::mlx_get_memory_limit)
}

/// Returns every cached buffer to the system.
pub fn clear_cache() -> Result<()> {
    error::init();
    check(unsafe { sys::mlx_clear_cache() })
}

/// Sets the active-memory guideline; returns the previous one.
pub fn set_memory_limit(limit: usize) -> Result<usize> {
    error::init();
    let mut previous = 0;
    check(unsafe { sys::mlx_set_memory_limit(&mut previous, limit) })?;
    Ok(previous)
}

/// Sets the cache limit (0 disables caching); returns the previous one.
pub fn set_cache_limit(limit: usize) -> Result<usize> {
    error::init();
    let mut previous = 0;
    check(unsafe { sys::mlx_set_cache_limit(&mut previous, limit) })?;
    Ok(previous)
}
