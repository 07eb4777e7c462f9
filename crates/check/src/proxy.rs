//! Network partitions on one machine: a TCP proxy on every link between
//! cluster nodes, which the nemesis can cut.
//!
//! Nodes on loopback reach each other directly, and no packet filter is at
//! hand without privileges. So a partitioned check starts each node with
//! `rowtree serve --route FROM=TO` for every other node's peer and Spanner
//! addresses: node *i* dials node *j* through a proxy of its own, the link
//! *i → j*. Each proxy copies bytes both ways between the connections it
//! accepts and the node behind it, until it is told otherwise:
//!
//! ```text
//!   node 1 ──▶ [1→2] ──▶ node 2        cut 1→2 and 2→1, 1→3 and 3→1:
//!   node 1 ──▶ [1→3] ──▶ node 3        node 1 is alone, 2 and 3 the majority
//!   node 2 ──▶ [2→1] ──▶ node 1        ...
//! ```
//!
//! A cut link behaves in one of two ways ([`LinkState`]):
//!
//! - **dropped**: every connection through it is closed at once, and new
//!   ones are closed as soon as they are accepted, as when a firewall
//!   rejects packets or a peer's machine is gone: callers fail fast;
//! - **silent**: bytes stop moving in both directions and new connections
//!   wait, as when packets are lost: callers hear nothing and must time
//!   out. When the link heals, what was waiting flows on, as TCP resends
//!   after a partition.
//!
//! Traffic a link carries is whatever the nodes send: Raft messages, clock
//! heartbeats, joins, and requests forwarded to a leader. The checker's own
//! clients connect to nodes directly, so a client on the minority side
//! still reaches its node, as a client next to a cut-off server does.

use std::net::{Ipv4Addr, SocketAddr};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::error::Result;

/// What a link does with its traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Bytes flow both ways.
    Open,
    /// Every connection is closed, new ones as soon as they come.
    Dropped,
    /// Nothing moves; connections wait (new ones too) until the link opens.
    Silent,
}

/// One link: a proxy listening on a free loopback port, forwarding to
/// `target`. Dropping it stops the proxy and closes its connections.
pub struct Link {
    addr: SocketAddr,
    target: SocketAddr,
    state: watch::Sender<LinkState>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("addr", &self.addr)
            .field("target", &self.target)
            .field("state", &*self.state.borrow())
            .finish()
    }
}

impl Link {
    /// Starts a proxy to `target`, open.
    pub async fn start(target: SocketAddr) -> Result<Link> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let (state, watch) = watch::channel(LinkState::Open);
        let task = tokio::spawn(accept(listener, target, watch));
        Ok(Link {
            addr,
            target,
            state,
            task,
        })
    }

    /// Where the proxy listens: the address to dial for `target`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address behind the proxy.
    pub fn target(&self) -> SocketAddr {
        self.target
    }

    /// Cuts or heals the link.
    pub fn set(&self, state: LinkState) {
        self.state.send_replace(state);
    }

    /// What the link does now.
    pub fn state(&self) -> LinkState {
        *self.state.borrow()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // The accept task owns every connection's task: aborting it drops
        // them, and with them the sockets.
        self.task.abort();
    }
}

async fn accept(listener: TcpListener, target: SocketAddr, state: watch::Receiver<LinkState>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((inbound, _)) = accepted else { continue };
                connections.spawn(relay(inbound, target, state.clone()));
            }
            // Reap finished connections so the set does not grow.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Waits while the link is silent; answers whether it is open (not
/// dropped) afterwards. A closed channel (the link is gone) is dropped.
async fn passable(state: &mut watch::Receiver<LinkState>) -> bool {
    loop {
        let now = *state.borrow_and_update();
        match now {
            LinkState::Open => return true,
            LinkState::Dropped => return false,
            LinkState::Silent => {
                if state.changed().await.is_err() {
                    return false;
                }
            }
        }
    }
}

/// One accepted connection: connects to `target` once the link lets it,
/// then copies both ways until either side closes or the link drops.
async fn relay(inbound: TcpStream, target: SocketAddr, mut state: watch::Receiver<LinkState>) {
    if !passable(&mut state).await {
        return;
    }
    let Ok(outbound) = TcpStream::connect(target).await else {
        return;
    };
    let _ = inbound.set_nodelay(true);
    let _ = outbound.set_nodelay(true);
    let (in_read, in_write) = inbound.into_split();
    let (out_read, out_write) = outbound.into_split();
    // Either direction ending (a close, an error, the link dropped) ends
    // the connection: the other direction's task is aborted with the set.
    let mut directions = JoinSet::new();
    directions.spawn(copy(in_read, out_write, state.clone()));
    directions.spawn(copy(out_read, in_write, state));
    let _ = directions.join_next().await;
}

/// Copies `from` to `to`, holding bytes back while the link is silent and
/// stopping when it drops.
async fn copy(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut state: watch::Receiver<LinkState>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if !passable(&mut state).await {
            return;
        }
        tokio::select! {
            read = from.read(&mut buf) => {
                let n = match read {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                // Bytes read just as the link went silent wait for it.
                if !passable(&mut state).await {
                    return;
                }
                if to.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
            changed = state.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

/// The links of a cluster of `n` nodes: for every ordered pair of nodes,
/// one link for the peer port and one for the Spanner port.
#[derive(Debug)]
pub struct Network {
    /// `links[i][j]`, `i != j`: how node `i` reaches node `j` (peer link,
    /// Spanner link); `None` on the diagonal.
    links: Vec<Vec<Option<(Link, Link)>>>,
}

impl Network {
    /// Starts the proxies for nodes whose peer and Spanner addresses are
    /// `nodes[i]`.
    pub async fn start(nodes: &[(SocketAddr, SocketAddr)]) -> Result<Network> {
        let mut links = Vec::with_capacity(nodes.len());
        for i in 0..nodes.len() {
            let mut row = Vec::with_capacity(nodes.len());
            for (j, (peer, api)) in nodes.iter().enumerate() {
                row.push(if i == j {
                    None
                } else {
                    Some((Link::start(*peer).await?, Link::start(*api).await?))
                });
            }
            links.push(row);
        }
        Ok(Network { links })
    }

    /// `rowtree serve` flags that send node `i`'s connections to the other
    /// nodes through its links.
    pub fn route_args(&self, i: usize) -> Vec<String> {
        let mut args = Vec::new();
        for (peer, api) in self.links[i].iter().flatten() {
            for link in [peer, api] {
                args.push("--route".to_string());
                args.push(format!("{}={}", link.target(), link.addr()));
            }
        }
        args
    }

    /// Cuts every link between `side` and the other nodes, both ways, in
    /// the manner of `state`.
    pub fn partition(&self, side: &[usize], state: LinkState) {
        for (i, row) in self.links.iter().enumerate() {
            for (j, links) in row.iter().enumerate() {
                if let Some((peer, api)) = links {
                    if side.contains(&i) != side.contains(&j) {
                        peer.set(state);
                        api.set(state);
                    }
                }
            }
        }
    }

    /// Cuts the links between nodes `i` and `j` alone, both ways, in the
    /// manner of `state`: each still reaches every other node, as when
    /// one route between two machines fails.
    pub fn cut_pair(&self, i: usize, j: usize, state: LinkState) {
        for (from, to) in [(i, j), (j, i)] {
            if let Some(Some((peer, api))) = self.links.get(from).and_then(|row| row.get(to)) {
                peer.set(state);
                api.set(state);
            }
        }
    }

    /// Opens every link.
    pub fn heal(&self) {
        for (peer, api) in self.links.iter().flatten().flatten() {
            peer.set(LinkState::Open);
            api.set(LinkState::Open);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// An echo server: writes back what it reads.
    async fn echo() -> SocketAddr {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = s.read(&mut buf).await {
                        if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    async fn round_trip(s: &mut TcpStream, msg: &[u8]) -> std::io::Result<Vec<u8>> {
        s.write_all(msg).await?;
        let mut got = vec![0u8; msg.len()];
        s.read_exact(&mut got).await?;
        Ok(got)
    }

    #[tokio::test]
    async fn a_link_carries_holds_and_drops_traffic() {
        let link = Link::start(echo().await).await.unwrap();
        let mut s = TcpStream::connect(link.addr()).await.unwrap();
        assert_eq!(round_trip(&mut s, b"one").await.unwrap(), b"one");

        // Silent: nothing comes back, but nothing is lost either.
        link.set(LinkState::Silent);
        tokio::time::sleep(Duration::from_millis(50)).await;
        s.write_all(b"two").await.unwrap();
        let mut got = [0u8; 3];
        let held = tokio::time::timeout(Duration::from_millis(300), s.read_exact(&mut got)).await;
        assert!(held.is_err(), "a silent link passed bytes");
        link.set(LinkState::Open);
        tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut got))
            .await
            .expect("the healed link delivers what waited")
            .unwrap();
        assert_eq!(&got, b"two");

        // Dropped: the connection is closed, and so is a new one.
        link.set(LinkState::Dropped);
        let ended = tokio::time::timeout(Duration::from_secs(5), s.read(&mut got))
            .await
            .expect("a dropped link closes its connections");
        assert!(matches!(ended, Ok(0) | Err(_)), "{ended:?}");
        let mut fresh = TcpStream::connect(link.addr()).await.unwrap();
        assert!(
            round_trip(&mut fresh, b"three").await.is_err(),
            "a dropped link carried a new connection"
        );

        // Open again: new connections pass.
        link.set(LinkState::Open);
        let mut again = TcpStream::connect(link.addr()).await.unwrap();
        assert_eq!(round_trip(&mut again, b"four").await.unwrap(), b"four");
    }

    #[tokio::test]
    async fn a_partition_cuts_only_the_links_across_it() {
        let mut nodes = Vec::new();
        for _ in 0..3 {
            nodes.push((echo().await, echo().await));
        }
        let net = Network::start(&nodes).await.unwrap();
        assert_eq!(net.route_args(0).len(), 8, "two links to each of two nodes");
        net.partition(&[0], LinkState::Dropped);
        let state = |i: usize, j: usize| net.links[i][j].as_ref().unwrap().0.state();
        assert_eq!(state(0, 1), LinkState::Dropped);
        assert_eq!(state(2, 0), LinkState::Dropped);
        assert_eq!(state(1, 2), LinkState::Open, "the majority still talks");
        net.heal();
        assert_eq!(state(0, 1), LinkState::Open);

        // One pair cut: both directions, and nothing else.
        net.cut_pair(0, 2, LinkState::Silent);
        assert_eq!(state(0, 2), LinkState::Silent);
        assert_eq!(state(2, 0), LinkState::Silent);
        assert_eq!(state(0, 1), LinkState::Open);
        assert_eq!(state(1, 2), LinkState::Open);
        assert_eq!(
            net.links[2][0].as_ref().unwrap().1.state(),
            LinkState::Silent
        );
    }
}
