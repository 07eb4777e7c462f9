//! The statement cache: what a statement's text gives, kept per database
//! so that clients sending the same statements over and over (as Spanner's
//! clients do, with different parameter values) skip that work.
//!
//! An entry is keyed by the database's dialect, the statement's text and
//! its parameters' names and types (an untyped NULL counts as its own
//! type), and holds a [`Prepared`] statement: the parsed statement and,
//! once a query has been planned again after a hit, its plan template
//! (see `template`), reused for any parameter values the template
//! admits (a statement run once never pays for a template). Parsing depends on the dialect and the text only, so the parse
//! is reused as is; the plan depends on the schema too, so the cache
//! follows the catalog's version: the first lookup under a newer version
//! (any DDL statement bumps it) empties the cache, and a lookup under an
//! older one (a transaction that still reads the schema before a change)
//! bypasses it. A template also remembers the catalog it was planned
//! against and is used under that catalog only.
//!
//! What is never cached: statements that fail to parse (the error is
//! produced again each time, the same one), statements other than queries
//! and DML, and statements longer than [`MAX_CACHED_STATEMENT_BYTES`].
//!
//! The cache is bounded in entries and in (estimated) bytes; the least
//! recently used entries go first, so a client sending millions of
//! distinct statements costs each lookup one insertion and one eviction,
//! and never more memory than the bound. [`CacheStats`] counts hits,
//! misses, evictions and invalidations.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rowtree_db::Database;
use rowtree_parser::ast::{Statement, StatementKind};
use rowtree_types::Dialect;

use crate::Params;

/// Statements longer than this (in bytes) are parsed every time: clients
/// repeat short statements, and a long one would crowd out many others.
pub const MAX_CACHED_STATEMENT_BYTES: usize = 16 * 1024;

/// How much memory an entry is taken to hold per byte of statement text
/// (its parsed tree and plan template), on top of [`ENTRY_OVERHEAD`]. An
/// estimate on the generous side: a syntax tree node is larger than the
/// few characters that spell it.
const BYTES_PER_TEXT_BYTE: usize = 64;

/// The fixed part of an entry's estimated size.
const ENTRY_OVERHEAD: usize = 1024;

/// How large a statement cache may grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    /// At most this many statements (0 turns the cache off).
    pub max_entries: usize,
    /// At most this many bytes, as estimated from each statement's length.
    pub max_bytes: usize,
}

impl Default for CacheLimits {
    /// 1,000 statements and 64 MiB per database.
    fn default() -> Self {
        CacheLimits {
            max_entries: 1000,
            max_bytes: 64 << 20,
        }
    }
}

/// A statement cache's counters and size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found the statement.
    pub hits: u64,
    /// Lookups that did not (the statement was parsed).
    pub misses: u64,
    /// Executions that reused a plan template (skipping bind and plan).
    pub plan_hits: u64,
    /// Entries removed to stay within the limits.
    pub evictions: u64,
    /// Times the cache was emptied because the schema changed.
    pub invalidations: u64,
    /// Entries held now.
    pub entries: usize,
    /// Their estimated size in bytes.
    pub bytes: usize,
}

/// What the cache keeps of one statement.
#[derive(Debug)]
pub struct Prepared {
    /// The parsed statement.
    pub stmt: Statement,
    /// Its key in the cache, when it was cached.
    key: Option<Arc<str>>,
    /// Whether a lookup found it: only then is a plan template made (a
    /// statement run once never pays for one).
    reused: AtomicBool,
    /// The query's plan template, once planned (see [`crate::template`]).
    template: Mutex<Option<Arc<crate::template::Template>>>,
}

impl Prepared {
    fn new(stmt: Statement, key: Option<Arc<str>>) -> Prepared {
        Prepared {
            stmt,
            key,
            reused: AtomicBool::new(false),
            template: Mutex::new(None),
        }
    }

    /// Whether the cache has handed this statement out more than once.
    pub(crate) fn reused(&self) -> bool {
        self.reused.load(Ordering::Relaxed)
    }

    /// The plan template, if one was stored.
    pub(crate) fn template(&self) -> Option<Arc<crate::template::Template>> {
        lock(&self.template).clone()
    }

    /// Stores the plan template (replacing one planned against an older
    /// catalog).
    pub(crate) fn set_template(&self, template: crate::template::Template) {
        *lock(&self.template) = Some(Arc::new(template));
    }
}

/// A database's statement cache (one per database: [`statement_cache`]).
#[derive(Debug, Default)]
pub struct StatementCache {
    state: Mutex<State>,
    hits: AtomicU64,
    misses: AtomicU64,
    plan_hits: AtomicU64,
    evictions: AtomicU64,
    invalidations: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    limits: CacheLimits,
    /// The catalog version the entries belong to.
    version: u64,
    entries: HashMap<Arc<str>, Slot>,
    /// Entries by last use, oldest first (the tick of their last use).
    by_use: BTreeMap<u64, Arc<str>>,
    tick: u64,
    bytes: usize,
}

impl State {
    /// Drops every entry (the limits, version and tick stay).
    fn empty(&mut self) {
        self.entries.clear();
        self.by_use.clear();
        self.bytes = 0;
    }
}

#[derive(Debug)]
struct Slot {
    prepared: Arc<Prepared>,
    tick: u64,
    bytes: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The statement cache of `db`, created (with [`CacheLimits::default`])
/// on first use.
pub fn statement_cache(db: &Database) -> Arc<StatementCache> {
    db.extension(StatementCache::default)
}

impl StatementCache {
    /// The counters and the current size.
    pub fn stats(&self) -> CacheStats {
        let state = lock(&self.state);
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            plan_hits: self.plan_hits.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            invalidations: self.invalidations.load(Ordering::Relaxed),
            entries: state.entries.len(),
            bytes: state.bytes,
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> CacheLimits {
        lock(&self.state).limits
    }

    /// Sets the limits, evicting the least recently used entries that no
    /// longer fit.
    pub fn set_limits(&self, limits: CacheLimits) {
        let mut state = lock(&self.state);
        state.limits = limits;
        self.evict(&mut state, 0);
    }

    /// Empties the cache (counters are kept).
    pub fn clear(&self) {
        lock(&self.state).empty();
    }

    /// Counts one execution that reused a plan template.
    pub(crate) fn count_plan_hit(&self) {
        self.plan_hits.fetch_add(1, Ordering::Relaxed);
    }

    /// The prepared statement for `sql` with `params` under catalog
    /// `version`: the cached one, or `sql` parsed now (and cached when it
    /// may be). A parse error is returned as the parser gives it.
    pub fn prepare(
        &self,
        dialect: Dialect,
        version: u64,
        sql: &str,
        params: &Params,
    ) -> std::result::Result<Arc<Prepared>, rowtree_parser::ParseError> {
        let parse = || rowtree_parser::parse_statement_in(dialect, sql);
        if sql.len() > MAX_CACHED_STATEMENT_BYTES {
            return parse().map(|s| Arc::new(Prepared::new(s, None)));
        }
        let key: Arc<str> = cache_key(dialect, sql, params).into();
        let cacheable_version = {
            let mut state = lock(&self.state);
            if state.limits.max_entries == 0 {
                drop(state);
                return parse().map(|s| Arc::new(Prepared::new(s, None)));
            }
            if version > state.version {
                if !state.entries.is_empty() {
                    self.invalidations.fetch_add(1, Ordering::Relaxed);
                }
                state.empty();
                state.version = version;
            }
            if version == state.version {
                state.tick += 1;
                let tick = state.tick;
                if let Some(slot) = state.entries.get_mut(&key) {
                    let old = std::mem::replace(&mut slot.tick, tick);
                    let prepared = slot.prepared.clone();
                    prepared.reused.store(true, Ordering::Relaxed);
                    state.by_use.remove(&old);
                    state.by_use.insert(tick, key);
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(prepared);
                }
                true
            } else {
                false
            }
        };
        self.misses.fetch_add(1, Ordering::Relaxed);
        // Parsed without the lock: other sessions' lookups go on meanwhile.
        let stmt = parse()?;
        let worth_keeping = cacheable_version
            && matches!(
                stmt.kind,
                StatementKind::Query(_)
                    | StatementKind::Insert(_)
                    | StatementKind::Update(_)
                    | StatementKind::Delete(_)
            );
        if !worth_keeping {
            return Ok(Arc::new(Prepared::new(stmt, None)));
        }
        let prepared = Arc::new(Prepared::new(stmt, Some(key.clone())));
        self.insert(version, key, prepared.clone());
        Ok(prepared)
    }

    /// Adds `bytes` to the estimated size of `prepared`'s entry (its plan
    /// template, just stored), evicting what no longer fits.
    pub(crate) fn charge(&self, prepared: &Arc<Prepared>, bytes: usize) {
        let Some(key) = &prepared.key else {
            return;
        };
        let mut state = lock(&self.state);
        let Some(slot) = state.entries.get_mut(key) else {
            return;
        };
        if !Arc::ptr_eq(&slot.prepared, prepared) {
            return;
        }
        slot.bytes += bytes;
        state.bytes += bytes;
        self.evict(&mut state, 0);
    }

    fn insert(&self, version: u64, key: Arc<str>, prepared: Arc<Prepared>) {
        let bytes = key.len() * (1 + BYTES_PER_TEXT_BYTE) + ENTRY_OVERHEAD;
        let mut state = lock(&self.state);
        if state.version != version || bytes > state.limits.max_bytes {
            return;
        }
        self.evict(&mut state, bytes);
        if state.limits.max_entries == 0 {
            return;
        }
        state.tick += 1;
        let tick = state.tick;
        state.by_use.insert(tick, key.clone());
        state.bytes += bytes;
        if let Some(old) = state.entries.insert(
            key,
            Slot {
                prepared,
                tick,
                bytes,
            },
        ) {
            // Another session cached the same statement meanwhile.
            state.by_use.remove(&old.tick);
            state.bytes -= old.bytes;
        }
    }

    /// Evicts least recently used entries until one of `incoming` bytes
    /// fits.
    fn evict(&self, state: &mut State, incoming: usize) {
        let room = usize::from(incoming > 0);
        while !state.entries.is_empty()
            && (state.entries.len() + room > state.limits.max_entries
                || state.bytes + incoming > state.limits.max_bytes)
        {
            let Some((_, key)) = state.by_use.pop_first() else {
                break;
            };
            if let Some(slot) = state.entries.remove(&key) {
                state.bytes -= slot.bytes;
                self.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The key of `sql` with `params` in `dialect`: every part that can change
/// what parsing, binding or planning gives, in an unambiguous form (each
/// name and type after its length, the text last).
fn cache_key(dialect: Dialect, sql: &str, params: &Params) -> String {
    use std::fmt::Write;
    let mut key = String::with_capacity(sql.len() + 32 * params.len() + 8);
    key.push(match dialect {
        Dialect::GoogleSql => 'G',
        Dialect::PostgreSql => 'P',
    });
    for (name, (ty, _)) in params {
        let ty = format!("{ty:?}");
        let _ = write!(key, "{}:{name}{}:{ty}", name.len(), ty.len());
    }
    for name in params.untyped_nulls() {
        let _ = write!(key, "{}:{name}?", name.len());
    }
    key.push('|');
    key.push_str(sql);
    key
}
