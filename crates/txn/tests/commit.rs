//! Behaviour of the group-commit pipeline: grouping, ordering, durability before the
//! acknowledgement, failure isolation, visibility and shutdown.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rowtree_txn::{
    CommitOptions, CommitPipeline, CommitRequest, Error, ManualClock, SystemClock, TimestampOracle,
};

/// What the tests write: the commit timestamp and a payload.
type Write = (u64, String);

/// Everything flushed so far, one inner `Vec` per flush call.
type Log = Arc<Mutex<Vec<Vec<Write>>>>;

fn system_oracle() -> TimestampOracle {
    TimestampOracle::new(Arc::new(SystemClock))
}

/// A pipeline whose flush records the group in `log` after sleeping `fsync`.
fn logging_pipeline(fsync: Duration) -> (CommitPipeline<Write>, Log) {
    let log: Log = Arc::default();
    let sink = log.clone();
    let pipeline = CommitPipeline::new(system_oracle(), CommitOptions::default(), move |group| {
        thread::sleep(fsync);
        sink.lock().unwrap().push(group);
        Ok(())
    })
    .unwrap();
    (pipeline, log)
}

fn write(payload: &str) -> CommitRequest<Write> {
    let payload = payload.to_string();
    CommitRequest::new(move |ts| Ok((ts, payload)))
}

fn eventually(what: &str, cond: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(Instant::now() < until, "timed out waiting for: {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn concurrent_commits_share_flushes() {
    const THREADS: usize = 32;
    const PER_THREAD: usize = 20;
    let (pipeline, log) = logging_pipeline(Duration::from_millis(2));
    let pipeline = Arc::new(pipeline);
    let per_thread: Vec<Vec<u64>> = (0..THREADS)
        .map(|t| {
            let pipeline = pipeline.clone();
            thread::spawn(move || {
                (0..PER_THREAD)
                    .map(|i| pipeline.commit(write(&format!("{t}/{i}"))).unwrap())
                    .collect()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();

    let commits = THREADS * PER_THREAD;
    let flushes = log.lock().unwrap().len();
    eprintln!("{commits} commits in {flushes} flushes");
    // One flush per commit would be 640 flushes (>= 1.28 s of simulated fsync); with 32
    // committers the groups hold ~30 requests, so a working pipeline needs ~25.
    assert!(
        flushes * 8 <= commits,
        "group commit is not grouping: {flushes} flushes for {commits} commits"
    );
    let stats = pipeline.stats();
    assert_eq!(stats.commits, commits as u64);
    assert_eq!(stats.flushes, flushes as u64);

    // Every commit was flushed exactly once, with the timestamp it was acknowledged with.
    let mut acked: Vec<u64> = per_thread.concat();
    let mut flushed: Vec<u64> = log.lock().unwrap().iter().flatten().map(|w| w.0).collect();
    assert!(
        flushed.windows(2).all(|w| w[0] < w[1]),
        "flushed in timestamp order"
    );
    acked.sort_unstable();
    flushed.sort_unstable();
    assert_eq!(acked, flushed);
    acked.dedup();
    assert_eq!(acked.len(), commits, "timestamps are unique");
    for seq in &per_thread {
        assert!(seq.windows(2).all(|w| w[0] < w[1]));
    }
    assert!(pipeline.visible_ts() >= *acked.last().unwrap());
}

#[test]
fn a_commit_is_durable_and_visible_when_acknowledged() {
    let (pipeline, log) = logging_pipeline(Duration::ZERO);
    for i in 0..20 {
        let ts = pipeline.commit(write(&i.to_string())).unwrap();
        assert_eq!(ts % 1_000, 0, "microsecond granularity");
        assert!(pipeline.visible_ts() >= ts);
        let log = log.lock().unwrap();
        assert!(log.iter().flatten().any(|w| *w == (ts, i.to_string())));
    }
}

#[test]
fn builders_run_in_timestamp_order_within_a_group() {
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let gate_rx = Mutex::new(gate_rx);
    let groups: Log = Arc::default();
    let sink = groups.clone();
    let pipeline = Arc::new(
        CommitPipeline::new(system_oracle(), CommitOptions::default(), move |group| {
            // Hold the first group until the test has queued the second.
            gate_rx.lock().unwrap().recv().ok();
            sink.lock().unwrap().push(group);
            Ok(())
        })
        .unwrap(),
    );
    let first = {
        let p = pipeline.clone();
        thread::spawn(move || p.commit(write("first")))
    };
    eventually("first group in flush", || pipeline.stats().flushes == 1);

    // The second group: a good request, a failing one, a panicking one, a good one.
    let requests: Vec<(&str, CommitRequest<Write>)> = vec![
        ("ok-1", write("ok-1")),
        (
            "fails",
            CommitRequest::new(|_| Err(Error::FailedPrecondition("row exists".into()))),
        ),
        ("panics", CommitRequest::new(|_| panic!("builder bug"))),
        ("ok-2", write("ok-2")),
    ];
    let mut handles = Vec::new();
    for (i, (name, request)) in requests.into_iter().enumerate() {
        let p = pipeline.clone();
        handles.push((name, thread::spawn(move || p.commit(request))));
        eventually("request queued", || pipeline.stats().queued == i + 1);
    }
    gate_tx.send(()).unwrap(); // release group 1
    gate_tx.send(()).unwrap(); // and group 2
    drop(gate_tx); // later flushes pass straight through
    let first_ts = first.join().unwrap().unwrap();

    let results: Vec<_> = handles
        .into_iter()
        .map(|(name, h)| (name, h.join().unwrap()))
        .collect();
    assert!(matches!(results[1].1, Err(Error::FailedPrecondition(_))));
    assert!(matches!(results[2].1, Err(Error::Internal(_))));
    let ok1 = results[0].1.clone().unwrap();
    let ok2 = results[3].1.clone().unwrap();
    // Queue order is timestamp order, and the failed requests consumed timestamps in between.
    assert!(
        first_ts < ok1 && ok1 + 2_000 < ok2,
        "{first_ts} {ok1} {ok2}"
    );

    {
        let groups = groups.lock().unwrap();
        assert_eq!(groups.len(), 2, "the four requests formed one group");
        assert_eq!(
            groups[1],
            vec![(ok1, "ok-1".to_string()), (ok2, "ok-2".to_string())],
            "only the good write sets are flushed"
        );
    }
    assert_eq!(pipeline.commit(write("after")).map(|ts| ts > ok2), Ok(true));
}

#[test]
fn a_failed_flush_fails_the_whole_group_only() {
    let fail = Arc::new(AtomicBool::new(true));
    let fail_flag = fail.clone();
    let pipeline = CommitPipeline::new(system_oracle(), CommitOptions::default(), move |_| {
        if fail_flag.load(Ordering::SeqCst) {
            Err(Error::Storage("disk full".into()))
        } else {
            Ok(())
        }
    })
    .unwrap();
    let before = pipeline.visible_ts();
    assert_eq!(
        pipeline.commit(write("x")),
        Err(Error::Storage("disk full".into()))
    );
    assert_eq!(pipeline.visible_ts(), before, "nothing became visible");
    assert_eq!(pipeline.stats().commits, 0);

    fail.store(false, Ordering::SeqCst);
    let ts = pipeline.commit(write("y")).unwrap();
    assert!(pipeline.visible_ts() >= ts);
    // A panicking flush is a storage failure too, and the pipeline survives it.
    let pipeline = CommitPipeline::<Write>::new(system_oracle(), CommitOptions::default(), |_| {
        panic!("flush bug")
    })
    .unwrap();
    assert!(matches!(
        pipeline.commit(write("z")),
        Err(Error::Storage(_))
    ));
    assert!(matches!(
        pipeline.commit(write("z")),
        Err(Error::Storage(_))
    ));
}

#[test]
fn max_group_size_bounds_each_flush() {
    let sizes = Arc::new(Mutex::new(Vec::new()));
    let sink = sizes.clone();
    let options = CommitOptions { max_group_size: 4 };
    let pipeline = Arc::new(
        CommitPipeline::new(system_oracle(), options, move |group: Vec<Write>| {
            thread::sleep(Duration::from_millis(2));
            sink.lock().unwrap().push(group.len());
            Ok(())
        })
        .unwrap(),
    );
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let p = pipeline.clone();
            thread::spawn(move || p.commit(write(&i.to_string())).unwrap())
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let sizes = sizes.lock().unwrap();
    assert_eq!(sizes.iter().sum::<usize>(), 16);
    assert!(sizes.iter().all(|&n| (1..=4).contains(&n)), "{sizes:?}");
}

#[test]
fn wait_visible_follows_the_clock_when_idle() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let oracle = TimestampOracle::new(clock.clone());
    let pipeline = Arc::new(
        CommitPipeline::new(oracle, CommitOptions::default(), |_: Vec<Write>| Ok(())).unwrap(),
    );
    let ts = pipeline.commit(write("a")).unwrap();
    pipeline.wait_visible(ts, None).unwrap(); // already visible: immediate

    let future = 5_000_000;
    assert_eq!(
        pipeline.wait_visible(future, Some(Instant::now() + Duration::from_millis(30))),
        Err(Error::DeadlineExceeded),
        "the clock has not reached it"
    );
    let reader = {
        let p = pipeline.clone();
        thread::spawn(move || {
            p.wait_visible(future, Some(Instant::now() + Duration::from_secs(10)))
        })
    };
    thread::sleep(Duration::from_millis(10));
    clock.set(6_000_000);
    reader.join().unwrap().unwrap();
    assert!(pipeline.visible_ts() >= future);
    // Later commits are ordered after everything already visible.
    let visible = pipeline.visible_ts();
    let later = pipeline.commit(write("b")).unwrap();
    assert!(later > visible, "{later} must follow {visible}");
}

#[test]
fn resumed_oracle_sets_the_initial_visible_timestamp() {
    let clock = Arc::new(ManualClock::new(1_000));
    let oracle = TimestampOracle::resume(clock, 9_000_000);
    let pipeline =
        CommitPipeline::new(oracle, CommitOptions::default(), |_: Vec<Write>| Ok(())).unwrap();
    assert_eq!(pipeline.visible_ts(), 9_000_000);
    assert_eq!(pipeline.commit(write("a")), Ok(9_001_000));
}

#[test]
fn shutdown_finishes_or_refuses_every_commit_without_hanging() {
    let (pipeline, log) = logging_pipeline(Duration::from_millis(1));
    let pipeline = Arc::new(pipeline);
    let acked = Arc::new(AtomicUsize::new(0));
    let committers: Vec<_> = (0..8)
        .map(|i| {
            let (p, acked) = (pipeline.clone(), acked.clone());
            thread::spawn(move || loop {
                match p.commit(write(&i.to_string())) {
                    Ok(_) => acked.fetch_add(1, Ordering::SeqCst),
                    Err(Error::Shutdown) => return,
                    Err(e) => panic!("unexpected {e}"),
                };
            })
        })
        .collect();
    eventually("some commits", || acked.load(Ordering::SeqCst) >= 20);

    let (done_tx, done_rx) = mpsc::channel();
    let stopper = {
        let p = pipeline.clone();
        thread::spawn(move || {
            p.shutdown();
            done_tx.send(()).unwrap();
        })
    };
    done_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("shutdown hung");
    stopper.join().unwrap();
    for c in committers {
        c.join().unwrap();
    }
    // Every acknowledged commit was flushed; nothing queued was lost silently.
    let flushed: usize = log.lock().unwrap().iter().map(Vec::len).sum();
    assert_eq!(flushed, acked.load(Ordering::SeqCst));
    assert_eq!(pipeline.commit(write("late")), Err(Error::Shutdown));
    assert_eq!(
        pipeline.wait_visible(u64::MAX, None),
        Err(Error::Shutdown),
        "waiters are not left hanging"
    );
    pipeline.shutdown(); // idempotent
}

#[test]
fn drop_joins_the_thread() {
    let (pipeline, log) = logging_pipeline(Duration::ZERO);
    pipeline.commit(write("a")).unwrap();
    drop(pipeline);
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn strong_reads_take_the_visible_timestamp_while_a_flush_is_in_flight() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let oracle = TimestampOracle::new(clock.clone());
    // The flush blocks until the test lets it go: the commit stays in flight.
    let (release, gate) = mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let pipeline = Arc::new(
        CommitPipeline::new(oracle, CommitOptions::default(), move |_: Vec<Write>| {
            gate.lock()
                .unwrap()
                .recv()
                .map_err(|e| Error::Storage(e.to_string()))
        })
        .unwrap(),
    );

    // Idle: a strong read takes the clock, and does not wait for it.
    let now = 2_000_000;
    clock.set(now);
    assert_eq!(pipeline.strong_read_ts(now), now);
    assert!(!pipeline.strong_read_waits(now));

    let visible = pipeline.visible_ts();
    let committer = {
        let p = pipeline.clone();
        thread::spawn(move || p.commit(write("a")))
    };
    eventually("the commit is taken by the pipeline", || {
        pipeline.stats().queued == 0 && pipeline.stats().flushes == 1
    });
    // In flight: the read takes the visible timestamp, which needs no waiting, although
    // the clock is ahead of it.
    clock.set(3_000_000);
    let ts = pipeline.strong_read_ts(3_000_000);
    assert_eq!(ts, visible);
    assert_eq!(
        pipeline.wait_visible(ts, Some(Instant::now() + Duration::from_millis(20))),
        Ok(()),
        "a strong read while a flush runs must not wait for it"
    );
    assert!(!pipeline.strong_read_waits(3_000_000));
    // Unless the visible timestamp lags the clock by more than the bound: then the read
    // takes the clock and waits for the flush, and says so beforehand.
    let far = visible + rowtree_txn::commit::MAX_STRONG_LAG.as_nanos() as u64 + 1;
    assert_eq!(pipeline.strong_read_ts(far), far);
    assert!(pipeline.strong_read_waits(far));
    assert!(!pipeline.strong_read_waits(far - 1));

    release.send(()).unwrap();
    let committed = committer.join().unwrap().unwrap();
    // Acknowledged: every later strong read covers the commit, busy or idle; idle, no
    // read waits, however far the clock.
    assert!(pipeline.strong_read_ts(3_000_000) >= committed);
    eventually("the pipeline is idle", || !pipeline.strong_read_waits(far));
    let busy = {
        let p = pipeline.clone();
        thread::spawn(move || p.commit(write("b")))
    };
    eventually("the second commit is in flight", || {
        pipeline.stats().flushes == 2
    });
    let ts = pipeline.strong_read_ts(3_000_000);
    assert!(
        ts >= committed,
        "{ts} must cover the acknowledged {committed}"
    );
    release.send(()).unwrap();
    busy.join().unwrap().unwrap();
}

/// Runs a future to completion on this thread, parking between polls: enough to await a
/// ticket without an async runtime.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        thread::park();
    }
}

#[test]
fn a_submitted_commit_can_be_awaited() {
    let (pipeline, log) = logging_pipeline(Duration::from_millis(2));
    let tickets: Vec<_> = (0..10)
        .map(|i| pipeline.submit(write(&i.to_string())))
        .collect();
    let stamps: Vec<u64> = tickets.into_iter().map(|t| block_on(t).unwrap()).collect();
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "queue order");
    // Acknowledged means flushed and visible.
    assert_eq!(log.lock().unwrap().iter().map(Vec::len).sum::<usize>(), 10);
    assert!(pipeline.visible_ts() >= *stamps.last().unwrap());
}

#[test]
fn a_dropped_ticket_still_commits() {
    let (pipeline, log) = logging_pipeline(Duration::from_millis(5));
    drop(pipeline.submit(write("abandoned")));
    // A later commit is acknowledged after the abandoned one was flushed.
    let ts = pipeline.commit(write("next")).unwrap();
    let flushed: Vec<Write> = log.lock().unwrap().concat();
    assert_eq!(flushed.len(), 2);
    assert_eq!(flushed[0].1, "abandoned");
    assert!(flushed[0].0 < ts);
}

#[test]
fn detached_work_runs_after_the_commit_is_durable() {
    let (pipeline, log) = logging_pipeline(Duration::from_millis(5));
    let (tx, rx) = mpsc::channel();
    let seen = log.clone();
    pipeline.submit(write("x")).detach(move |result| {
        // Runs on the pipeline thread once the group is flushed.
        let flushed = seen.lock().unwrap().len();
        tx.send((result, flushed)).unwrap();
    });
    let (result, flushed) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(result.is_ok());
    assert_eq!(flushed, 1);
}

#[test]
fn a_submit_after_shutdown_is_refused_at_once() {
    let (pipeline, _log) = logging_pipeline(Duration::ZERO);
    pipeline.shutdown();
    let ticket = pipeline.submit(write("late"));
    assert!(ticket.is_done());
    assert_eq!(block_on(ticket), Err(Error::Shutdown));
}

#[test]
fn shutdown_answers_queued_tickets() {
    // A slow flush keeps the second commit queued while shutdown begins.
    let (pipeline, log) = logging_pipeline(Duration::from_millis(30));
    let first = pipeline.submit(write("a"));
    thread::sleep(Duration::from_millis(5));
    let second = pipeline.submit(write("b"));
    pipeline.shutdown();
    assert!(first.wait().is_ok());
    assert!(second.wait().is_ok(), "queued before shutdown: finished");
    assert_eq!(log.lock().unwrap().concat().len(), 2);
}

#[test]
fn an_empty_commit_takes_a_fresh_timestamp_and_is_visible_when_acknowledged() {
    // The clock stands still, so only the oracle's own ordering separates timestamps: reusing
    // the visible timestamp would hand the empty commit the previous commit's.
    let clock = Arc::new(ManualClock::new(1_000_000));
    let (release, gate) = mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let log: Log = Arc::default();
    let sink = log.clone();
    let pipeline = Arc::new(
        CommitPipeline::new(
            TimestampOracle::new(clock.clone()),
            CommitOptions::default(),
            move |group: Vec<Write>| {
                gate.lock()
                    .unwrap()
                    .recv()
                    .map_err(|e| Error::Storage(e.to_string()))?;
                sink.lock().unwrap().push(group);
                Ok(())
            },
        )
        .unwrap(),
    );

    // Idle: answered at once, above the last commit, and already visible.
    let first = {
        let p = pipeline.clone();
        let committer = thread::spawn(move || p.commit(write("a")));
        release.send(()).unwrap();
        committer.join().unwrap().unwrap()
    };
    let empty = pipeline.submit_empty().wait().unwrap();
    assert!(empty > first, "empty commit {empty} after commit {first}");
    assert!(pipeline.visible_ts() >= empty);
    let again = pipeline.submit_empty().wait().unwrap();
    assert!(again > empty);

    // Behind a flush in flight: the empty commit waits for its place in the order, is
    // answered with the group after it, and adds nothing to any flush.
    let busy = {
        let p = pipeline.clone();
        thread::spawn(move || p.commit(write("b")))
    };
    eventually("the commit is in flight", || pipeline.stats().flushes == 2);
    let empty_ticket = {
        let p = pipeline.clone();
        thread::spawn(move || p.submit_empty().wait())
    };
    eventually("the empty commit is queued", || {
        pipeline.stats().queued == 1
    });
    thread::sleep(Duration::from_millis(20));
    assert!(
        !empty_ticket.is_finished(),
        "an empty commit must not be answered before the commit ahead of it is visible"
    );
    release.send(()).unwrap();
    let b = busy.join().unwrap().unwrap();
    let queued_empty = empty_ticket.join().unwrap().unwrap();
    assert!(queued_empty > b, "{queued_empty} after {b}");
    assert!(pipeline.visible_ts() >= queued_empty);
    let flushed: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .flatten()
        .map(|w| w.1.clone())
        .collect();
    assert_eq!(flushed, ["a", "b"], "empty commits write nothing");
    assert_eq!(pipeline.stats().commits, 2);
    assert_eq!(pipeline.stats().flushes, 2);
}

#[test]
fn an_idle_pipeline_commits_on_the_waiting_thread() {
    let flushed_on: Arc<Mutex<Vec<thread::ThreadId>>> = Arc::default();
    let sink = flushed_on.clone();
    let pipeline = CommitPipeline::new(
        system_oracle(),
        CommitOptions::default(),
        move |_: Vec<Write>| {
            sink.lock().unwrap().push(thread::current().id());
            Ok(())
        },
    )
    .unwrap();
    let me = thread::current().id();
    // A committer that waits on its thread leads when nothing else is being committed:
    // no hand-off to the pipeline thread and back.
    for i in 0..5 {
        let ts = pipeline.commit(write(&i.to_string())).unwrap();
        assert!(pipeline.visible_ts() >= ts);
    }
    // A ticket awaited in a task never leads: the pipeline thread flushes it.
    block_on(pipeline.submit(write("async"))).unwrap();
    let threads = flushed_on.lock().unwrap().clone();
    assert_eq!(threads.len(), 6);
    assert!(threads[..5].iter().all(|t| *t == me), "{threads:?}");
    assert_ne!(threads[5], me);
}

/// A pipeline whose first flush blocks until the returned sender is used (or dropped),
/// and a receiver told when that flush has started, and on which thread.
fn pipeline_with_a_held_first_flush(
    oracle: TimestampOracle,
) -> (
    Arc<CommitPipeline<Write>>,
    mpsc::Receiver<thread::ThreadId>,
    mpsc::Sender<()>,
) {
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let first = AtomicBool::new(true);
    let pipeline = CommitPipeline::new(oracle, CommitOptions::default(), move |_: Vec<Write>| {
        if first.swap(false, Ordering::SeqCst) {
            started_tx.send(thread::current().id()).unwrap();
            let _ = release_rx.lock().unwrap().recv();
        }
        Ok(())
    })
    .unwrap();
    (Arc::new(pipeline), started_rx, release_tx)
}

/// Runs `f` on a thread; its result, or a panic if it takes more than 5 s.
fn within_5s<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || tx.send(f()));
    rx.recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| panic!("{what} did not finish within 5 s"))
}

/// A pipeline (on `oracle`) whose first group is being committed, held in its flush, by a
/// committer that leads it; the pipeline, the sender that releases the flush, and the
/// committer's thread. The pipeline thread could take that first group instead if it has
/// not reached its idle wait yet (a loaded machine); then the attempt is made again.
fn a_held_lead(
    oracle: impl Fn() -> TimestampOracle,
) -> (
    Arc<CommitPipeline<Write>>,
    mpsc::Sender<()>,
    thread::JoinHandle<u64>,
) {
    for _ in 0..20 {
        let (pipeline, started, release) = pipeline_with_a_held_first_flush(oracle());
        thread::sleep(Duration::from_millis(20));
        let p = pipeline.clone();
        let leader = thread::spawn(move || p.commit(write("leader")).unwrap());
        let flushed_on = started.recv_timeout(Duration::from_secs(5)).unwrap();
        if flushed_on == leader.thread().id() {
            return (pipeline, release, leader);
        }
        release.send(()).unwrap();
        leader.join().unwrap();
    }
    panic!("in 20 attempts the committer never led its group");
}

#[test]
fn work_that_arrives_while_a_committer_leads_is_not_left_waiting() {
    // Whatever reaches the pipeline while a committer leads a group finds it busy: the
    // pipeline thread goes back to sleep, and the leader must wake it when the group
    // ends. Each case below hangs if that wake-up is skipped.

    // A commit submitted to be awaited elsewhere (it never leads).
    let (pipeline, release, leader) = a_held_lead(system_oracle);
    let queued = pipeline.submit(write("queued"));
    // Let the pipeline thread, woken by the submit, find the group still held.
    thread::sleep(Duration::from_millis(50));
    release.send(()).unwrap();
    let leader_ts = leader.join().unwrap();
    let queued_ts = within_5s("the commit queued during the lead", move || {
        block_on(queued).unwrap()
    });
    assert!(queued_ts > leader_ts);

    // A read waiting for a timestamp ahead of every commit (it asks the pipeline thread
    // to advance once the clock gets there, which it does while the group is held).
    let clock = Arc::new(ManualClock::new(1_000_000));
    let (pipeline, release, leader) = a_held_lead(|| TimestampOracle::new(clock.clone()));
    let wanted = 5_000_000;
    let p = pipeline.clone();
    let reader = thread::spawn(move || {
        p.wait_visible(wanted, Some(Instant::now() + Duration::from_secs(5)))
    });
    // Let the reader ask, and the pipeline thread find the group still held.
    thread::sleep(Duration::from_millis(50));
    clock.set(6_000_000);
    release.send(()).unwrap();
    let leader_ts = leader.join().unwrap();
    assert!(leader_ts < wanted, "{leader_ts}");
    within_5s("the read waiting for a future timestamp", move || {
        reader.join().unwrap()
    })
    .unwrap();
    assert!(pipeline.visible_ts() >= wanted);

    // A shutdown, which joins the pipeline thread.
    let (pipeline, release, leader) = a_held_lead(system_oracle);
    let p = pipeline.clone();
    let stopper = thread::spawn(move || p.shutdown());
    thread::sleep(Duration::from_millis(50));
    release.send(()).unwrap();
    leader.join().unwrap();
    within_5s("the shutdown", move || stopper.join().unwrap());
    assert!(matches!(
        pipeline.commit(write("late")),
        Err(Error::Shutdown)
    ));
}

#[test]
fn a_gate_that_refuses_fails_the_group_before_timestamps_are_issued() {
    let refuse = Arc::new(AtomicBool::new(true));
    let flushes = Arc::new(AtomicUsize::new(0));
    let clock = Arc::new(ManualClock::new(1_000_000));
    let gate: rowtree_txn::CommitGate = {
        let refuse = refuse.clone();
        Arc::new(move || {
            if refuse.load(Ordering::SeqCst) {
                Err(Error::Unavailable("another node holds the lease".into()))
            } else {
                Ok(())
            }
        })
    };
    let counted = flushes.clone();
    let pipeline = CommitPipeline::gated(
        TimestampOracle::new(clock.clone()),
        CommitOptions::default(),
        Some(gate),
        move |_: Vec<Write>| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(())
        },
    )
    .unwrap();
    let before = pipeline.visible_ts();
    assert_eq!(
        pipeline.commit(write("x")),
        Err(Error::Unavailable("another node holds the lease".into()))
    );
    assert_eq!(
        pipeline.wait(pipeline.submit_empty()),
        Err(Error::Unavailable("another node holds the lease".into())),
        "an empty commit passes the gate too"
    );
    assert_eq!(flushes.load(Ordering::SeqCst), 0, "nothing was flushed");
    assert_eq!(pipeline.visible_ts(), before, "nothing became visible");

    refuse.store(false, Ordering::SeqCst);
    // No timestamp was used up by the refused group: the clock has not
    // moved, and the first one issued is the clock's.
    assert_eq!(pipeline.commit(write("y")), Ok(1_000_000));
    assert_eq!(flushes.load(Ordering::SeqCst), 1);
}

#[test]
fn commits_applied_elsewhere_become_visible_and_later_timestamps_exceed_them() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let pipeline = CommitPipeline::new(
        TimestampOracle::new(clock.clone()),
        CommitOptions::default(),
        |_: Vec<Write>| Ok(()),
    )
    .unwrap();
    let first = pipeline.commit(write("here")).unwrap();
    // A replica applied commits up to 9 ms made by another node, whose
    // clock runs ahead of this one.
    pipeline.observe_applied(9_000_000);
    assert_eq!(pipeline.visible_ts(), 9_000_000);
    let next = pipeline.commit(write("after")).unwrap();
    assert!(next > 9_000_000 && next > first, "{next}");
    // An older observation changes nothing.
    pipeline.observe_applied(2_000_000);
    assert!(pipeline.visible_ts() >= next);
}

/// A replica applying another group's entry at a timestamp above a commit this pipeline
/// is still flushing (a cluster node writing several split groups, or a two-phase commit)
/// does not make that commit's timestamp visible before the commit is durable: a strong
/// read would take it and miss the commit. It becomes visible with the group.
#[test]
fn an_applied_timestamp_above_a_commit_in_flight_waits_for_that_commit() {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let (release, released) = mpsc::channel::<()>();
    let (entered, entering) = mpsc::channel::<()>();
    let flush = Mutex::new((entered, released));
    let pipeline = Arc::new(
        CommitPipeline::new(
            TimestampOracle::new(clock.clone()),
            CommitOptions::default(),
            move |_: Vec<Write>| {
                let channels = flush.lock().unwrap();
                channels.0.send(()).ok();
                channels.1.recv().ok();
                Ok(())
            },
        )
        .unwrap(),
    );
    let before = pipeline.visible_ts();
    let committer = {
        let pipeline = pipeline.clone();
        thread::spawn(move || pipeline.commit(write("in flight")).unwrap())
    };
    entering
        .recv_timeout(Duration::from_secs(5))
        .expect("the commit is being flushed");
    // Another group's entry, 5 ms above anything issued here, is applied.
    pipeline.observe_applied(6_000_000);
    assert_eq!(
        pipeline.visible_ts(),
        before,
        "published past a commit still in flight"
    );
    release.send(()).unwrap();
    let ts = committer.join().unwrap();
    assert!(ts < 6_000_000, "{ts}");
    assert_eq!(pipeline.visible_ts(), 6_000_000);
    // With nothing in flight, an applied timestamp is published at once.
    pipeline.observe_applied(7_000_000);
    assert_eq!(pipeline.visible_ts(), 7_000_000);
    let next = {
        let pipeline = pipeline.clone();
        let committer = thread::spawn(move || pipeline.commit(write("after")).unwrap());
        entering.recv_timeout(Duration::from_secs(5)).unwrap();
        release.send(()).unwrap();
        committer.join().unwrap()
    };
    assert!(next > 7_000_000, "{next}");
}
