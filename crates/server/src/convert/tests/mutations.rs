//! `mutations.rs`: every kind of mutation, and the errors of each.

use super::*;
use pb::key_range::{EndKeyType, StartKeyType};
use rowtree_db::{KeyRange, KeySet, Mutation};

use crate::convert::{mutations_from_proto, COMMIT_TIMESTAMP_PLACEHOLDER};

#[test]
fn mutations() {
    let c = catalog();
    let ms = vec![
        op(Operation::Insert(write(
            "singers",
            &["singerid", "FIRSTNAME", "Info", "Updated"],
            vec![
                vec![
                    s("1"),
                    s("Marc"),
                    s("aGk="),
                    s(COMMIT_TIMESTAMP_PLACEHOLDER),
                ],
                vec![s("2"), null(), null(), s("2020-01-01T00:00:00Z")],
            ],
        ))),
        op(Operation::Update(write(
            "Singers",
            &["SingerId", "LastName"],
            vec![vec![s("1"), s("R")]],
        ))),
        op(Operation::InsertOrUpdate(write(
            "Albums",
            &["SingerId", "AlbumId", "Released", "Price", "Tags"],
            vec![vec![
                s("1"),
                s("10"),
                s("2001-02-03"),
                s("9.99"),
                list(vec![s("rock"), null()]),
            ]],
        ))),
        op(Operation::Replace(write(
            "Albums",
            &["SingerId", "AlbumId"],
            vec![vec![s("1"), s("11")]],
        ))),
        op(Operation::Delete(pb::mutation::Delete {
            table: "ALBUMS".into(),
            key_set: Some(pb::KeySet {
                keys: vec![lv(vec![s("1"), s("10")])],
                ranges: vec![pb::KeyRange {
                    start_key_type: Some(StartKeyType::StartClosed(lv(vec![s("2")]))),
                    end_key_type: Some(EndKeyType::EndClosed(lv(vec![s("2")]))),
                }],
                all: false,
            }),
        })),
        op(Operation::Delete(pb::mutation::Delete {
            table: "Singers".into(),
            key_set: Some(pb::KeySet {
                all: true,
                ..Default::default()
            }),
        })),
    ];
    let got = mutations_from_proto(&ms, &c).unwrap();
    let expected = vec![
        Mutation::insert(
            "Singers",
            &["SingerId", "FirstName", "Info", "Updated"],
            vec![
                vec![
                    Value::Int64(1),
                    Value::String("Marc".into()),
                    Value::Bytes(b"hi".to_vec()),
                    Value::Timestamp(Timestamp::PENDING_COMMIT),
                ],
                vec![
                    Value::Int64(2),
                    Value::Null,
                    Value::Null,
                    Value::Timestamp(ts("2020-01-01T00:00:00Z")),
                ],
            ],
        ),
        Mutation::update(
            "Singers",
            &["SingerId", "LastName"],
            vec![vec![Value::Int64(1), Value::String("R".into())]],
        ),
        Mutation::insert_or_update(
            "Albums",
            &["SingerId", "AlbumId", "Released", "Price", "Tags"],
            vec![vec![
                Value::Int64(1),
                Value::Int64(10),
                Value::Date(date("2001-02-03")),
                Value::Numeric(num("9.99")),
                Value::Array(vec![Value::String("rock".into()), Value::Null]),
            ]],
        ),
        Mutation::replace(
            "Albums",
            &["SingerId", "AlbumId"],
            vec![vec![Value::Int64(1), Value::Int64(11)]],
        ),
        Mutation::delete(
            "Albums",
            KeySet {
                keys: vec![vec![Value::Int64(1), Value::Int64(10)]],
                ranges: vec![KeyRange::prefix(vec![Value::Int64(2)])],
                all: false,
            },
        ),
        Mutation::delete("Singers", KeySet::all()),
    ];
    assert_eq!(got, expected);
    assert!(mutations_from_proto(&[], &c).unwrap().is_empty());
}

#[test]
fn mutation_errors() {
    let c = catalog();
    let err_of = |m: pb::Mutation| mutations_from_proto(&[m], &c).unwrap_err();

    let err = err_of(op(Operation::Insert(write("Nope", &["a"], vec![]))));
    assert_eq!(
        (err.code(), err.message()),
        (Code::NotFound, "Table not found: Nope")
    );
    let err = err_of(op(Operation::Insert(write("", &["a"], vec![]))));
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = err_of(op(Operation::Update(write(
        "Singers",
        &["SingerId", "Age"],
        vec![],
    ))));
    assert_eq!(
        (err.code(), err.message()),
        (Code::NotFound, "Column not found in table Singers: Age")
    );
    let err = err_of(op(Operation::Insert(write(
        "Singers",
        &["SingerId", "FirstName"],
        vec![vec![s("1"), s("a")], vec![s("x"), s("b")]],
    ))));
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(
        err.message()
            .starts_with("Invalid value for column SingerId in table Singers:")
            && err.message().contains("\"x\" as INT64"),
        "{}",
        err.message()
    );
    let err = err_of(op(Operation::Insert(write(
        "Albums",
        &["SingerId", "AlbumId", "Price"],
        vec![vec![s("1"), s("2"), s("1e30")]],
    ))));
    assert!(
        err.message().contains("column Price in table Albums"),
        "{}",
        err.message()
    );
    assert!(err.message().contains("NUMERIC"), "{}", err.message());
    // More than 9 decimals: refused (INVALID_ARGUMENT), never rounded.
    let err = err_of(op(Operation::InsertOrUpdate(write(
        "Albums",
        &["SingerId", "AlbumId", "Price"],
        vec![vec![s("1"), s("2"), s("3.1415926535")]],
    ))));
    assert_eq!(
        (err.code(), err.message()),
        (
            Code::InvalidArgument,
            "Invalid value for column Price in table Albums: Could not parse \"3.1415926535\" \
             as NUMERIC. The NUMERIC type supports 38 digits of precision and 9 digits of scale"
        )
    );
    let ok = op(Operation::Insert(write(
        "Albums",
        &["SingerId", "AlbumId", "Price"],
        vec![vec![s("1"), s("2"), s("3.141592653000")]],
    )));
    assert!(mutations_from_proto(&[ok], &c).is_ok());
    let err = err_of(op(Operation::Insert(write(
        "Singers",
        &["SingerId", "FirstName"],
        vec![vec![s("1")]],
    ))));
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = err_of(op(Operation::Insert(write(
        "Singers",
        &["SingerId", "singerid"],
        vec![],
    ))));
    assert_eq!(
        (err.code(), err.message()),
        (
            Code::InvalidArgument,
            "Multiple values for column SingerId."
        )
    );
    let err = err_of(op(Operation::Delete(pb::mutation::Delete {
        table: "Albums".into(),
        key_set: Some(pb::KeySet {
            keys: vec![lv(vec![s("1"), b(false)])],
            ..Default::default()
        }),
    })));
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("key column AlbumId"),
        "{}",
        err.message()
    );
    let err = err_of(op(Operation::Delete(pb::mutation::Delete {
        table: "Albums".into(),
        key_set: Some(pb::KeySet {
            keys: vec![lv(vec![s("1")])],
            ..Default::default()
        }),
    })));
    assert!(
        err.message()
            .starts_with("Wrong number of key parts for Albums. Expected 2 key parts, found 1"),
        "{}",
        err.message()
    );
    let err = err_of(op(Operation::Delete(pb::mutation::Delete {
        table: "Albums".into(),
        key_set: None,
    })));
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = err_of(op(Operation::Send(pb::mutation::Send::default())));
    assert_eq!(err.code(), Code::Unimplemented);
    let err = err_of(op(Operation::Ack(pb::mutation::Ack::default())));
    assert_eq!(err.code(), Code::Unimplemented);
    let err = err_of(pb::Mutation { operation: None });
    assert_eq!(err.code(), Code::InvalidArgument);
}
