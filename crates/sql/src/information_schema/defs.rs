//! The information schema's tables: each one's name, columns (with the
//! Spanner type `COLUMNS` reports for them) and primary key, as data.

use rowtree_types::Type;

/// The schema name, as Spanner spells it.
pub(super) const SCHEMA_NAME: &str = "INFORMATION_SCHEMA";

/// One column of an information schema table.
pub(super) struct MetaColumn {
    pub(super) name: &'static str,
    /// As `COLUMNS.SPANNER_TYPE` reports it.
    pub(super) spanner_type: &'static str,
    pub(super) nullable: bool,
}

impl MetaColumn {
    pub(super) fn ty(&self) -> Type {
        match self.spanner_type {
            "INT64" => Type::Int64,
            "BOOL" => Type::Bool,
            _ => Type::String,
        }
    }
}

/// An information schema table: columns in order and the primary key
/// (a prefix-free list of column names) its rows are sorted by.
pub(super) struct Def {
    pub(super) name: &'static str,
    pub(super) columns: &'static [MetaColumn],
    pub(super) key: &'static [&'static str],
}

pub(super) const fn meta(
    name: &'static str,
    spanner_type: &'static str,
    nullable: bool,
) -> MetaColumn {
    MetaColumn {
        name,
        spanner_type,
        nullable,
    }
}

pub(super) const fn s(name: &'static str) -> MetaColumn {
    meta(name, "STRING(MAX)", false)
}

pub(super) const fn sn(name: &'static str) -> MetaColumn {
    meta(name, "STRING(MAX)", true)
}

pub(super) const fn i(name: &'static str) -> MetaColumn {
    meta(name, "INT64", false)
}

pub(super) const fn i_n(name: &'static str) -> MetaColumn {
    meta(name, "INT64", true)
}

pub(super) const fn b(name: &'static str) -> MetaColumn {
    meta(name, "BOOL", false)
}

pub(super) const CHECK_CONSTRAINTS: &str = "CHECK_CONSTRAINTS";

pub(super) const COLUMN_COLUMN_USAGE: &str = "COLUMN_COLUMN_USAGE";

pub(super) const COLUMN_OPTIONS: &str = "COLUMN_OPTIONS";

pub(super) const COLUMNS: &str = "COLUMNS";

pub(super) const CONSTRAINT_COLUMN_USAGE: &str = "CONSTRAINT_COLUMN_USAGE";

pub(super) const CONSTRAINT_TABLE_USAGE: &str = "CONSTRAINT_TABLE_USAGE";

pub(super) const DATABASE_OPTIONS: &str = "DATABASE_OPTIONS";

pub(super) const INDEX_COLUMNS: &str = "INDEX_COLUMNS";

pub(super) const INDEXES: &str = "INDEXES";

pub(super) const KEY_COLUMN_USAGE: &str = "KEY_COLUMN_USAGE";

pub(super) const REFERENTIAL_CONSTRAINTS: &str = "REFERENTIAL_CONSTRAINTS";

pub(super) const SCHEMATA: &str = "SCHEMATA";

pub(super) const SEQUENCE_OPTIONS: &str = "SEQUENCE_OPTIONS";

pub(super) const SEQUENCES: &str = "SEQUENCES";

pub(super) const SPANNER_STATISTICS: &str = "SPANNER_STATISTICS";

pub(super) const TABLE_CONSTRAINTS: &str = "TABLE_CONSTRAINTS";

pub(super) const TABLES: &str = "TABLES";

pub(super) const VIEWS: &str = "VIEWS";

/// All tables, sorted by name (byte order), as `TABLES` lists them.
pub(super) const DEFS: &[Def] = &[
    Def {
        name: CHECK_CONSTRAINTS,
        columns: &[
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
            s("CHECK_CLAUSE"),
            s("SPANNER_STATE"),
        ],
        key: &["CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME"],
    },
    Def {
        name: COLUMN_COLUMN_USAGE,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            s("DEPENDENT_COLUMN"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "COLUMN_NAME",
            "DEPENDENT_COLUMN",
        ],
    },
    Def {
        name: COLUMN_OPTIONS,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            s("OPTION_NAME"),
            s("OPTION_TYPE"),
            s("OPTION_VALUE"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "COLUMN_NAME",
            "OPTION_NAME",
        ],
    },
    Def {
        name: COLUMNS,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            i("ORDINAL_POSITION"),
            sn("COLUMN_DEFAULT"),
            sn("DATA_TYPE"),
            sn("IS_NULLABLE"),
            sn("SPANNER_TYPE"),
            s("IS_GENERATED"),
            sn("GENERATION_EXPRESSION"),
            sn("IS_STORED"),
            b("IS_HIDDEN"),
            sn("ON_UPDATE_EXPRESSION"),
            sn("SPANNER_STATE"),
            sn("IS_IDENTITY"),
            sn("IDENTITY_GENERATION"),
            sn("IDENTITY_KIND"),
            sn("IDENTITY_START_WITH_COUNTER"),
            sn("IDENTITY_SKIP_RANGE_MIN"),
            sn("IDENTITY_SKIP_RANGE_MAX"),
        ],
        key: &["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME"],
    },
    Def {
        name: CONSTRAINT_COLUMN_USAGE,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
        ],
        key: &[
            "CONSTRAINT_CATALOG",
            "CONSTRAINT_SCHEMA",
            "CONSTRAINT_NAME",
            "COLUMN_NAME",
        ],
    },
    Def {
        name: CONSTRAINT_TABLE_USAGE,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "CONSTRAINT_CATALOG",
            "CONSTRAINT_SCHEMA",
            "CONSTRAINT_NAME",
        ],
    },
    Def {
        name: DATABASE_OPTIONS,
        columns: &[
            s("CATALOG_NAME"),
            s("SCHEMA_NAME"),
            s("OPTION_NAME"),
            s("OPTION_TYPE"),
            s("OPTION_VALUE"),
        ],
        key: &["CATALOG_NAME", "SCHEMA_NAME", "OPTION_NAME"],
    },
    Def {
        name: INDEX_COLUMNS,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("INDEX_NAME"),
            s("INDEX_TYPE"),
            s("COLUMN_NAME"),
            i_n("ORDINAL_POSITION"),
            sn("COLUMN_ORDERING"),
            sn("IS_NULLABLE"),
            sn("SPANNER_TYPE"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "INDEX_NAME",
            "INDEX_TYPE",
            "COLUMN_NAME",
        ],
    },
    Def {
        name: INDEXES,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("INDEX_NAME"),
            s("INDEX_TYPE"),
            s("PARENT_TABLE_NAME"),
            b("IS_UNIQUE"),
            b("IS_NULL_FILTERED"),
            MetaColumn {
                name: "INDEX_STATE",
                spanner_type: "STRING(100)",
                nullable: true,
            },
            b("SPANNER_IS_MANAGED"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "INDEX_NAME",
            "INDEX_TYPE",
        ],
    },
    Def {
        name: KEY_COLUMN_USAGE,
        columns: &[
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            i("ORDINAL_POSITION"),
            i_n("POSITION_IN_UNIQUE_CONSTRAINT"),
        ],
        key: &[
            "CONSTRAINT_CATALOG",
            "CONSTRAINT_SCHEMA",
            "CONSTRAINT_NAME",
            "COLUMN_NAME",
        ],
    },
    Def {
        name: REFERENTIAL_CONSTRAINTS,
        columns: &[
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
            sn("UNIQUE_CONSTRAINT_CATALOG"),
            sn("UNIQUE_CONSTRAINT_SCHEMA"),
            sn("UNIQUE_CONSTRAINT_NAME"),
            s("MATCH_OPTION"),
            s("UPDATE_RULE"),
            s("DELETE_RULE"),
            s("SPANNER_STATE"),
        ],
        key: &["CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME"],
    },
    Def {
        name: SCHEMATA,
        columns: &[
            s("CATALOG_NAME"),
            s("SCHEMA_NAME"),
            i_n("EFFECTIVE_TIMESTAMP"),
            sn("SCHEMA_OWNER"),
        ],
        key: &["CATALOG_NAME", "SCHEMA_NAME"],
    },
    Def {
        name: SEQUENCE_OPTIONS,
        columns: &[
            s("CATALOG"),
            s("SCHEMA"),
            s("NAME"),
            s("OPTION_NAME"),
            s("OPTION_TYPE"),
            s("OPTION_VALUE"),
        ],
        key: &["CATALOG", "SCHEMA", "NAME", "OPTION_NAME"],
    },
    Def {
        name: SEQUENCES,
        columns: &[s("CATALOG"), s("SCHEMA"), s("NAME"), s("DATA_TYPE")],
        key: &["CATALOG", "SCHEMA", "NAME"],
    },
    Def {
        name: SPANNER_STATISTICS,
        columns: &[
            s("CATALOG_NAME"),
            s("SCHEMA_NAME"),
            s("PACKAGE_NAME"),
            b("ALLOW_GC"),
        ],
        key: &["CATALOG_NAME", "SCHEMA_NAME", "PACKAGE_NAME"],
    },
    Def {
        name: TABLE_CONSTRAINTS,
        columns: &[
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("CONSTRAINT_TYPE"),
            s("IS_DEFERRABLE"),
            s("INITIALLY_DEFERRED"),
            s("ENFORCED"),
        ],
        key: &["CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME"],
    },
    Def {
        name: TABLES,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            MetaColumn {
                name: "TABLE_TYPE",
                spanner_type: "STRING(32)",
                nullable: false,
            },
            sn("PARENT_TABLE_NAME"),
            sn("ON_DELETE_ACTION"),
            sn("SPANNER_STATE"),
            sn("INTERLEAVE_TYPE"),
            sn("ROW_DELETION_POLICY_EXPRESSION"),
        ],
        key: &["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME"],
    },
    Def {
        name: VIEWS,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            sn("VIEW_DEFINITION"),
            s("SECURITY_TYPE"),
        ],
        key: &["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME"],
    },
];

/// The information schema table called `name` (any case).
pub(super) fn find_def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}
