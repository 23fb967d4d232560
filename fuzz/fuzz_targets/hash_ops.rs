//! Hashes through the server's hash commands (packed, then given an index past Redis'
//! thresholds; fields with deadlines removed by their timer), against a `HashMap` model under
//! an arbitrary sequence of ops: a shim over the checker the property test shares,
//! [`host_tests::hash_check`] (what it asserts is documented there).

#![no_main]

use host_tests::hash_check::{check_hash_ops, HashInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: HashInput| {
    check_hash_ops(&input);
});
