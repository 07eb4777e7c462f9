//! PostgreSQL DDL: statement dispatch, tables and their columns and types,
//! ALTER TABLE, indexes, sequences, views and DROP.
//!
//! Spanner's extensions keep their Spanner spelling in this dialect
//! (`INTERLEAVE IN PARENT p`, `BIT_REVERSED_POSITIVE`, `SQL SECURITY
//! INVOKER`); the rest is PostgreSQL's: a primary key is a column or table
//! constraint, a generated column is `GENERATED ALWAYS AS (e) STORED`, a
//! null-filtered index is one with `WHERE col IS NOT NULL`.

use super::lexer::PgTok;
use super::PgParser;
use crate::ast::{
    AlterSequence, AlterSequenceAction, AlterTable, AlterTableAction, Check, ColumnDef,
    CreateIndex, CreateSequence, CreateTable, CreateView, DataType, Expr, ForeignKey, Generated,
    Interleave, InterleaveKind, IsTest, KeyPart, Length, Literal, OnDelete, OptionPair,
    RowDeletionPolicy, SequenceOptions, SourceExpr, SqlSecurity, Statement, StatementKind,
    TableConstraint,
};
use crate::error::{ParseError, Result};

impl PgParser<'_> {
    /// One statement, without the optional trailing `;`.
    pub(super) fn parse_statement(&mut self) -> Result<Statement> {
        let start = self.peek().span.start;
        let kind = if self.eat_word("create") {
            self.parse_create()?
        } else if self.eat_word("alter") {
            self.parse_alter()?
        } else if self.eat_word("drop") {
            self.parse_drop()?
        } else if self.at_query_start() {
            StatementKind::Query(Box::new(self.parse_query()?))
        } else if self.eat_word("insert") {
            self.parse_insert(start)?
        } else if self.eat_word("update") {
            self.parse_update(start)?
        } else if self.eat_word("delete") {
            self.parse_delete(start)?
        } else if self.eat_word("analyze") {
            // Spanner's ANALYZE: a new statistics package (accepted; the
            // engine keeps no statistics), as in GoogleSQL.
            StatementKind::Analyze
        } else if self.eat_word("explain") {
            let analyze = self.eat_word("analyze");
            let inner = self.peek().span.start;
            if self.at_word("explain") {
                return Err(self.unexpected());
            }
            let statement = self.parse_statement()?;
            if !matches!(
                statement.kind,
                StatementKind::Query(_)
                    | StatementKind::Insert(_)
                    | StatementKind::Update(_)
                    | StatementKind::Delete(_)
            ) {
                return Err(ParseError::new(
                    "EXPLAIN supports queries, INSERT, UPDATE and DELETE only",
                    inner,
                ));
            }
            StatementKind::Explain {
                analyze,
                statement: Box::new(statement),
            }
        } else {
            return Err(self.unexpected());
        };
        Ok(Statement {
            kind,
            span: self.span_from(start),
        })
    }

    fn parse_create(&mut self) -> Result<StatementKind> {
        if self.eat_words(&["or", "replace"]) {
            self.expect_word("view")?;
            return self.parse_create_view(true);
        }
        if self.eat_word("table") {
            return Ok(StatementKind::CreateTable(self.parse_create_table()?));
        }
        if self.eat_word("view") {
            return self.parse_create_view(false);
        }
        if self.eat_word("sequence") {
            return self.parse_create_sequence();
        }
        let unique = self.eat_word("unique");
        if self.eat_word("index") {
            return Ok(StatementKind::CreateIndex(self.parse_create_index(unique)?));
        }
        Err(self.unexpected())
    }

    fn parse_if_not_exists(&mut self) -> bool {
        self.eat_words(&["if", "not", "exists"])
    }

    fn parse_create_table(&mut self) -> Result<CreateTable> {
        let if_not_exists = self.parse_if_not_exists();
        let name = self.parse_object_name()?;
        self.expect_op("(")?;
        let mut columns = Vec::new();
        let mut constraints = Vec::new();
        let mut primary_key: Option<Vec<KeyPart>> = None;
        loop {
            let start = self.peek().span.start;
            if self.at_word("constraint")
                || self.at_word("primary")
                || self.at_word("foreign")
                || self.at_word("check")
            {
                match self.parse_table_constraint()? {
                    Constraint::PrimaryKey(key) => {
                        set_primary_key(&mut primary_key, key, start)?;
                    }
                    Constraint::Other(c) => constraints.push(c),
                }
            } else {
                let (column, extra) = self.parse_column_def()?;
                for c in extra {
                    match c {
                        Constraint::PrimaryKey(key) => {
                            set_primary_key(&mut primary_key, key, start)?
                        }
                        Constraint::Other(c) => constraints.push(c),
                    }
                }
                columns.push(column);
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        let Some(primary_key) = primary_key else {
            return Err(ParseError::new(
                "a primary key is required: add PRIMARY KEY to a column or a PRIMARY KEY (...) \
                 constraint",
                name.span.start,
            ));
        };
        // In PostgreSQL a primary key column is NOT NULL whether or not
        // that was written.
        for column in &mut columns {
            if primary_key.iter().any(|k| k.column == column.name) {
                column.not_null = true;
            }
        }
        let mut interleave = None;
        let mut row_deletion_policy = None;
        loop {
            if interleave.is_none() && self.at_word("interleave") {
                interleave = Some(self.parse_interleave()?);
            } else if row_deletion_policy.is_none() && self.at_word("ttl") {
                row_deletion_policy = Some(self.parse_ttl()?);
            } else {
                break;
            }
        }
        Ok(CreateTable {
            if_not_exists,
            name,
            columns,
            constraints,
            primary_key,
            interleave,
            row_deletion_policy,
        })
    }

    /// `TTL INTERVAL '<n> days' ON col`: Spanner's row deletion policy in
    /// its PostgreSQL spelling. The interval is a string of a whole number
    /// of days (`day` or `days`, any case), the only unit Spanner takes.
    fn parse_ttl(&mut self) -> Result<RowDeletionPolicy> {
        self.expect_word("ttl")?;
        self.expect_word("interval")?;
        let token = self.peek().clone();
        let PgTok::Str(text) = &token.tok else {
            return Err(self.unexpected());
        };
        self.advance();
        let days = parse_days(text).ok_or_else(|| {
            ParseError::new(
                format!(
                    "invalid TTL interval '{text}': write a whole number of days, such as \
                     '30 days'"
                ),
                token.span.start,
            )
        })?;
        self.expect_word("on")?;
        let column = self.parse_ident()?;
        Ok(RowDeletionPolicy {
            column,
            days,
            days_span: token.span,
        })
    }

    /// `INTERLEAVE IN PARENT p [ON DELETE CASCADE | NO ACTION]` or
    /// `INTERLEAVE IN p`.
    fn parse_interleave(&mut self) -> Result<Interleave> {
        self.expect_word("interleave")?;
        self.expect_word("in")?;
        if self.eat_word("parent") {
            let parent = self.parse_object_name()?;
            let on_delete = if self.eat_words(&["on", "delete"]) {
                self.parse_on_delete_action()?
            } else {
                OnDelete::NoAction
            };
            Ok(Interleave {
                parent,
                kind: InterleaveKind::InParent(on_delete),
            })
        } else {
            Ok(Interleave {
                parent: self.parse_object_name()?,
                kind: InterleaveKind::In,
            })
        }
    }

    /// `CASCADE | NO ACTION` (after `ON DELETE`).
    fn parse_on_delete_action(&mut self) -> Result<OnDelete> {
        if self.eat_word("cascade") {
            Ok(OnDelete::Cascade)
        } else if self.eat_words(&["no", "action"]) {
            Ok(OnDelete::NoAction)
        } else {
            Err(self.unexpected())
        }
    }

    /// `[CONSTRAINT name] PRIMARY KEY (...) | FOREIGN KEY ... | CHECK (...)`.
    fn parse_table_constraint(&mut self) -> Result<Constraint> {
        let start = self.peek().span.start;
        let name = if self.eat_word("constraint") {
            Some(self.parse_ident()?)
        } else {
            None
        };
        if self.eat_words(&["primary", "key"]) {
            if let Some(name) = name {
                return Err(self.unsupported("a named primary key", name.span.start));
            }
            self.expect_op("(")?;
            let mut key = vec![self.parse_key_part()?];
            while self.eat_op(",") {
                key.push(self.parse_key_part()?);
            }
            self.expect_op(")")?;
            return Ok(Constraint::PrimaryKey(key));
        }
        if self.eat_words(&["foreign", "key"]) {
            let columns = self.parse_ident_list()?;
            self.expect_word("references")?;
            let referenced_table = self.parse_object_name()?;
            let referenced_columns = self.parse_ident_list()?;
            let on_delete = self.parse_fk_on_delete()?;
            return Ok(Constraint::Other(TableConstraint::ForeignKey(ForeignKey {
                name,
                columns,
                referenced_table,
                referenced_columns,
                on_delete,
                not_enforced: false,
                span: self.span_from(start),
            })));
        }
        if self.eat_word("check") {
            let expr = self.parse_paren_source_expr()?;
            return Ok(Constraint::Other(TableConstraint::Check(Check {
                name,
                expr,
                span: self.span_from(start),
            })));
        }
        Err(self.unexpected())
    }

    /// `[ON DELETE CASCADE | NO ACTION]` of a foreign key.
    fn parse_fk_on_delete(&mut self) -> Result<OnDelete> {
        if self.eat_words(&["on", "delete"]) {
            self.parse_on_delete_action()
        } else {
            Ok(OnDelete::NoAction)
        }
    }

    /// `col [ASC | DESC]`.
    fn parse_key_part(&mut self) -> Result<KeyPart> {
        let column = self.parse_ident()?;
        let desc = if self.eat_word("desc") {
            true
        } else {
            self.eat_word("asc");
            false
        };
        if self.at_word("nulls") {
            return Err(self.unsupported("NULLS FIRST/LAST in a key", self.peek().span.start));
        }
        Ok(KeyPart { column, desc })
    }

    /// `(expr)`, keeping the text inside the parentheses.
    fn parse_paren_source_expr(&mut self) -> Result<SourceExpr> {
        self.expect_op("(")?;
        let expr = self.parse_source_expr()?;
        self.expect_op(")")?;
        Ok(expr)
    }

    /// An expression with the exact text it was parsed from.
    pub(super) fn parse_source_expr(&mut self) -> Result<SourceExpr> {
        let start = self.peek().span.start;
        let expr = self.parse_expr()?;
        let end = self.prev_end();
        Ok(SourceExpr {
            expr,
            text: self.text[start..end].to_string(),
        })
    }

    /// A column definition and the constraints written in it that belong to
    /// the table (PRIMARY KEY, CHECK, REFERENCES).
    fn parse_column_def(&mut self) -> Result<(ColumnDef, Vec<Constraint>)> {
        let name = self.parse_ident()?;
        let type_start = self.peek().span.start;
        let (data_type, commit_timestamp) = self.parse_data_type()?;
        let type_span = self.span_from(type_start);
        let mut column = ColumnDef {
            name,
            data_type,
            type_span,
            not_null: false,
            default: None,
            generated: None,
            identity: None,
            hidden: false,
            options: Vec::new(),
        };
        if commit_timestamp {
            column.options.push(OptionPair {
                name: crate::ast::Ident {
                    value: "allow_commit_timestamp".into(),
                    span: type_span,
                },
                value: Expr::Literal {
                    value: Literal::Bool(true),
                    span: type_span,
                },
            });
        }
        let mut extra = Vec::new();
        loop {
            let start = self.peek().span.start;
            let constraint_name = if self.eat_word("constraint") {
                Some(self.parse_ident()?)
            } else {
                None
            };
            if self.eat_words(&["not", "null"]) {
                column.not_null = true;
            } else if self.eat_word("null") {
                column.not_null = false;
            } else if self.eat_words(&["primary", "key"]) {
                extra.push(Constraint::PrimaryKey(vec![KeyPart {
                    column: column.name.clone(),
                    desc: false,
                }]));
            } else if self.eat_word("default") {
                if column.default.is_some() {
                    return Err(ParseError::new(
                        "multiple default values specified for column",
                        start,
                    ));
                }
                column.default = Some(self.parse_default_expr()?);
            } else if self.eat_word("generated") {
                if self.eat_word("always") {
                    self.expect_word("as")?;
                    let expr = self.parse_paren_source_expr()?;
                    let stored = if self.eat_word("stored") {
                        true
                    } else if self.eat_word("virtual") {
                        false
                    } else {
                        return Err(self.unexpected());
                    };
                    column.generated = Some(Generated { expr, stored });
                } else if self.eat_words(&["by", "default", "as", "identity"]) {
                    let opt_start = self.peek().span.start;
                    let options = if self.eat_op("(") {
                        let options = self.parse_sequence_clauses(opt_start)?;
                        self.expect_op(")")?;
                        options
                    } else {
                        SequenceOptions {
                            span: self.span_from(start),
                            ..SequenceOptions::default()
                        }
                    };
                    column.identity = Some(options);
                } else {
                    return Err(self.unexpected());
                }
            } else if self.eat_word("check") {
                let expr = self.parse_paren_source_expr()?;
                extra.push(Constraint::Other(TableConstraint::Check(Check {
                    name: constraint_name,
                    expr,
                    span: self.span_from(start),
                })));
            } else if self.eat_word("references") {
                let referenced_table = self.parse_object_name()?;
                let referenced_columns = self.parse_ident_list()?;
                let on_delete = self.parse_fk_on_delete()?;
                extra.push(Constraint::Other(TableConstraint::ForeignKey(ForeignKey {
                    name: constraint_name,
                    columns: vec![column.name.clone()],
                    referenced_table,
                    referenced_columns,
                    on_delete,
                    not_enforced: false,
                    span: self.span_from(start),
                })));
            } else if constraint_name.is_some() {
                return Err(self.unexpected());
            } else {
                break;
            }
        }
        Ok((column, extra))
    }

    /// A DEFAULT value: PostgreSQL takes an expression without parentheses
    /// (`DEFAULT 0`, `DEFAULT nextval('s')`); written in parentheses, the
    /// text inside them is kept, as GoogleSQL keeps it.
    fn parse_default_expr(&mut self) -> Result<SourceExpr> {
        if self.at_op("(") {
            let saved = self.pos;
            let expr = self.parse_paren_source_expr()?;
            if self.at_op(",")
                || self.at_op(")")
                || self.at_word("not")
                || self.at_word("null")
                || self.at_word("primary")
                || self.at_word("check")
                || self.at_word("references")
                || self.at_word("constraint")
                || self.peek().tok == PgTok::Eof
            {
                return Ok(expr);
            }
            // `(a) + 1`: the parentheses were part of a longer expression.
            self.pos = saved;
        }
        self.parse_source_expr()
    }

    /// A type name; `true` with it for `spanner.commit_timestamp` (a
    /// timestamp column that takes commit timestamps).
    pub(super) fn parse_data_type(&mut self) -> Result<(DataType, bool)> {
        let start = self.peek().span.start;
        let word = match &self.peek().tok {
            PgTok::Word(w) => w.clone(),
            _ => return Err(self.unexpected()),
        };
        self.advance();
        let mut commit_timestamp = false;
        let base = match word.as_str() {
            // Spanner's PostgreSQL interface has one integer type: `int`
            // (and PostgreSQL's other spellings of it) is an alias of
            // `bigint`, not PostgreSQL's four-byte integer.
            "bigint" | "int8" | "int" | "integer" | "int4" => DataType::Int64,
            "boolean" | "bool" => DataType::Bool,
            "float8" => DataType::Float64,
            "double" => {
                self.expect_word("precision")?;
                DataType::Float64
            }
            "real" | "float4" => DataType::Float32,
            "numeric" | "decimal" => {
                if self.at_op("(") {
                    return Err(self.unsupported("numeric with precision and scale", start));
                }
                DataType::Numeric
            }
            "text" => DataType::String(Length::Max),
            "varchar" => DataType::String(self.parse_length()?),
            "character" => {
                self.expect_word("varying")?;
                DataType::String(self.parse_length()?)
            }
            "bytea" => DataType::Bytes(Length::Max),
            "date" => DataType::Date,
            "timestamptz" => DataType::Timestamp,
            "timestamp" => {
                if self.eat_words(&["with", "time", "zone"]) {
                    DataType::Timestamp
                } else {
                    return Err(self
                        .unsupported("type timestamp without time zone (use timestamptz)", start));
                }
            }
            "jsonb" => DataType::Json,
            "uuid" => DataType::Uuid,
            "spanner" if self.at_op(".") && self.at_word_n(1, "commit_timestamp") => {
                self.advance();
                self.advance();
                commit_timestamp = true;
                DataType::Timestamp
            }
            _ => {
                return Err(ParseError::new(
                    format!("type \"{word}\" is not supported"),
                    start,
                ))
            }
        };
        let mut data_type = base;
        if self.at_op("[") {
            self.advance();
            if let PgTok::Number(_, false) = self.peek().tok {
                self.advance();
            }
            self.expect_op("]")?;
            if self.at_op("[") {
                return Err(self.unsupported("a multi-dimensional array", start));
            }
            if commit_timestamp {
                return Err(self.unsupported("an array of spanner.commit_timestamp", start));
            }
            data_type = DataType::Array(Box::new(data_type));
        }
        Ok((data_type, commit_timestamp))
    }

    /// `[(n)]` after `varchar` / `character varying`.
    fn parse_length(&mut self) -> Result<Length> {
        if !self.eat_op("(") {
            return Ok(Length::Max);
        }
        let token = self.peek().clone();
        let PgTok::Number(text, false) = &token.tok else {
            return Err(self.unexpected());
        };
        let n: u64 = text.parse().map_err(|_| {
            ParseError::new(format!("length out of range: {text}"), token.span.start)
        })?;
        if n == 0 {
            return Err(ParseError::new(
                "length for type varchar must be at least 1",
                token.span.start,
            ));
        }
        self.advance();
        self.expect_op(")")?;
        Ok(Length::Limit(n))
    }

    fn parse_create_index(&mut self, unique: bool) -> Result<CreateIndex> {
        let if_not_exists = self.parse_if_not_exists();
        let name = self.parse_object_name()?;
        self.expect_word("on")?;
        let table = self.parse_object_name()?;
        self.expect_op("(")?;
        let mut keys = vec![self.parse_key_part()?];
        while self.eat_op(",") {
            keys.push(self.parse_key_part()?);
        }
        self.expect_op(")")?;
        let mut storing = Vec::new();
        if self.eat_word("include") {
            storing = self.parse_ident_list()?;
        }
        let mut interleave_in = None;
        if self.eat_words(&["interleave", "in"]) {
            interleave_in = Some(self.parse_object_name()?);
        }
        let mut null_filtered = false;
        if self.at_word("where") {
            let start = self.peek().span.start;
            self.advance();
            let expr = self.parse_expr()?;
            let mut filtered = Vec::new();
            if !not_null_columns(&expr, &mut filtered) {
                return Err(self.unsupported(
                    "an index predicate other than `column IS NOT NULL [AND ...]`",
                    start,
                ));
            }
            // The engine's null-filtered index leaves out rows with a NULL
            // in any key column: the predicate must name exactly those.
            let covers = |c: &str| filtered.iter().any(|f| f == c);
            if !keys.iter().all(|k| covers(&k.column.value))
                || !filtered
                    .iter()
                    .all(|f| keys.iter().any(|k| &k.column.value == f))
            {
                return Err(self.unsupported(
                    "an index predicate that does not name every key column",
                    start,
                ));
            }
            null_filtered = true;
        }
        Ok(CreateIndex {
            unique,
            null_filtered,
            if_not_exists,
            name,
            table,
            keys,
            storing,
            interleave_in,
        })
    }

    fn parse_create_sequence(&mut self) -> Result<StatementKind> {
        let if_not_exists = self.parse_if_not_exists();
        let name = self.parse_object_name()?;
        let start = self.peek().span.start;
        let options = self.parse_sequence_clauses(start)?;
        Ok(StatementKind::CreateSequence(CreateSequence {
            if_not_exists,
            name,
            options,
        }))
    }

    /// `[BIT_REVERSED_POSITIVE] [SKIP RANGE a b] [START COUNTER [WITH] n]`,
    /// the clauses after the kind in any order, each at most once.
    fn parse_sequence_clauses(&mut self, start: usize) -> Result<SequenceOptions> {
        let mut options = SequenceOptions::default();
        if self.eat_word("bit_reversed_positive") {
            options.kind = Some("bit_reversed_positive".into());
        }
        loop {
            if options.skip_range.is_none() && self.eat_words(&["skip", "range"]) {
                options.skip_range = Some(self.parse_skip_range()?);
            } else if options.start_with_counter.is_none() && self.eat_words(&["start", "counter"])
            {
                self.eat_word("with");
                options.start_with_counter = Some(self.parse_signed_int()?);
            } else {
                break;
            }
        }
        options.span = self.span_from(start);
        Ok(options)
    }

    /// `a b` (or `a, b`) after `SKIP RANGE`.
    fn parse_skip_range(&mut self) -> Result<(i64, i64)> {
        let low = self.parse_signed_int()?;
        self.eat_op(",");
        let high = self.parse_signed_int()?;
        Ok((low, high))
    }

    fn parse_create_view(&mut self, or_replace: bool) -> Result<StatementKind> {
        let name = self.parse_object_name()?;
        let security = if self.eat_words(&["sql", "security"]) {
            if self.eat_word("invoker") {
                SqlSecurity::Invoker
            } else if self.eat_word("definer") {
                SqlSecurity::Definer
            } else {
                return Err(self.unexpected());
            }
        } else {
            return Err(ParseError::new(
                "a view needs SQL SECURITY INVOKER or SQL SECURITY DEFINER",
                self.peek().span.start,
            ));
        };
        self.expect_word("as")?;
        let start = self.peek().span.start;
        let query = self.parse_query()?;
        let end = self.prev_end();
        Ok(StatementKind::CreateView(CreateView {
            or_replace,
            name,
            security,
            query: Box::new(query),
            query_text: self.text[start..end].to_string(),
        }))
    }

    fn parse_alter(&mut self) -> Result<StatementKind> {
        if self.eat_word("table") {
            let name = self.parse_object_name()?;
            let action = self.parse_alter_table_action()?;
            return Ok(StatementKind::AlterTable(AlterTable { name, action }));
        }
        if self.eat_word("sequence") {
            let name = self.parse_object_name()?;
            let action = if self.eat_words(&["skip", "range"]) {
                let (a, b) = self.parse_skip_range()?;
                AlterSequenceAction::SkipRange(a, b)
            } else if self.eat_words(&["no", "skip", "range"]) {
                AlterSequenceAction::NoSkipRange
            } else if self.eat_words(&["restart", "counter"]) {
                self.eat_word("with");
                AlterSequenceAction::RestartCounterWith(self.parse_signed_int()?)
            } else {
                return Err(self.unexpected());
            };
            return Ok(StatementKind::AlterSequence(AlterSequence { name, action }));
        }
        Err(self.unexpected())
    }

    fn parse_alter_table_action(&mut self) -> Result<AlterTableAction> {
        if self.at_word("add") && self.at_word_n(1, "ttl") {
            self.advance();
            return Ok(AlterTableAction::AddRowDeletionPolicy(self.parse_ttl()?));
        }
        if self.at_word("alter") && self.at_word_n(1, "ttl") {
            self.advance();
            return Ok(AlterTableAction::ReplaceRowDeletionPolicy(
                self.parse_ttl()?,
            ));
        }
        if self.eat_words(&["drop", "ttl"]) {
            return Ok(AlterTableAction::DropRowDeletionPolicy);
        }
        if self.eat_word("add") {
            if self.at_word("constraint")
                || self.at_word("foreign")
                || self.at_word("check")
                || self.at_word("primary")
            {
                let start = self.peek().span.start;
                return match self.parse_table_constraint()? {
                    Constraint::Other(c) => Ok(AlterTableAction::AddConstraint(c)),
                    Constraint::PrimaryKey(_) => {
                        Err(self.unsupported("adding a primary key to a table", start))
                    }
                };
            }
            self.eat_word("column");
            let if_not_exists = self.parse_if_not_exists();
            let start = self.peek().span.start;
            let (column, extra) = self.parse_column_def()?;
            if !extra.is_empty() {
                return Err(self.unsupported(
                    "a constraint in ALTER TABLE ADD COLUMN (add it with ADD CONSTRAINT)",
                    start,
                ));
            }
            return Ok(AlterTableAction::AddColumn {
                if_not_exists,
                column,
            });
        }
        if self.eat_word("drop") {
            if self.eat_word("constraint") {
                return Ok(AlterTableAction::DropConstraint {
                    name: self.parse_ident()?,
                });
            }
            self.eat_word("column");
            return Ok(AlterTableAction::DropColumn {
                name: self.parse_ident()?,
            });
        }
        if self.eat_word("alter") {
            self.eat_word("column");
            let name = self.parse_ident()?;
            if self.eat_word("type") || self.eat_words(&["set", "data", "type"]) {
                let type_start = self.peek().span.start;
                let (data_type, commit_timestamp) = self.parse_data_type()?;
                if commit_timestamp {
                    return Err(self
                        .unsupported("changing a column to spanner.commit_timestamp", type_start));
                }
                return Ok(AlterTableAction::AlterColumnType {
                    name,
                    data_type,
                    type_span: self.span_from(type_start),
                });
            }
            if self.eat_words(&["set", "not", "null"]) {
                return Ok(AlterTableAction::AlterColumnSetNotNull {
                    name,
                    not_null: true,
                });
            }
            if self.eat_words(&["drop", "not", "null"]) {
                return Ok(AlterTableAction::AlterColumnSetNotNull {
                    name,
                    not_null: false,
                });
            }
            if self.eat_words(&["set", "default"]) {
                let default = self.parse_default_expr()?;
                return Ok(AlterTableAction::AlterColumnSetDefault { name, default });
            }
            if self.eat_words(&["drop", "default"]) {
                return Ok(AlterTableAction::AlterColumnDropDefault { name });
            }
            return Err(self.unexpected());
        }
        if self.eat_words(&["set", "on", "delete"]) {
            return Ok(AlterTableAction::SetOnDelete(
                self.parse_on_delete_action()?,
            ));
        }
        Err(self.unexpected())
    }

    fn parse_drop(&mut self) -> Result<StatementKind> {
        let what = match &self.peek().tok {
            PgTok::Word(w) => w.clone(),
            _ => return Err(self.unexpected()),
        };
        if !["table", "index", "sequence", "view"].contains(&what.as_str()) {
            return Err(self.unexpected());
        }
        self.advance();
        let if_exists = self.eat_words(&["if", "exists"]);
        let name = self.parse_object_name()?;
        if self.at_word("cascade") || self.at_word("restrict") {
            return Err(self.unsupported("DROP ... CASCADE/RESTRICT", self.peek().span.start));
        }
        Ok(match what.as_str() {
            "table" => StatementKind::DropTable { name, if_exists },
            "index" => StatementKind::DropIndex { name, if_exists },
            "sequence" => StatementKind::DropSequence { name, if_exists },
            _ => {
                if if_exists {
                    return Err(self.unsupported("DROP VIEW IF EXISTS", name.span.start));
                }
                StatementKind::DropView { name }
            }
        })
    }
}

/// A constraint of a table definition.
pub(super) enum Constraint {
    PrimaryKey(Vec<KeyPart>),
    Other(TableConstraint),
}

fn set_primary_key(
    slot: &mut Option<Vec<KeyPart>>,
    key: Vec<KeyPart>,
    offset: usize,
) -> Result<()> {
    if slot.is_some() {
        return Err(ParseError::new(
            "multiple primary keys for table are not allowed",
            offset,
        ));
    }
    *slot = Some(key);
    Ok(())
}

/// Collects the columns of `c IS NOT NULL [AND ...]`; `false` if the
/// expression has any other shape.
fn not_null_columns(expr: &Expr, out: &mut Vec<String>) -> bool {
    match expr {
        Expr::Binary {
            op: crate::ast::BinaryOp::And,
            left,
            right,
            ..
        } => not_null_columns(left, out) && not_null_columns(right, out),
        Expr::Is {
            expr,
            test: IsTest::Null,
            negated: true,
            ..
        } => match expr.as_ref() {
            Expr::Column { path, .. } if path.len() == 1 => {
                out.push(path[0].value.clone());
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// The day count of a TTL interval string: `<n> day` or `<n> days` (any
/// case, spaces around), `n` a whole number with an optional sign (the
/// schema layer refuses a negative one).
fn parse_days(text: &str) -> Option<i64> {
    let mut words = text.split_whitespace();
    let n = words.next()?.parse::<i64>().ok()?;
    let unit = words.next()?;
    if words.next().is_some() {
        return None;
    }
    (unit.eq_ignore_ascii_case("day") || unit.eq_ignore_ascii_case("days")).then_some(n)
}
