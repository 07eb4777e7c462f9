//! `keys.rs`: key columns of tables and indexes, and key sets.

use super::*;
use pb::key_range::{EndKeyType, StartKeyType};
use rowtree_db::{Bound, KeyRange, KeySet};

use crate::convert::{key_columns, key_set_from_proto, key_types};

#[test]
fn key_types_of_tables_and_indexes() {
    let c = catalog();
    assert_eq!(key_types(&c, "Singers", None).unwrap(), vec![Type::Int64]);
    assert_eq!(
        key_types(&c, "albums", None).unwrap(),
        vec![Type::Int64, Type::Int64]
    );
    // Index keys, then the table's key columns the index does not name.
    assert_eq!(
        key_columns(&c, "Albums", Some("albumsbytitle")).unwrap(),
        vec![
            ("Title".to_string(), Type::String),
            ("SingerId".to_string(), Type::Int64),
            ("AlbumId".to_string(), Type::Int64),
        ]
    );
    assert_eq!(
        key_types(&c, "Singers", Some("SingersByName")).unwrap(),
        vec![Type::String, Type::Int64]
    );
    let err = key_types(&c, "Nope", None).unwrap_err();
    assert_eq!(
        (err.code(), err.message()),
        (Code::NotFound, "Table not found: Nope")
    );
    let err = key_types(&c, "Singers", Some("AlbumsByTitle")).unwrap_err();
    assert_eq!(
        (err.code(), err.message()),
        (
            Code::NotFound,
            "Index not found on table Singers: AlbumsByTitle"
        )
    );
}

#[test]
fn key_sets() {
    let types = vec![Type::Int64, Type::String];
    let ks = pb::KeySet {
        keys: vec![lv(vec![s("1"), s("a")]), lv(vec![n(2.0), null()])],
        ranges: vec![
            pb::KeyRange {
                start_key_type: Some(StartKeyType::StartClosed(lv(vec![s("1")]))),
                end_key_type: Some(EndKeyType::EndOpen(lv(vec![s("5"), s("m")]))),
            },
            pb::KeyRange {
                start_key_type: Some(StartKeyType::StartOpen(lv(vec![]))),
                end_key_type: Some(EndKeyType::EndClosed(lv(vec![]))),
            },
        ],
        all: true,
    };
    let got = key_set_from_proto(&ks, &types).unwrap();
    assert_eq!(
        got,
        KeySet {
            keys: vec![
                vec![Value::Int64(1), Value::String("a".into())],
                vec![Value::Int64(2), Value::Null],
            ],
            ranges: vec![
                KeyRange {
                    start: Bound::Closed(vec![Value::Int64(1)]),
                    end: Bound::Open(vec![Value::Int64(5), Value::String("m".into())]),
                },
                KeyRange {
                    start: Bound::Open(vec![]),
                    end: Bound::Closed(vec![]),
                },
            ],
            all: true,
        }
    );
    assert_eq!(
        key_set_from_proto(&pb::KeySet::default(), &types).unwrap(),
        KeySet::default()
    );

    let err_of = |ks: pb::KeySet| key_set_from_proto(&ks, &types).unwrap_err();
    let missing_start = err_of(pb::KeySet {
        ranges: vec![pb::KeyRange {
            start_key_type: None,
            end_key_type: Some(EndKeyType::EndClosed(lv(vec![]))),
        }],
        ..Default::default()
    });
    assert_eq!(missing_start.code(), Code::InvalidArgument);
    assert!(missing_start
        .message()
        .contains("start_closed or start_open"));
    let missing_end = err_of(pb::KeySet {
        ranges: vec![pb::KeyRange {
            start_key_type: Some(StartKeyType::StartClosed(lv(vec![]))),
            end_key_type: None,
        }],
        ..Default::default()
    });
    assert!(missing_end.message().contains("end_closed or end_open"));
    let too_many = err_of(pb::KeySet {
        ranges: vec![pb::KeyRange {
            start_key_type: Some(StartKeyType::StartClosed(lv(vec![s("1"), s("a"), s("x")]))),
            end_key_type: Some(EndKeyType::EndClosed(lv(vec![]))),
        }],
        ..Default::default()
    });
    assert_eq!(too_many.code(), Code::InvalidArgument);
    assert!(
        too_many.message().starts_with("Wrong number of key parts"),
        "{}",
        too_many.message()
    );
    let partial_point = err_of(pb::KeySet {
        keys: vec![lv(vec![s("1")])],
        ..Default::default()
    });
    assert!(partial_point
        .message()
        .contains("Expected 2 key parts, found 1"));
    let bad_value = err_of(pb::KeySet {
        keys: vec![lv(vec![s("one"), s("a")])],
        ..Default::default()
    });
    assert_eq!(bad_value.code(), Code::InvalidArgument);
    assert!(
        bad_value.message().contains("key part 1 (INT64)"),
        "{}",
        bad_value.message()
    );
}
