//! PostgreSQL-dialect DDL through the catalog: the PostgreSQL parser's
//! statements apply like GoogleSQL's, and GetDatabaseDdl's PostgreSQL form
//! re-applies to the same schema.

use rowtree_schema::Catalog;
use rowtree_types::{Dialect, Type};

const PG: Dialect = Dialect::PostgreSql;

fn apply_all(statements: &[&str]) -> Catalog {
    let mut catalog = Catalog::new();
    for s in statements {
        catalog = catalog
            .apply_sql_in(PG, s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .0;
    }
    catalog
}

const SCHEMA: &[&str] = &[
    "CREATE SEQUENCE seq BIT_REVERSED_POSITIVE SKIP RANGE 1 1000",
    "CREATE TABLE Singers (Singer_Id bigint PRIMARY KEY, \"FirstName\" varchar(1024), \
     Bio text NOT NULL DEFAULT 'none', Score float8 DEFAULT (1.5 * 2), \
     Tags varchar(20)[], Data jsonb, Updated spanner.commit_timestamp, \
     NameKey bigint GENERATED ALWAYS AS (spanner.farm_fingerprint(\"FirstName\")) STORED, \
     CHECK (Score >= 0))",
    "CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint DEFAULT nextval('seq'), \
     title character varying(100), budget numeric, released date, \
     PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE",
    "CREATE TABLE labels (id bigint PRIMARY KEY, singer bigint, \
     CONSTRAINT fk_singer FOREIGN KEY (singer) REFERENCES singers (singer_id))",
    "CREATE UNIQUE INDEX albums_by_title ON albums (singer_id, title DESC) INCLUDE (budget) \
     INTERLEAVE IN singers",
    "CREATE INDEX labels_by_singer ON labels (singer) WHERE singer IS NOT NULL",
    "CREATE VIEW named SQL SECURITY INVOKER AS SELECT s.singer_id, s.\"FirstName\" AS name \
     FROM singers s WHERE s.singer_id > 0",
];

#[test]
fn names_fold_and_types_map() {
    let catalog = apply_all(SCHEMA);
    let singers = catalog.table("singers").expect("folded table name");
    assert_eq!(singers.name, "singers");
    let names: Vec<&str> = singers.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "singer_id",
            "FirstName",
            "bio",
            "score",
            "tags",
            "data",
            "updated",
            "namekey"
        ]
    );
    assert_eq!(singers.columns[4].ty, Type::Array(Box::new(Type::String)));
    assert_eq!(singers.columns[5].ty, Type::Json);
    assert!(singers.columns[6].allow_commit_timestamp);
    assert!(catalog.index("albums_by_title").unwrap().unique);
    assert!(catalog.index("labels_by_singer").unwrap().null_filtered);
}

#[test]
fn printed_ddl_is_postgresql_and_reapplies_to_the_same_schema() {
    let catalog = apply_all(SCHEMA);
    let ddl = catalog.ddl_in(PG);
    let joined = ddl.join(";\n");
    for expected in [
        "CREATE SEQUENCE seq BIT_REVERSED_POSITIVE SKIP RANGE 1 1000",
        "  singer_id bigint NOT NULL,\n",
        "  \"FirstName\" character varying(1024),\n",
        "  bio character varying NOT NULL DEFAULT 'none',\n",
        "  score double precision DEFAULT (1.5 * 2),\n",
        "  tags character varying(20)[],\n",
        "  updated spanner.commit_timestamp,\n",
        "GENERATED ALWAYS AS (spanner.farm_fingerprint(\"FirstName\")) STORED",
        "  PRIMARY KEY(singer_id)\n)",
        "  album_id bigint NOT NULL DEFAULT nextval('seq'),\n",
        ") INTERLEAVE IN PARENT singers ON DELETE CASCADE",
        "CONSTRAINT fk_singer FOREIGN KEY (singer) REFERENCES singers(singer_id)",
        "CREATE UNIQUE INDEX albums_by_title ON albums (singer_id, title DESC) INCLUDE (budget) \
         INTERLEAVE IN singers",
        "CREATE INDEX labels_by_singer ON labels (singer) WHERE singer IS NOT NULL",
        "CREATE VIEW named SQL SECURITY INVOKER AS SELECT s.singer_id",
    ] {
        assert!(
            joined.contains(expected),
            "missing {expected:?} in\n{joined}"
        );
    }
    let again = apply_all(&ddl.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again.ddl_in(PG), ddl);
    // The GoogleSQL form of the same catalog is still GoogleSQL.
    assert!(catalog
        .ddl_in(Dialect::GoogleSql)
        .iter()
        .any(|s| s.contains("singer_id INT64 NOT NULL")));
}

#[test]
fn alter_column_forms_keep_the_rest_of_the_column() {
    let mut statements = SCHEMA.to_vec();
    statements.extend([
        "ALTER TABLE albums ALTER COLUMN title TYPE varchar(200)",
        "ALTER TABLE albums ALTER COLUMN released SET NOT NULL",
        "ALTER TABLE singers ALTER COLUMN bio DROP NOT NULL",
        "ALTER TABLE singers ALTER COLUMN bio SET DEFAULT 'n/a'",
        "ALTER TABLE singers ADD COLUMN extra bytea",
        "ALTER TABLE singers DROP COLUMN extra",
        "ALTER TABLE albums ALTER COLUMN released DROP DEFAULT",
    ]);
    let catalog = apply_all(&statements);
    let albums = catalog.table("albums").unwrap();
    let (_, title) = albums.column("title").unwrap();
    assert!(!title.not_null);
    assert_eq!(title.max_length(), Some(200));
    let (_, released) = albums.column("released").unwrap();
    assert!(released.not_null);
    assert_eq!(released.ty, Type::Date);
    let singers = catalog.table("singers").unwrap();
    let (_, bio) = singers.column("bio").unwrap();
    assert!(!bio.not_null);
    assert_eq!(bio.default.as_ref().unwrap().text, "'n/a'");
    // A key column's type cannot change, in either dialect.
    let err = catalog
        .apply_sql_in(PG, "ALTER TABLE albums ALTER COLUMN album_id TYPE varchar")
        .unwrap_err();
    assert!(err.to_string().contains("Cannot change"), "{err}");
}

#[test]
fn ttl_is_the_row_deletion_policy_printed_back_in_postgresql() {
    let catalog = apply_all(&[
        "CREATE TABLE events (id bigint PRIMARY KEY, created_at timestamptz, note text) \
         TTL INTERVAL '30 days' ON created_at",
    ]);
    let table = catalog.table("events").expect("events");
    assert_eq!(table.row_deletion_policy.expect("a policy").days, 30);
    assert_eq!(
        table.row_deletion_expression(PG).as_deref(),
        Some("INTERVAL '30 days' ON created_at")
    );
    assert_eq!(
        table.row_deletion_expression(Dialect::GoogleSql).as_deref(),
        Some("OLDER_THAN(created_at, INTERVAL 30 DAY)")
    );
    let ddl = catalog.ddl_in(PG);
    assert!(
        ddl[0].ends_with(")\n) TTL INTERVAL '30 days' ON created_at"),
        "{ddl:?}"
    );
    // The printed form re-applies to the same schema.
    let again = apply_all(&ddl.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again.ddl_in(PG), ddl);

    let apply = |catalog: &Catalog, sql: &str| catalog.apply_sql_in(PG, sql).map(|(c, _)| c);
    let err = |catalog: &Catalog, sql: &str| {
        apply(catalog, sql)
            .map(|_| ())
            .expect_err(sql)
            .message()
            .to_string()
    };
    assert!(err(
        &catalog,
        "ALTER TABLE events ADD TTL INTERVAL '1 day' ON created_at"
    )
    .contains("already has a row deletion policy"));
    assert!(err(
        &catalog,
        "ALTER TABLE events ALTER TTL INTERVAL '1 day' ON note"
    )
    .contains("must be of type TIMESTAMP"));
    assert!(err(
        &catalog,
        "ALTER TABLE events ALTER TTL INTERVAL '-1 days' ON created_at"
    )
    .contains("must not be negative"));
    assert!(
        err(&catalog, "ALTER TABLE events DROP COLUMN created_at").contains("row deletion policy")
    );
    let altered = apply(
        &catalog,
        "ALTER TABLE events ALTER TTL INTERVAL '1 day' ON created_at",
    )
    .expect("alter ttl");
    assert!(altered.ddl_in(PG)[0].ends_with(" TTL INTERVAL '1 days' ON created_at"));
    let dropped = apply(&altered, "ALTER TABLE events DROP TTL").expect("drop ttl");
    assert!(dropped
        .table("events")
        .expect("events")
        .row_deletion_policy
        .is_none());
    assert!(err(&dropped, "ALTER TABLE events DROP TTL").contains("does not have"));
    let added = apply(
        &dropped,
        "ALTER TABLE events ADD TTL INTERVAL '0 days' ON created_at",
    )
    .expect("add ttl");
    assert_eq!(
        added
            .table("events")
            .expect("events")
            .row_deletion_policy
            .expect("a policy")
            .days,
        0
    );
}
