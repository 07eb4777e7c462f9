//! Queries: `WITH`, set operations, `SELECT` with its FROM clause (tables,
//! joins, subqueries, UNNEST), hints, ORDER BY and LIMIT.

use super::{Expr, Ident, Span};

/// A query: `[WITH ...] body [ORDER BY ...] [LIMIT n [OFFSET m]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Statement hints written before the query: `@{USE_ADDITIONAL_PARALLELISM=true}`.
    pub hints: Vec<Hint>,
    pub with: Vec<Cte>,
    pub body: SetExpr,
    pub order_by: Vec<OrderByItem>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    pub span: Span,
}

/// `name AS (query)` in a WITH clause.
#[derive(Debug, Clone, PartialEq)]
pub struct Cte {
    pub name: Ident,
    pub query: Box<Query>,
}

/// The body of a query: a SELECT, a parenthesised query, or a set operation.
#[derive(Debug, Clone, PartialEq)]
pub enum SetExpr {
    Select(Box<Select>),
    /// `(query)`, which may carry its own ORDER BY / LIMIT.
    Query(Box<Query>),
    SetOperation {
        op: SetOperator,
        /// `ALL` (true) or `DISTINCT` (false); GoogleSQL requires one.
        all: bool,
        left: Box<SetExpr>,
        right: Box<SetExpr>,
        span: Span,
    },
}

/// UNION, INTERSECT, EXCEPT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOperator {
    Union,
    Intersect,
    Except,
}

/// `SELECT [DISTINCT] [AS STRUCT] items [FROM ...] [WHERE ...] [GROUP BY ...] [HAVING ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub distinct: bool,
    /// `SELECT AS STRUCT`: each row becomes one STRUCT value.
    pub as_struct: bool,
    pub items: Vec<SelectItem>,
    pub from: Option<TableExpr>,
    pub where_clause: Option<Expr>,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
    pub span: Span,
}

/// One item of a select list.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectItem {
    /// `expr [AS alias]`.
    Expr { expr: Expr, alias: Option<Ident> },
    /// `*` (with optional `EXCEPT (cols)` / `REPLACE (expr AS col)`).
    Star {
        except: Vec<Ident>,
        replace: Vec<(Expr, Ident)>,
        span: Span,
    },
    /// `t.*` or `path.*` (`qualifier`, `expr` is `None`), or `expr.*` for
    /// any other expression (`CAST(x AS STRUCT<...>).*`; `qualifier` is
    /// empty).
    QualifiedStar {
        qualifier: Vec<Ident>,
        expr: Option<Box<Expr>>,
        span: Span,
    },
}

/// A FROM-clause item.
#[derive(Debug, Clone, PartialEq)]
pub enum TableExpr {
    /// A table (possibly `INFORMATION_SCHEMA.TABLES`), with hints such as
    /// `@{FORCE_INDEX=idx}`.
    Table {
        path: Vec<Ident>,
        alias: Option<Ident>,
        hints: Vec<Hint>,
        span: Span,
    },
    /// `(query) [AS alias]`.
    Subquery {
        query: Box<Query>,
        alias: Option<Ident>,
        span: Span,
    },
    /// `UNNEST(array) [AS alias] [WITH OFFSET [AS name]]`, or a path to an
    /// array column of an earlier table (`t.arr`).
    Unnest {
        array: Expr,
        alias: Option<Ident>,
        /// `Some(None)`: WITH OFFSET without a name; `Some(Some(n))`: `AS n`.
        with_offset: Option<Option<Ident>>,
        span: Span,
    },
    /// A join; comma joins are `Cross`.
    Join {
        kind: JoinKind,
        left: Box<TableExpr>,
        right: Box<TableExpr>,
        condition: JoinCondition,
        /// `@{JOIN_METHOD=HASH_JOIN}` and friends, written after JOIN.
        hints: Vec<Hint>,
        span: Span,
    },
}

/// The kinds of join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
    Cross,
}

/// How a join matches rows.
#[derive(Debug, Clone, PartialEq)]
pub enum JoinCondition {
    On(Expr),
    Using(Vec<Ident>),
    None,
}

/// A hint `name = value` inside `@{...}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    pub name: Ident,
    pub value: Expr,
}

/// `expr [ASC|DESC] [NULLS FIRST|LAST]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderByItem {
    pub expr: Expr,
    pub desc: bool,
    /// `Some(true)`: NULLS FIRST; `Some(false)`: NULLS LAST; `None`: the
    /// default (NULLs first in ASC, last in DESC).
    pub nulls_first: Option<bool>,
}
