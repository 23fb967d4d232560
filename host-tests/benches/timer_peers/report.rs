//! The markdown tables the bench prints: median ns per operation and the wheel's ratio to the
//! fastest peer, the spread over repetitions with the wall-time ratio and DelayQueue's excluded
//! clock driving, W1's insert and expire phases, and the memory table.

use std::fmt::Write as _;

use crate::clock::Clock;
use crate::config::Config;
use crate::contender::Kind;
use crate::footprint::Footprint;
use crate::ours::our_bytes_per_slot;
use crate::stats::{median, Row};

pub fn fmt_ns(ns: f64) -> String {
    if ns >= 100.0 {
        format!("{ns:.0}")
    } else {
        format!("{ns:.1}")
    }
}

pub fn fmt_n(n: usize) -> String {
    match n {
        1_000 => "1k".into(),
        10_000 => "10k".into(),
        100_000 => "100k".into(),
        1_000_000 => "1M".into(),
        _ => n.to_string(),
    }
}

fn table_header(out: &mut String, first: &str, kinds: &[Kind], extra: &[&str]) {
    let mut header = format!("| {first} |");
    let mut rule = String::from("|---|");
    if first == "workload" {
        header.push_str(" n |");
        rule.push_str("--:|");
    }
    for kind in kinds {
        let _ = write!(header, " {} |", kind.title());
        rule.push_str("--:|");
    }
    for column in extra {
        let _ = write!(header, " {column} |");
        rule.push_str("--:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
}

pub fn report(config: &Config, rows: &[Row], memory: &[(usize, Vec<(Kind, Footprint)>)]) -> String {
    let kinds = &config.kinds;
    let mut out = String::new();
    let reps: Vec<String> = config
        .sizes
        .iter()
        .map(|&n| format!("{} at n = {}", config.reps(n), fmt_n(n)))
        .collect();
    let _ = writeln!(
        out,
        "Median ns per operation, by this thread's CPU time ({} repetitions). All queues run \
         side by side in one process, their order rotated each repetition. DelayQueue: net of \
         advancing tokio's paused clock (see the second table).\n",
        reps.join(", ")
    );
    table_header(
        &mut out,
        "workload",
        kinds,
        &["fastest peer", "wheel / fastest peer"],
    );
    for row in rows {
        let _ = write!(out, "| {} | {} |", row.workload.title(), fmt_n(row.n));
        for &kind in kinds {
            let cell = row
                .median(kind, Clock::Cpu)
                .map_or_else(|| "–".into(), fmt_ns);
            let _ = write!(out, " {cell} |");
        }
        let peer = row
            .fastest_peer(Clock::Cpu)
            .map_or("–", |(peer, _)| peer.title());
        let ratio = row
            .wheel_ratio(Clock::Cpu)
            .map_or_else(|| "–".into(), |r| format!("{r:.2}"));
        let _ = writeln!(out, " {peer} | {ratio} |");
    }

    let _ = writeln!(
        out,
        "\nSpread: min–max ns per operation (CPU time) over the repetitions. Then, by wall time: \
         our wheel over the fastest peer (medians), and the time excluded from DelayQueue's \
         figures, spent in `block_on(tokio::time::advance(..))` (one per expiry call that moves \
         time; median ns per operation).\n"
    );
    table_header(
        &mut out,
        "workload",
        kinds,
        &[
            "wheel / fastest peer, wall",
            "DelayQueue clock driving (excluded), wall",
        ],
    );
    for row in rows {
        let _ = write!(out, "| {} | {} |", row.workload.key(), fmt_n(row.n));
        for &kind in kinds {
            let cell = row.spread(kind, Clock::Cpu).map_or_else(
                || "–".into(),
                |(lo, hi)| format!("{}–{}", fmt_ns(lo), fmt_ns(hi)),
            );
            let _ = write!(out, " {cell} |");
        }
        let ratio = row
            .wheel_ratio(Clock::Wall)
            .map_or_else(|| "–".into(), |r| format!("{r:.2}"));
        let clock = if row.delay_queue_clock.is_empty() {
            "–".into()
        } else {
            let mut wall: Vec<f64> = row.delay_queue_clock.iter().map(|p| p.wall).collect();
            fmt_ns(median(&mut wall))
        };
        let _ = writeln!(out, " {ratio} | {clock} |");
    }

    let phased: Vec<&Row> = rows.iter().filter(|r| !r.phases.is_empty()).collect();
    if !phased.is_empty() {
        let _ = writeln!(
            out,
            "\nPhases of the workloads that have them: median ns per timer (CPU time), insert \
             phase / expire phase.\n"
        );
        table_header(&mut out, "workload", kinds, &[]);
        for row in phased {
            let _ = write!(out, "| {} | {} |", row.workload.key(), fmt_n(row.n));
            for &kind in kinds {
                let cell = row.phases.iter().find(|(k, _)| *k == kind).map_or_else(
                    || "–".into(),
                    |(_, list)| {
                        let mut inserts: Vec<f64> = list.iter().map(|p| p.0).collect();
                        let mut expires: Vec<f64> = list.iter().map(|p| p.1).collect();
                        format!(
                            "{} / {}",
                            fmt_ns(median(&mut inserts)),
                            fmt_ns(median(&mut expires))
                        )
                    },
                );
                let _ = write!(out, " {cell} |");
            }
            let _ = writeln!(out);
        }
    }

    if !memory.is_empty() {
        let _ = writeln!(
            out,
            "\nBytes per timer. Ours: (n × `size_of` of a timer's storage (the wheel's: its slot \
             and its cells) + `size_of` of the queue proper) / n, exact and fixed (the allocator's \
             count of that storage is checked against it). Peers: heap bytes counted by this bench's global allocator, per live timer: \
             after inserting n timers (W1's deadlines; Vec-based peers pre-sized to n) / at the \
             peak of W2 (lazy deletion holds stale entries until a sweep).\n"
        );
        table_header(&mut out, "n", kinds, &[]);
        for (n, footprints) in memory {
            let _ = write!(out, "| {} |", fmt_n(*n));
            for (kind, f) in footprints {
                if kind.ours() {
                    let _ = write!(out, " {:.3} |", our_bytes_per_slot(*kind, *n));
                } else {
                    let _ = write!(out, " {:.1} / {:.1} |", f.resident, f.touch_peak);
                }
            }
            let _ = writeln!(out);
        }
    }
    out
}
