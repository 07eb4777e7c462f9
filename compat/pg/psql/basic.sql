-- psql against rowtree serve --pg-port: DDL, DML, a transaction, errors,
-- and the describe meta-commands. Compared with expected/basic.out.
CREATE TABLE singers (id bigint PRIMARY KEY, name varchar(100) NOT NULL, born date, rating float8);
CREATE INDEX singers_by_name ON singers (name);
CREATE TABLE albums (id bigint NOT NULL, album_id bigint NOT NULL, title text, PRIMARY KEY (id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE;
INSERT INTO singers (id, name, born, rating) VALUES (1, 'Ada', date '1815-12-10', 4.5), (2, 'Bram', NULL, 3);
INSERT INTO albums (id, album_id, title) VALUES (1, 1, 'Northern Lines'), (1, 2, 'Paper Boats');
SELECT * FROM singers ORDER BY id;
SELECT s.name, a.title FROM singers s JOIN albums a ON a.id = s.id ORDER BY a.album_id;
BEGIN;
UPDATE singers SET rating = 5 WHERE id = 2;
SELECT id, rating FROM singers WHERE id = 2;
COMMIT;
BEGIN;
DELETE FROM singers WHERE id = 1;
SELECT count(*) AS n FROM singers;
ROLLBACK;
SELECT count(*) AS n FROM singers;
SELECT * FROM missing;
INSERT INTO singers (id, name) VALUES (1, 'dup');
BEGIN;
SELECT 1/0;
SELECT 1;
ROLLBACK;
SHOW server_version;
\dt
\d singers
\d albums
\di
