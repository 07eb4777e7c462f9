//! `rowtree`: the command-line entry point.
//!
//! * `rowtree sql` applies statements from a file (`-f`) or the command line
//!   (`-e`) to a database in a directory (`--data-dir`) or in memory
//!   (`--in-memory`), reporting each failure with its statement number, line
//!   and column.
//! * `rowtree ddl` prints a database's schema as Spanner's GetDatabaseDdl does.

mod format;
mod params;
mod sql;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Rowtree: a Spanner-compatible SQL database that shows where your schema will hotspot.
#[derive(Debug, Parser)]
#[command(name = "rowtree", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run GoogleSQL statements: queries, DML, DDL, EXPLAIN.
    ///
    /// Statements are separated by `;`. With -f or -e, every statement runs
    /// in order; a failed statement is reported with its number, line and
    /// column, and the rest still run unless --bail is given; the exit
    /// status is 1 if any statement failed. Without -f/-e, an interactive
    /// shell starts (or, when standard input is not a terminal, the script
    /// on standard input runs). Outside BEGIN ... COMMIT each statement is
    /// its own transaction.
    Sql(SqlArgs),
    /// Print the schema as Spanner's GetDatabaseDdl would: one canonical
    /// statement per entry, separated by `;` and a blank line.
    Ddl(DdlArgs),
    /// Serve Spanner's gRPC API, so the official client libraries work
    /// against Rowtree unmodified.
    ///
    /// Point a client at the server as at Google's emulator:
    /// `SPANNER_EMULATOR_HOST=127.0.0.1:9010` (and a project id, e.g.
    /// `GOOGLE_CLOUD_PROJECT=my-project`). Create an instance (any config
    /// name is accepted; `emulator-config` is listed), then databases, with
    /// the admin APIs as usual. Every instance and database lives in the data
    /// directory and survives restarts. Stop with Ctrl-C or SIGTERM: the
    /// server stops accepting requests and lets those in flight finish.
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Directory holding every instance and database (created if missing).
    #[arg(long, value_name = "DIR", default_value = "rowtree-data", conflicts_with = "in_memory")]
    data_dir: PathBuf,
    /// Keep everything in memory; nothing survives the process.
    #[arg(long)]
    in_memory: bool,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: std::net::IpAddr,
    /// Port to listen on (9010, like Google's emulator).
    #[arg(long, default_value_t = 9010)]
    port: u16,
    /// Block cache per database, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    cache_mib: u64,
}

/// Where the database lives.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct Location {
    /// Directory of a durable database (created if missing).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Use a fresh database held in memory for this command only.
    #[arg(long)]
    in_memory: bool,
}

#[derive(Debug, Args)]
struct SqlArgs {
    #[command(flatten)]
    location: Location,
    /// Read statements from this file (`-` for standard input).
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Run this text (one or more statements separated by `;`).
    #[arg(short = 'e', long = "execute", value_name = "SQL")]
    execute: Vec<String>,
    /// Stop at the first failed statement.
    #[arg(long)]
    bail: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// A typed query parameter, usable as @name: `--param id=INT64:42`.
    #[arg(long = "param", value_name = "NAME=TYPE:VALUE")]
    params: Vec<String>,
}

#[derive(Debug, Args)]
struct DdlArgs {
    /// Directory of the database.
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
}

/// How `rowtree sql` prints results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned tables for humans.
    Table,
    /// CSV with a header row.
    Csv,
    /// One JSON object per statement per line; values as Spanner's REST API encodes them.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Sql(args) => sql::run(args),
        Command::Ddl(args) => sql::print_ddl(&args.data_dir),
        Command::Serve(args) => serve(args),
    }
}

/// `rowtree serve`: runs the gRPC server until SIGINT or SIGTERM.
fn serve(args: ServeArgs) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let config = rowtree_server::Config {
        data_dir: (!args.in_memory).then_some(args.data_dir),
        addr: std::net::SocketAddr::new(args.host, args.port),
        cache_bytes: args.cache_mib << 20,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        match &config.data_dir {
            Some(dir) => tracing::info!(data_dir = %dir.display(), "opening"),
            None => tracing::info!("in memory: nothing will be kept"),
        }
        let mut server = match rowtree_server::Server::start(config).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        eprintln!("rowtree: serving Spanner's gRPC API on {}", server.local_addr);
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: cannot watch for SIGTERM: {e}");
                return ExitCode::FAILURE;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
            r = server.wait() => {
                eprintln!("error: the server stopped: {}", r.err().unwrap_or_default());
                return ExitCode::FAILURE;
            }
        }
        tracing::info!("shutting down: finishing requests in flight");
        match server.shutdown().await {
            Ok(()) => {
                tracing::info!("stopped");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}
