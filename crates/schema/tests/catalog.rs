//! Catalog behaviour that scenario scripts cannot show well: limits that
//! need very long statements, the navigation API, and replay determinism.

use rowtree_schema::{Catalog, Effect};
use rowtree_types::Code;

fn apply(catalog: &Catalog, sql: &str) -> Catalog {
    match catalog.apply_sql(sql) {
        Ok((next, _)) => next,
        Err(e) => panic!("{sql}: {} {}", e.code(), e.message()),
    }
}

fn columns(n: usize) -> String {
    (1..=n)
        .map(|i| format!("C{i} INT64"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn a_table_may_have_1024_columns_but_not_1025() {
    let ok = format!("CREATE TABLE T ({}) PRIMARY KEY (C1)", columns(1024));
    let catalog = apply(&Catalog::new(), &ok);
    assert_eq!(catalog.table("t").map(|t| t.columns.len()), Some(1024));

    let too_many = format!("CREATE TABLE U ({}) PRIMARY KEY (C1)", columns(1025));
    let err = Catalog::new().apply_sql(&too_many).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(
        err.message(),
        "Table U has too many columns; the limit is 1024."
    );

    let err = catalog
        .apply_sql("ALTER TABLE T ADD COLUMN Extra INT64")
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Table T has too many columns; the limit is 1024."
    );
}

#[test]
fn a_table_may_have_128_indexes_but_not_129() {
    let mut catalog = apply(
        &Catalog::new(),
        "CREATE TABLE T (K INT64, V INT64) PRIMARY KEY (K)",
    );
    for i in 0..128 {
        catalog = apply(&catalog, &format!("CREATE INDEX I{i} ON T(V)"));
    }
    let err = catalog.apply_sql("CREATE INDEX I128 ON T(V)").unwrap_err();
    assert_eq!(
        err.message(),
        "Cannot add index I128 to table T: too many indices (limit 128 per table)."
    );
}

const SCHEMA: &[&str] = &[
    "CREATE TABLE Users (UserId INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (UserId)",
    "CREATE TABLE Albums (UserId INT64 NOT NULL, AlbumId INT64 NOT NULL) PRIMARY KEY (UserId, AlbumId), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
    "CREATE INDEX UsersByName ON Users(Name)",
    "CREATE TABLE Photos (UserId INT64 NOT NULL, AlbumId INT64 NOT NULL, PhotoId INT64 NOT NULL, A INT64, B INT64 AS (C + 1) STORED, C INT64 AS (A * 2) STORED) PRIMARY KEY (UserId, AlbumId, PhotoId), INTERLEAVE IN PARENT Albums",
    "ALTER TABLE Users ADD COLUMN Email STRING(MAX)",
    "ALTER TABLE Users DROP COLUMN Name",
];

#[test]
fn navigation_follows_the_interleave_tree() {
    let mut catalog = Catalog::new();
    for (i, sql) in SCHEMA.iter().enumerate() {
        if i == SCHEMA.len() - 1 {
            // Name is indexed; drop the index first.
            catalog = apply(&catalog, "DROP INDEX UsersByName");
        }
        catalog = apply(&catalog, sql);
    }
    let users = catalog.table("USERS").expect("Users exists");
    let albums = catalog.table("albums").expect("Albums exists");
    let photos = catalog.table("Photos").expect("Photos exists");
    assert_eq!(
        (users.id, albums.id, photos.id),
        (1, 2, 4),
        "tables and indexes share one id counter"
    );
    assert_eq!(
        catalog
            .children(users.id)
            .iter()
            .map(|t| t.id)
            .collect::<Vec<_>>(),
        vec![albums.id]
    );
    assert_eq!(
        catalog
            .ancestors(photos.id)
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        vec!["Users", "Albums"]
    );
    assert_eq!(catalog.root_of(photos.id).id, users.id);
    assert_eq!(catalog.root_of(users.id).id, users.id);
    assert_eq!(photos.key_column_positions(), vec![0, 1, 2]);

    // C is computed from A, B from C: C must be evaluated first.
    let c = photos.column("c").map(|(p, _)| p);
    let b = photos.column("b").map(|(p, _)| p);
    assert_eq!(
        photos
            .generated_order()
            .iter()
            .copied()
            .map(Some)
            .collect::<Vec<_>>(),
        vec![c, b]
    );

    // Column ids are stable: Email got a fresh id after Name (id 2) was dropped.
    let (position, email) = users.column("email").expect("Email exists");
    assert_eq!((position, email.id), (1, 3));
    assert_eq!(catalog.version(), SCHEMA.len() as u64 + 1);
}

#[test]
fn replaying_the_same_statements_yields_the_same_ids() {
    let run = || {
        let mut catalog = Catalog::new();
        let mut all_effects = Vec::new();
        for sql in &SCHEMA[..4] {
            let (next, effects) = catalog.apply_sql(sql).expect("valid");
            catalog = next;
            all_effects.extend(effects);
        }
        let ids: Vec<u32> = catalog
            .tables()
            .map(|t| t.id)
            .chain(catalog.indexes().map(|i| i.id))
            .collect();
        (ids, all_effects, catalog.ddl())
    };
    let (ids, effects, ddl) = run();
    assert_eq!(run(), (ids.clone(), effects.clone(), ddl));
    assert_eq!(ids, vec![1, 2, 4, 3]);
    assert_eq!(effects, vec![Effect::BackfillIndex(3)]);
}

#[test]
fn a_refused_statement_leaves_the_catalog_unchanged() {
    let catalog = apply(&Catalog::new(), SCHEMA[0]);
    let before = catalog.ddl();
    let err = catalog
        .apply_sql(
            "CREATE TABLE Bad (X INT64 NOT NULL) PRIMARY KEY (X), INTERLEAVE IN PARENT Users",
        )
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(catalog.ddl(), before);
    assert!(catalog.table("Bad").is_none());
    // The failed statement did not consume an id either.
    let next = apply(&catalog, "CREATE TABLE Next (X INT64) PRIMARY KEY (X)");
    assert_eq!(next.table("Next").map(|t| t.id), Some(2));
}
