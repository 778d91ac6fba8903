-- Flight ids are handed out in blocks from this counter, so several lobby processes
-- (a relay and a tracker, say) can write flights into one database without two of
-- them taking the same id. `UPDATE ... RETURNING` takes a block atomically on both
-- SQLite and PostgreSQL.
CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    next BIGINT NOT NULL
);
INSERT INTO counters (name, next) SELECT 'flight', COALESCE(MAX(id), 0) + 1 FROM flights;
