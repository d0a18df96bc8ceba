//! Integration tests: the CLI on real exports, the test vectors in `testdata/`, the appender.

mod appender;
mod cli;
mod consistency;
mod fixture;
mod format_rules;
mod keys_and_witnesses;
mod testdata;
