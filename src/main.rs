use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of glibc's malloc: the service allocates many small, short-lived values
/// per bet (JSON values, ids, rows), where glibc's allocator took about a sixth of the CPU under
/// load, and it returns freed memory to the system more readily.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    pitboss::cli::run(pitboss::cli::Cli::parse())
}
