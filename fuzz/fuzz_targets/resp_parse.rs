//! `net_shell::resp::parse` on arbitrary bytes under arbitrary limits: a shim over the checker the
//! property tests share, [`host_tests::resp_check`] (input layout and properties documented
//! there).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = host_tests::resp_check::check_input(data);
});
