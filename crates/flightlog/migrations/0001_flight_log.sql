-- The flight log. Portable SQL: the same file migrates SQLite and PostgreSQL.
-- Times are Unix seconds (UTC); positions degrees and feet; ids are assigned by
-- lobby's single writer (no dialect-specific auto-increment).

CREATE TABLE flights (
    id           BIGINT PRIMARY KEY,
    callsign     TEXT NOT NULL,
    model        TEXT NOT NULL,
    relay        TEXT NOT NULL,
    start_time   BIGINT NOT NULL,
    end_time     BIGINT,
    start_lat    DOUBLE PRECISION,
    start_lon    DOUBLE PRECISION,
    start_alt_ft DOUBLE PRECISION,
    end_lat      DOUBLE PRECISION,
    end_lon      DOUBLE PRECISION,
    end_alt_ft   DOUBLE PRECISION,
    distance_nm  DOUBLE PRECISION NOT NULL,
    max_alt_ft   DOUBLE PRECISION,
    samples      BIGINT NOT NULL
);
CREATE INDEX flights_by_callsign ON flights (callsign, start_time);
CREATE INDEX flights_by_start ON flights (start_time);

CREATE TABLE flight_positions (
    flight_id BIGINT NOT NULL,
    time      BIGINT NOT NULL,
    lat       DOUBLE PRECISION NOT NULL,
    lon       DOUBLE PRECISION NOT NULL,
    alt_ft    DOUBLE PRECISION NOT NULL,
    heading   DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (flight_id, time)
);

CREATE TABLE servers (
    address    TEXT PRIMARY KEY,
    gamedir    TEXT NOT NULL,
    name       TEXT,
    first_seen BIGINT NOT NULL,
    last_seen  BIGINT NOT NULL
);

CREATE TABLE server_samples (
    address TEXT NOT NULL,
    time    BIGINT NOT NULL,
    players BIGINT NOT NULL,
    max     BIGINT NOT NULL,
    map     TEXT NOT NULL,
    PRIMARY KEY (address, time)
);
