//! net-shell (under construction).
#![no_std]
