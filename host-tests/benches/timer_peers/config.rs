//! What a run measures, read from the environment (`TIMER_BENCH_SIZES`, `_WORKLOADS`,
//! `_QUEUES`, `_REPS`, `_MEMORY`; see `main.rs`), and the smoke pass when started without
//! `--bench`, as `cargo test --benches` starts it.

use crate::contender::Kind;
use crate::workloads::Workload;

/// A run's sizes, workloads, queues, repetitions, and whether it prints the memory table.
pub struct Config {
    pub sizes: Vec<usize>,
    pub workloads: Vec<Workload>,
    pub kinds: Vec<Kind>,
    reps: Option<usize>,
    pub memory: bool,
    /// Started without `--bench`: a smoke pass.
    pub quick: bool,
}

impl Config {
    const SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

    pub fn from_env() -> Self {
        // `cargo bench` passes `--bench`; `cargo test --benches` does not: then a smoke pass.
        let quick = !std::env::args().any(|a| a == "--bench");
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let sizes = match env("TIMER_BENCH_SIZES") {
            Some(list) => {
                list.split(',')
                    .map(|s| {
                        let n: usize =
                            s.trim().replace('_', "").parse().unwrap_or_else(|_| {
                                panic!("TIMER_BENCH_SIZES: `{s}` is not a number")
                            });
                        assert!(
                            Self::SIZES.contains(&n),
                            "TIMER_BENCH_SIZES: {n} is not one of {:?}",
                            Self::SIZES
                        );
                        n
                    })
                    .collect()
            }
            None if quick => vec![1_000],
            None => vec![1_000, 100_000, 1_000_000],
        };
        let workloads = match env("TIMER_BENCH_WORKLOADS") {
            Some(list) => list
                .split(',')
                .map(|s| {
                    let s = s.trim().to_ascii_lowercase();
                    *Workload::ALL
                        .iter()
                        .find(|w| w.key() == s)
                        .unwrap_or_else(|| panic!("TIMER_BENCH_WORKLOADS: `{s}` is not w1..w4"))
                })
                .collect(),
            None => Workload::ALL.to_vec(),
        };
        let kinds = match env("TIMER_BENCH_QUEUES") {
            Some(list) => list
                .split(',')
                .map(|s| {
                    let s = s.trim().to_ascii_lowercase();
                    *Kind::ALL
                        .iter()
                        .find(|k| k.key() == s)
                        .unwrap_or_else(|| panic!("TIMER_BENCH_QUEUES: `{s}` is not a queue"))
                })
                .collect(),
            // The experiments run only when asked for by name.
            None => Kind::ALL
                .into_iter()
                .filter(|&k| !matches!(k, Kind::Blocks | Kind::WheelInBlocks))
                .collect(),
        };
        let reps = env("TIMER_BENCH_REPS")
            .map(|r| r.trim().parse().expect("TIMER_BENCH_REPS: a number"))
            .or(quick.then_some(1));
        let memory = env("TIMER_BENCH_MEMORY").is_none_or(|m| m.trim() != "0");
        Self {
            sizes,
            workloads,
            kinds,
            reps,
            memory,
            quick,
        }
    }

    /// Repetitions per cell at n. A run at 10,000 timers or fewer lasts a millisecond or less,
    /// where one interrupt moves it by several percent: 21 of them cost a second or two per
    /// row, and their median moves far less from one run to the next than that of 5.
    pub fn reps(&self, n: usize) -> usize {
        let default = match n {
            0..=10_000 => 21,
            10_001..=100_000 => 5,
            _ => 3,
        };
        self.reps.unwrap_or(default).max(1)
    }
}
