//! What the deterministic simulations share (`sim.rs`, one Raft group;
//! `sim_txn.rs`, two groups and the transactions that span them): a
//! simulated disk that keeps only what was synced when its node crashes,
//! the simulated network under the peer port, the nodes' skewed clocks,
//! and the nemesis's cuts of links.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::ops::{Bound, RangeBounds};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use rand::rngs::SmallRng;
use rand::RngExt;
use rowtree_cluster::raft::{Groups, PeerPort, Peers};
use rowtree_storage::{
    Durability, Engine, KeyRange, Result as StorageResult, ScanIter, Space, WriteBatch, WriteOp,
};
use rowtree_txn::timestamp::Clock;
use tonic::transport::{Endpoint, Uri};

/// The port every node's peer port listens on.
pub const PORT: u16 = 7000;

/// Where the nodes' clocks start (nanoseconds): an hour, so that a clock
/// behind simulated time stays positive.
pub const CLOCK_BASE: u64 = 3_600_000_000_000;

/// Simulated time since the simulation began.
pub fn now() -> Duration {
    turmoil::sim_elapsed().unwrap_or_default()
}

/// Mixes two numbers into one (SplitMix64's finaliser): seeds per node,
/// per start, per purpose.
pub fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_133f_11eb);
    z ^ (z >> 31)
}

/// The turmoil host of node `id`.
pub fn host(id: u64) -> String {
    format!("n{id}")
}

/// Node `id`'s clock offset from simulated time in the seed's run: fixed,
/// within ±`max_offset`/2, so any two clocks are within `max_offset`.
pub fn skew(seed: u64, id: u64, max_offset: Duration) -> i64 {
    let half = max_offset.as_nanos() as i64 / 2;
    (mix(seed ^ 0x636c6f636b, id) % (2 * half as u64 + 1)) as i64 - half
}

/// A node's clock: simulated time plus its fixed skew, in nanoseconds.
#[derive(Clone, Copy)]
pub struct NodeClock {
    pub skew: i64,
}

impl Clock for NodeClock {
    fn now_nanos(&self) -> u64 {
        let t = CLOCK_BASE + now().as_nanos() as u64;
        t.saturating_add_signed(self.skew)
    }
}

// ---------------------------------------------------------------------
// The simulated disk.

pub type Spaces = [BTreeMap<Vec<u8>, Vec<u8>>; 3];
/// A stored key and value.
pub type Pair = (Vec<u8>, Vec<u8>);

pub fn space_index(space: Space) -> usize {
    match space {
        Space::Data => 0,
        Space::Meta => 1,
        Space::Heads => 2,
    }
}

pub fn apply_ops(spaces: &mut Spaces, ops: &[WriteOp]) {
    for op in ops {
        match op {
            WriteOp::Put { space, key, value } => {
                spaces[space_index(*space)].insert(key.clone(), value.clone());
            }
            WriteOp::Delete { space, key } => {
                spaces[space_index(*space)].remove(key);
            }
        }
    }
}

#[derive(Default)]
pub struct DiskState {
    /// What reads see: everything written.
    live: Spaces,
    /// What survives a crash for certain: everything synced.
    durable: Spaces,
    /// The batches written since the last sync, in order.
    pending: Vec<Vec<WriteOp>>,
}

/// A node's disk: an engine whose crash keeps what was synced and a
/// prefix of what was not, as a process killed between a write and its
/// fsync may. `lies` plants a bug: a sync that returns without making
/// anything durable.
#[derive(Default)]
pub struct Disk {
    state: Mutex<DiskState>,
    lies: bool,
}

impl Disk {
    pub fn new(lies: bool) -> Arc<Disk> {
        Arc::new(Disk {
            state: Mutex::default(),
            lies,
        })
    }

    /// The node crashed: a random prefix of the unsynced batches reached
    /// the disk, the rest is lost. One draw from `rng` whatever the disk
    /// holds, so that the draws after it do not depend on how much was
    /// unsynced.
    pub fn crash(&self, rng: &mut SmallRng) {
        let mut state = self.state.lock().unwrap();
        let state = &mut *state;
        let draw: u64 = rng.random();
        let kept = (draw % (state.pending.len() as u64 + 1)) as usize;
        for ops in state.pending.drain(..).take(kept) {
            apply_ops(&mut state.durable, &ops);
        }
        state.live = state.durable.clone();
    }
}

impl Engine for Disk {
    fn get(&self, space: Space, key: &[u8]) -> StorageResult<Option<Vec<u8>>> {
        Ok(self.state.lock().unwrap().live[space_index(space)]
            .get(key)
            .cloned())
    }

    fn scan(&self, space: Space, range: KeyRange, reverse: bool) -> ScanIter<'_> {
        let state = self.state.lock().unwrap();
        let bounds: (Bound<Vec<u8>>, Bound<Vec<u8>>) =
            (range.start_bound().cloned(), range.end_bound().cloned());
        let iter = state.live[space_index(space)]
            .range(bounds)
            .map(|(k, v)| Ok((k.clone(), v.clone())));
        let pairs: Vec<_> = if reverse {
            iter.rev().collect()
        } else {
            iter.collect()
        };
        Box::new(pairs.into_iter())
    }

    /// As the disk engine says: so replicas keep row heads, and crashes
    /// and snapshot installs exercise them.
    fn prefers_point_gets(&self) -> bool {
        true
    }

    fn write(&self, batch: WriteBatch, durability: Durability) -> StorageResult<()> {
        {
            let mut state = self.state.lock().unwrap();
            let ops = batch.into_ops();
            apply_ops(&mut state.live, &ops);
            state.pending.push(ops);
        }
        if durability == Durability::Sync {
            self.sync()?;
        }
        Ok(())
    }

    fn sync(&self) -> StorageResult<()> {
        if self.lies {
            return Ok(());
        }
        let mut state = self.state.lock().unwrap();
        let state = &mut *state;
        for ops in state.pending.drain(..) {
            apply_ops(&mut state.durable, &ops);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------
// The simulated network under the peer port.

/// A simulated connection, as the peer port's server takes it.
pub struct SimStream(pub turmoil::net::TcpStream);

impl tonic::transport::server::Connected for SimStream {
    type ConnectInfo = ();
    fn connect_info(&self) {}
}

impl tokio::io::AsyncRead for SimStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for SimStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// Peers that dial over the simulated network.
pub fn sim_peers() -> Peers {
    Peers::with_connector(Arc::new(|endpoint: Endpoint| {
        endpoint.connect_with_connector_lazy(tower::service_fn(|uri: Uri| async move {
            let host = uri.host().unwrap_or_default().to_string();
            let port = uri.port_u16().unwrap_or(PORT);
            let stream = turmoil::net::TcpStream::connect((host.as_str(), port)).await?;
            Ok::<_, std::io::Error>(TokioIo::new(stream))
        }))
    }))
}

/// Serves `groups` on this host's peer port, over the simulated network.
pub async fn serve_peer_port(groups: Groups) -> std::io::Result<PeerPort> {
    let listener = turmoil::net::TcpListener::bind(("0.0.0.0", PORT)).await?;
    let incoming = futures_util::stream::unfold(listener, |listener| async move {
        let accepted = listener.accept().await.map(|(stream, _)| SimStream(stream));
        Some((accepted, listener))
    });
    Ok(PeerPort::serve(
        SocketAddr::from(([0, 0, 0, 0], PORT)),
        incoming,
        groups,
    ))
}

// ---------------------------------------------------------------------
// The nemesis's cuts.

/// Links cut now: each a pair and whether its messages are dropped
/// (connections break) rather than held.
#[derive(Default)]
pub struct Cuts {
    pub links: BTreeMap<(u64, u64), (Duration, bool)>,
}

pub fn pair(a: u64, b: u64) -> (u64, u64) {
    (a.min(b), a.max(b))
}

impl Cuts {
    /// Cuts the link `a`-`b` until `until`: its messages held, or dropped
    /// (`drops`). A link cut already stays cut until the later time, and
    /// drops if either cut does.
    pub fn cut(
        &mut self,
        sim: &mut turmoil::Sim<'_>,
        a: u64,
        b: u64,
        until: Duration,
        drops: bool,
    ) {
        let key = pair(a, b);
        if let Some((old_until, old_drops)) = self.links.get(&key).copied() {
            self.links
                .insert(key, (old_until.max(until), old_drops || drops));
            if drops && !old_drops {
                sim.partition(host(a), host(b));
            }
            return;
        }
        if drops {
            sim.partition(host(a), host(b));
        } else {
            sim.hold(host(a), host(b));
        }
        self.links.insert(key, (until, drops));
    }

    /// Heals the cuts due by `t` (every cut, with `None`).
    pub fn heal(&mut self, sim: &mut turmoil::Sim<'_>, t: Option<Duration>) {
        let healed: Vec<(u64, u64)> = self
            .links
            .iter()
            .filter(|(_, &(until, _))| t.is_none_or(|t| until <= t))
            .map(|(&p, _)| p)
            .collect();
        for (a, b) in healed {
            let (_, drops) = self.links.remove(&(a, b)).unwrap();
            if drops {
                sim.repair(host(a), host(b));
            } else {
                sim.release(host(a), host(b));
            }
        }
    }
}

// ---------------------------------------------------------------------
// Crash points.

/// The crash points of one run: the named steps each node is armed with,
/// the nodes that reached one in the current step, and how many times
/// each point was reached. A node that reaches a step it is armed with
/// goes no further there (its task waits for good), and the harness
/// crashes it at the end of the step, its disks keeping what was synced.
#[derive(Default)]
pub struct CrashPoints {
    pub armed: BTreeMap<u64, BTreeSet<&'static str>>,
    /// Whether the points stay armed once the faults stop (a run with a
    /// point armed from the start: some steps happen only then).
    pub keep_armed: bool,
    pub crash_now: Vec<(u64, &'static str)>,
    pub hits: BTreeMap<&'static str, usize>,
}

impl CrashPoints {
    /// Arms every node of `ids` with `point`.
    pub fn arm(&mut self, ids: &[u64], point: &'static str) {
        for &id in ids {
            self.armed.entry(id).or_default().insert(point);
        }
    }

    /// Whether node `id`, reaching `point`, stops there: if it is armed
    /// with it, it is disarmed, counted, and listed to crash.
    pub fn reached(&mut self, id: u64, point: &'static str) -> bool {
        if !self
            .armed
            .get_mut(&id)
            .is_some_and(|armed| armed.remove(point))
        {
            return false;
        }
        self.crash_now.push((id, point));
        *self.hits.entry(point).or_default() += 1;
        true
    }

    /// The faults stop: unless the points stay armed, none is any more.
    pub fn faults_stop(&mut self) {
        if !self.keep_armed {
            self.armed.clear();
        }
    }
}

/// Plays, for the `i`th crash point of `points` (those `skip` accepts left
/// out), seeds `first(i)` onwards, `tries` of them at most, with the point
/// armed on every node, until a run reaches it. `run(point, seed)` plays
/// one run and returns its violations, how many nodes it crashed at the
/// point, and how many writes it acknowledged. The failures: every
/// violation of every run played, and every point no run reached.
pub fn every_point_reached(
    points: &[&'static str],
    skip: impl Fn(&str) -> bool,
    first: impl Fn(usize) -> u64,
    tries: u64,
    mut run: impl FnMut(&'static str, u64) -> (Vec<String>, usize, usize),
) -> Vec<String> {
    let mut failures = Vec::new();
    for (i, &at) in points.iter().enumerate() {
        if skip(at) {
            continue;
        }
        let reached = (first(i)..first(i) + tries).find_map(|seed| {
            let (violations, hit, acked) = run(at, seed);
            if !violations.is_empty() {
                failures.push(format!(
                    "armed at {at:?}, seed {seed}: {}",
                    violations.join("; ")
                ));
            }
            (hit > 0).then_some((seed, hit, acked))
        });
        match reached {
            Some((seed, hit, acked)) => {
                eprintln!("{at:?}: seed {seed} crashed {hit} node(s) there; {acked} acknowledged")
            }
            None => failures.push(format!("no seed reached {at:?}")),
        }
    }
    failures
}

// ---------------------------------------------------------------------
// Replays.

/// The lines of a run's trace that a replay of its seed must repeat: the
/// nemesis's own faults (the crashes it drew, power failures, armings of
/// crash points, isolations, cuts, slow-downs, the end of the faults),
/// each as `at what`. A crash drawn is kept as drawn, whether or not its
/// node was up (that depends on the crashes at named steps). A fault aimed
/// at a role (`aim`, as "the leader, ") keeps the role and what follows
/// `marker` (the words after the node's name), not the node, which
/// depends on how the tasks of a step interleaved.
pub fn nemesis_faults(trace: Vec<String>, aim: &str, marker: &str) -> Vec<String> {
    let kinds = [
        "crash node",
        "power failure",
        "arm ",
        "isolate ",
        "cut ",
        "latency up",
        "faults stop",
    ];
    let role = aim.trim_end_matches(", ");
    trace
        .into_iter()
        .filter_map(|line| {
            let (at, what) = line.split_once(' ')?;
            if !kinds.iter().any(|k| what.starts_with(k)) {
                return None;
            }
            let what = match what.split_once(aim) {
                Some((before, after)) => {
                    let tail = after.split_once(marker).map_or("", |(_, tail)| tail);
                    format!("{before}{role}{marker}{tail}")
                }
                None if what.starts_with("crash node") => {
                    what.split([':', ' ']).take(3).collect::<Vec<_>>().join(" ")
                }
                None => what.to_string(),
            };
            Some(format!("{at} {what}"))
        })
        .collect()
}

// ---------------------------------------------------------------------
// The nemesis.

/// The message latency of a network that is not slowed down.
pub const NORMAL_LATENCY: Duration = Duration::from_millis(8);

/// The faults both simulators inject, besides their own (membership
/// changes in one, crashes at named steps in the other), and what they
/// left down or cut now. The caller crashes a node its own way and
/// records it ([`Nemesis::crashed`]); restarts, cuts and slow-downs are
/// made here. Each method draws from the seeded generator in a fixed
/// order, so a seed plays the same faults again.
#[derive(Default)]
pub struct Nemesis {
    /// Nodes crashed, and when each is restarted.
    pub down: BTreeMap<u64, Duration>,
    pub cuts: Cuts,
    /// When a slow-down of the network ends.
    slow_until: Option<Duration>,
    /// Crashes and cuts made so far.
    pub crashes: usize,
    pub cut_count: usize,
}

impl Nemesis {
    /// The nodes of `nodes` that are not down.
    pub fn up(&self, nodes: &[u64]) -> Vec<u64> {
        nodes
            .iter()
            .copied()
            .filter(|id| !self.down.contains_key(id))
            .collect()
    }

    /// Node `id`, just crashed by the caller, is restarted at `back`.
    pub fn crashed(&mut self, id: u64, back: Duration) {
        self.down.insert(id, back);
        self.crashes += 1;
    }

    /// At `t`, a node drawn among all: crashed with `crash` until `back`
    /// if it is up (a node a crash point took down may differ on a
    /// replay, so the draw is made whoever is down), each step traced.
    pub fn crash_drawn(
        &mut self,
        id: u64,
        t: Duration,
        back: Duration,
        mut trace: impl FnMut(String),
        crash: impl FnOnce(),
    ) {
        if self.down.contains_key(&id) {
            trace(format!("{t:?} crash node {id}: down already"));
        } else {
            trace(format!("{t:?} crash node {id} until {back:?}"));
            crash();
            self.crashed(id, back);
        }
    }

    /// At `t`: restarts the nodes due back, heals the cuts due, and ends a
    /// slow-down that is over. The trace lines of the restarts.
    pub fn recover(&mut self, sim: &mut turmoil::Sim<'_>, t: Duration) -> Vec<String> {
        let due: Vec<u64> = self
            .down
            .iter()
            .filter(|(_, &at)| at <= t)
            .map(|(&id, _)| id)
            .collect();
        let mut lines = Vec::new();
        for id in due {
            self.down.remove(&id);
            lines.push(format!("{t:?} restart node {id}"));
            sim.bounce(host(id));
        }
        self.cuts.heal(sim, Some(t));
        if self.slow_until.is_some_and(|until| until <= t) {
            self.slow_until = None;
            sim.set_max_message_latency(NORMAL_LATENCY);
        }
        lines
    }

    /// Cuts node `id` off from every other node of `nodes`, from `t` until
    /// 200 ms to `max_ms` later, its messages dropped three times in ten
    /// (held otherwise). `whom` opens the node's name in the trace line
    /// returned ("the leader, ").
    #[allow(clippy::too_many_arguments)]
    pub fn isolate(
        &mut self,
        sim: &mut turmoil::Sim<'_>,
        rng: &mut SmallRng,
        t: Duration,
        id: u64,
        nodes: &[u64],
        max_ms: u64,
        whom: &str,
    ) -> String {
        let until = t + Duration::from_millis(rng.random_range(200..max_ms));
        let drops = rng.random_bool(0.3);
        for &other in nodes {
            if other != id {
                self.cuts.cut(sim, id, other, until, drops);
            }
        }
        self.cut_count += 1;
        format!("{t:?} isolate {whom}node {id} until {until:?} (drops: {drops})")
    }

    /// Cuts the link between two nodes drawn from `nodes`, from `t` until
    /// 200 ms to `max_ms` later, as [`Nemesis::isolate`] does; nothing if
    /// the same node is drawn twice. The trace line.
    pub fn cut_link(
        &mut self,
        sim: &mut turmoil::Sim<'_>,
        rng: &mut SmallRng,
        t: Duration,
        nodes: &[u64],
        max_ms: u64,
    ) -> Option<String> {
        let a = nodes[rng.random_range(0..nodes.len())];
        let b = nodes[rng.random_range(0..nodes.len())];
        if a == b {
            return None;
        }
        let until = t + Duration::from_millis(rng.random_range(200..max_ms));
        let drops = rng.random_bool(0.3);
        self.cuts.cut(sim, a, b, until, drops);
        self.cut_count += 1;
        Some(format!(
            "{t:?} cut {a}-{b} until {until:?} (drops: {drops})"
        ))
    }

    /// Slows the network from `t`: messages take up to 50 to 400 ms, for
    /// a time drawn from `lasting` (milliseconds). The trace line.
    pub fn slow(
        &mut self,
        sim: &mut turmoil::Sim<'_>,
        rng: &mut SmallRng,
        t: Duration,
        lasting: std::ops::Range<u64>,
    ) -> String {
        let latency = Duration::from_millis(rng.random_range(50..400));
        sim.set_max_message_latency(latency);
        self.slow_until = Some(t + Duration::from_millis(rng.random_range(lasting)));
        format!("{t:?} latency up to {latency:?}")
    }

    /// Ends every fault at once: every cut healed, every node down
    /// restarted, the network back to normal.
    pub fn stop(&mut self, sim: &mut turmoil::Sim<'_>) {
        self.cuts.heal(sim, None);
        for id in std::mem::take(&mut self.down).into_keys() {
            sim.bounce(host(id));
        }
        self.slow_until = None;
        sim.set_max_message_latency(NORMAL_LATENCY);
    }
}
