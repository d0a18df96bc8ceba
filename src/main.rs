use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    pitboss::cli::run(pitboss::cli::Cli::parse())
}
