//! Unit tests of what the gRPC tests cannot reach: deadlines, the
//! statelessness of read-only transactions, reaping, the bounds on sessions
//! and held transactions, and string chunking.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::transaction_options::Mode;
use rowtree_types::{Code, Type, Value};
use tokio::sync::mpsc;

use super::limits::{
    check_deadline, deadline_of, IDLE_READ_WRITE, IDLE_SESSION, MAX_HELD_TRANSACTIONS, MAX_SESSIONS,
};
use super::results::{Chunker, RowOut};
use super::sessions::SpannerService;
use super::transactions::{read_only_id, TxnState, HELD_TAG, READ_ONLY_TAG};
use crate::registry::{now_nanos, Registry};

#[test]
fn grpc_timeouts_become_deadlines() {
    let mut m = tonic::metadata::MetadataMap::new();
    assert!(deadline_of(&m).is_none());
    m.insert("grpc-timeout", "250m".parse().unwrap());
    let d = deadline_of(&m).unwrap();
    let left = d.saturating_duration_since(Instant::now());
    assert!(left <= Duration::from_millis(250) && left > Duration::from_millis(100));
    m.insert("grpc-timeout", "2x".parse().unwrap());
    assert!(deadline_of(&m).is_none());
    let past = Some(Instant::now() - Duration::from_secs(1));
    assert!(check_deadline(past, 1024).is_err());
    assert!(check_deadline(past, 1023).is_ok());
}

/// A service over an in-memory registry with one database.
fn service() -> (SpannerService, String) {
    let registry = Arc::new(Registry::open(None, rowtree_db::Options::default()).unwrap());
    registry
        .create_instance(crate::registry::InstanceMeta {
            name: "projects/p/instances/i".into(),
            config: String::new(),
            display_name: "i".into(),
            node_count: 1,
            processing_units: 1000,
            labels: Default::default(),
            create_time: 0,
            update_time: 0,
            edition: 0,
        })
        .unwrap();
    let db = "projects/p/instances/i/databases/db".to_string();
    registry.create_database(&db, &[], 0).unwrap();
    (SpannerService::new(registry), db)
}

fn read_only_options() -> pb::TransactionOptions {
    pb::TransactionOptions {
        mode: Some(Mode::ReadOnly(Default::default())),
        ..Default::default()
    }
}

#[test]
fn read_only_transactions_hold_nothing() {
    let (service, db) = service();
    let session = service.create(&db, None).unwrap();
    let state = service.session(&session.name).unwrap();
    let mut ids = Vec::new();
    for _ in 0..1000 {
        let (id, _, txn) = state.begin(&read_only_options()).unwrap();
        assert_eq!(txn.id, id);
        ids.push((id, txn.read_timestamp.unwrap()));
    }
    assert!(
        state.txns.lock().is_empty(),
        "read-only transactions are not held"
    );
    // Every id still reads at its own timestamp.
    for (id, ts) in ids.iter().step_by(97) {
        let slot = state.slot(id).unwrap();
        let TxnState::ReadOnly(ro) = &*slot.state.lock() else {
            panic!("a read-only slot");
        };
        let want = ts.seconds as u64 * 1_000_000_000 + ts.nanos as u64;
        assert_eq!(ro.read_timestamp(), want);
    }
    // Ids at the same timestamp differ; made-up ids are not found.
    assert_ne!(read_only_id(7), read_only_id(7));
    let mut forged = ids[0].0.clone();
    forged[0] = HELD_TAG;
    let e = state.slot(&forged).err().expect("not found");
    assert_eq!(e.code(), tonic::Code::NotFound);
    assert!(state.slot(&[READ_ONLY_TAG, 1, 2]).is_err());
    // A read timestamp older than the retention period is refused.
    let e = state.slot(&read_only_id(1)).err().expect("too old");
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
}

#[test]
fn idle_sessions_and_transactions_are_reaped() {
    let (service, db) = service();
    let old = service.create(&db, None).unwrap().name;
    let fresh = service.create(&db, None).unwrap().name;
    let multiplexed = service
        .create(
            &db,
            Some(&pb::Session {
                multiplexed: true,
                ..Default::default()
            }),
        )
        .unwrap()
        .name;
    let rw = pb::TransactionOptions {
        mode: Some(Mode::ReadWrite(Default::default())),
        ..Default::default()
    };
    let (held, _, _) = service.session(&fresh).unwrap().begin(&rw).unwrap();
    let (idle, idle_slot, _) = service.session(&fresh).unwrap().begin(&rw).unwrap();
    let long_ago = now_nanos() - IDLE_SESSION.as_nanos() as i64 - 1;
    for name in [&old, &multiplexed] {
        let s = service.sessions.lock().get(name.as_str()).cloned().unwrap();
        s.last_use.store(long_ago, Ordering::Relaxed);
    }
    idle_slot.last_use.store(
        now_nanos() - IDLE_READ_WRITE.as_nanos() as i64 - 1,
        Ordering::Relaxed,
    );
    // The old session and the idle transaction end; the rest stay.
    assert_eq!(service.reap_idle(), 2);
    assert_eq!(
        service.session(&old).err().map(|e| e.code()),
        Some(tonic::Code::NotFound)
    );
    let fresh = service.session(&fresh).unwrap();
    assert!(service.session(&multiplexed).is_ok());
    assert!(fresh.slot(&held).is_ok());
    let ended = fresh.slot(&idle).unwrap();
    assert!(matches!(
        &*ended.state.lock(),
        TxnState::Ended(Code::Aborted, _)
    ));
}

#[test]
fn a_stopping_server_ends_idle_read_write_transactions_but_not_running_ones() {
    let (service, db) = service();
    let name = service.create(&db, None).unwrap().name;
    let session = service.session(&name).unwrap();
    let rw = pb::TransactionOptions {
        mode: Some(Mode::ReadWrite(Default::default())),
        ..Default::default()
    };
    let ro = pb::TransactionOptions {
        mode: Some(Mode::ReadOnly(Default::default())),
        ..Default::default()
    };
    let (idle, _, _) = session.begin(&rw).unwrap();
    let (running, running_slot, _) = session.begin(&rw).unwrap();
    let (read_only, _, _) = session.begin(&ro).unwrap();
    // A request is running in this one: its slot is locked.
    let guard = running_slot.state.lock();
    assert_eq!(service.end_idle_read_write(), 1);
    drop(guard);
    match &*session.slot(&idle).unwrap().state.lock() {
        TxnState::Ended(Code::Aborted, message) => {
            assert!(message.contains("server is stopping"), "{message}")
        }
        _ => panic!("the idle read-write transaction is still open"),
    }
    assert!(matches!(
        &*session.slot(&running).unwrap().state.lock(),
        TxnState::ReadWrite(_)
    ));
    assert!(session.slot(&read_only).is_ok());
}

#[test]
fn sessions_and_held_transactions_are_bounded() {
    let (service, db) = service();
    for _ in 0..MAX_SESSIONS {
        service.create(&db, None).unwrap();
    }
    let e = service.create(&db, None).expect_err("one too many");
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    let name = service
        .sessions
        .lock()
        .by_name
        .keys()
        .next()
        .cloned()
        .unwrap();
    let session = service.session(&name).unwrap();
    for _ in 0..MAX_HELD_TRANSACTIONS {
        session.register(TxnState::PartitionedDml).unwrap();
    }
    let e = session
        .register(TxnState::PartitionedDml)
        .err()
        .expect("full");
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    // Read-only transactions need no room.
    assert!(session.begin(&read_only_options()).is_ok());
}

#[test]
fn long_strings_are_chunked_with_resume_tokens_on_row_boundaries() {
    let (tx, mut rx) = mpsc::channel(100);
    let mut c = Chunker::new(tx, 0);
    c.chunk_bytes = 4;
    let cols = vec![("s".to_string(), Type::String)];
    c.row(&cols, vec![Value::String("abcdefghij".into())])
        .unwrap();
    c.finish(None).unwrap();
    let mut messages = Vec::new();
    while let Ok(m) = rx.try_recv() {
        messages.push(m.unwrap());
    }
    assert_eq!(messages.len(), 3);
    assert!(messages[0].metadata.is_some());
    assert!(messages[1].metadata.is_none() && messages[2].metadata.is_none());
    assert!(messages[0].chunked_value && messages[1].chunked_value);
    assert!(messages[0].resume_token.is_empty());
    let text: String = messages
        .iter()
        .flat_map(|m| m.values.iter())
        .map(|v| match &v.kind {
            Some(prost_types::value::Kind::StringValue(s)) => s.clone(),
            _ => String::new(),
        })
        .collect();
    assert_eq!(text, "abcdefghij");
    assert_eq!(messages[2].resume_token, 1u64.to_be_bytes().to_vec());
    // `last` stays unset: see the results module's docs.
    assert!(messages.iter().all(|m| !m.last));
}

#[test]
fn an_issued_session_id_is_read_back_only_under_its_key_and_database() {
    use super::sessions::{issued_id, read_issued};
    let key = b"cluster-a\0\0\0\0\0\0\0\0\x07".to_vec();
    let db = "projects/p/instances/i/databases/d";
    let id = issued_id(&key, db, true, 1_764_000_000_123_456_789);
    assert_eq!(id.len(), 65);
    assert_eq!(
        read_issued(&key, db, &id),
        Some((true, 1_764_000_000_123_456_789))
    );
    let plain = issued_id(&key, db, false, 5);
    assert_eq!(read_issued(&key, db, &plain), Some((false, 5)));
    // Another database, another cluster or group, a changed digit, a
    // changed case, a plain UUID: none reads.
    assert_eq!(
        read_issued(&key, "projects/p/instances/i/databases/e", &id),
        None
    );
    let mut other = key.clone();
    *other.last_mut().unwrap() = 8;
    assert_eq!(read_issued(&other, db, &id), None);
    for at in [0, 32, 40, 64] {
        let mut changed = id.clone().into_bytes();
        changed[at] = if changed[at] == b'0' { b'1' } else { b'0' };
        let changed = String::from_utf8(changed).unwrap();
        assert_eq!(read_issued(&key, db, &changed), None, "digit {at} changed");
    }
    assert_eq!(read_issued(&key, db, &id.to_uppercase()), None);
    assert_eq!(read_issued(&key, db, &id[..64]), None);
    let uuid = uuid::Uuid::new_v4().simple().to_string();
    assert_eq!(read_issued(&key, db, &uuid), None);
    assert_eq!(read_issued(&key, db, &"g".repeat(65)), None);
    assert_eq!(read_issued(&key, db, &format!("{}a", "é".repeat(32))), None);
}
