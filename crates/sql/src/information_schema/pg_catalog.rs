//! `pg_catalog` of a PostgreSQL-dialect database: the system catalogs
//! PostgreSQL tools read most (`pg_namespace`, `pg_class`, `pg_attribute`,
//! `pg_type`, `pg_index`) and the views over them (`pg_tables`,
//! `pg_indexes`, `pg_views`, `pg_sequences`), computed from the catalog
//! snapshot a statement reads, as the information schema is.
//!
//! Tools and ORMs find tables, columns, keys and types by joining these on
//! object ids, so the shape is PostgreSQL's: its column names in its order,
//! with its types as Rowtree has them (`oid`, `int2` and `int4` are
//! `bigint`; `name` and `"char"` are `text`; `int2vector` and `oidvector`
//! are `bigint[]`; `float4` is `real`). Columns Spanner's PostgreSQL
//! interface leaves out (`relacl`, `typinput`, ..., `pg_sequences.data_type`)
//! are left out here too.
//!
//! Object ids are synthetic but stable, so joins work and an id does not
//! change while the object exists:
//!
//! | object | oid |
//! |---|---|
//! | namespaces | `pg_catalog` 11, `public` 2200 (PostgreSQL's), `information_schema` 13000, `spanner_sys` 13001 |
//! | types | PostgreSQL's (`int8` 20, `varchar` 1043, `uuid` 2950, ...), the ones the wire protocol reports |
//! | a table | 16384 + 2 × its catalog id |
//! | a table's primary key (`<table>_pkey`) | the table's oid + 1 |
//! | a secondary index | 16384 + 2 × its catalog id (tables and indexes share the id counter) |
//! | a sequence | 2^30 + its catalog id |
//! | a view | 2^29 + a hash of its lower-case name |
//! | the information schema's tables | 14000 + position |
//! | these catalogs | PostgreSQL's for the five tables (`pg_class` 1259, ...), 12000 + position for the views |
//!
//! Every table has its primary key as an index named `<table>_pkey`, as
//! PostgreSQL names it (Spanner's information schema calls it
//! `PRIMARY_KEY`). The information schema's tables and these catalogs are
//! listed too, in their own namespaces (as views and tables), each with its
//! columns. Rows come in oid order.

use rowtree_schema::Catalog;
use rowtree_types::{Dialect, Type, Value};

use super::table_view::{spanner_type, table_views};

const PG_CATALOG: i64 = 11;
const PUBLIC: i64 = 2200;
const INFORMATION_SCHEMA: i64 = 13000;
const SPANNER_SYS: i64 = 13001;

/// The owner of everything (PostgreSQL's bootstrap superuser).
const OWNER: i64 = 10;

/// The kind of a column of a catalog table.
#[derive(Clone, Copy)]
enum K {
    /// `oid`, `int2`, `int4`, `int8`: `bigint`.
    I,
    /// `name`, `text`, `"char"`: `text`.
    T,
    B,
    /// `float4`: `real`.
    F,
    /// `int2vector`, `oidvector`, `int2[]`, `oid[]`: `bigint[]`.
    IA,
    /// `text[]`.
    TA,
}

impl K {
    fn ty(self) -> Type {
        match self {
            K::I => Type::Int64,
            K::T => Type::String,
            K::B => Type::Bool,
            K::F => Type::Float32,
            K::IA => Type::Array(Box::new(Type::Int64)),
            K::TA => Type::Array(Box::new(Type::String)),
        }
    }

    /// The column's type oid, as `pg_attribute.atttypid` reports it.
    fn type_oid(self) -> i64 {
        match self {
            K::I => 20,
            K::T => 25,
            K::B => 16,
            K::F => 700,
            K::IA => 1016,
            K::TA => 1009,
        }
    }
}

struct PgDef {
    name: &'static str,
    oid: i64,
    /// `r` (a table) or `v` (a view).
    kind: &'static str,
    columns: &'static [(&'static str, K)],
}

const PG_NAMESPACE: &str = "pg_namespace";
const PG_CLASS: &str = "pg_class";
const PG_ATTRIBUTE: &str = "pg_attribute";
const PG_TYPE: &str = "pg_type";
const PG_INDEX: &str = "pg_index";
const PG_TABLES: &str = "pg_tables";
const PG_INDEXES: &str = "pg_indexes";
const PG_VIEWS: &str = "pg_views";
const PG_SEQUENCES: &str = "pg_sequences";

const PG_DEFS: &[PgDef] = &[
    PgDef {
        name: PG_NAMESPACE,
        oid: 2615,
        kind: "r",
        columns: &[("oid", K::I), ("nspname", K::T), ("nspowner", K::I)],
    },
    PgDef {
        name: PG_CLASS,
        oid: 1259,
        kind: "r",
        columns: &[
            ("oid", K::I),
            ("relname", K::T),
            ("relnamespace", K::I),
            ("reltype", K::I),
            ("reloftype", K::I),
            ("relowner", K::I),
            ("relam", K::I),
            ("relfilenode", K::I),
            ("reltablespace", K::I),
            ("relpages", K::I),
            ("reltuples", K::F),
            ("relallvisible", K::I),
            ("reltoastrelid", K::I),
            ("relhasindex", K::B),
            ("relisshared", K::B),
            ("relpersistence", K::T),
            ("relkind", K::T),
            ("relnatts", K::I),
            ("relchecks", K::I),
            ("relhasrules", K::B),
            ("relhastriggers", K::B),
            ("relhassubclass", K::B),
            ("relrowsecurity", K::B),
            ("relforcerowsecurity", K::B),
            ("relispopulated", K::B),
            ("relreplident", K::T),
            ("relispartition", K::B),
            ("relrewrite", K::I),
            ("relfrozenxid", K::I),
            ("relminmxid", K::I),
            ("reloptions", K::TA),
            ("relpartbound", K::T),
        ],
    },
    PgDef {
        name: PG_ATTRIBUTE,
        oid: 1249,
        kind: "r",
        columns: &[
            ("attrelid", K::I),
            ("attname", K::T),
            ("atttypid", K::I),
            ("attstattarget", K::I),
            ("attlen", K::I),
            ("attnum", K::I),
            ("attndims", K::I),
            ("attcacheoff", K::I),
            ("atttypmod", K::I),
            ("attbyval", K::B),
            ("attalign", K::T),
            ("attstorage", K::T),
            ("attcompression", K::T),
            ("attnotnull", K::B),
            ("atthasdef", K::B),
            ("atthasmissing", K::B),
            ("attidentity", K::T),
            ("attgenerated", K::T),
            ("attisdropped", K::B),
            ("attislocal", K::B),
            ("attinhcount", K::I),
            ("attcollation", K::I),
            ("attoptions", K::TA),
            ("attfdwoptions", K::TA),
        ],
    },
    PgDef {
        name: PG_TYPE,
        oid: 1247,
        kind: "r",
        columns: &[
            ("oid", K::I),
            ("typname", K::T),
            ("typnamespace", K::I),
            ("typowner", K::I),
            ("typlen", K::I),
            ("typbyval", K::B),
            ("typtype", K::T),
            ("typcategory", K::T),
            ("typispreferred", K::B),
            ("typisdefined", K::B),
            ("typdelim", K::T),
            ("typrelid", K::I),
            ("typelem", K::I),
            ("typarray", K::I),
            ("typalign", K::T),
            ("typstorage", K::T),
            ("typnotnull", K::B),
            ("typbasetype", K::I),
            ("typtypmod", K::I),
            ("typndims", K::I),
            ("typcollation", K::I),
            ("typdefaultbin", K::T),
            ("typdefault", K::T),
        ],
    },
    PgDef {
        name: PG_INDEX,
        oid: 2610,
        kind: "r",
        columns: &[
            ("indexrelid", K::I),
            ("indrelid", K::I),
            ("indnatts", K::I),
            ("indnkeyatts", K::I),
            ("indisunique", K::B),
            ("indnullsnotdistinct", K::B),
            ("indisprimary", K::B),
            ("indisexclusion", K::B),
            ("indimmediate", K::B),
            ("indisclustered", K::B),
            ("indisvalid", K::B),
            ("indcheckxmin", K::B),
            ("indisready", K::B),
            ("indislive", K::B),
            ("indisreplident", K::B),
            ("indkey", K::IA),
            ("indcollation", K::IA),
            ("indclass", K::IA),
            ("indoption", K::IA),
            ("indexprs", K::T),
            ("indpred", K::T),
        ],
    },
    PgDef {
        name: PG_TABLES,
        oid: 12000,
        kind: "v",
        columns: &[
            ("schemaname", K::T),
            ("tablename", K::T),
            ("tableowner", K::T),
            ("tablespace", K::T),
            ("hasindexes", K::B),
            ("hasrules", K::B),
            ("hastriggers", K::B),
            ("rowsecurity", K::B),
        ],
    },
    PgDef {
        name: PG_INDEXES,
        oid: 12001,
        kind: "v",
        columns: &[
            ("schemaname", K::T),
            ("tablename", K::T),
            ("indexname", K::T),
            ("tablespace", K::T),
            ("indexdef", K::T),
        ],
    },
    PgDef {
        name: PG_VIEWS,
        oid: 12002,
        kind: "v",
        columns: &[
            ("schemaname", K::T),
            ("viewname", K::T),
            ("viewowner", K::T),
            ("definition", K::T),
        ],
    },
    PgDef {
        name: PG_SEQUENCES,
        oid: 12003,
        kind: "v",
        columns: &[
            ("schemaname", K::T),
            ("sequencename", K::T),
            ("sequenceowner", K::T),
            ("start_value", K::I),
            ("min_value", K::I),
            ("max_value", K::I),
            ("increment_by", K::I),
            ("cycle", K::B),
            ("cache_size", K::I),
            ("last_value", K::I),
        ],
    },
];

/// The columns and rows of the `pg_catalog` table at `path`
/// (`["pg_catalog", "pg_class"]`, or `["pg_class"]` when no user table or
/// view has that name, as `pg_catalog` is always on PostgreSQL's search
/// path), or `None`: always in a GoogleSQL database.
#[allow(clippy::type_complexity)] // the binder's hook signature
pub fn pg_catalog_table(
    catalog: &Catalog,
    path: &[&str],
) -> Option<(Vec<(String, Type)>, Vec<Vec<Value>>)> {
    if catalog.dialect() != Dialect::PostgreSql {
        return None;
    }
    let name = match *path {
        [schema, name] if schema.eq_ignore_ascii_case("pg_catalog") => name,
        [name] if catalog.table(name).is_none() && catalog.view(name).is_none() => name,
        _ => return None,
    };
    let def = PG_DEFS.iter().find(|d| d.name.eq_ignore_ascii_case(name))?;
    let columns = def
        .columns
        .iter()
        .map(|(n, k)| (n.to_string(), k.ty()))
        .collect();
    let mut rows = match def.name {
        PG_NAMESPACE => namespaces(),
        PG_CLASS => Relations::of(catalog).class_rows(),
        PG_ATTRIBUTE => Relations::of(catalog).attribute_rows(),
        PG_TYPE => type_rows(),
        PG_INDEX => Relations::of(catalog).index_rows(),
        PG_TABLES => Relations::of(catalog).tables_rows(),
        PG_INDEXES => Relations::of(catalog).indexes_rows(),
        PG_VIEWS => Relations::of(catalog).views_rows(),
        PG_SEQUENCES => sequences_rows(catalog),
        _ => Vec::new(),
    };
    // Catalogs come in oid order (their first column); the views in the
    // order of their names.
    rows.sort_by(|a, b| compare_rows(a, b));
    Some((columns, rows))
}

fn compare_rows(a: &[Value], b: &[Value]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Value::Int64(x), Value::Int64(y)) => x.cmp(y),
            (Value::String(x), Value::String(y)) => x.cmp(y),
            _ => std::cmp::Ordering::Equal,
        };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    std::cmp::Ordering::Equal
}

fn int(n: i64) -> Value {
    Value::Int64(n)
}

fn text(s: &str) -> Value {
    Value::String(s.to_string())
}

fn ints(v: impl IntoIterator<Item = i64>) -> Value {
    Value::Array(v.into_iter().map(Value::Int64).collect())
}

/// The schemas of `pg_namespace`: oid and name.
const NAMESPACES: [(i64, &str); 4] = [
    (PG_CATALOG, "pg_catalog"),
    (PUBLIC, "public"),
    (INFORMATION_SCHEMA, "information_schema"),
    (SPANNER_SYS, "spanner_sys"),
];

fn namespaces() -> Vec<Vec<Value>> {
    NAMESPACES
        .iter()
        .map(|&(oid, name)| vec![int(oid), text(name), int(OWNER)])
        .collect()
}

/// The name of the schema with `oid` (`public` for any other).
fn namespace_name(oid: i64) -> &'static str {
    NAMESPACES
        .iter()
        .find(|&&(o, _)| o == oid)
        .map_or("public", |&(_, name)| name)
}

/// One type of `pg_type`: oid, name, length, by value, category, preferred,
/// alignment, storage, and its array type's oid.
struct PgType {
    oid: i64,
    name: &'static str,
    len: i64,
    by_value: bool,
    category: &'static str,
    preferred: bool,
    align: &'static str,
    storage: &'static str,
    array: i64,
}

#[allow(clippy::too_many_arguments)] // one row of `TYPES`, in column order
const fn t(
    oid: i64,
    name: &'static str,
    len: i64,
    by_value: bool,
    category: &'static str,
    preferred: bool,
    align: &'static str,
    storage: &'static str,
    array: i64,
) -> PgType {
    PgType {
        oid,
        name,
        len,
        by_value,
        category,
        preferred,
        align,
        storage,
        array,
    }
}

/// The types a column can have (and `text`, the type of string literals),
/// with PostgreSQL's oids and properties.
const TYPES: &[PgType] = &[
    t(16, "bool", 1, true, "B", true, "c", "p", 1000),
    t(17, "bytea", -1, false, "U", false, "i", "x", 1001),
    t(20, "int8", 8, true, "N", false, "d", "p", 1016),
    t(25, "text", -1, false, "S", true, "i", "x", 1009),
    t(700, "float4", 4, true, "N", false, "i", "p", 1021),
    t(701, "float8", 8, true, "N", true, "d", "p", 1022),
    t(1043, "varchar", -1, false, "S", false, "i", "x", 1015),
    t(1082, "date", 4, true, "D", false, "i", "p", 1182),
    t(1184, "timestamptz", 8, true, "D", true, "d", "p", 1185),
    t(1700, "numeric", -1, false, "N", false, "i", "m", 1231),
    t(2950, "uuid", 16, false, "U", false, "c", "p", 2951),
    t(3802, "jsonb", -1, false, "U", false, "i", "x", 3807),
];

fn type_rows() -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for ty in TYPES {
        let collation = if ty.category == "S" { 100 } else { 0 };
        out.push(type_row(
            ty.oid,
            ty.name,
            ty.len,
            ty.by_value,
            "b",
            ty.category,
            ty.preferred,
            0,
            ty.array,
            ty.align,
            ty.storage,
            collation,
        ));
        let array_align = if ty.align == "d" { "d" } else { "i" };
        out.push(type_row(
            ty.array,
            &format!("_{}", ty.name),
            -1,
            false,
            "b",
            "A",
            false,
            ty.oid,
            0,
            array_align,
            "x",
            collation,
        ));
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn type_row(
    oid: i64,
    name: &str,
    len: i64,
    by_value: bool,
    kind: &str,
    category: &str,
    preferred: bool,
    elem: i64,
    array: i64,
    align: &str,
    storage: &str,
    collation: i64,
) -> Vec<Value> {
    vec![
        int(oid),
        text(name),
        int(PG_CATALOG),
        int(OWNER),
        int(len),
        Value::Bool(by_value),
        text(kind),
        text(category),
        Value::Bool(preferred),
        Value::Bool(true),
        text(","),
        int(0),
        int(elem),
        int(array),
        text(align),
        text(storage),
        Value::Bool(false),
        int(0),
        int(-1),
        int(0),
        int(collation),
        Value::Null,
        Value::Null,
    ]
}

fn find_type(oid: i64) -> Option<&'static PgType> {
    TYPES
        .iter()
        .find(|t| t.oid == oid || t.array == oid)
        .filter(|_| oid != 0)
}

/// A column's type as `pg_attribute` describes it: type oid, type modifier
/// (`varchar(n)` is n + 4, as PostgreSQL stores it) and array dimensions,
/// from the type as `SPANNER_TYPE` spells it (`STRING(10)`,
/// `ARRAY<INT64>`). 0 for a type PostgreSQL has no name for.
fn column_type(spanner: &str) -> (i64, i64, i64) {
    if let Some(inner) = spanner
        .strip_prefix("ARRAY<")
        .and_then(|t| t.strip_suffix('>'))
    {
        let (oid, typmod, _) = column_type(inner);
        let array = TYPES.iter().find(|t| t.oid == oid).map_or(0, |t| t.array);
        return (array, typmod, 1);
    }
    if let Some(length) = spanner
        .strip_prefix("STRING(")
        .and_then(|t| t.strip_suffix(')'))
    {
        let typmod = length.parse::<i64>().map_or(-1, |n| n + 4);
        return (1043, typmod, 0);
    }
    let oid = match spanner {
        "STRING" => 1043,
        "INT64" => 20,
        "BOOL" => 16,
        "FLOAT64" => 701,
        "FLOAT32" => 700,
        "NUMERIC" => 1700,
        "DATE" => 1082,
        "TIMESTAMP" => 1184,
        "JSON" => 3802,
        "UUID" => 2950,
        s if s.starts_with("BYTES") => 17,
        _ => 0,
    };
    (oid, -1, 0)
}

/// One column of a relation, for `pg_attribute`.
struct Attribute {
    name: String,
    type_oid: i64,
    typmod: i64,
    ndims: i64,
    not_null: bool,
    has_default: bool,
    /// `s` for a stored generated column, `v` for a virtual one (PostgreSQL
    /// has only stored ones; Spanner's PostgreSQL interface only those too).
    generated: &'static str,
    identity: &'static str,
}

/// One index, for `pg_class`, `pg_index` and `pg_indexes`.
struct IndexRel {
    oid: i64,
    name: String,
    table_oid: i64,
    table_name: String,
    /// Attribute numbers (1-based) of the key columns, then the stored ones.
    keys: Vec<i64>,
    stored: Vec<i64>,
    desc: Vec<bool>,
    unique: bool,
    primary: bool,
    definition: String,
}

/// One relation of `pg_class`.
struct Relation {
    oid: i64,
    name: String,
    namespace: i64,
    /// `r` table, `v` view, `i` index, `S` sequence.
    kind: &'static str,
    attributes: Vec<Attribute>,
    checks: i64,
    has_index: bool,
}

/// Every relation of the database, in the shapes the catalogs share.
struct Relations {
    relations: Vec<Relation>,
    indexes: Vec<IndexRel>,
    views: Vec<(String, String)>,
}

const FIRST_USER_OID: i64 = 16384;

fn table_oid(id: u32) -> i64 {
    FIRST_USER_OID + 2 * i64::from(id)
}

fn view_oid(name: &str) -> i64 {
    // FNV-1a: a stable hash, the same in every process and release.
    let mut h: u32 = 0x811c_9dc5;
    for b in name.to_ascii_lowercase().bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (1 << 29) + i64::from(h % (1 << 28))
}

fn sequence_oid(id: u32) -> i64 {
    (1 << 30) + i64::from(id)
}

impl Relations {
    fn of(catalog: &Catalog) -> Relations {
        let mut relations = Vec::new();
        let mut indexes = Vec::new();
        let mut views = Vec::new();
        for (position, tv) in table_views(catalog).iter().enumerate() {
            let attributes = tv
                .columns
                .iter()
                .map(|c| {
                    let (type_oid, typmod, ndims) = column_type(&c.spanner_type);
                    let user = c.user;
                    Attribute {
                        name: if tv.user.is_some() {
                            c.name.to_string()
                        } else {
                            c.name.to_ascii_lowercase()
                        },
                        type_oid,
                        typmod,
                        ndims,
                        not_null: !c.nullable,
                        has_default: user
                            .is_some_and(|u| u.default.is_some() || u.generated.is_some()),
                        generated: match user {
                            Some(u) if u.generated.is_some() => "s",
                            _ => "",
                        },
                        identity: match user {
                            Some(u) if u.identity_sequence.is_some() => "d",
                            _ => "",
                        },
                    }
                })
                .collect();
            match tv.user {
                Some(table) => {
                    let oid = table_oid(table.id);
                    let keys: Vec<i64> = table
                        .primary_key
                        .iter()
                        .map(|k| k.column as i64 + 1)
                        .collect();
                    let key_names: Vec<String> = table
                        .primary_key
                        .iter()
                        .map(|k| {
                            let name = &table.columns[k.column].name;
                            if k.desc {
                                format!("{name} DESC")
                            } else {
                                name.clone()
                            }
                        })
                        .collect();
                    indexes.push(IndexRel {
                        oid: oid + 1,
                        name: format!("{}_pkey", table.name),
                        table_oid: oid,
                        table_name: table.name.clone(),
                        keys,
                        stored: Vec::new(),
                        desc: table.primary_key.iter().map(|k| k.desc).collect(),
                        unique: true,
                        primary: true,
                        definition: format!(
                            "CREATE UNIQUE INDEX {}_pkey ON {} ({})",
                            table.name,
                            table.name,
                            key_names.join(", ")
                        ),
                    });
                    for index in catalog.indexes_of(table.id) {
                        indexes.push(IndexRel {
                            oid: table_oid(index.id),
                            name: index.name.clone(),
                            table_oid: oid,
                            table_name: table.name.clone(),
                            keys: index.keys.iter().map(|k| k.column as i64 + 1).collect(),
                            stored: index.storing.iter().map(|&c| c as i64 + 1).collect(),
                            desc: index.keys.iter().map(|k| k.desc).collect(),
                            unique: index.unique,
                            primary: false,
                            definition: catalog
                                .index_definition_pg(&index.name)
                                .unwrap_or_default(),
                        });
                    }
                    relations.push(Relation {
                        oid,
                        name: table.name.clone(),
                        namespace: PUBLIC,
                        kind: "r",
                        attributes,
                        checks: table.checks.len() as i64,
                        has_index: true,
                    });
                }
                None => relations.push(Relation {
                    oid: 14000 + position as i64,
                    name: tv.name.to_ascii_lowercase(),
                    namespace: INFORMATION_SCHEMA,
                    kind: "v",
                    attributes,
                    checks: 0,
                    has_index: false,
                }),
            }
        }
        for view in catalog.views() {
            let attributes = crate::views::view_columns(catalog, view)
                .unwrap_or_default()
                .iter()
                .map(|(name, ty)| {
                    let spanner = crate::binder::data_type(ty)
                        .map(|d| spanner_type(&d))
                        .unwrap_or_else(|| ty.to_string());
                    let (type_oid, typmod, ndims) = column_type(&spanner);
                    Attribute {
                        name: name.clone(),
                        type_oid,
                        typmod,
                        ndims,
                        not_null: false,
                        has_default: false,
                        generated: "",
                        identity: "",
                    }
                })
                .collect();
            relations.push(Relation {
                oid: view_oid(&view.name),
                name: view.name.clone(),
                namespace: PUBLIC,
                kind: "v",
                attributes,
                checks: 0,
                has_index: false,
            });
            views.push((view.name.clone(), view.query_text.clone()));
        }
        for sequence in catalog.sequences().filter(|s| !s.internal) {
            relations.push(Relation {
                oid: sequence_oid(sequence.id),
                name: sequence.name.clone(),
                namespace: PUBLIC,
                kind: "S",
                attributes: Vec::new(),
                checks: 0,
                has_index: false,
            });
        }
        for def in PG_DEFS {
            relations.push(Relation {
                oid: def.oid,
                name: def.name.to_string(),
                namespace: PG_CATALOG,
                kind: def.kind,
                attributes: def
                    .columns
                    .iter()
                    .map(|(name, k)| Attribute {
                        name: name.to_string(),
                        type_oid: k.type_oid(),
                        typmod: -1,
                        ndims: i64::from(matches!(k, K::IA | K::TA)),
                        not_null: false,
                        has_default: false,
                        generated: "",
                        identity: "",
                    })
                    .collect(),
                checks: 0,
                has_index: false,
            });
        }
        Relations {
            relations,
            indexes,
            views,
        }
    }

    fn class_rows(&self) -> Vec<Vec<Value>> {
        let mut out: Vec<Vec<Value>> = self
            .relations
            .iter()
            .map(|r| {
                class_row(
                    r.oid,
                    &r.name,
                    r.namespace,
                    r.kind,
                    r.attributes.len() as i64,
                    r.checks,
                    r.has_index,
                )
            })
            .collect();
        out.extend(self.indexes.iter().map(|i| {
            class_row(
                i.oid,
                &i.name,
                PUBLIC,
                "i",
                (i.keys.len() + i.stored.len()) as i64,
                0,
                false,
            )
        }));
        out
    }

    fn attribute_rows(&self) -> Vec<Vec<Value>> {
        let mut out = Vec::new();
        for r in &self.relations {
            for (i, a) in r.attributes.iter().enumerate() {
                out.push(attribute_row(r.oid, i as i64 + 1, a));
            }
        }
        // An index's attributes are its columns, numbered in index order.
        for index in &self.indexes {
            let Some(table) = self.relations.iter().find(|r| r.oid == index.table_oid) else {
                continue;
            };
            for (i, attnum) in index.keys.iter().chain(&index.stored).enumerate() {
                if let Some(a) = table.attributes.get(*attnum as usize - 1) {
                    out.push(attribute_row(index.oid, i as i64 + 1, a));
                }
            }
        }
        out
    }

    fn index_rows(&self) -> Vec<Vec<Value>> {
        self.indexes
            .iter()
            .map(|i| {
                let keys = i.keys.len() as i64;
                vec![
                    int(i.oid),
                    int(i.table_oid),
                    int(keys + i.stored.len() as i64),
                    int(keys),
                    Value::Bool(i.unique),
                    Value::Bool(false),
                    Value::Bool(i.primary),
                    Value::Bool(false),
                    Value::Bool(true),
                    Value::Bool(false),
                    Value::Bool(true),
                    Value::Bool(false),
                    Value::Bool(true),
                    Value::Bool(true),
                    Value::Bool(false),
                    ints(i.keys.iter().chain(&i.stored).copied()),
                    ints(i.keys.iter().map(|_| 0)),
                    ints(i.keys.iter().map(|_| 0)),
                    // PostgreSQL's INDOPTION_DESC (1) | INDOPTION_NULLS_FIRST
                    // (2): a descending key puts NULLs first here.
                    ints(i.desc.iter().map(|&d| if d { 3 } else { 0 })),
                    Value::Null,
                    Value::Null,
                ]
            })
            .collect()
    }

    fn tables_rows(&self) -> Vec<Vec<Value>> {
        self.relations
            .iter()
            .filter(|r| r.kind == "r")
            .map(|r| {
                vec![
                    text(namespace_name(r.namespace)),
                    text(&r.name),
                    Value::Null,
                    Value::Null,
                    Value::Bool(r.has_index),
                    Value::Bool(false),
                    Value::Bool(false),
                    Value::Bool(false),
                ]
            })
            .collect()
    }

    fn indexes_rows(&self) -> Vec<Vec<Value>> {
        self.indexes
            .iter()
            .map(|i| {
                vec![
                    text("public"),
                    text(&i.table_name),
                    text(&i.name),
                    Value::Null,
                    text(&i.definition),
                ]
            })
            .collect()
    }

    fn views_rows(&self) -> Vec<Vec<Value>> {
        let mut out: Vec<Vec<Value>> = self
            .views
            .iter()
            .map(|(name, query)| vec![text("public"), text(name), Value::Null, text(query)])
            .collect();
        // The information schema's tables and these catalog views are views
        // too, with no query text to show.
        out.extend(
            self.relations
                .iter()
                .filter(|r| r.kind == "v" && r.namespace != PUBLIC)
                .map(|r| {
                    vec![
                        text(namespace_name(r.namespace)),
                        text(&r.name),
                        Value::Null,
                        Value::Null,
                    ]
                }),
        );
        out
    }
}

fn class_row(
    oid: i64,
    name: &str,
    namespace: i64,
    kind: &str,
    natts: i64,
    checks: i64,
    has_index: bool,
) -> Vec<Value> {
    vec![
        int(oid),
        text(name),
        int(namespace),
        int(0),
        int(0),
        int(OWNER),
        int(0),
        int(0),
        int(0),
        int(0),
        Value::Float32(-1.0),
        int(0),
        int(0),
        Value::Bool(has_index),
        Value::Bool(false),
        text("p"),
        text(kind),
        int(natts),
        int(checks),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(true),
        text("n"),
        Value::Bool(false),
        int(0),
        int(0),
        int(0),
        Value::Null,
        Value::Null,
    ]
}

fn attribute_row(relation: i64, attnum: i64, a: &Attribute) -> Vec<Value> {
    let ty = find_type(a.type_oid);
    let is_array = a.ndims > 0;
    let (len, by_value, align, storage) = match ty {
        Some(t) if !is_array => (t.len, t.by_value, t.align, t.storage),
        Some(t) => (-1, false, if t.align == "d" { "d" } else { "i" }, "x"),
        None => (-1, false, "i", "x"),
    };
    let collation = match ty {
        Some(t) if t.category == "S" => 100,
        _ => 0,
    };
    vec![
        int(relation),
        text(&a.name),
        int(a.type_oid),
        int(-1),
        int(len),
        int(attnum),
        int(a.ndims),
        int(-1),
        int(a.typmod),
        Value::Bool(by_value),
        text(align),
        text(storage),
        text(""),
        Value::Bool(a.not_null),
        Value::Bool(a.has_default),
        Value::Bool(false),
        text(a.identity),
        text(a.generated),
        Value::Bool(false),
        Value::Bool(true),
        int(0),
        int(collation),
        Value::Null,
        Value::Null,
    ]
}

fn sequences_rows(catalog: &Catalog) -> Vec<Vec<Value>> {
    catalog
        .sequences()
        .filter(|s| !s.internal)
        .map(|s| {
            vec![
                text("public"),
                text(&s.name),
                Value::Null,
                int(s.start_with_counter),
                int(1),
                int(i64::MAX),
                int(1),
                Value::Bool(false),
                int(1),
                Value::Null,
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_types_follow_postgresql() {
        assert_eq!(column_type("STRING(10)"), (1043, 14, 0));
        assert_eq!(column_type("STRING(MAX)"), (1043, -1, 0));
        assert_eq!(column_type("ARRAY<INT64>"), (1016, -1, 1));
        assert_eq!(column_type("ARRAY<STRING(5)>"), (1015, 9, 1));
        assert_eq!(column_type("BYTES(MAX)"), (17, -1, 0));
        assert_eq!(column_type("PROTO<a.B>"), (0, -1, 0));
    }

    #[test]
    fn view_oids_are_stable_and_apart_from_tables() {
        assert_eq!(view_oid("V"), view_oid("v"));
        assert!(view_oid("v") >= 1 << 29 && view_oid("v") < (1 << 29) + (1 << 28));
        assert!(sequence_oid(0) > view_oid("zzz"));
    }

    #[test]
    fn every_def_has_unique_names_and_oids() {
        for (i, a) in PG_DEFS.iter().enumerate() {
            for b in &PG_DEFS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.oid, b.oid);
            }
        }
    }
}
