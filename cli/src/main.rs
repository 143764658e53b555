//! `openapi-mcp`: a thin CLI over the runtime and codegen libraries.

mod args;
mod commands;

use std::process::ExitCode;

use clap::Parser;

/// Context marker for errors caused by the user's input (exit code 1 instead of 2).
pub const BAD_INPUT: &str = "bad input";

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    init_logging(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            args::Command::Tools(a) => commands::tools::run(a).await,
            args::Command::Proxy(a) => commands::proxy::run(a).await,
            args::Command::Generate(a) => commands::generate::run(a).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(err) => {
            let bad_input = err.chain().any(|c| c.to_string() == BAD_INPUT);
            let msg = err
                .chain()
                .filter(|c| c.to_string() != BAD_INPUT)
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ");
            eprintln!("error: {msg}");
            ExitCode::from(if bad_input { 1 } else { 2 })
        }
    }
}

fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    // rmcp's own info lines (handshakes, stream ends) are noise for users; keep them at warn.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("{default},rmcp=warn")));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}
