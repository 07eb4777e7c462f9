//! Statement dispatch, and the DDL statements: CREATE/ALTER/DROP of tables,
//! indexes and sequences, ALTER DATABASE, column definitions and types.
//!
//! Spanner's DDL keywords (`TABLE`, `KEY`, `INTERLEAVE`, ...) are not reserved
//! in GoogleSQL, so they are matched by spelling ([`Parser::at_word`]) and a
//! column may still be called `Key`. Where a word could start either a column
//! or a clause (`Check INT64` versus `CHECK (x > 0)`), the token after it
//! decides.

use super::Parser;
use crate::ast::{
    AlterSequence, AlterSequenceAction, AlterTable, AlterTableAction, Check, ColumnDef,
    CreateIndex, CreateSequence, CreateTable, DataType, Expr, ForeignKey, Generated, Interleave,
    InterleaveKind, KeyPart, Length, Literal, OnDelete, OptionPair, RowDeletionPolicy,
    SequenceOptions, SourceExpr, Span, Statement, StatementKind, TableConstraint, UnaryOp,
};
use crate::error::{ParseError, Result};
use crate::lexer::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    /// One statement, without the optional trailing `;`.
    pub(super) fn parse_statement(&mut self) -> Result<Statement> {
        let start = self.peek().span.start;
        let kind = if self.eat_keyword(Keyword::Create) {
            self.parse_create()?
        } else if self.eat_word("ALTER") {
            self.parse_alter()?
        } else if self.eat_word("DROP") {
            self.parse_drop()?
        } else if self.at_query_start() {
            StatementKind::Query(Box::new(self.parse_query()?))
        } else if self.at_word("INSERT") {
            self.parse_insert()?
        } else if self.at_word("UPDATE") {
            self.parse_update()?
        } else if self.at_word("DELETE") {
            self.parse_delete()?
        } else if self.at_word("EXPLAIN") {
            self.parse_explain()?
        } else if self.eat_word("GRANT") {
            StatementKind::Grant(self.parse_grant_body(false)?)
        } else if self.eat_word("REVOKE") {
            StatementKind::Revoke(self.parse_grant_body(true)?)
        } else if self.eat_word("ANALYZE") {
            StatementKind::Analyze
        } else {
            return Err(self.unexpected());
        };
        Ok(Statement {
            kind,
            span: self.span_from(start),
        })
    }

    fn parse_create(&mut self) -> Result<StatementKind> {
        if self.eat_keyword(Keyword::Or) {
            self.expect_word("REPLACE")?;
            self.expect_word("VIEW")?;
            return self.parse_create_view(true);
        }
        if self.eat_word("VIEW") {
            return self.parse_create_view(false);
        }
        if self.eat_word("ROLE") {
            let name = self.parse_ident()?;
            return Ok(StatementKind::CreateRole { name });
        }
        if self.eat_keyword(Keyword::Proto) {
            self.expect_word("BUNDLE")?;
            return self.parse_create_proto_bundle();
        }
        if self.eat_word("TABLE") {
            return Ok(StatementKind::CreateTable(self.parse_create_table()?));
        }
        if self.eat_word("SEQUENCE") {
            return Ok(StatementKind::CreateSequence(self.parse_create_sequence()?));
        }
        let unique = self.eat_word("UNIQUE");
        let null_filtered = self.eat_word("NULL_FILTERED");
        if self.eat_word("INDEX") {
            return Ok(StatementKind::CreateIndex(
                self.parse_create_index(unique, null_filtered)?,
            ));
        }
        if unique || null_filtered {
            Err(self.expected("keyword INDEX"))
        } else {
            Err(self.expected("keyword TABLE, INDEX, SEQUENCE, VIEW, ROLE or PROTO"))
        }
    }

    fn parse_alter(&mut self) -> Result<StatementKind> {
        if self.eat_word("TABLE") {
            let name = self.parse_ident()?;
            let action = self.parse_alter_table_action()?;
            Ok(StatementKind::AlterTable(AlterTable { name, action }))
        } else if self.eat_word("SEQUENCE") {
            let name = self.parse_ident()?;
            let action = self.parse_alter_sequence_action()?;
            Ok(StatementKind::AlterSequence(AlterSequence { name, action }))
        } else if self.eat_word("DATABASE") {
            let name = self.parse_ident()?;
            self.expect_keyword(Keyword::Set)?;
            let options = self.parse_options()?;
            Ok(StatementKind::AlterDatabase { name, options })
        } else if self.eat_keyword(Keyword::Proto) {
            self.expect_word("BUNDLE")?;
            self.parse_alter_proto_bundle()
        } else {
            Err(self.expected("keyword TABLE, SEQUENCE, DATABASE or PROTO"))
        }
    }

    fn parse_drop(&mut self) -> Result<StatementKind> {
        if self.eat_word("VIEW") {
            let name = self.parse_ident()?;
            return Ok(StatementKind::DropView { name });
        }
        if self.eat_word("ROLE") {
            let name = self.parse_ident()?;
            return Ok(StatementKind::DropRole { name });
        }
        if self.eat_keyword(Keyword::Proto) {
            self.expect_word("BUNDLE")?;
            return Ok(StatementKind::DropProtoBundle);
        }
        let which = if self.eat_word("TABLE") {
            "TABLE"
        } else if self.eat_word("INDEX") {
            "INDEX"
        } else if self.eat_word("SEQUENCE") {
            "SEQUENCE"
        } else {
            return Err(self.expected("keyword TABLE, INDEX, SEQUENCE, VIEW, ROLE or PROTO"));
        };
        let if_exists = self.parse_if_exists()?;
        let name = self.parse_ident()?;
        Ok(match which {
            "TABLE" => StatementKind::DropTable { name, if_exists },
            "INDEX" => StatementKind::DropIndex { name, if_exists },
            _ => StatementKind::DropSequence { name, if_exists },
        })
    }

    /// `[IF EXISTS]`.
    fn parse_if_exists(&mut self) -> Result<bool> {
        if self.eat_keyword(Keyword::If) {
            self.expect_keyword(Keyword::Exists)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// `[IF NOT EXISTS]`.
    fn parse_if_not_exists(&mut self) -> Result<bool> {
        if self.eat_keyword(Keyword::If) {
            self.expect_keyword(Keyword::Not)?;
            self.expect_keyword(Keyword::Exists)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// After `CREATE TABLE`.
    fn parse_create_table(&mut self) -> Result<CreateTable> {
        let if_not_exists = self.parse_if_not_exists()?;
        let name = self.parse_ident()?;
        self.expect_punct(Punct::LParen)?;
        let mut columns = Vec::new();
        let mut constraints = Vec::new();
        // The primary key may also be written in the list, as an element
        // `PRIMARY KEY (...)` or after one column's definition; then the
        // clause after `)` is optional, and more than one is refused.
        let mut primary_key: Option<Vec<KeyPart>> = None;
        // Elements separated by commas; a trailing comma before `)` is allowed.
        while !self.eat_punct(Punct::RParen) {
            if self.at_primary_key() {
                let start = self.peek().span.start;
                self.advance();
                self.advance();
                let key = self.parse_key_parts(true)?;
                set_primary_key(&mut primary_key, key, start)?;
            } else {
                match self.parse_table_constraint()? {
                    Some(constraint) => constraints.push(constraint),
                    None => {
                        let column = self.parse_column_def()?;
                        if self.at_primary_key() {
                            let start = self.peek().span.start;
                            self.advance();
                            self.advance();
                            let key = vec![KeyPart {
                                column: column.name.clone(),
                                desc: false,
                            }];
                            set_primary_key(&mut primary_key, key, start)?;
                        }
                        columns.push(column);
                    }
                }
            }
            if !self.eat_punct(Punct::Comma) {
                self.expect_punct(Punct::RParen)?;
                break;
            }
        }
        let primary_key = match primary_key {
            Some(key) if !self.at_primary_key() => key,
            Some(_) => return Err(ParseError::new(ONE_PRIMARY_KEY, self.peek().span.start)),
            None => {
                self.expect_word("PRIMARY")?;
                self.expect_word("KEY")?;
                self.parse_key_parts(true)?
            }
        };
        // Then, each after a comma: the interleave clause and the row
        // deletion policy, each at most once.
        let mut interleave = None;
        let mut row_deletion_policy = None;
        while self.eat_punct(Punct::Comma) {
            if interleave.is_none() && self.at_word("INTERLEAVE") {
                interleave = Some(self.parse_interleave()?);
            } else if row_deletion_policy.is_none() && self.at_word("ROW") {
                row_deletion_policy = Some(self.parse_row_deletion_policy()?);
            } else {
                return Err(self.expected("keyword INTERLEAVE or ROW"));
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

    /// `ROW DELETION POLICY (OLDER_THAN(col, INTERVAL n DAY))`.
    fn parse_row_deletion_policy(&mut self) -> Result<RowDeletionPolicy> {
        self.expect_word("ROW")?;
        self.expect_word("DELETION")?;
        self.expect_word("POLICY")?;
        self.parse_row_deletion_policy_body()
    }

    /// `(OLDER_THAN(col, INTERVAL n DAY))`, after `ROW DELETION POLICY`.
    fn parse_row_deletion_policy_body(&mut self) -> Result<RowDeletionPolicy> {
        self.expect_punct(Punct::LParen)?;
        self.expect_word("OLDER_THAN")?;
        self.expect_punct(Punct::LParen)?;
        let column = self.parse_ident()?;
        self.expect_punct(Punct::Comma)?;
        self.expect_keyword(Keyword::Interval)?;
        let start = self.peek().span.start;
        let days = self.parse_signed_int()?;
        let days_span = self.span_from(start);
        if !self.at_word("DAY") {
            return Err(ParseError::new(
                "Syntax error: a row deletion policy's interval must be in DAY units",
                self.peek().span.start,
            ));
        }
        self.advance();
        self.expect_punct(Punct::RParen)?;
        self.expect_punct(Punct::RParen)?;
        Ok(RowDeletionPolicy {
            column,
            days,
            days_span,
        })
    }

    /// Whether `PRIMARY KEY` starts here.
    fn at_primary_key(&self) -> bool {
        self.at_word("PRIMARY") && self.peek_at(1).is_word("KEY")
    }

    /// `INTERLEAVE IN PARENT p [ON DELETE ...]` or `INTERLEAVE IN p`.
    fn parse_interleave(&mut self) -> Result<Interleave> {
        self.expect_word("INTERLEAVE")?;
        self.expect_keyword(Keyword::In)?;
        // `PARENT` is a keyword here unless it is the parent's own name.
        let in_parent =
            self.at_word("PARENT") && matches!(self.peek_at(1).kind, TokenKind::Ident { .. });
        if in_parent {
            self.advance();
        }
        let parent = self.parse_ident()?;
        let kind = if in_parent {
            let on_delete = if self.at_keyword(Keyword::On) {
                self.parse_on_delete()?
            } else {
                OnDelete::NoAction
            };
            InterleaveKind::InParent(on_delete)
        } else {
            InterleaveKind::In
        };
        Ok(Interleave { parent, kind })
    }

    /// `ON DELETE {CASCADE | NO ACTION}`.
    fn parse_on_delete(&mut self) -> Result<OnDelete> {
        self.expect_keyword(Keyword::On)?;
        self.expect_word("DELETE")?;
        self.parse_delete_action()
    }

    /// `CASCADE | NO ACTION`.
    fn parse_delete_action(&mut self) -> Result<OnDelete> {
        if self.eat_word("CASCADE") {
            return Ok(OnDelete::Cascade);
        }
        if self.eat_keyword(Keyword::No) {
            self.expect_word("ACTION")?;
            return Ok(OnDelete::NoAction);
        }
        Err(self.expected("keyword CASCADE or NO ACTION"))
    }

    /// `( [col [ASC|DESC], ...] )`; empty only if `allow_empty`.
    fn parse_key_parts(&mut self, allow_empty: bool) -> Result<Vec<KeyPart>> {
        self.expect_punct(Punct::LParen)?;
        let mut parts = Vec::new();
        if allow_empty && self.eat_punct(Punct::RParen) {
            return Ok(parts);
        }
        loop {
            let column = self.parse_ident()?;
            let desc = if self.eat_keyword(Keyword::Desc) {
                true
            } else {
                self.eat_keyword(Keyword::Asc);
                false
            };
            parts.push(KeyPart { column, desc });
            if !self.eat_punct(Punct::Comma) {
                self.expect_punct(Punct::RParen)?;
                return Ok(parts);
            }
        }
    }

    /// A FOREIGN KEY or CHECK constraint, if one starts here; `None` (nothing
    /// consumed) if a column definition does.
    fn parse_table_constraint(&mut self) -> Result<Option<TableConstraint>> {
        let starts_clause = |p: &Self, at: usize| {
            let token = p.peek_at(at);
            (token.is_word("FOREIGN") && p.peek_at(at + 1).is_word("KEY"))
                || (token.is_word("CHECK")
                    && p.peek_at(at + 1).kind == TokenKind::Punct(Punct::LParen))
        };
        let named = self.at_word("CONSTRAINT")
            && matches!(self.peek_at(1).kind, TokenKind::Ident { .. })
            && starts_clause(self, 2);
        if !named && !starts_clause(self, 0) {
            return Ok(None);
        }
        let start = self.peek().span.start;
        let name = if named {
            self.advance();
            Some(self.parse_ident()?)
        } else {
            None
        };
        self.parse_constraint_body(name, start).map(Some)
    }

    /// `FOREIGN KEY ...` or `CHECK (...)`, after an optional `CONSTRAINT name`
    /// that began at `start`.
    fn parse_constraint_body(
        &mut self,
        name: Option<crate::ast::Ident>,
        start: usize,
    ) -> Result<TableConstraint> {
        if self.eat_word("CHECK") {
            let expr = self.parse_paren_source_expr()?;
            return Ok(TableConstraint::Check(Check {
                name,
                expr,
                span: self.span_from(start),
            }));
        }
        if !self.eat_word("FOREIGN") {
            return Err(self.expected("keyword FOREIGN or CHECK"));
        }
        self.expect_word("KEY")?;
        let columns = self.parse_ident_list()?;
        self.expect_word("REFERENCES")?;
        let referenced_table = self.parse_ident()?;
        let referenced_columns = self.parse_ident_list()?;
        let mut on_delete = OnDelete::NoAction;
        if self.at_keyword(Keyword::On) {
            on_delete = self.parse_on_delete()?;
        }
        let mut not_enforced = false;
        if self.at_keyword(Keyword::Not) && self.peek_at(1).is_word("ENFORCED") {
            self.advance();
            self.advance();
            not_enforced = true;
        } else {
            self.eat_word("ENFORCED");
        }
        Ok(TableConstraint::ForeignKey(ForeignKey {
            name,
            columns,
            referenced_table,
            referenced_columns,
            on_delete,
            not_enforced,
            span: self.span_from(start),
        }))
    }

    /// `( expr )` keeping the exact text between the parentheses.
    fn parse_paren_source_expr(&mut self) -> Result<SourceExpr> {
        self.expect_punct(Punct::LParen)?;
        let start = self.peek().span.start;
        let expr = self.parse_expr()?;
        let end = self.prev_end();
        self.expect_punct(Punct::RParen)?;
        Ok(SourceExpr {
            expr,
            text: self.text[start..end].to_string(),
        })
    }

    /// `name type [NOT NULL] [DEFAULT (e) | AS (e) [STORED] |
    /// GENERATED BY DEFAULT AS IDENTITY [(...)]] [HIDDEN] [OPTIONS (...)]`.
    fn parse_column_def(&mut self) -> Result<ColumnDef> {
        let name = self.parse_ident()?;
        self.parse_column_def_after_name(name)
    }

    fn parse_column_def_after_name(&mut self, name: crate::ast::Ident) -> Result<ColumnDef> {
        let (data_type, type_span) = self.parse_data_type(true)?;
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
        if self.at_keyword(Keyword::Not) {
            self.advance();
            self.expect_keyword(Keyword::Null)?;
            column.not_null = true;
        }
        if self.eat_keyword(Keyword::Default) {
            column.default = Some(self.parse_paren_source_expr()?);
        } else if self.eat_keyword(Keyword::As) {
            let expr = self.parse_paren_source_expr()?;
            let stored = self.eat_word("STORED");
            column.generated = Some(Generated { expr, stored });
        } else if self.at_word("GENERATED") {
            let start = self.advance().span.start;
            self.expect_keyword(Keyword::By)?;
            self.expect_keyword(Keyword::Default)?;
            self.expect_keyword(Keyword::As)?;
            self.expect_word("IDENTITY")?;
            let mut options = SequenceOptions::default();
            if self.eat_punct(Punct::LParen) {
                options = self.parse_sequence_clauses(start)?;
                self.expect_punct(Punct::RParen)?;
            }
            options.span = self.span_from(start);
            column.identity = Some(options);
        }
        column.hidden = self.eat_word("HIDDEN");
        if self.at_word("OPTIONS") {
            column.options = self.parse_options()?;
        }
        Ok(column)
    }

    /// A type name. Column types need a length for STRING and BYTES
    /// (`require_length`); in CAST a bare `STRING` means `STRING(MAX)`.
    /// Returns the type and its span.
    pub(super) fn parse_data_type(&mut self, require_length: bool) -> Result<(DataType, Span)> {
        self.nested(|p| p.parse_data_type_body(require_length))
    }

    fn parse_data_type_body(&mut self, require_length: bool) -> Result<(DataType, Span)> {
        let start = self.peek().span.start;
        let token = self.peek().clone();
        if token.kind == TokenKind::Keyword(Keyword::Array) {
            self.advance();
            self.expect_punct(Punct::Lt)?;
            if self.at_keyword(Keyword::Array) {
                return Err(ParseError::new(
                    "Syntax error: Arrays of arrays are not supported",
                    self.peek().span.start,
                ));
            }
            let (element, _) = self.parse_data_type(require_length)?;
            self.expect_type_close()?;
            return Ok((DataType::Array(Box::new(element)), self.span_from(start)));
        }
        // STRUCT types exist in expressions only; a column cannot be one.
        if token.kind == TokenKind::Keyword(Keyword::Struct) && !require_length {
            self.advance();
            let fields = self.parse_struct_type_fields()?;
            return Ok((DataType::Struct(fields), self.span_from(start)));
        }
        let word = match &token.kind {
            TokenKind::Ident { value, .. } => value.clone(),
            TokenKind::Keyword(k) => k.as_str().to_string(),
            _ => return Err(self.expected("type")),
        };
        let data_type = match word.to_ascii_uppercase().as_str() {
            "BOOL" => DataType::Bool,
            "INT64" => DataType::Int64,
            "FLOAT32" => DataType::Float32,
            "FLOAT64" => DataType::Float64,
            "NUMERIC" => DataType::Numeric,
            "DATE" => DataType::Date,
            "TIMESTAMP" => DataType::Timestamp,
            "JSON" => DataType::Json,
            "UUID" => DataType::Uuid,
            "STRING" | "BYTES" => {
                self.advance();
                let length = if require_length || self.at_punct(Punct::LParen) {
                    self.parse_length()?
                } else {
                    Length::Max
                };
                let ty = if word.eq_ignore_ascii_case("STRING") {
                    DataType::String(length)
                } else {
                    DataType::Bytes(length)
                };
                return Ok((ty, self.span_from(start)));
            }
            // A dotted name is a protocol buffer message or enum type of the
            // proto bundle; which of the two is for the schema to say.
            _ if self.peek_at(1).kind == TokenKind::Punct(Punct::Dot)
                || (matches!(&token.kind, TokenKind::Ident { quoted: true, value } if value.contains('.'))) =>
            {
                let mut name = self.parse_proto_name_part()?;
                while self.eat_punct(Punct::Dot) {
                    name.push('.');
                    name.push_str(&self.parse_proto_name_part()?);
                }
                return Ok((DataType::Proto(name), self.span_from(start)));
            }
            _ => {
                return Err(ParseError::new(
                    format!("Syntax error: Encountered '{word}' while parsing: column_type"),
                    start,
                ))
            }
        };
        self.advance();
        Ok((data_type, self.span_from(start)))
    }

    /// `<[name] T, ...>` after `STRUCT` (possibly empty: `STRUCT<>`). A
    /// field name is an identifier followed by its type; a type alone is
    /// followed by `,` or `>` (or `<` for `ARRAY<T>`).
    pub(super) fn parse_struct_type_fields(
        &mut self,
    ) -> Result<Vec<(Option<crate::ast::Ident>, DataType)>> {
        let mut fields = Vec::new();
        // `STRUCT<>` lexes as `STRUCT` `<>`.
        if self.eat_punct(Punct::NotEq) {
            return Ok(fields);
        }
        self.expect_punct(Punct::Lt)?;
        if self.at_punct(Punct::Gt) || self.at_punct(Punct::ShiftRight) {
            self.expect_type_close()?;
            return Ok(fields);
        }
        loop {
            let named = matches!(self.peek().kind, TokenKind::Ident { .. })
                && !matches!(
                    self.peek_at(1).kind,
                    TokenKind::Punct(
                        Punct::Comma | Punct::Gt | Punct::ShiftRight | Punct::Lt | Punct::LParen
                    )
                );
            let name = if named {
                Some(self.parse_ident()?)
            } else {
                None
            };
            let (ty, _) = self.parse_data_type(false)?;
            fields.push((name, ty));
            if self.eat_punct(Punct::Comma) {
                continue;
            }
            self.expect_type_close()?;
            return Ok(fields);
        }
    }

    /// `( n | MAX )`, n decimal or hex.
    fn parse_length(&mut self) -> Result<Length> {
        self.expect_punct(Punct::LParen)?;
        let length = if self.eat_word("MAX") {
            Length::Max
        } else if let TokenKind::Integer(text) = &self.peek().kind {
            let n = parse_u64(text).ok_or_else(|| {
                ParseError::new(
                    format!("Syntax error: Invalid length {text}"),
                    self.peek().span.start,
                )
            })?;
            self.advance();
            Length::Limit(n)
        } else {
            return Err(self.expected("integer or MAX"));
        };
        self.expect_punct(Punct::RParen)?;
        Ok(length)
    }

    /// `OPTIONS ( name = value, ... )`, possibly empty.
    fn parse_options(&mut self) -> Result<Vec<OptionPair>> {
        self.expect_word("OPTIONS")?;
        self.expect_punct(Punct::LParen)?;
        let mut options = Vec::new();
        if self.eat_punct(Punct::RParen) {
            return Ok(options);
        }
        loop {
            let name = self.parse_ident()?;
            self.expect_punct(Punct::Eq)?;
            let value = self.parse_expr()?;
            options.push(OptionPair { name, value });
            if !self.eat_punct(Punct::Comma) {
                self.expect_punct(Punct::RParen)?;
                return Ok(options);
            }
        }
    }

    /// After `CREATE INDEX`.
    fn parse_create_index(&mut self, unique: bool, null_filtered: bool) -> Result<CreateIndex> {
        let if_not_exists = self.parse_if_not_exists()?;
        let name = self.parse_ident()?;
        self.expect_keyword(Keyword::On)?;
        let table = self.parse_ident()?;
        let keys = self.parse_key_parts(false)?;
        let storing = if self.eat_word("STORING") {
            self.parse_ident_list()?
        } else {
            Vec::new()
        };
        let interleave_in = if self.eat_punct(Punct::Comma) {
            self.expect_word("INTERLEAVE")?;
            self.expect_keyword(Keyword::In)?;
            Some(self.parse_ident()?)
        } else {
            None
        };
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

    /// After `CREATE SEQUENCE`: the clause form, the OPTIONS form, or both.
    fn parse_create_sequence(&mut self) -> Result<CreateSequence> {
        let if_not_exists = self.parse_if_not_exists()?;
        let name = self.parse_ident()?;
        let start = self.peek().span.start;
        let mut options = self.parse_sequence_clauses(start)?;
        if self.at_word("OPTIONS") {
            let raw = self.parse_options()?;
            apply_sequence_options(&mut options, raw)?;
        }
        options.span = self.span_from(start);
        Ok(CreateSequence {
            if_not_exists,
            name,
            options,
        })
    }

    /// `[BIT_REVERSED_POSITIVE] [SKIP RANGE a, b] [START COUNTER [WITH] n]`,
    /// the clauses after the kind in any order, each at most once.
    fn parse_sequence_clauses(&mut self, start: usize) -> Result<SequenceOptions> {
        let mut options = SequenceOptions::default();
        if self.at_word("BIT_REVERSED_POSITIVE") {
            if let TokenKind::Ident { value, .. } = self.advance().kind {
                options.kind = Some(value);
            }
        }
        loop {
            if options.skip_range.is_none() && self.at_word("SKIP") {
                self.advance();
                options.skip_range = Some(self.parse_skip_range()?);
            } else if options.start_with_counter.is_none() && self.at_word("START") {
                self.advance();
                self.expect_word("COUNTER")?;
                self.eat_keyword(Keyword::With);
                options.start_with_counter = Some(self.parse_signed_int()?);
            } else {
                break;
            }
        }
        options.span = self.span_from(start);
        Ok(options)
    }

    /// `RANGE a, b` (after `SKIP`).
    fn parse_skip_range(&mut self) -> Result<(i64, i64)> {
        self.expect_keyword(Keyword::Range)?;
        let low = self.parse_signed_int()?;
        self.expect_punct(Punct::Comma)?;
        let high = self.parse_signed_int()?;
        Ok((low, high))
    }

    /// An INT64 literal with an optional sign.
    fn parse_signed_int(&mut self) -> Result<i64> {
        let start = self.peek().span.start;
        let negative = self.eat_punct(Punct::Minus);
        let TokenKind::Integer(text) = self.peek().kind.clone() else {
            return Err(self.expected("integer literal"));
        };
        self.advance();
        parse_i64(&text, negative).ok_or_else(|| {
            ParseError::new(
                format!(
                    "Syntax error: Integer out of range: {}",
                    &self.text[start..self.prev_end()]
                ),
                start,
            )
        })
    }

    fn parse_alter_sequence_action(&mut self) -> Result<AlterSequenceAction> {
        if self.eat_keyword(Keyword::Set) {
            let start = self.peek().span.start;
            let raw = self.parse_options()?;
            let mut options = SequenceOptions::default();
            apply_sequence_options(&mut options, raw)?;
            options.span = self.span_from(start);
            return Ok(AlterSequenceAction::SetOptions(options));
        }
        if self.eat_word("RESTART") {
            self.expect_word("COUNTER")?;
            self.eat_keyword(Keyword::With);
            return Ok(AlterSequenceAction::RestartCounterWith(
                self.parse_signed_int()?,
            ));
        }
        if self.eat_word("SKIP") {
            let (low, high) = self.parse_skip_range()?;
            return Ok(AlterSequenceAction::SkipRange(low, high));
        }
        if self.eat_keyword(Keyword::No) {
            self.expect_word("SKIP")?;
            self.expect_keyword(Keyword::Range)?;
            return Ok(AlterSequenceAction::NoSkipRange);
        }
        Err(self.expected("keyword SET, RESTART, SKIP or NO"))
    }

    fn parse_alter_table_action(&mut self) -> Result<AlterTableAction> {
        if self.at_word("ADD") && self.peek_at(1).is_word("ROW") {
            self.advance();
            return Ok(AlterTableAction::AddRowDeletionPolicy(
                self.parse_row_deletion_policy()?,
            ));
        }
        if self.at_word("REPLACE") {
            self.advance();
            return Ok(AlterTableAction::ReplaceRowDeletionPolicy(
                self.parse_row_deletion_policy()?,
            ));
        }
        if self.at_word("DROP") && self.peek_at(1).is_word("ROW") {
            self.advance();
            self.expect_word("ROW")?;
            self.expect_word("DELETION")?;
            self.expect_word("POLICY")?;
            return Ok(AlterTableAction::DropRowDeletionPolicy);
        }
        if self.eat_word("ADD") {
            if self.eat_word("COLUMN") {
                let if_not_exists = self.parse_if_not_exists()?;
                let column = self.parse_column_def()?;
                return Ok(AlterTableAction::AddColumn {
                    if_not_exists,
                    column,
                });
            }
            let start = self.peek().span.start;
            let name = if self.eat_word("CONSTRAINT") {
                Some(self.parse_ident()?)
            } else {
                None
            };
            if name.is_none() && !self.at_word("FOREIGN") && !self.at_word("CHECK") {
                return Err(self.expected("keyword COLUMN, CONSTRAINT, FOREIGN or CHECK"));
            }
            let constraint = self.parse_constraint_body(name, start)?;
            return Ok(AlterTableAction::AddConstraint(constraint));
        }
        if self.eat_word("DROP") {
            if self.eat_word("COLUMN") {
                return Ok(AlterTableAction::DropColumn {
                    name: self.parse_ident()?,
                });
            }
            if self.eat_word("CONSTRAINT") {
                return Ok(AlterTableAction::DropConstraint {
                    name: self.parse_ident()?,
                });
            }
            return Err(self.expected("keyword COLUMN or CONSTRAINT"));
        }
        if self.eat_word("ALTER") {
            self.expect_word("COLUMN")?;
            let name = self.parse_ident()?;
            return self.parse_alter_column(name);
        }
        if self.eat_keyword(Keyword::Set) {
            self.expect_keyword(Keyword::On)?;
            self.expect_word("DELETE")?;
            return Ok(AlterTableAction::SetOnDelete(self.parse_delete_action()?));
        }
        Err(self.expected("keyword ADD, DROP, ALTER, REPLACE or SET"))
    }

    /// After `ALTER COLUMN c`.
    fn parse_alter_column(&mut self, name: crate::ast::Ident) -> Result<AlterTableAction> {
        if self.eat_keyword(Keyword::Set) {
            if self.at_word("OPTIONS") {
                let options = self.parse_options()?;
                return Ok(AlterTableAction::AlterColumnSetOptions { name, options });
            }
            if self.eat_keyword(Keyword::Default) {
                let default = self.parse_paren_source_expr()?;
                return Ok(AlterTableAction::AlterColumnSetDefault { name, default });
            }
            return Err(self.expected("keyword OPTIONS or DEFAULT"));
        }
        if self.at_word("DROP") {
            self.advance();
            self.expect_keyword(Keyword::Default)?;
            return Ok(AlterTableAction::AlterColumnDropDefault { name });
        }
        let column = self.parse_column_def_after_name(name)?;
        Ok(AlterTableAction::AlterColumn { column })
    }
}

/// Fills `options` from an OPTIONS list of a sequence, keeping the list in
/// `raw_options`. A NULL value means "not set"; names Spanner does not know
/// are left for the schema layer to reject.
fn apply_sequence_options(options: &mut SequenceOptions, raw: Vec<OptionPair>) -> Result<()> {
    let mut skip_min = None;
    let mut skip_max = None;
    for pair in &raw {
        let name = pair.name.value.to_ascii_lowercase();
        let is_null = matches!(
            pair.value,
            Expr::Literal {
                value: Literal::Null,
                ..
            }
        );
        let offset = pair.value.span().start;
        let wrong = |what: &str| {
            ParseError::new(
                format!("Syntax error: Option {} must be {what}", pair.name.value),
                offset,
            )
        };
        match name.as_str() {
            "sequence_kind" if !is_null => match &pair.value {
                Expr::Literal {
                    value: Literal::String(s),
                    ..
                } => options.kind = Some(s.clone()),
                _ => return Err(wrong("a string literal")),
            },
            "skip_range_min" | "skip_range_max" | "start_with_counter" if !is_null => {
                let n = literal_i64(&pair.value).ok_or_else(|| wrong("an INT64 literal"))?;
                match name.as_str() {
                    "skip_range_min" => skip_min = Some(n),
                    "skip_range_max" => skip_max = Some(n),
                    _ => options.start_with_counter = Some(n),
                }
            }
            _ => {}
        }
    }
    match (skip_min, skip_max) {
        (Some(low), Some(high)) => options.skip_range = Some((low, high)),
        (None, None) => {}
        _ => {
            let offset = raw.first().map_or(0, |p| p.name.span.start);
            return Err(ParseError::new(
                "Syntax error: skip_range_min and skip_range_max must be set together",
                offset,
            ));
        }
    }
    options.raw_options = raw;
    Ok(())
}

/// The value of an integer literal, possibly negated.
fn literal_i64(expr: &Expr) -> Option<i64> {
    match expr {
        Expr::Literal {
            value: Literal::Integer(text),
            ..
        } => parse_i64(text, false),
        Expr::Unary {
            op: UnaryOp::Neg,
            expr,
            ..
        } => match expr.as_ref() {
            Expr::Literal {
                value: Literal::Integer(text),
                ..
            } => parse_i64(text, true),
            _ => None,
        },
        _ => None,
    }
}

/// A decimal or `0x` hex integer literal's magnitude.
fn parse_u64(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// An integer literal as INT64, negated if `negative` (so that
/// `-9223372036854775808` fits).
fn parse_i64(text: &str, negative: bool) -> Option<i64> {
    let magnitude = i128::from(parse_u64(text)?);
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// The error for a second primary key in one CREATE TABLE.
const ONE_PRIMARY_KEY: &str = "Syntax error: a table has one PRIMARY KEY";

/// Records a primary key written inside CREATE TABLE's list, refusing a
/// second one (at `offset`).
fn set_primary_key(
    slot: &mut Option<Vec<KeyPart>>,
    key: Vec<KeyPart>,
    offset: usize,
) -> Result<()> {
    if slot.is_some() {
        return Err(ParseError::new(ONE_PRIMARY_KEY, offset));
    }
    *slot = Some(key);
    Ok(())
}
