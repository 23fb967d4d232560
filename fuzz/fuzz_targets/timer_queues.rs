//! Every timer queue against the `BTreeMap` reference model, under an arbitrary sequence of
//! operations: a shim over the checker the property tests share,
//! [`host_tests::queue_check`] (what it asserts is documented there).

#![no_main]

use host_tests::queue_check::{check_all_queues, QueueInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: QueueInput| check_all_queues(&input));
