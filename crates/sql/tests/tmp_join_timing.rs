use rowtree_db::Database;
use rowtree_sql::{ExecuteResult, Params, Session};
use std::time::Instant;

#[test]
fn timing() {
    let db = Database::in_memory();
    let mut s = Session::new(db);
    for ddl in [
        "CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (SingerId)",
        "CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE",
        "CREATE TABLE RSingers (SingerId INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (SingerId)",
        "CREATE TABLE RAlbums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (SingerId, AlbumId)",
    ] { s.execute(ddl, &Params::new()).unwrap(); }
    for p in ["", "R"] {
        let singers: Vec<String> = (1..=200).map(|i| format!("({i}, 's{i}')")).collect();
        s.execute(&format!("INSERT INTO {p}Singers (SingerId, Name) VALUES {}", singers.join(",")), &Params::new()).unwrap();
        for i in 1..=200 {
            let albums: Vec<String> = (1..=50).map(|a| format!("({i}, {a}, 't{a}')")).collect();
            s.execute(&format!("INSERT INTO {p}Albums (SingerId, AlbumId, Title) VALUES {}", albums.join(",")), &Params::new()).unwrap();
        }
    }
    for (name, sql) in [
        ("interleaved", "SELECT s.Name, a.Title FROM Singers s JOIN Albums a ON a.SingerId = s.SingerId WHERE s.SingerId = 77"),
        ("hash", "SELECT s.Name, a.Title FROM RSingers s JOIN@{JOIN_METHOD=HASH_JOIN} RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId = 77"),
        ("hash both keyed", "SELECT s.Name, a.Title FROM RSingers s JOIN@{JOIN_METHOD=HASH_JOIN} RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId = 77 AND a.SingerId = 77"),
    ] {
        let mut times = Vec::new();
        let mut scanned = 0;
        for _ in 0..200 {
            let t = Instant::now();
            let ExecuteResult::Query(q) = s.execute(sql, &Params::new()).unwrap() else { panic!() };
            times.push(t.elapsed());
            assert_eq!(q.rows.len(), 50);
            scanned = q.stats.rows_scanned;
        }
        times.sort();
        println!("{name}: median {:?} scanned {scanned}", times[100]);
    }
}
