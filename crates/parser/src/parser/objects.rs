//! DDL for objects other than tables, indexes and sequences: views, roles
//! with their GRANT / REVOKE statements, and the proto bundle.
//!
//! ```text
//! CREATE [OR REPLACE] VIEW v SQL SECURITY {INVOKER | DEFINER} AS query
//! DROP VIEW v
//! CREATE ROLE r | DROP ROLE r
//! GRANT {SELECT | INSERT | UPDATE | DELETE} [(col, ...)], ... ON {TABLE | VIEW} t, ... TO ROLE r, ...
//! GRANT ROLE r, ... TO ROLE r2, ...
//! REVOKE ... FROM ROLE r, ...
//! CREATE PROTO BUNDLE (a.b.C, ...[,])
//! ALTER PROTO BUNDLE [INSERT (...)] [UPDATE (...)] [DELETE (...)]
//! DROP PROTO BUNDLE
//! ```
//!
//! Spanner's grammar requires the word `ROLE` after `TO` / `FROM`; a bare
//! grantee (`TO parent`) is a syntax error, as in Spanner.

use super::Parser;
use crate::ast::{
    AlterProtoBundle, CreateView, Grant, GrantItems, GrantObjectKind, Privilege, PrivilegeKind,
    ProtoTypeName, SqlSecurity, StatementKind,
};
use crate::error::Result;
use crate::lexer::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    /// After `CREATE [OR REPLACE] VIEW`.
    pub(super) fn parse_create_view(&mut self, or_replace: bool) -> Result<StatementKind> {
        let name = self.parse_ident()?;
        self.expect_word("SQL")?;
        self.expect_word("SECURITY")?;
        let security = if self.eat_word("INVOKER") {
            SqlSecurity::Invoker
        } else if self.eat_word("DEFINER") {
            SqlSecurity::Definer
        } else {
            return Err(self.expected("keyword INVOKER or DEFINER"));
        };
        self.expect_keyword(Keyword::As)?;
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

    /// After `GRANT` or `REVOKE`: the items, then `TO ROLE` (GRANT) or
    /// `FROM ROLE` (REVOKE) and the grantees.
    pub(super) fn parse_grant_body(&mut self, revoke: bool) -> Result<Grant> {
        let what = if self.eat_word("ROLE") {
            GrantItems::Roles(self.parse_ident_sequence()?)
        } else {
            let mut privileges = Vec::new();
            loop {
                let start = self.peek().span.start;
                let kind = if self.eat_keyword(Keyword::Select) {
                    PrivilegeKind::Select
                } else if self.eat_word("INSERT") {
                    PrivilegeKind::Insert
                } else if self.eat_word("UPDATE") {
                    PrivilegeKind::Update
                } else if self.eat_word("DELETE") {
                    PrivilegeKind::Delete
                } else {
                    return Err(self.expected("keyword SELECT, INSERT, UPDATE, DELETE or ROLE"));
                };
                let columns = if self.at_punct(Punct::LParen) {
                    self.parse_ident_list()?
                } else {
                    Vec::new()
                };
                privileges.push(Privilege {
                    kind,
                    columns,
                    span: self.span_from(start),
                });
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
            self.expect_keyword(Keyword::On)?;
            let object_kind = if self.eat_word("TABLE") {
                GrantObjectKind::Table
            } else if self.eat_word("VIEW") {
                GrantObjectKind::View
            } else {
                return Err(self.expected("keyword TABLE or VIEW"));
            };
            let objects = self.parse_ident_sequence()?;
            GrantItems::Privileges {
                privileges,
                object_kind,
                objects,
            }
        };
        if revoke {
            self.expect_keyword(Keyword::From)?;
        } else {
            self.expect_keyword(Keyword::To)?;
        }
        self.expect_word("ROLE")?;
        let roles = self.parse_ident_sequence()?;
        Ok(Grant { what, roles })
    }

    /// `a, b, c` (at least one), without parentheses.
    fn parse_ident_sequence(&mut self) -> Result<Vec<crate::ast::Ident>> {
        let mut idents = vec![self.parse_ident()?];
        while self.eat_punct(Punct::Comma) {
            idents.push(self.parse_ident()?);
        }
        Ok(idents)
    }

    /// After `CREATE PROTO BUNDLE`.
    pub(super) fn parse_create_proto_bundle(&mut self) -> Result<StatementKind> {
        let types = self.parse_proto_type_list()?;
        Ok(StatementKind::CreateProtoBundle { types })
    }

    /// After `ALTER PROTO BUNDLE`: at least one clause, each at most once,
    /// in the order INSERT, UPDATE, DELETE.
    pub(super) fn parse_alter_proto_bundle(&mut self) -> Result<StatementKind> {
        let mut alter = AlterProtoBundle::default();
        let mut any = false;
        if self.eat_word("INSERT") {
            alter.insert = self.parse_proto_type_list()?;
            any = true;
        }
        if self.eat_word("UPDATE") {
            alter.update = self.parse_proto_type_list()?;
            any = true;
        }
        if self.eat_word("DELETE") {
            alter.delete = self.parse_proto_type_list()?;
            any = true;
        }
        if !any {
            return Err(self.expected("keyword INSERT, UPDATE or DELETE"));
        }
        Ok(StatementKind::AlterProtoBundle(alter))
    }

    /// `( a.b.C, ... [,] )`, possibly empty; names may be backquoted
    /// whole (`` `a.b.C` ``) or in parts.
    fn parse_proto_type_list(&mut self) -> Result<Vec<ProtoTypeName>> {
        self.expect_punct(Punct::LParen)?;
        let mut types = Vec::new();
        while !self.eat_punct(Punct::RParen) {
            let start = self.peek().span.start;
            let mut name = self.parse_proto_name_part()?;
            while self.eat_punct(Punct::Dot) {
                name.push('.');
                name.push_str(&self.parse_proto_name_part()?);
            }
            types.push(ProtoTypeName {
                name,
                span: self.span_from(start),
            });
            if !self.eat_punct(Punct::Comma) {
                self.expect_punct(Punct::RParen)?;
                break;
            }
        }
        Ok(types)
    }

    /// One dotted part of a proto type name: an identifier, or a reserved
    /// word (package names such as `proto` or `enum` are allowed there).
    pub(super) fn parse_proto_name_part(&mut self) -> Result<String> {
        match &self.peek().kind {
            TokenKind::Ident { value, .. } => {
                let value = value.clone();
                self.advance();
                Ok(value)
            }
            TokenKind::Keyword(k) => {
                let start = self.peek().span.start;
                let end = self.peek().span.end;
                let _ = k;
                self.advance();
                Ok(self.text[start..end].to_string())
            }
            _ => Err(self.expected("identifier")),
        }
    }
}
