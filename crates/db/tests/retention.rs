//! The `version_retention_period` database option sets how long old
//! versions stay readable.

use std::time::Duration;

use rowtree_db::{Code, Database, Options};

#[test]
fn version_retention_period_option_changes_retention() {
    let db = Database::in_memory();
    assert_eq!(db.version_retention(), Duration::from_secs(3600));
    db.apply_ddl(&["ALTER DATABASE db SET OPTIONS (version_retention_period = '2d')"])
        .unwrap();
    assert_eq!(db.version_retention(), Duration::from_secs(2 * 86_400));
    let now = db.visible_timestamp();
    let oldest = db.oldest_readable_timestamp();
    assert!(now - oldest >= 2 * 86_400 * 1_000_000_000 - 10_000_000_000);

    for bad in ["'10m'", "'8d'", "'7x'", "7"] {
        let e = db
            .apply_ddl(&[&format!(
                "ALTER DATABASE db SET OPTIONS (version_retention_period = {bad})"
            )])
            .unwrap_err();
        assert_eq!(e.error.code(), Code::InvalidArgument, "{bad}: {}", e.error);
    }
    // Unsetting returns to the default.
    db.apply_ddl(&["ALTER DATABASE db SET OPTIONS (version_retention_period = NULL)"])
        .unwrap();
    assert_eq!(db.version_retention(), Duration::from_secs(3600));
}

#[test]
fn max_version_retention_caps_the_database_option() {
    let db = Database::in_memory_with(Options {
        max_version_retention: Some(Duration::from_secs(5)),
        ..Options::default()
    });
    assert_eq!(db.version_retention(), Duration::from_secs(5));
    db.apply_ddl(&["ALTER DATABASE db SET OPTIONS (version_retention_period = '2d')"])
        .unwrap();
    // The option is recorded as given; the cap still decides.
    assert_eq!(db.version_retention(), Duration::from_secs(5));
}
