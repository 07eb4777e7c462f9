//! `rowtree advise`: the schema advisor on DDL files (see
//! `rowtree_advisor` and docs/advisor.md).
//!
//! Reads every file (refusing any over 16 MiB before reading it), runs the
//! advisor on them as one schema, prints the report in the chosen format
//! on stdout, and exits 0 (clean), 1 (an error-level finding) or 2
//! (unusable input: an unreadable file, a bad config or workload, or a
//! statement that did not parse or apply). With `--workload`,
//! [`crate::advise_forecast`] weighs the hotspot findings by the workload's
//! rates and quotes the simulator's forecast.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use rowtree_advisor::{Config, InputError, Report, Source, MAX_SOURCE_BYTES};

/// Output formats of `rowtree advise`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdviseFormat {
    /// Human-readable, coloured when stdout is a terminal.
    Text,
    /// `{"findings":[...],"errors":[...]}`.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
}

/// The SQL dialects `rowtree advise --dialect` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdviseDialect {
    /// GoogleSQL DDL (Spanner's default dialect).
    Googlesql,
    /// Spanner's PostgreSQL-dialect DDL (`bigint`, `varchar`,
    /// `PRIMARY KEY (..)` inside the column list, `nextval('s')`...).
    Postgresql,
}

#[derive(Debug, Args)]
pub struct AdviseArgs {
    /// DDL files (GoogleSQL unless --dialect says otherwise), read in order
    /// as one schema (statements separated by `;`).
    #[arg(value_name = "FILE.sql", required_unless_present = "database")]
    files: Vec<PathBuf>,
    /// Advise a live database instead of files: a database directory (as
    /// `rowtree sql --data-dir` uses) or a `rowtree serve` data directory
    /// (then see --database-name). Its DDL is advised, and every split its
    /// load history recorded as hot is explained: table or index, key
    /// columns, the rule behind it and the fix. (A directory a running
    /// server holds is locked; query ROWTREE_SYS.SCHEMA_ADVICE and
    /// ROWTREE_SYS.HOT_SPLIT_ADVICE through the server instead.)
    #[arg(long, value_name = "DIR", conflicts_with = "files")]
    database: Option<PathBuf>,
    /// With a `rowtree serve` data directory: which database
    /// (`projects/P/instances/I/databases/D`); optional if it holds only one.
    #[arg(long, value_name = "NAME", requires = "database")]
    database_name: Option<String>,
    /// The dialect of the DDL files; the fixes are printed in the same
    /// dialect. A live --database is read in its own dialect.
    #[arg(
        long,
        value_enum,
        default_value = "googlesql",
        conflicts_with = "database"
    )]
    dialect: AdviseDialect,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: AdviseFormat,
    /// A TOML file silencing rules (globally or per object), overriding
    /// severities, and setting the shard count of hash-prefix fixes.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A workload file (as `rowtree simulate` reads, docs/simulator.md):
    /// hotspot findings on tables written at less than a tenth of one
    /// node's write capacity drop to `info`; the others get the
    /// simulator's forecast for the schema as written and with the fix.
    #[arg(long, value_name = "FILE.toml")]
    workload: Option<PathBuf>,
    /// Nodes the --workload forecast simulates.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "workload",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    nodes: u32,
}

/// The long help's list of rules, generated from the advisor itself.
pub fn rules_help() -> String {
    let mut out = String::from(
        "Rules (silence one with `-- rowtree:allow(rule-id)` on or just before its statement):\n",
    );
    for rule in rowtree_advisor::Rule::all() {
        out.push_str(&format!("  {:<21} {}\n", rule.id(), rule.summary()));
    }
    out.push_str(
        "\nExit status: 0 no error-level finding, 1 an error-level finding, 2 unusable input \
         (each input error is reported as file:line:column and analysis continues with the \
         statements that were usable).\nDocs: docs/advisor.md and docs/advisor/<rule-id>.md.",
    );
    out
}

fn read(path: &PathBuf) -> Result<String, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read: {e}"))?
        .len();
    if size > MAX_SOURCE_BYTES as u64 {
        return Err(format!(
            "file is {size} bytes; the advisor reads files of at most {MAX_SOURCE_BYTES} bytes (16 MiB)"
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))
}

pub fn run(args: AdviseArgs) -> ExitCode {
    let config = match &args.config {
        None => Config::default(),
        Some(path) => {
            match read(path).and_then(|t| Config::from_toml(&t).map_err(|e| e.to_string())) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("rowtree advise: {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
        }
    };
    let mut sources = Vec::new();
    let mut unreadable = Vec::new();
    let live = match &args.database {
        None => None,
        Some(dir) => match crate::advise_live::Live::open(dir, args.database_name.as_deref()) {
            Ok(live) => {
                sources.push(live.source.clone());
                Some(live)
            }
            Err(e) => {
                eprintln!("rowtree advise: {}: {e}", dir.display());
                return ExitCode::from(2);
            }
        },
    };
    for path in &args.files {
        let name = path.display().to_string();
        match read(path) {
            Ok(text) => sources.push(Source { name, text }),
            Err(message) => unreadable.push(InputError {
                file: name,
                line: 1,
                column: 1,
                message,
            }),
        }
    }
    let dialect = match (&live, args.dialect) {
        (Some(live), _) => live.dialect,
        (None, AdviseDialect::Googlesql) => rowtree_advisor::Dialect::GoogleSql,
        (None, AdviseDialect::Postgresql) => rowtree_advisor::Dialect::PostgreSql,
    };
    let config = config.with_dialect(dialect);
    let mut report: Report = rowtree_advisor::advise(&sources, &config);
    report.errors.splice(0..0, unreadable);
    if let Some(path) = &args.workload {
        if !report.errors.is_empty() {
            eprintln!(
                "rowtree advise: --workload: the schema has input errors, so nothing is simulated"
            );
        } else {
            let forecast = read(path).and_then(|text| {
                crate::advise_forecast::apply(&mut report, dialect, &sources, &text, args.nodes)
            });
            if let Err(e) = forecast {
                eprintln!("rowtree advise: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    let stdout = std::io::stdout();
    let hot = live.as_ref().map(|l| l.hot_splits(&report.findings));
    let text = match (args.format, &hot) {
        (AdviseFormat::Text, None) => rowtree_advisor::to_text(&report, stdout.is_terminal()),
        (AdviseFormat::Text, Some(hot)) => {
            rowtree_advisor::to_text(&report, stdout.is_terminal())
                + "\n"
                + &crate::advise_live::hot_splits_text(hot)
        }
        (AdviseFormat::Json, None) => rowtree_advisor::to_json(&report) + "\n",
        (AdviseFormat::Json, Some(hot)) => {
            let mut doc: serde_json::Value =
                serde_json::from_str(&rowtree_advisor::to_json(&report)).expect("valid JSON");
            doc["hot_splits"] = crate::advise_live::hot_splits_json(hot);
            serde_json::to_string_pretty(&doc).expect("serializable") + "\n"
        }
        (AdviseFormat::Sarif, _) => rowtree_advisor::to_sarif(&report) + "\n",
    };
    let mut lock = stdout.lock();
    if lock
        .write_all(text.as_bytes())
        .and_then(|()| lock.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    ExitCode::from(report.exit_code() as u8)
}
