//! Helpers shared by the integration tests.
#![allow(dead_code)]
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Aborts the whole test process if the test holding it runs longer than `seconds`: a hang
/// fails loudly instead of stalling the run.
pub struct Watchdog {
    done: Arc<AtomicBool>,
}

pub fn watchdog(name: &'static str, seconds: u64) -> Watchdog {
    let done = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&done);
    thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        while Instant::now() < deadline {
            // Acquire pairs with the Release in drop: nothing to publish, only the flag.
            if flag.load(Ordering::Acquire) {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        eprintln!("watchdog: {} still running after {} s; aborting", name, seconds);
        std::process::abort();
    });
    Watchdog { done }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
    }
}

/// Threads per concurrent test: BRAID_RUST_TEST_THREADS, default 8.
pub fn thread_count() -> usize {
    std::env::var("BRAID_RUST_TEST_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(8)
}

pub fn assert_close(actual: &[f32], expected: &[f32]) {
    assert_eq!(actual.len(), expected.len(), "{:?} vs {:?}", actual, expected);
    for (a, e) in actual.iter().zip(expected) {
        assert!((a - e).abs() <= 1e-5 * (1.0 + e.abs()), "{:?} vs {:?}", actual, expected);
    }
}
