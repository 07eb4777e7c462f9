//! The shared glue of Rowtree's golden tests.
//!
//! Several crates test a layer by running scripts of commands and comparing
//! what the layer printed with the output recorded beside each command: the
//! parser's trees (`rowtree-parser`, `tests/parse/`), expression results
//! (`rowtree-expr`, `tests/eval.rs`), DDL against the catalog
//! (`rowtree-schema`, `tests/ddl.rs`), mutations and reads
//! (`rowtree-db`, `tests/mutations.rs`) and whole plans (`rowtree-sql`,
//! `tests/plans.rs`). The scripts are [goldenscripts](goldenscript): plain
//! text files of commands, each followed by `---` and the output expected
//! from it. A `!` before a command expects it to fail, and its output is
//! then the error.
//!
//! What differs from crate to crate is the [`Runner`]: it knows the commands
//! of its layer (`parse`, `eval`, `ddl`, `commit`, `plan`, ...) and turns
//! each into text. What is the same everywhere lives here:
//!
//! * the scripts of one test target sit in one directory,
//!   `tests/scripts/<dir>/` of the crate, one file per topic;
//! * [`scripts!`] makes one `#[test]` per script, named after the file, so
//!   a failure names its script and one script can run alone
//!   (`cargo test -p rowtree-parser --test parse alter`);
//! * the same macro adds `every_script_has_a_test`, which fails when a file
//!   of the directory has no test or a test has no file: a new script needs
//!   its line in the list, and cannot be forgotten.
//!
//! A run executes the commands in order, writes the script out again with
//! each command's output after it, and compares that with the file: any
//! difference fails the test with a diff. Expectations are not written by
//! hand: run the tests with `UPDATE_GOLDENFILES=1` set, and every script is
//! rewritten with the output the code produces now; review that as a diff
//! (`git diff tests/scripts/`) before committing it. For example:
//!
//! ```text
//! UPDATE_GOLDENFILES=1 cargo test -p rowtree-sql --test plans
//! ```
//!
//! This crate is a dev-dependency only; it is never part of a build of
//! Rowtree itself.

pub mod protos;

use std::collections::BTreeSet;
use std::io;
use std::path::Path;

pub use goldenscript;
pub use goldenscript::{Command, Context, Runner};

/// Defines the tests of one directory of goldenscripts.
///
/// ```ignore
/// rowtree_testkit::scripts! {
///     dir: "ddl",
///     runner: Runner { catalog: Catalog::new() },
///     scripts: [tables, indexes, sequences],
/// }
/// ```
///
/// makes a test `tables` running `tests/scripts/ddl/tables` (relative to
/// the calling crate's manifest directory) with a fresh runner (the
/// `runner` expression is evaluated anew for every script, so scripts do
/// not share state), the same for each name, and a test
/// `every_script_has_a_test` that checks the list against the directory
/// (see [`check_scripts_listed`]).
#[macro_export]
macro_rules! scripts {
    (
        dir: $dir:literal,
        runner: $runner:expr,
        scripts: [$($name:ident),* $(,)?] $(,)?
    ) => {
        $(
            #[test]
            fn $name() -> ::std::io::Result<()> {
                let path = concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/scripts/",
                    $dir,
                    "/",
                    stringify!($name)
                );
                $crate::goldenscript::run(&mut $runner, path)
            }
        )*

        #[test]
        fn every_script_has_a_test() -> ::std::io::Result<()> {
            $crate::check_scripts_listed(
                concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scripts/", $dir),
                &[$(stringify!($name)),*],
            )
        }
    };
}

/// Fails (panics) unless the files in `dir` are exactly the scripts named
/// in `listed`, in any order: a script nobody runs, or a test whose script
/// is missing, is a mistake worth a failing test.
pub fn check_scripts_listed(dir: impl AsRef<Path>, listed: &[&str]) -> io::Result<()> {
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(dir.as_ref())? {
        files.insert(entry?.file_name().to_string_lossy().into_owned());
    }
    let listed: BTreeSet<String> = listed.iter().map(|s| s.to_string()).collect();
    let untested: Vec<&String> = files.difference(&listed).collect();
    let missing: Vec<&String> = listed.difference(&files).collect();
    assert!(
        untested.is_empty() && missing.is_empty(),
        "{}: scripts without a test: {untested:?}; tests without a script: {missing:?}",
        dir.as_ref().display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_scripts_must_match_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a", "b"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        check_scripts_listed(dir.path(), &["b", "a"]).unwrap();
        for listed in [&["a"][..], &["a", "b", "c"]] {
            let result = std::panic::catch_unwind(|| check_scripts_listed(dir.path(), listed));
            assert!(result.is_err(), "{listed:?} should not match");
        }
    }
}
