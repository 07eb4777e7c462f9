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
    }
}
