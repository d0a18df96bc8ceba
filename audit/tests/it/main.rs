//! Integration tests: the CLI on real exports, the test vectors in `testdata/`, the appender.

mod appender;
mod cli;
mod fixture;
mod testdata;
