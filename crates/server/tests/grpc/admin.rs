//! Instance and database admin, and the operations they answer with.

use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn creating_an_instance_twice_is_already_exists() {
    let env = start().await;
    env.instance("twice").await;
    match env.try_create_instance("twice").await {
        Err(e) => assert_eq!(e.code(), Code::AlreadyExists, "{e:?}"),
        Ok(op) => {
            let op = env.finish(op).await;
            let e = op_error(&op).expect("the second create fails");
            assert_eq!(e.code, Code::AlreadyExists as i32, "{e:?}");
        }
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn create_database_with_a_bad_statement_leaves_nothing() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let ddl = [
        "CREATE TABLE A (Id INT64 NOT NULL) PRIMARY KEY (Id)",
        "CREATE TABLE B (Id INT64 NOT NULL,,) PRIMARY KEY (Id)",
    ];
    let e = match env.try_create_database(&inst, "bad", &ddl).await {
        Err(e) => (e.code() as i32, e.message().to_string()),
        Ok(op) => {
            let e = op_error(&env.finish(op).await).expect("the create fails");
            (e.code, e.message)
        }
    };
    assert_eq!(e.0, Code::InvalidArgument as i32, "{e:?}");
    // The position is within the failing statement: line 1, the second comma.
    assert!(e.1.contains("[at 1:35]"), "{e:?}");

    let get = env
        .dbs()
        .get_database(dpb::GetDatabaseRequest {
            name: format!("{inst}/databases/bad"),
        })
        .await;
    expect_err(get, Code::NotFound, "");
    let list = env
        .dbs()
        .list_databases(dpb::ListDatabasesRequest {
            parent: inst.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(list.databases.is_empty(), "{list:?}");

    // A semantic error too (an index on a missing table).
    let missing = env
        .try_create_database(&inst, "bad", &["CREATE INDEX X ON Nope(Col)"])
        .await;
    let failed = match missing {
        Err(_) => true,
        Ok(op) => op_error(&env.finish(op).await).is_some(),
    };
    assert!(failed);

    // The name is free again.
    let db = env.database(&inst, "bad", &ddl[..1]).await;
    assert_eq!(env.ddl_of(&db).await.len(), 1);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_schema_change_keeps_the_statements_before_it() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env
        .database(
            &inst,
            "db",
            &["CREATE TABLE T (Id INT64 NOT NULL) PRIMARY KEY (Id)"],
        )
        .await;
    let statements = [
        "CREATE TABLE A (Id INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (Id)",
        "CREATE INDEX AByMissing ON A(Missing)",
        "CREATE TABLE C (Id INT64 NOT NULL) PRIMARY KEY (Id)",
    ];
    let op = env.ddl(&db, &statements, "").await.unwrap();
    assert!(op.done);
    let e = op_error(&op).expect("the operation fails");
    assert_ne!(e.code, 0);
    assert!(e.message.contains("Missing"), "{e:?}");

    let md = op.metadata.clone().expect("metadata");
    assert!(md.type_url.ends_with("UpdateDatabaseDdlMetadata"), "{md:?}");
    let md = dpb::UpdateDatabaseDdlMetadata::decode(md.value.as_slice()).unwrap();
    assert_eq!(md.database, db);
    assert_eq!(md.statements.len(), 3);
    assert_eq!(md.commit_timestamps.len(), 1, "{md:?}");

    // GetOperation answers the same.
    let again = env
        .operations()
        .get_operation(lro::GetOperationRequest {
            name: op.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(again.done);
    assert_eq!(op_error(&again).map(|e| e.code), Some(e.code));

    let ddl = env.ddl_of(&db).await;
    assert!(ddl.iter().any(|d| d.contains("CREATE TABLE A")), "{ddl:?}");
    assert!(!ddl.iter().any(|d| d.contains("CREATE TABLE C")), "{ddl:?}");
    assert!(!ddl.iter().any(|d| d.contains("AByMissing")), "{ddl:?}");

    // Table A is usable.
    let s = env.session(&db).await;
    let id = env.begin_rw(&s).await;
    assert_eq!(
        env.dml(&s, &id, "INSERT INTO A (Id, V) VALUES (1, 'x')")
            .await,
        1
    );
    env.commit_id(&s, &id, vec![]).await.unwrap();
    assert_eq!(env.query(&s, "SELECT V FROM A").await, vec!["x"]);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn operation_ids_are_unique() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env.database(&inst, "db", &[]).await;
    let op = env
        .ddl(
            &db,
            &["CREATE TABLE T (Id INT64 NOT NULL) PRIMARY KEY (Id)"],
            "my_op_1",
        )
        .await
        .unwrap();
    assert_eq!(op.name, format!("{db}/operations/my_op_1"));
    assert!(op_error(&op).is_none(), "{op:?}");
    let reuse = env
        .ddl(
            &db,
            &["CREATE TABLE U (Id INT64 NOT NULL) PRIMARY KEY (Id)"],
            "my_op_1",
        )
        .await;
    expect_err(reuse, Code::AlreadyExists, "");
    assert_eq!(env.ddl_of(&db).await.len(), 1, "the reused id ran nothing");

    // The operation is listed under the database's operations.
    let list = env
        .operations()
        .list_operations(lro::ListOperationsRequest {
            name: format!("{db}/operations"),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        list.operations.iter().any(|o| o.name == op.name),
        "{list:?}"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lists_page() {
    let env = start().await;
    let mut expected_instances = Vec::new();
    for i in 0..5 {
        expected_instances.push(env.instance(&format!("inst-{i}")).await);
    }
    let mut seen = Vec::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let page = env
            .instances()
            .list_instances(ipb::ListInstancesRequest {
                parent: PROJECT.into(),
                page_size: 2,
                page_token: token.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(page.instances.len() <= 2);
        pages += 1;
        seen.extend(page.instances.into_iter().map(|i| i.name));
        token = page.next_page_token;
        if token.is_empty() {
            break;
        }
        assert!(pages < 10, "paging does not end");
    }
    assert_eq!(pages, 3);
    seen.sort();
    assert_eq!(seen, expected_instances);

    let inst = &expected_instances[0];
    let mut expected_dbs = Vec::new();
    for i in 0..5 {
        expected_dbs.push(env.database(inst, &format!("db{i}"), &[]).await);
    }
    let mut seen = Vec::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let page = env
            .dbs()
            .list_databases(dpb::ListDatabasesRequest {
                parent: inst.clone(),
                page_size: 3,
                page_token: token.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        pages += 1;
        seen.extend(page.databases.into_iter().map(|d| d.name));
        token = page.next_page_token;
        if token.is_empty() {
            break;
        }
        assert!(pages < 10, "paging does not end");
    }
    assert_eq!(pages, 2);
    seen.sort();
    assert_eq!(seen, expected_dbs);

    // Another instance's list is empty.
    let other = env
        .dbs()
        .list_databases(dpb::ListDatabasesRequest {
            parent: expected_instances[1].clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(other.databases.is_empty());
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn drop_protection_refuses_drop_database() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env.database(&inst, "db", &[]).await;
    let protect = |on: bool| dpb::UpdateDatabaseRequest {
        database: Some(dpb::Database {
            name: db.clone(),
            enable_drop_protection: on,
            ..Default::default()
        }),
        update_mask: Some(prost_types::FieldMask {
            paths: vec!["enable_drop_protection".into()],
        }),
    };
    let op = env.dbs().update_database(protect(true)).await.unwrap();
    assert!(op_error(&env.finish(op.into_inner()).await).is_none());
    let got = env
        .dbs()
        .get_database(dpb::GetDatabaseRequest { name: db.clone() })
        .await
        .unwrap()
        .into_inner();
    assert!(got.enable_drop_protection);

    let drop = dpb::DropDatabaseRequest {
        database: db.clone(),
    };
    let refused = env.dbs().drop_database(drop.clone()).await;
    expect_err(refused, Code::FailedPrecondition, "");
    assert!(env
        .dbs()
        .get_database(dpb::GetDatabaseRequest { name: db.clone() })
        .await
        .is_ok());
    let op = env.dbs().update_database(protect(false)).await.unwrap();
    assert!(op_error(&env.finish(op.into_inner()).await).is_none());
    env.dbs().drop_database(drop).await.unwrap();
    let get = env
        .dbs()
        .get_database(dpb::GetDatabaseRequest { name: db.clone() })
        .await;
    expect_err(get, Code::NotFound, "");
    env.stop().await;
}

/// Spanner's "prevent accidental database deletion" page says protection
/// yields only when the whole project is deleted: deleting the instance that
/// holds a protected database is refused too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn drop_protection_refuses_delete_instance() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env.database(&inst, "db", &[]).await;
    let op = env
        .dbs()
        .update_database(dpb::UpdateDatabaseRequest {
            database: Some(dpb::Database {
                name: db.clone(),
                enable_drop_protection: true,
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["enable_drop_protection".into()],
            }),
        })
        .await
        .unwrap();
    assert!(op_error(&env.finish(op.into_inner()).await).is_none());
    let delete = env
        .instances()
        .delete_instance(ipb::DeleteInstanceRequest { name: inst.clone() })
        .await;
    let kept = env
        .dbs()
        .get_database(dpb::GetDatabaseRequest { name: db.clone() })
        .await;
    env.stop().await;
    expect_err(delete, Code::FailedPrecondition, "");
    assert!(kept.is_ok(), "the protected database was deleted: {kept:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spanner_sys_split_tables_are_readable_through_execute_sql() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env
        .database(
            &inst,
            "db",
            &["CREATE TABLE Users (Id INT64 NOT NULL) PRIMARY KEY (Id)"],
        )
        .await;
    let s = env.session(&db).await;
    assert_eq!(
        env.query(
            &s,
            "SELECT SPLIT_START, SPLIT_LIMIT, ARRAY_TO_STRING(AFFECTED_TABLES, ',') \
             FROM SPANNER_SYS.SPLITS ORDER BY SPLIT_START"
        )
        .await,
        vec!["<begin>|Users(<begin>)|", "Users(<begin>)|<end>|Users"]
    );
    assert_eq!(
        env.query(
            &s,
            "SELECT COUNT(*) FROM SPANNER_SYS.SPLIT_STATS_TOP_MINUTE"
        )
        .await,
        vec!["0"]
    );
    env.stop().await;
}
