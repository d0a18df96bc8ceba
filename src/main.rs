use std::process::ExitCode;

use clap::Parser;

/// See `Cargo.toml` for why (a batch allocated on the writer's thread is freed on the
/// committer's).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    pitboss::cli::run(pitboss::cli::Cli::parse())
}
