//! Devices and streams. A stream is a process-wide queue, not a thread: the same Stream works
//! from every thread, any number of threads may submit to it at once, and its work runs in
//! submission order.
use std::fmt;

use crate::error::{self, check, Result};
use crate::sys;

#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
pub enum DeviceType {
    Cpu,
    Gpu,
}

impl DeviceType {
    fn to_raw(self) -> sys::mlx_device_type {
        match self {
            DeviceType::Cpu => sys::MLX_CPU,
            DeviceType::Gpu => sys::MLX_GPU,
        }
    }
}

/// Where arrays are computed. `Send + Sync`; `clone()` is another handle to the same device.
pub struct Device {
    pub(crate) raw: sys::mlx_device,
}

unsafe impl Send for Device {}
unsafe impl Sync for Device {}

impl Device {
    /// The device of `kind` with `index` (Err if braid cannot make it).
    pub fn new(kind: DeviceType, index: i32) -> Result<Device> {
        error::init();
        let raw = unsafe { sys::mlx_device_new_type(kind.to_raw(), index) };
        if raw.ctx.is_null() {
            return Err(error::take_error("braid: making a device failed"));
        }
        Ok(Device { raw })
    }

    pub fn cpu() -> Device {
        Device::new(DeviceType::Cpu, 0).expect("braid: the CPU device")
    }

    /// GPU 0 (whether it can run work: [`Device::is_available`]).
    pub fn gpu() -> Device {
        Device::new(DeviceType::Gpu, 0).expect("braid: the GPU device")
    }

    /// The calling thread's default device (a stream context's, else the process-wide one).
    pub fn default_device() -> Result<Device> {
        error::init();
        let mut device = Device { raw: sys::mlx_device { ctx: std::ptr::null_mut() } };
        check(unsafe { sys::mlx_get_default_device(&mut device.raw) })?;
        Ok(device)
    }

    /// Makes this the process-wide default device (every thread sees it on its next call).
    /// Err if this build and machine cannot run work on it.
    pub fn set_default(&self) -> Result<()> {
        error::init();
        check(unsafe { sys::mlx_set_default_device(self.raw) })
    }

    /// Whether this build and machine can run work on the device.
    pub fn is_available(&self) -> bool {
        error::init();
        let mut available = false;
        let status = unsafe { sys::mlx_device_is_available(&mut available, self.raw) };
        status == 0 && available
    }

    pub fn device_type(&self) -> Result<DeviceType> {
        error::init();
        let mut kind: sys::mlx_device_type = sys::MLX_CPU;
        check(unsafe { sys::mlx_device_get_type(&mut kind, self.raw) })?;
        Ok(if kind == sys::MLX_GPU { DeviceType::Gpu } else { DeviceType::Cpu })
    }

    pub fn index(&self) -> Result<i32> {
        error::init();
        let mut index = 0;
        check(unsafe { sys::mlx_device_get_index(&mut index, self.raw) })?;
        Ok(index)
    }
}

impl Clone for Device {
    fn clone(&self) -> Device {
        error::init();
        let mut copy = Device { raw: sys::mlx_device { ctx: std::ptr::null_mut() } };
        check(unsafe { sys::mlx_device_set(&mut copy.raw, self.raw) })
            .unwrap_or_else(|e| panic!("braid: cloning a device failed: {}", e));
        copy
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        if !self.raw.ctx.is_null() {
            unsafe { sys::mlx_device_free(self.raw) };
        }
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Device) -> bool {
        unsafe { sys::mlx_device_equal(self.raw, other.raw) }
    }
}

impl fmt::Display for Device {
    /// "Device(cpu, 0)", "Device(gpu, 0)", as MLX prints them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        error::init();
        let mut text = error::CString::new_empty();
        match check(unsafe { sys::mlx_device_tostring(&mut text.raw, self.raw) }) {
            Ok(()) => write!(f, "{}", text),
            Err(e) => write!(f, "<device: {}>", e),
        }
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({})", self)
    }
}

/// An ordered queue of work on one device, shared by the whole process.
///
/// `Send + Sync`: one Stream may be used by any number of threads at once, with no lock;
/// `clone()` is another handle to the same queue. [`Stream::thread_default`] is the handle that
/// stands for "the calling thread's default stream", resolved where it is used.
pub struct Stream {
    pub(crate) raw: sys::mlx_stream,
}

unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    /// A new process-wide stream on `device`, alive while any handle or array refers to it.
    pub fn new(device: &Device) -> Result<Stream> {
        error::init();
        let raw = unsafe { sys::mlx_stream_new_device(device.raw) };
        if raw.ctx.is_null() {
            return Err(error::take_error("braid: making a stream failed"));
        }
        Ok(Stream { raw })
    }

    /// The empty handle: an op given it runs on the default stream of the thread that calls
    /// the op (what the functions without `_device` use).
    pub fn thread_default() -> Stream {
        Stream { raw: sys::mlx_stream { ctx: std::ptr::null_mut() } }
    }

    /// The calling thread's own default stream on `device` (created on first use).
    pub fn default_for(device: &Device) -> Result<Stream> {
        error::init();
        let mut stream = Stream::thread_default();
        check(unsafe { sys::mlx_get_default_stream(&mut stream.raw, device.raw) })?;
        Ok(stream)
    }

    /// Makes this stream the calling thread's default for its device; other threads are
    /// unaffected.
    pub fn set_as_default(&self) -> Result<()> {
        error::init();
        check(unsafe { sys::mlx_set_default_stream(self.raw) })
    }

    /// Waits until the work submitted to this stream before the call has finished. Errors
    /// stay on the arrays that failed.
    pub fn synchronize(&self) -> Result<()> {
        error::init();
        check(unsafe { sys::mlx_synchronize(self.raw) })
    }

    pub fn device(&self) -> Result<Device> {
        error::init();
        let mut device = Device { raw: sys::mlx_device { ctx: std::ptr::null_mut() } };
        check(unsafe { sys::mlx_stream_get_device(&mut device.raw, self.raw) })?;
        Ok(device)
    }

    /// The stream's process-wide index.
    pub fn index(&self) -> Result<i32> {
        error::init();
        let mut index = 0;
        check(unsafe { sys::mlx_stream_get_index(&mut index, self.raw) })?;
        Ok(index)
    }

    /// The C handle, still owned by this Stream.
    pub fn as_raw(&self) -> sys::mlx_stream {
        self.raw
    }
}

impl Default for Stream {
    fn default() -> Stream {
        Stream::thread_default()
    }
}

impl Clone for Stream {
    fn clone(&self) -> Stream {
        if self.raw.ctx.is_null() {
            return Stream::thread_default();
        }
        error::init();
        let mut copy = Stream::thread_default();
        check(unsafe { sys::mlx_stream_set(&mut copy.raw, self.raw) })
            .unwrap_or_else(|e| panic!("braid: cloning a stream failed: {}", e));
        copy
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.raw.ctx.is_null() {
            unsafe { sys::mlx_stream_free(self.raw) };
        }
    }
}

impl PartialEq for Stream {
    fn eq(&self, other: &Stream) -> bool {
        match (self.raw.ctx.is_null(), other.raw.ctx.is_null()) {
            (true, true) => true,
            (false, false) => unsafe { sys::mlx_stream_equal(self.raw, other.raw) },
            _ => false,
        }
    }
}

impl fmt::Display for Stream {
    /// "Stream(cpu, 3)"; the empty handle prints as "Stream(thread default)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.raw.ctx.is_null() {
            return f.write_str("Stream(thread default)");
        }
        error::init();
        let mut text = error::CString::new_empty();
        match check(unsafe { sys::mlx_stream_tostring(&mut text.raw, self.raw) }) {
            Ok(()) => write!(f, "{}", text),
            Err(e) => write!(f, "<stream: {}>", e),
        }
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
