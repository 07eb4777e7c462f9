//! openraft's runtime for Rowtree: tokio, with randomness that a
//! simulation can seed.
//!
//! openraft draws random numbers in two places: each election timeout is
//! chosen at random between the configured bounds (so that two followers
//! rarely stand at the same moment), and the first wait of a periodic tick.
//! It asks its runtime for them (`AsyncRuntime::thread_rng`). With tokio's
//! runtime as it comes, that is the thread's generator, seeded from the
//! operating system, and a simulated run could not be played again from
//! its seed: the same seed would elect different leaders.
//!
//! [`RaftRuntime`] is tokio's runtime with one change. Code that runs
//! inside [`seeded`] draws from a generator seeded from the given number:
//! every task spawned there inherits a seed derived from its parent's (the
//! parent's own seed moves on, so no two tasks share a sequence), and every
//! draw takes the task's current seed and moves it on. Code outside
//! `seeded`, which is all of it in a real node, draws from a generator
//! seeded from the thread's, as before. So production and the simulator
//! run one type configuration, and the only difference between them is
//! whether a seed is in scope.

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::time::Duration;

use openraft::{AsyncRuntime, OptionalSend, TokioRuntime};
use rand::rngs::SmallRng;
use rand::SeedableRng;

tokio::task_local! {
    /// The seed of the current task's next draw or spawn, when a
    /// simulation set one.
    static SEED: Cell<u64>;
}

/// Runs `future` with its randomness (and that of every task it spawns
/// through openraft's runtime) derived from `seed`.
pub fn seeded<F: Future>(seed: u64, future: F) -> impl Future<Output = F::Output> {
    SEED.scope(Cell::new(seed), future)
}

/// One step of SplitMix64, a bijective mixer of 64 bits: equal inputs
/// give equal outputs, and nearby inputs give unrelated ones. `stream`
/// picks one of several independent sequences.
fn mix(seed: u64, stream: u64) -> u64 {
    let mut z = seed.wrapping_add(stream);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_133f_11eb);
    z ^ (z >> 31)
}

/// The stream a task's seed advances along.
const ADVANCE: u64 = 0x9e37_79b9_7f4a_7c15;
/// The stream a spawned child's seed is drawn from.
const CHILD: u64 = 0xd1b5_4a32_d192_ed03;

/// The current task's seed, advanced; `None` outside [`seeded`].
fn next_seed() -> Option<u64> {
    SEED.try_with(|cell| {
        let seed = cell.get();
        cell.set(mix(seed, ADVANCE));
        seed
    })
    .ok()
}

/// tokio's runtime, with a seedable generator (see the module docs).
#[derive(Debug)]
pub struct RaftRuntime {
    inner: TokioRuntime,
}

impl AsyncRuntime for RaftRuntime {
    type JoinError = <TokioRuntime as AsyncRuntime>::JoinError;
    type JoinHandle<T: OptionalSend + 'static> = <TokioRuntime as AsyncRuntime>::JoinHandle<T>;
    type Sleep = <TokioRuntime as AsyncRuntime>::Sleep;
    type Instant = <TokioRuntime as AsyncRuntime>::Instant;
    type TimeoutError = <TokioRuntime as AsyncRuntime>::TimeoutError;
    type Timeout<R, T: Future<Output = R> + OptionalSend> =
        <TokioRuntime as AsyncRuntime>::Timeout<R, T>;
    type ThreadLocalRng = SmallRng;

    fn spawn<T>(future: T) -> Self::JoinHandle<T::Output>
    where
        T: Future + OptionalSend + 'static,
        T::Output: OptionalSend + 'static,
    {
        match next_seed() {
            Some(seed) => TokioRuntime::spawn(seeded(mix(seed, CHILD), future)),
            None => TokioRuntime::spawn(future),
        }
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        TokioRuntime::sleep(duration)
    }

    fn sleep_until(deadline: Self::Instant) -> Self::Sleep {
        TokioRuntime::sleep_until(deadline)
    }

    fn timeout<R, F: Future<Output = R> + OptionalSend>(
        duration: Duration,
        future: F,
    ) -> Self::Timeout<R, F> {
        TokioRuntime::timeout(duration, future)
    }

    fn timeout_at<R, F: Future<Output = R> + OptionalSend>(
        deadline: Self::Instant,
        future: F,
    ) -> Self::Timeout<R, F> {
        TokioRuntime::timeout_at(deadline, future)
    }

    fn is_panic(join_error: &Self::JoinError) -> bool {
        TokioRuntime::is_panic(join_error)
    }

    fn thread_rng() -> SmallRng {
        match next_seed() {
            Some(seed) => SmallRng::seed_from_u64(seed),
            None => rand::make_rng(),
        }
    }

    type Mpsc = <TokioRuntime as AsyncRuntime>::Mpsc;
    type Watch = <TokioRuntime as AsyncRuntime>::Watch;
    type Oneshot = <TokioRuntime as AsyncRuntime>::Oneshot;
    type Mutex<T: OptionalSend + 'static> = <TokioRuntime as AsyncRuntime>::Mutex<T>;

    fn new(threads: usize) -> Self {
        RaftRuntime {
            inner: TokioRuntime::new(threads),
        }
    }

    fn block_on<F, T>(&mut self, future: F) -> T
    where
        F: Future<Output = T>,
        T: OptionalSend,
    {
        self.inner.block_on(future)
    }

    fn spawn_blocking<F, T>(f: F) -> impl Future<Output = Result<T, io::Error>> + Send
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        TokioRuntime::spawn_blocking(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    async fn draws() -> Vec<u64> {
        let mut first = RaftRuntime::thread_rng();
        let mut values = vec![first.random::<u64>()];
        let child = RaftRuntime::spawn(async {
            let mut rng = RaftRuntime::thread_rng();
            rng.random::<u64>()
        });
        values.push(child.await.unwrap());
        values.push(RaftRuntime::thread_rng().random::<u64>());
        values
    }

    #[tokio::test]
    async fn a_seed_fixes_every_draw_of_a_task_and_its_children() {
        let a = seeded(7, draws()).await;
        let b = seeded(7, draws()).await;
        let c = seeded(8, draws()).await;
        assert_eq!(a, b);
        assert_ne!(a, c);
        // No two draws in one run repeat: parent and child have their own
        // sequences, and the parent's moves on.
        let mut unique = a.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), a.len(), "{a:?}");
    }

    #[tokio::test]
    async fn outside_a_seed_draws_come_from_the_thread() {
        // Two unseeded runs agreeing on three 64-bit draws would take a
        // one-in-2^192 chance.
        assert_ne!(draws().await, draws().await);
    }
}
