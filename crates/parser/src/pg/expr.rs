//! PostgreSQL expressions: in queries and DML, and as DDL holds them
//! (defaults, generated columns, checks, index predicates).
//!
//! Precedence follows PostgreSQL's, lowest first: `OR`; `AND`; `NOT`;
//! `IS`, comparisons, `[NOT] IN / BETWEEN / LIKE`; `||`; `+ -`; `* / %`;
//! unary `-`; `::` casts. Subqueries (scalar, `IN`, `EXISTS`, `= ANY`,
//! `<> ALL`, `ARRAY(...)`) parse through `query.rs`.
//!
//! The dialect's function name table is here too ([`engine_function`]):
//! PostgreSQL names whose spelling or arguments differ from the engine's
//! are mapped (`nextval('s')` is the engine's `GET_NEXT_SEQUENCE_VALUE(SEQUENCE
//! s)`, `now()` is `CURRENT_TIMESTAMP`, `spanner.f(...)` is `f(...)`); the
//! rest pass through by name. Operators PostgreSQL has and the engine has
//! not are lowered to ones it has: `ILIKE` to `LIKE` over `LOWER`, `IS
//! [NOT] DISTINCT FROM` to a `CASE`.

use rowtree_types::Type;

use super::lexer::PgTok;
use super::PgParser;
use crate::ast::{BinaryOp, DataType, Expr, Ident, IsTest, Literal, Span, UnaryOp};
use crate::error::{ParseError, Result};
use crate::MAX_NESTING;

/// A left-associative chain being built: the parser loops instead of
/// recursing, but every link deepens the tree, so links count toward
/// [`MAX_NESTING`] together with the deepest subtree met in the chain.
pub(super) struct Chain {
    /// `PgParser::deepest` when the chain started.
    outer: usize,
    links: usize,
}

impl PgParser<'_> {
    /// One expression.
    pub(super) fn parse_expr(&mut self) -> Result<Expr> {
        self.nested(|p| p.parse_or())
    }

    /// Starts a left-associative chain (`a + b + c`, `t JOIN u JOIN v`),
    /// before its first operand is parsed.
    pub(super) fn chain(&mut self) -> Chain {
        let chain = Chain {
            outer: self.deepest,
            links: 0,
        };
        self.deepest = self.depth;
        chain
    }

    /// One more link of `chain` (after its node is built). Each link puts
    /// the tree built so far one level deeper, as recursion would: fails
    /// once the deepest subtree seen in the chain plus its links passes
    /// [`MAX_NESTING`].
    pub(super) fn link(&mut self, chain: &mut Chain) -> Result<()> {
        chain.links += 1;
        if self.deepest + chain.links > MAX_NESTING {
            return Err(self.too_deep());
        }
        Ok(())
    }

    /// Ends `chain`: its links count for the enclosing constructs.
    pub(super) fn end_chain(&mut self, chain: Chain) {
        self.deepest = chain.outer.max(self.deepest + chain.links);
    }

    pub(super) fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        let span = Span {
            start: left.span().start,
            end: right.span().end,
        };
        Expr::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
            span,
        }
    }

    fn parse_or(&mut self) -> Result<Expr> {
        let mut chain = self.chain();
        let mut left = self.parse_and()?;
        while self.eat_word("or") {
            let right = self.parse_and()?;
            left = Self::binary(BinaryOp::Or, left, right);
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    fn parse_and(&mut self) -> Result<Expr> {
        let mut chain = self.chain();
        let mut left = self.parse_not()?;
        while self.eat_word("and") {
            let right = self.parse_not()?;
            left = Self::binary(BinaryOp::And, left, right);
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    fn parse_not(&mut self) -> Result<Expr> {
        let start = self.peek().span.start;
        if self.eat_word("not") {
            let expr = self.nested(|p| p.parse_not())?;
            return Ok(Expr::Unary {
                op: UnaryOp::Not,
                expr: Box::new(expr),
                span: self.span_from(start),
            });
        }
        self.parse_predicate()
    }

    /// Comparisons, `IS`, `IN`, `BETWEEN`, `LIKE` over `||` operands.
    fn parse_predicate(&mut self) -> Result<Expr> {
        let start = self.peek().span.start;
        let mut chain = self.chain();
        let mut left = self.parse_concat()?;
        loop {
            if self.eat_word("is") {
                let negated = self.eat_word("not");
                if self.eat_words(&["distinct", "from"]) {
                    let right = self.parse_concat()?;
                    left = is_distinct_from(left, right, negated, self.span_from(start));
                    self.link(&mut chain)?;
                    continue;
                }
                let test = if self.eat_word("null") {
                    IsTest::Null
                } else if self.eat_word("true") {
                    IsTest::True
                } else if self.eat_word("false") {
                    IsTest::False
                } else {
                    return Err(self.unexpected());
                };
                left = Expr::Is {
                    expr: Box::new(left),
                    test,
                    negated,
                    span: self.span_from(start),
                };
            } else if ["in", "between", "like", "ilike"]
                .iter()
                .any(|w| self.at_word(w) || (self.at_word("not") && self.at_word_n(1, w)))
            {
                let negated = self.eat_word("not");
                if self.eat_word("in") {
                    self.expect_op("(")?;
                    if self.at_query_start() {
                        let query = self.parse_query()?;
                        self.expect_op(")")?;
                        left = Expr::InSubquery {
                            expr: Box::new(left),
                            query: Box::new(query),
                            negated,
                            span: self.span_from(start),
                        };
                        self.link(&mut chain)?;
                        continue;
                    }
                    let mut list = vec![self.parse_expr()?];
                    while self.eat_op(",") {
                        list.push(self.parse_expr()?);
                    }
                    self.expect_op(")")?;
                    left = Expr::InList {
                        expr: Box::new(left),
                        list,
                        negated,
                        span: self.span_from(start),
                    };
                } else if self.eat_word("between") {
                    let low = self.parse_concat()?;
                    self.expect_word("and")?;
                    let high = self.parse_concat()?;
                    left = Expr::Between {
                        expr: Box::new(left),
                        low: Box::new(low),
                        high: Box::new(high),
                        negated,
                        span: self.span_from(start),
                    };
                } else {
                    let insensitive = self.eat_word("ilike");
                    if !insensitive {
                        self.expect_word("like")?;
                    }
                    let mut pattern = self.parse_concat()?;
                    if self.at_word("escape") {
                        return Err(self.unsupported("LIKE ... ESCAPE", self.peek().span.start));
                    }
                    if insensitive {
                        // ILIKE: both sides lower-cased, then LIKE.
                        let (ls, ps) = (left.span(), pattern.span());
                        left = call("LOWER", ls, vec![left], ls);
                        pattern = call("LOWER", ps, vec![pattern], ps);
                    }
                    left = Expr::Like {
                        expr: Box::new(left),
                        pattern: Box::new(pattern),
                        negated,
                        span: self.span_from(start),
                    };
                }
            } else if let Some(op) = self.comparison_op() {
                self.advance();
                if (self.at_word("any") || self.at_word("some") || self.at_word("all"))
                    && matches!(self.peek_at(1).tok, PgTok::Op("("))
                {
                    left = self.parse_quantified(left, op, start)?;
                } else {
                    let right = self.parse_concat()?;
                    left = Self::binary(op, left, right);
                }
            } else {
                break;
            }
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    /// `left = ANY|SOME (query | array)` and `left <> ALL (...)`, after the
    /// operator: the engine's `IN` forms. Other operators with a quantifier
    /// are not supported.
    fn parse_quantified(&mut self, left: Expr, op: BinaryOp, start: usize) -> Result<Expr> {
        let at = self.peek().span.start;
        let all = self.at_word("all");
        let negated = match (op, all) {
            (BinaryOp::Eq, false) => false,
            (BinaryOp::NotEq, true) => true,
            _ => {
                return Err(
                    self.unsupported("a quantified comparison other than = ANY or <> ALL", at)
                )
            }
        };
        self.advance();
        self.expect_op("(")?;
        if self.at_query_start() {
            let query = self.parse_query()?;
            self.expect_op(")")?;
            return Ok(Expr::InSubquery {
                expr: Box::new(left),
                query: Box::new(query),
                negated,
                span: self.span_from(start),
            });
        }
        let array = self.parse_expr()?;
        self.expect_op(")")?;
        Ok(Expr::InUnnest {
            expr: Box::new(left),
            array: Box::new(array),
            negated,
            span: self.span_from(start),
        })
    }

    fn comparison_op(&self) -> Option<BinaryOp> {
        match self.peek().tok {
            PgTok::Op("=") => Some(BinaryOp::Eq),
            PgTok::Op("<>") | PgTok::Op("!=") => Some(BinaryOp::NotEq),
            PgTok::Op("<") => Some(BinaryOp::Lt),
            PgTok::Op("<=") => Some(BinaryOp::LtEq),
            PgTok::Op(">") => Some(BinaryOp::Gt),
            PgTok::Op(">=") => Some(BinaryOp::GtEq),
            _ => None,
        }
    }

    fn parse_concat(&mut self) -> Result<Expr> {
        let mut chain = self.chain();
        let mut left = self.parse_additive()?;
        while self.eat_op("||") {
            let right = self.parse_additive()?;
            left = Self::binary(BinaryOp::Concat, left, right);
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    fn parse_additive(&mut self) -> Result<Expr> {
        let mut chain = self.chain();
        let mut left = self.parse_multiplicative()?;
        loop {
            let op = if self.eat_op("+") {
                BinaryOp::Add
            } else if self.eat_op("-") {
                BinaryOp::Sub
            } else {
                break;
            };
            let right = self.parse_multiplicative()?;
            left = Self::binary(op, left, right);
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    fn parse_multiplicative(&mut self) -> Result<Expr> {
        let mut chain = self.chain();
        let mut left = self.parse_unary()?;
        loop {
            let start = self.peek().span.start;
            if self.eat_op("*") {
                let right = self.parse_unary()?;
                left = Self::binary(BinaryOp::Mul, left, right);
            } else if self.eat_op("/") {
                let right = self.parse_unary()?;
                left = Self::binary(BinaryOp::IntDiv, left, right);
            } else if self.eat_op("%") {
                let right = self.parse_unary()?;
                let span = Span {
                    start: left.span().start,
                    end: right.span().end,
                };
                left = Expr::Function {
                    name: Ident {
                        value: "MOD".into(),
                        span: Span {
                            start,
                            end: start + 1,
                        },
                    },
                    args: vec![left, right],
                    safe: false,
                    distinct: false,
                    modifiers: None,
                    span,
                };
            } else {
                break;
            }
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    fn parse_unary(&mut self) -> Result<Expr> {
        let start = self.peek().span.start;
        let op = if self.eat_op("-") {
            UnaryOp::Neg
        } else if self.eat_op("+") {
            UnaryOp::Plus
        } else {
            return self.parse_postfix();
        };
        let expr = self.nested(|p| p.parse_unary())?;
        Ok(Expr::Unary {
            op,
            expr: Box::new(expr),
            span: self.span_from(start),
        })
    }

    /// A primary expression followed by `::type` casts.
    fn parse_postfix(&mut self) -> Result<Expr> {
        let start = self.peek().span.start;
        let mut chain = self.chain();
        let mut expr = self.parse_primary()?;
        while self.eat_op("::") {
            let (to, commit_timestamp) = self.parse_data_type()?;
            if commit_timestamp {
                return Err(self.unsupported("a cast to spanner.commit_timestamp", start));
            }
            expr = match (expr, to) {
                // `ARRAY[]::uuid[]`: PostgreSQL's way to write an empty
                // array of a type, the typed `ARRAY<UUID>[]` of GoogleSQL.
                (
                    Expr::Array {
                        element_type: None,
                        items,
                        ..
                    },
                    DataType::Array(element),
                ) if items.is_empty() => Expr::Array {
                    element_type: Some(*element),
                    items,
                    span: self.span_from(start),
                },
                // `'\x0011'::bytea`: a string literal read with bytea's
                // input syntax (hex, or escapes), as PostgreSQL reads it.
                (
                    Expr::Literal {
                        value: Literal::String(text),
                        ..
                    },
                    DataType::Bytes(_),
                ) => Expr::Literal {
                    value: Literal::Bytes(bytea_input(&text).ok_or_else(|| {
                        ParseError::new("invalid input syntax for type bytea", start)
                    })?),
                    span: self.span_from(start),
                },
                (expr, to) => Expr::Cast {
                    expr: Box::new(expr),
                    to,
                    safe: false,
                    span: self.span_from(start),
                },
            };
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(expr)
    }

    fn parse_primary(&mut self) -> Result<Expr> {
        let token = self.peek().clone();
        let start = token.span.start;
        let literal = |value| Expr::Literal {
            value,
            span: token.span,
        };
        match &token.tok {
            PgTok::Number(text, float) => {
                self.advance();
                Ok(literal(if *float {
                    Literal::Float(text.clone())
                } else {
                    Literal::Integer(text.clone())
                }))
            }
            PgTok::Str(s) => {
                self.advance();
                Ok(literal(Literal::String(s.clone())))
            }
            PgTok::Param(n) => {
                self.advance();
                Ok(Expr::Parameter {
                    name: format!("p{n}"),
                    span: token.span,
                })
            }
            PgTok::Op("(") => {
                if self.at_query_start() {
                    self.advance();
                    let query = self.parse_query()?;
                    self.expect_op(")")?;
                    return Ok(Expr::Subquery {
                        query: Box::new(query),
                        span: self.span_from(start),
                    });
                }
                self.advance();
                let expr = self.parse_expr()?;
                self.expect_op(")")?;
                Ok(expr)
            }
            PgTok::Word(w) => match w.as_str() {
                "null" => {
                    self.advance();
                    Ok(literal(Literal::Null))
                }
                "true" | "false" => {
                    self.advance();
                    Ok(literal(Literal::Bool(w == "true")))
                }
                "current_timestamp" | "current_date" => {
                    self.advance();
                    let name = w.to_uppercase();
                    if self.eat_op("(") {
                        self.expect_op(")")?;
                    }
                    Ok(call(&name, token.span, Vec::new(), self.span_from(start)))
                }
                "case" => {
                    self.advance();
                    self.parse_case(start)
                }
                "cast" => {
                    self.advance();
                    self.expect_op("(")?;
                    let expr = self.parse_expr()?;
                    self.expect_word("as")?;
                    let (to, _) = self.parse_data_type()?;
                    self.expect_op(")")?;
                    Ok(Expr::Cast {
                        expr: Box::new(expr),
                        to,
                        safe: false,
                        span: self.span_from(start),
                    })
                }
                "array" if matches!(self.peek_at(1).tok, PgTok::Op("(")) => {
                    self.advance();
                    self.advance();
                    let query = self.parse_query()?;
                    self.expect_op(")")?;
                    Ok(Expr::ArraySubquery {
                        query: Box::new(query),
                        span: self.span_from(start),
                    })
                }
                "array" => {
                    self.advance();
                    self.expect_op("[")?;
                    let mut items = Vec::new();
                    if !self.at_op("]") {
                        items.push(self.parse_expr()?);
                        while self.eat_op(",") {
                            items.push(self.parse_expr()?);
                        }
                    }
                    self.expect_op("]")?;
                    Ok(Expr::Array {
                        element_type: None,
                        items,
                        span: self.span_from(start),
                    })
                }
                "date" | "timestamptz" | "jsonb" | "numeric"
                    if matches!(self.peek_at(1).tok, PgTok::Str(_)) =>
                {
                    self.advance();
                    let PgTok::Str(text) = self.advance().tok else {
                        unreachable!("checked above")
                    };
                    let ty = match w.as_str() {
                        "date" => Type::Date,
                        "timestamptz" => Type::Timestamp,
                        "jsonb" => Type::Json,
                        _ => Type::Numeric,
                    };
                    Ok(Expr::Literal {
                        value: Literal::Typed(ty, text),
                        span: self.span_from(start),
                    })
                }
                "exists" if matches!(self.peek_at(1).tok, PgTok::Op("(")) => {
                    self.advance();
                    self.advance();
                    let query = self.parse_query()?;
                    self.expect_op(")")?;
                    Ok(Expr::Exists {
                        query: Box::new(query),
                        span: self.span_from(start),
                    })
                }
                _ => self.parse_name_or_call(),
            },
            PgTok::Quoted(_) => self.parse_name_or_call(),
            _ => Err(self.unexpected()),
        }
    }

    /// `CASE [operand] WHEN a THEN b ... [ELSE c] END` (after `CASE`).
    fn parse_case(&mut self, start: usize) -> Result<Expr> {
        let operand = if self.at_word("when") {
            None
        } else {
            Some(Box::new(self.parse_expr()?))
        };
        let mut branches = Vec::new();
        while self.eat_word("when") {
            let when = self.parse_expr()?;
            self.expect_word("then")?;
            let then = self.parse_expr()?;
            branches.push((when, then));
        }
        if branches.is_empty() {
            return Err(self.unexpected());
        }
        let else_expr = if self.eat_word("else") {
            Some(Box::new(self.parse_expr()?))
        } else {
            None
        };
        self.expect_word("end")?;
        Ok(Expr::Case {
            operand,
            branches,
            else_expr,
            span: self.span_from(start),
        })
    }

    /// A column reference (`c`, `t.c`) or a function call (`f(...)`,
    /// `spanner.f(...)`).
    fn parse_name_or_call(&mut self) -> Result<Expr> {
        let start = self.peek().span.start;
        let mut path = vec![self.parse_ident()?];
        while self.at_op(".") {
            self.advance();
            path.push(self.parse_ident()?);
        }
        if !self.at_op("(") {
            return Ok(Expr::Column {
                path,
                span: self.span_from(start),
            });
        }
        let name_span = self.span_from(start);
        let name = match path.as_slice() {
            [f] => f.value.clone(),
            [schema, f] if schema.value == "spanner" || schema.value == "pg_catalog" => {
                f.value.clone()
            }
            _ => {
                return Err(ParseError::new(
                    format!(
                        "function {} does not exist",
                        path.iter()
                            .map(|i| i.value.as_str())
                            .collect::<Vec<_>>()
                            .join(".")
                    ),
                    start,
                ))
            }
        };
        self.expect_op("(")?;
        if name == "nextval" {
            let arg = self.peek().clone();
            let PgTok::Str(sequence) = &arg.tok else {
                return Err(self.unexpected());
            };
            self.advance();
            self.expect_op(")")?;
            let value = match sequence.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                Some(exact) => exact.to_string(),
                None => sequence
                    .strip_prefix("public.")
                    .unwrap_or(sequence)
                    .to_lowercase(),
            };
            let sequence = Expr::Sequence {
                name: Ident {
                    value,
                    span: arg.span,
                },
                span: arg.span,
            };
            return Ok(call(
                "GET_NEXT_SEQUENCE_VALUE",
                name_span,
                vec![sequence],
                self.span_from(start),
            ));
        }
        let mut args = Vec::new();
        let mut distinct = false;
        if self.at_op("*") {
            let star = self.advance().span;
            args.push(Expr::Star { span: star });
        } else if !self.at_op(")") {
            distinct = self.eat_word("distinct");
            args.push(self.parse_expr()?);
            while self.eat_op(",") {
                args.push(self.parse_expr()?);
            }
        }
        self.expect_op(")")?;
        let spanner = path.len() == 2 && path[0].value == "spanner";
        // PostgreSQL's array_length(a, 1) is NULL for an empty array (it
        // has no dimension 1), where the engine's ARRAY_LENGTH says 0.
        let empty_is_null = !spanner && name == "array_length" && args.len() == 2;
        let (engine_name, args) = engine_function(&name, spanner, args);
        let mut expr = call(&engine_name, name_span, args, self.span_from(start));
        if let Expr::Function { distinct: d, .. } = &mut expr {
            *d = distinct;
        }
        if empty_is_null && engine_name == "array_length" {
            let zero = Expr::Literal {
                value: Literal::Integer("0".to_string()),
                span: name_span,
            };
            expr = call("nullif", name_span, vec![expr, zero], self.span_from(start));
        }
        Ok(expr)
    }
}

/// The engine's function for PostgreSQL's `name` (`spanner.name` when
/// `spanner`), with the arguments reordered where the two differ: the
/// dialect's function name table. Names that are the same in both (`lower`,
/// `upper`, `length`, `substr`, `concat`, `coalesce`, `abs`, `mod`, ...)
/// pass through.
fn engine_function(name: &str, spanner: bool, mut args: Vec<Expr>) -> (String, Vec<Expr>) {
    // `spanner.f` is the engine's `f` as it is (`spanner.farm_fingerprint`,
    // `spanner.generate_uuid`, `spanner.pending_commit_timestamp`, ...).
    let engine = match (name, spanner, args.len()) {
        ("now", false, 0) => "current_timestamp",
        ("gen_random_uuid", false, 0) => "new_uuid",
        ("btrim", false, _) => "trim",
        ("octet_length", false, _) => "byte_length",
        // PostgreSQL's one-argument log is base 10; log(b, x) is base b.
        ("log", false, 1) => "log10",
        ("log", false, 2) => {
            args.swap(0, 1);
            "log"
        }
        ("array_length", false, 2) if is_int_literal(&args[1], "1") => {
            args.truncate(1);
            "array_length"
        }
        _ => name,
    };
    (engine.to_string(), args)
}

fn is_int_literal(expr: &Expr, text: &str) -> bool {
    matches!(expr, Expr::Literal { value: Literal::Integer(t), .. } if t == text)
}

/// `left IS [NOT] DISTINCT FROM right`: equality where two NULLs are equal
/// and NULL differs from every value, as a CASE over the engine's
/// operators (the operands are evaluated more than once).
fn is_distinct_from(left: Expr, right: Expr, negated: bool, span: Span) -> Expr {
    let is_null = |e: &Expr, negated: bool| Expr::Is {
        expr: Box::new(e.clone()),
        test: IsTest::Null,
        negated,
        span: e.span(),
    };
    let boolean = |b: bool| Expr::Literal {
        value: Literal::Bool(b),
        span,
    };
    // NOT DISTINCT: both NULL, or both non-NULL and equal.
    let (when_left_null, when_right_null, op) = if negated {
        (is_null(&right, false), boolean(false), BinaryOp::Eq)
    } else {
        (is_null(&right, true), boolean(true), BinaryOp::NotEq)
    };
    Expr::Case {
        operand: None,
        branches: vec![
            (is_null(&left, false), when_left_null),
            (is_null(&right, false), when_right_null),
        ],
        else_expr: Some(Box::new(PgParser::binary(op, left, right))),
        span,
    }
}

/// A call of the engine's function `name` (names are case-insensitive).
fn call(name: &str, name_span: Span, args: Vec<Expr>, span: Span) -> Expr {
    Expr::Function {
        name: Ident {
            value: name.to_uppercase(),
            span: name_span,
        },
        args,
        safe: false,
        distinct: false,
        modifiers: None,
        span,
    }
}

/// The bytes of a `bytea` value in PostgreSQL's input syntax: `\x` and hex
/// digit pairs, or text where `\\` is a backslash and `\nnn` an octal
/// byte; `None` if malformed.
fn bytea_input(text: &str) -> Option<Vec<u8>> {
    if let Some(hex) = text
        .strip_prefix("\\x")
        .or_else(|| text.strip_prefix("\\X"))
    {
        let digits: Vec<u8> = hex
            .bytes()
            .filter(|b| !b.is_ascii_whitespace())
            .map(|b| (b as char).to_digit(16).map(|d| d as u8))
            .collect::<Option<_>>()?;
        if !digits.len().is_multiple_of(2) {
            return None;
        }
        return Some(digits.chunks(2).map(|p| p[0] * 16 + p[1]).collect());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
        } else if bytes.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            let octal = bytes.get(i + 1..i + 4)?;
            if !octal.iter().all(|b| (b'0'..=b'7').contains(b)) || octal[0] > b'3' {
                return None;
            }
            out.push(octal.iter().fold(0u8, |n, b| n * 8 + (b - b'0')));
            i += 4;
        }
    }
    Some(out)
}
