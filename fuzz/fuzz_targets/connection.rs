//! Whole connections through the server on the simulated network: several clients sending
//! well-formed commands in arbitrary chunks, garbage, requests too big for the buffer, closes
//! and resets, while time runs past the timeouts. A shim over the checker the property tests
//! share, [`host_tests::conn_check`] (what it asserts is documented there).

#![no_main]

use host_tests::conn_check::{check_input, ConnInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ConnInput| {
    let _ = check_input(&input);
});
