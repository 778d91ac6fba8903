-- The flight as a logbook entry (issue 21, section 3): departure and arrival
-- airports (idents of the embedded airport table, flightlog::logbook's rule), the
-- seconds it moved, and its aircraft's readable name and class (fgmp::aircraft).
-- NULL in the rows written before: unknown, never guessed. One column per
-- statement: SQLite's ALTER TABLE adds one at a time.
ALTER TABLE flights ADD COLUMN departure TEXT;
ALTER TABLE flights ADD COLUMN arrival TEXT;
ALTER TABLE flights ADD COLUMN moving_s BIGINT;
ALTER TABLE flights ADD COLUMN aircraft_name TEXT;
ALTER TABLE flights ADD COLUMN aircraft_class TEXT;
-- The leaderboards sum each callsign's flights that started in a period: this index
-- finds them by start and covers the sums (callsign, end), so the table itself is
-- never read. It starts with start_time, so it also serves what flights_by_start did.
CREATE INDEX flights_by_start_callsign ON flights (start_time, callsign, end_time, distance_nm);
DROP INDEX flights_by_start;
