//! `rowtree keyviz`: writes a database's key visualizer page.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use rowtree_db::Database;
use rowtree_kv::Granularity;

/// The interval of the heatmap's columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GranularityArg {
    /// 1-minute columns, the last 6 hours.
    Minute,
    /// 10-minute columns, the last 4 days.
    #[value(name = "10minute")]
    TenMinutes,
    /// 1-hour columns, the last 28 days.
    Hour,
}

impl From<GranularityArg> for Granularity {
    fn from(g: GranularityArg) -> Granularity {
        match g {
            GranularityArg::Minute => Granularity::Minute,
            GranularityArg::TenMinutes => Granularity::TenMinutes,
            GranularityArg::Hour => Granularity::Hour,
        }
    }
}

#[derive(Debug, Args)]
pub struct KeyvizArgs {
    /// A database directory (as `rowtree sql --data-dir` uses), or the data
    /// directory of `rowtree serve` (then see --database).
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// With a `rowtree serve` data directory: which database
    /// (`projects/P/instances/I/databases/D`); optional if it holds only one.
    #[arg(long, value_name = "NAME")]
    database: Option<String>,
    /// Where to write the page (one self-contained HTML file).
    #[arg(long, value_name = "FILE.html")]
    out: PathBuf,
    /// Column interval.
    #[arg(long, value_enum, default_value_t = GranularityArg::Minute)]
    granularity: GranularityArg,
}

/// `rowtree keyviz`.
pub fn run(args: KeyvizArgs) -> ExitCode {
    match write(&args) {
        Ok(summary) => {
            eprintln!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn write(args: &KeyvizArgs) -> Result<String, String> {
    let g = Granularity::from(args.granularity);
    let (db, mut name) = open_database(&args.data_dir, args.database.as_deref())?;
    if name == args.data_dir.display().to_string() {
        // A database directory: title it by the directory's name, not its
        // whole (perhaps temporary) path.
        name = args
            .data_dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "database".into());
    }
    let title = format!("Key Visualizer: {name}");
    let h = rowtree_server::keyviz::database_heatmap(&db, &title, g);
    let html = rowtree_keyviz::render_html(&h);
    std::fs::write(&args.out, html)
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    Ok(format!(
        "keyviz: wrote {} ({} intervals of one {}, {} key buckets, {} hot or unsplittable splits)",
        args.out.display(),
        h.columns.len(),
        rowtree_keyviz::granularity_name(g),
        h.rows.len(),
        h.hot.len()
    ))
}

/// The database in `dir` (a database directory, or a `rowtree serve` data
/// directory with `database` choosing among its databases) and its name.
pub(crate) fn open_database(
    dir: &Path,
    database: Option<&str>,
) -> Result<(Database, String), String> {
    if !dir.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if !dir.join("registry.json").exists() {
        if let Some(name) = database {
            return Err(format!(
                "--database {name}: {} is a single database, not a `rowtree serve` data directory",
                dir.display()
            ));
        }
        let db = Database::open_with(dir, rowtree_sql::database_options())
            .map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
        return Ok((db, dir.display().to_string()));
    }
    // A `rowtree serve` data directory: every database is listed in registry.json.
    let registry =
        rowtree_server::registry::Registry::open(Some(dir), rowtree_sql::database_options())?;
    let all = registry.all();
    let hosted = match database {
        Some(name) => registry
            .database(name)
            .map_err(|_| format!("no database named {name} in {}", dir.display()))?,
        None => match all.as_slice() {
            [one] => one.clone(),
            [] => return Err(format!("{} holds no databases", dir.display())),
            many => {
                let names: Vec<&str> = many.iter().map(|h| h.meta.name.as_str()).collect();
                return Err(format!(
                    "{} holds several databases; choose one with --database: {}",
                    dir.display(),
                    names.join(", ")
                ));
            }
        },
    };
    let name = hosted.meta.name.clone();
    Ok((hosted.db, name))
}
