//! The statistics behind the tables: one row's samples ([`Row`]: every queue's figure in every
//! repetition of one workload at one size), their medians, spreads and the wheel's ratio to the
//! fastest peer; and [`measure`], which takes the samples of a row, with the queues' order
//! rotated each repetition and every run's tally checked against the others'.

use std::time::Instant;

use crate::clock::{Clock, PerOp, Spent};
use crate::contender::{run_one, Kind};
use crate::report::{fmt_n, fmt_ns};
use crate::workloads::{Input, Tally, Workload};

/// The median of `samples`, which it sorts.
pub fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[mid]
    } else {
        (samples[mid - 1] + samples[mid]) / 2.0
    }
}

/// The measured cells of one (workload, n) row.
pub struct Row {
    pub workload: Workload,
    pub n: usize,
    /// Per kind measured: every repetition's ns/op.
    samples: Vec<(Kind, Vec<PerOp>)>,
    /// Per repetition: DelayQueue's excluded clock-driving time, ns/op.
    pub delay_queue_clock: Vec<PerOp>,
    /// Per kind measured, where the workload has phases: every repetition's (insert, expire)
    /// ns/op by CPU time.
    pub phases: Vec<(Kind, Vec<(f64, f64)>)>,
}

impl Row {
    fn samples(&self, kind: Kind, clock: Clock) -> Option<Vec<f64>> {
        self.samples
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, s)| s.iter().map(|p| p.by(clock)).collect())
    }

    pub fn median(&self, kind: Kind, clock: Clock) -> Option<f64> {
        self.samples(kind, clock).map(|mut s| median(&mut s))
    }

    pub fn spread(&self, kind: Kind, clock: Clock) -> Option<(f64, f64)> {
        self.samples(kind, clock).map(|s| {
            (
                s.iter().copied().fold(f64::INFINITY, f64::min),
                s.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        })
    }

    /// The measured peer with the lowest median, and that median.
    pub fn fastest_peer(&self, clock: Clock) -> Option<(Kind, f64)> {
        Kind::PEERS
            .iter()
            .filter_map(|&k| self.median(k, clock).map(|m| (k, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Our wheel's median over the fastest peer's.
    pub fn wheel_ratio(&self, clock: Clock) -> Option<f64> {
        let wheel = self.median(Kind::Wheel, clock)?;
        self.fastest_peer(clock).map(|(_, best)| wheel / best)
    }
}

pub fn measure(workload: Workload, n: usize, reps: usize, kinds: &[Kind]) -> Row {
    let started = Instant::now();
    let input = Input::generate(workload, n);
    let expected = input.expected_fired();
    let mut samples: Vec<(Kind, Vec<PerOp>)> = kinds.iter().map(|&k| (k, Vec::new())).collect();
    let mut delay_queue_clock = Vec::new();
    let mut phases: Vec<(Kind, Vec<(f64, f64)>)> = Vec::new();
    let mut reference: Option<(Kind, Tally)> = None;
    for rep in 0..reps {
        // Rotate the order each repetition, so drift on a shared machine spreads evenly.
        for k in 0..kinds.len() {
            let i = (k + rep) % kinds.len();
            let kind = kinds[i];
            let outcome = run_one(kind, n, &input);
            assert_eq!(
                outcome.tally.fired, expected,
                "{workload:?} n={n}: {kind:?} fired the wrong number of timers"
            );
            match reference {
                None => reference = Some((kind, outcome.tally)),
                Some((first, tally)) => assert_eq!(
                    tally, outcome.tally,
                    "{workload:?} n={n}: {kind:?} fired other timers, or at other ticks, than \
                     {first:?}"
                ),
            }
            samples[i].1.push(outcome.per_op(outcome.net));
            if let Some((insert, expire)) = outcome.phases {
                let per = |spent: Spent| outcome.per_op(spent).cpu;
                match phases.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, list)) => list.push((per(insert), per(expire))),
                    None => phases.push((kind, vec![(per(insert), per(expire))])),
                }
            }
            if kind == Kind::DelayQueue {
                delay_queue_clock.push(outcome.per_op(outcome.excluded));
            }
        }
    }
    let row = Row {
        workload,
        n,
        samples,
        delay_queue_clock,
        phases,
    };
    let medians: Vec<String> = kinds
        .iter()
        .filter_map(|&k| {
            row.median(k, Clock::Cpu)
                .map(|m| format!("{} {}", k.title(), fmt_ns(m)))
        })
        .collect();
    eprintln!(
        "{} n={}: {} ({:.1} s)",
        workload.key(),
        fmt_n(n),
        medians.join(", "),
        started.elapsed().as_secs_f64()
    );
    row
}
