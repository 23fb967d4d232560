//! Shared helpers for the desktop tests.

pub mod conn_check;

pub mod cpu_time;

pub mod e2e;

pub mod hash_check;

pub mod list_check;

pub mod model;

pub mod property;

pub mod queue_check;

pub mod redis_cluster;

pub mod redis_diff;

pub mod reply;

pub mod resp_check;

pub mod shell_group;

pub mod sim;

pub mod store_check;

/// Runs `f` on a thread with a 512 MiB stack (for big stores and queues built by value in
/// debug builds; only the pages used are ever touched) and returns what it returns, passing its
/// panic on.
pub fn big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let handle = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(f)
        .expect("spawn test thread");
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
