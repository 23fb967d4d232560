//! Shared helpers for the desktop tests.
