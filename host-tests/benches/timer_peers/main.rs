//! timer-core's wheel and heaps side by side with the queues a Rust program would otherwise use:
//! `std::collections::BinaryHeap` with lazy deletion, `std::collections::BTreeMap`, tokio-util's
//! `DelayQueue`, and both wheels of `hierarchical_hash_wheel_timer` (its cancellable wheel as it
//! ships, and its plain `QuadWheelWithOverflow` with a generation slab). Prints markdown tables,
//! W1's insert and expire phases apart; `RESULTS.md` in `host-tests/benches/` holds the runs.
//!
//! ```text
//! cargo bench -p host-tests --bench timer_peers
//! ```
//!
//! Narrow a run with the environment:
//!
//! - `TIMER_BENCH_SIZES=1000,100000`: live timers, any of 1000, 10000, 100000, 1000000
//!   (default 1000,100000,1000000);
//! - `TIMER_BENCH_WORKLOADS=w1,w3`: workloads (default all four);
//! - `TIMER_BENCH_QUEUES=wheel,btreemap`: queues, any of wheel, heap4, heap2, binaryheap,
//!   btreemap, delayqueue, hhwt, hhwtquad (default all of these; the ratio needs at least one
//!   peer); and two that run only when named: `blocks`, an experiment (`block_wheel.rs`), and
//!   `wheelblocks`, our wheel keeping its timers in blocks below 2^19 as well, which shows why
//!   it does not;
//! - `TIMER_BENCH_REPS=3`: repetitions per cell (default 21 for n <= 10,000, 5 up to 100,000, 3 above);
//! - `TIMER_BENCH_MEMORY=0`: skip the memory table.
//!
//! Started without `--bench` (as `cargo test --benches` does) it makes one quick pass at n = 1,000
//! as a smoke test.
//!
//! Every workload's input (deadlines, picks, the churn trace) is generated once from a fixed seed
//! and replayed on every queue; each run's fired timers are tallied and must agree across queues.
//! Times are the benchmark thread's CPU time, so other jobs on a shared machine inflate them less;
//! wall time is measured alongside and the wheel's ratio by wall time is printed too.
//!
//! One concern per file:
//!
//! | file | what |
//! | --- | --- |
//! | `main.rs` | the run: every workload at every size, then the memory table, then the report |
//! | `config.rs` | what to run, from the environment; the smoke pass |
//! | `workloads.rs` | W1 to W4: parameters, seeded inputs, tallies, timing a run |
//! | `contender.rs` | the interface every queue offers the workloads; the queues by name |
//! | `ours.rs` | timer-core's wheel and heaps over slots in a `Vec` |
//! | `lazy_heap.rs` | peer: `BinaryHeap` with lazy deletion |
//! | `btree_map.rs` | peer: `BTreeMap` |
//! | `delay_queue.rs` | peer: tokio-util's `DelayQueue` on a paused runtime |
//! | `hhwt.rs` | driving a `hierarchical_hash_wheel_timer` wheel to `now` (both hhwt peers) |
//! | `hhwt_cancellable.rs` | peer: hhwt's cancellable wheel |
//! | `hhwt_quad.rs` | peer: hhwt's plain wheel with a generation slab |
//! | `block_wheel.rs` | experiment: a wheel whose slots keep timers in blocks |
//! | `clock.rs` | CPU and wall time side by side |
//! | `counting_allocator.rs` | the global allocator that counts heap bytes |
//! | `footprint.rs` | bytes per timer, for the memory table |
//! | `stats.rs` | one row's samples: medians, spreads, ratios; measuring a row |
//! | `report.rs` | the markdown tables |

mod block_wheel;
mod btree_map;
mod clock;
mod config;
mod contender;
mod counting_allocator;
mod delay_queue;
mod footprint;
mod hhwt;
mod hhwt_cancellable;
mod hhwt_quad;
mod lazy_heap;
mod ours;
mod report;
mod stats;
mod workloads;

use std::time::Instant;

use clock::instant_cost;
use config::Config;
use footprint::footprints;
use report::report;
use stats::measure;

fn run(config: Config) {
    let started = Instant::now();
    eprintln!(
        "timer_peers: Instant::now() costs {} ns",
        instant_cost().as_nanos()
    );
    if config.quick {
        eprintln!("timer_peers: smoke pass (`cargo bench` runs the full benchmark)");
    }
    let mut rows = Vec::new();
    let mut memory = Vec::new();
    for &n in &config.sizes {
        for &workload in &config.workloads {
            rows.push(measure(workload, n, config.reps(n), &config.kinds));
        }
        if config.memory {
            memory.push((n, footprints(&config.kinds, n)));
        }
    }
    print!("{}", report(&config, &rows, &memory));
    eprintln!(
        "timer_peers: done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    let config = Config::from_env();
    // Our queues keep their slots in a `Vec` (`with_storage`); only the queue proper, a few
    // KiB, is on the stack. The benchmark thread's stack is the main thread's usual 8 MiB.
    std::thread::Builder::new()
        .name("timer_peers".into())
        .stack_size(8 << 20)
        .spawn(move || run(config))
        .expect("spawn benchmark thread")
        .join()
        .expect("benchmark thread panicked");
}
