//! The flight log's database: SQLite (a file, created on first use) or PostgreSQL,
//! chosen by the URL, through sqlx's `Any` driver: one code path, one set of
//! migrations (`migrations/`, portable SQL), `$N` placeholders (both accept them).
//! Writes come in batches ([`Store::apply`]: one transaction); reads serve the API.
//!
//! **Readers never starve the writer.** SQLite runs in WAL mode: the writer keeps one
//! connection of its own, and the API reads through a separate pool of
//! [`READ_CONNECTIONS`] read-only (`query_only`) connections, which WAL lets read
//! while the writer commits. PostgreSQL keeps one pool for both (its readers never
//! block its writer). Every list a read returns is bounded: [`MAX_FLIGHTS`] flights a
//! page, [`MAX_TRACK_POINTS`] positions a track (a longer track is downsampled:
//! [`track_rows`]), [`MAX_AIRCRAFT`] models a callsign, [`MAX_SERVER_SAMPLES`] samples
//! a server; and the flight list's SQL names only the filters given, so a callsign is
//! found through its index ([`flights_sql`], [`Store::query_plan`]).

use crate::flights::{Fix, Op};
/// What a store call returns.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Why the flight log failed: the database's error, and for opening, what was being
/// done (its `source` is the database's error).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A URL of no backend here.
    #[error(transparent)]
    Backend(#[from] crate::backend::UnknownBackend),
    /// The database cannot be opened (the URL, its password hidden).
    #[error("cannot open the flight log at {url}")]
    Open {
        /// The URL, redacted.
        url: String,
        /// The database's error.
        source: sqlx::Error,
    },
    /// The read-only pool cannot be opened (the URL, its password hidden).
    #[error("cannot open the flight log at {url} to read")]
    OpenRead {
        /// The URL, redacted.
        url: String,
        /// The database's error.
        source: sqlx::Error,
    },
    /// SQLite refused WAL mode.
    #[error("cannot switch the flight log to WAL")]
    Wal(#[source] sqlx::Error),
    /// A migration failed.
    #[error("cannot migrate the flight log")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    /// The flight-id counter cannot be advanced.
    #[error("cannot reserve flight ids")]
    Reserve(#[source] sqlx::Error),
    /// A query failed.
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The lock, even if a thread panicked holding it (the cache is only a cache).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The migrations, embedded at build time.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

pub use crate::backend::Backend;
pub use crate::rows::{CallsignTotals, FlightRow, Leader, Rank};

/// A Xash3D server's state at one moment, for its history.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSample {
    /// `ip:port`.
    pub address: String,
    /// Game directory.
    pub gamedir: String,
    /// Its name, when known.
    pub name: Option<String>,
    /// When, Unix seconds.
    pub at: i64,
    /// Players.
    pub players: i64,
    /// Slots.
    pub max: i64,
    /// Map.
    pub map: String,
}

/// The filters of a flight list; newest first, `limit` at most, ids below `before`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlightQuery {
    /// Only this callsign.
    pub callsign: Option<String>,
    /// Only flights that ended at or after this (or are still flying).
    pub since: Option<i64>,
    /// Only flights that started at or before this.
    pub until: Option<i64>,
    /// Page size.
    pub limit: i64,
    /// Only ids below this (the previous page's last id).
    pub before: Option<i64>,
}

/// The flight log's database.
#[derive(Debug, Clone)]
pub struct Store {
    /// The writer's: one connection with SQLite (its one writer), the only pool with
    /// PostgreSQL.
    pool: AnyPool,
    /// The API's: SQLite's separate read-only pool (WAL); with PostgreSQL the same
    /// pool as the writer's.
    read: AnyPool,
    backend: Backend,
    /// The leaderboards answered last, by (period in seconds, rank, limit): when
    /// each was read (`now`) and its rows ([`Store::leaderboard_cached`]).
    leaders: Arc<Mutex<LeadersCache>>,
}

/// Each cached board by its key: when it was read, and its rows.
type LeadersCache = HashMap<LeadersKey, (i64, Vec<Leader>)>;

/// A cached leaderboard's key: its period in seconds (`None`: all time), its rank
/// and its limit.
type LeadersKey = (Option<i64>, Rank, i64);

/// How long a leaderboard is answered from the cache, seconds: an all-time board
/// reads every flight's index entry, and strangers may ask as often as they like.
pub const LEADERS_MAX_AGE: i64 = 60;

/// SQLite connections the API reads through (beside the writer's one).
pub const READ_CONNECTIONS: u32 = 4;
/// Flights a page at most (`/api/flights?limit=`; the API's default is 50).
pub const MAX_FLIGHTS: i64 = 500;
/// Positions a track at most (`/api/flights/{id}?points=`, also the default): a
/// longer track is downsampled ([`track_rows`]).
pub const MAX_TRACK_POINTS: i64 = 2000;
/// Models a callsign's totals list at most (most hours first).
pub const MAX_AIRCRAFT: i64 = 100;
/// Airports a callsign's totals list at most (most visits first).
pub const MAX_AIRPORTS: i64 = 100;
/// Lines a leaderboard has at most.
pub const MAX_LEADERS: i64 = 100;
/// Flights a callsign's CSV export holds at most (the newest).
pub const MAX_EXPORT_FLIGHTS: i64 = 10_000;
/// Samples of a server's history at most (the newest ones).
pub const MAX_SERVER_SAMPLES: i64 = 5000;
/// A SQLite connection waits this long for a lock before it gives up.
const SQLITE_BUSY_MS: u32 = 5000;
/// SQLite's WAL file is truncated to this size after a checkpoint (it keeps its
/// largest size otherwise).
const SQLITE_WAL_LIMIT: i64 = 64 << 20;

fn fix_at(row: &AnyRow, prefix: &str) -> Result<Option<Fix>> {
    let lat: Option<f64> = row.try_get(format!("{prefix}_lat").as_str())?;
    let lon: Option<f64> = row.try_get(format!("{prefix}_lon").as_str())?;
    let alt: Option<f64> = row.try_get(format!("{prefix}_alt_ft").as_str())?;
    Ok(match (lat, lon, alt) {
        (Some(lat), Some(lon), Some(alt_ft)) => Some(Fix {
            lat,
            lon,
            alt_ft,
            heading: 0.0,
        }),
        _ => None,
    })
}

fn flight_row(row: &AnyRow) -> Result<FlightRow> {
    Ok(FlightRow {
        id: row.try_get("id")?,
        callsign: row.try_get("callsign")?,
        model: row.try_get("model")?,
        relay: row.try_get("relay")?,
        start: row.try_get("start_time")?,
        end: row.try_get("end_time")?,
        first: fix_at(row, "start")?,
        last: fix_at(row, "end")?,
        distance_nm: row.try_get("distance_nm")?,
        max_alt_ft: row.try_get("max_alt_ft")?,
        samples: row.try_get("samples")?,
        moving_s: row.try_get("moving_s")?,
        departure: row.try_get("departure")?,
        arrival: row.try_get("arrival")?,
        aircraft_name: row.try_get("aircraft_name")?,
        aircraft_class: row.try_get("aircraft_class")?,
    })
}

/// Positions per multi-row insert (6 parameters each: well under PostgreSQL's
/// 65,535 and SQLite's 32,766 bound parameters).
const POSITIONS_PER_INSERT: usize = 500;

/// `INSERT INTO flight_positions ... VALUES ($1, ..., $6), ($7, ...), ...` for `rows`
/// rows, with the placeholders both databases accept (`$N`).
fn insert_positions_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT INTO flight_positions (flight_id, time, lat, lon, alt_ft, heading) VALUES ",
    );
    for r in 0..rows {
        if r > 0 {
            sql.push_str(", ");
        }
        let b = r * 6;
        sql.push_str(&format!(
            "(${}, ${}, ${}, ${}, ${}, ${})",
            b + 1,
            b + 2,
            b + 3,
            b + 4,
            b + 5,
            b + 6
        ));
    }
    sql.push_str(" ON CONFLICT (flight_id, time) DO NOTHING");
    sql
}

const FLIGHT_COLUMNS: &str = "id, callsign, model, relay, start_time, end_time, start_lat, start_lon, start_alt_ft, end_lat, end_lon, end_alt_ft, distance_nm, max_alt_ft, samples, moving_s, departure, arrival, aircraft_name, aircraft_class";

/// The SQL of a flight list: a condition for each filter `q` gives and none for the
/// others (a `($1 IS NULL OR callsign = $1)` form made SQLite scan the whole table
/// even for a callsign), newest first. Placeholders in order: callsign, since,
/// until, before (those given), then the limit.
pub fn flights_sql(q: &FlightQuery) -> String {
    let mut conds: Vec<String> = Vec::new();
    let mut n = 0;
    let mut next = || {
        n += 1;
        n
    };
    if q.callsign.is_some() {
        conds.push(format!("callsign = ${}", next()));
    }
    if q.since.is_some() {
        conds.push(format!("(end_time IS NULL OR end_time >= ${})", next()));
    }
    if q.until.is_some() {
        conds.push(format!("start_time <= ${}", next()));
    }
    if q.before.is_some() {
        conds.push(format!("id < ${}", next()));
    }
    let filter = if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    };
    format!(
        "SELECT {FLIGHT_COLUMNS} FROM flights{filter} ORDER BY id DESC LIMIT ${}",
        next()
    )
}

/// The SQL of a leaderboard; placeholders: since, now, limit. It groups by
/// `callsign || ''` (the same text) so that SQLite, which has no statistics to
/// weigh the two, reads the covering index `flights_by_start_callsign` from `since`
/// on rather than walking `flights_by_callsign_id` and the table row by row to
/// spare itself the grouping's sort.
pub fn leaderboard_sql(rank: Rank) -> String {
    let order = match rank {
        Rank::Hours => "secs DESC, n DESC",
        Rank::Flights => "n DESC, secs DESC",
    };
    format!(
        "SELECT callsign || '' AS callsign, COUNT(*) AS n, \
         CAST(SUM(COALESCE(end_time, $2) - start_time) AS BIGINT) AS secs, \
         CAST(COALESCE(SUM(distance_nm), 0) AS DOUBLE PRECISION) AS nm \
         FROM flights WHERE start_time >= $1 GROUP BY 1 ORDER BY {order}, 1 LIMIT $3"
    )
}

/// Which of `n` positions (0-based, in time order) a track of at most `max` points
/// keeps: all when `n <= max`; otherwise `max` of them evenly spread, the first and
/// the last always, row `i` being the first whose `i * (max-1) / (n-1)` (integer
/// division) reaches a new value. [`Store::track`] runs the same rule in SQL.
pub fn track_rows(n: i64, max: i64) -> Vec<i64> {
    let max = max.max(2);
    if n <= max {
        return (0..n).collect();
    }
    (0..n)
        .filter(|&i| i == 0 || (i * (max - 1)) / (n - 1) > ((i - 1) * (max - 1)) / (n - 1))
        .collect()
}

impl Store {
    /// Opens (creating a SQLite file when missing) and migrates.
    pub async fn open(url: &str) -> Result<Store> {
        let backend = Backend::of(url)?;
        sqlx::any::install_default_drivers();
        let url = match backend {
            // Create the file on first start.
            Backend::Sqlite if !url.contains("mode=") => {
                let sep = if url.contains('?') { '&' } else { '?' };
                format!("{url}{sep}mode=rwc")
            }
            _ => url.to_string(),
        };
        let sqlite = backend == Backend::Sqlite;
        let pool = AnyPoolOptions::new()
            // SQLite has one writer: one connection serialises the writes cleanly.
            .max_connections(if sqlite { 1 } else { 4 })
            .acquire_timeout(Duration::from_secs(10))
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if sqlite {
                        // Per connection: a connection the pool opens again (idle,
                        // lifetime) gets them too.
                        for p in [
                            format!("PRAGMA busy_timeout = {SQLITE_BUSY_MS}"),
                            "PRAGMA synchronous = NORMAL".to_string(),
                            format!("PRAGMA journal_size_limit = {SQLITE_WAL_LIMIT}"),
                        ] {
                            sqlx::query(&p).execute(&mut *conn).await?;
                        }
                    }
                    Ok(())
                })
            })
            .connect(&url)
            .await
            .map_err(|source| StoreError::Open {
                url: redact(&url),
                source,
            })?;
        if sqlite {
            // Kept in the file: every later connection (the readers') is in WAL mode.
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await
                .map_err(StoreError::Wal)?;
        }
        MIGRATOR.run(&pool).await.map_err(StoreError::Migrate)?;
        let read = if sqlite {
            AnyPoolOptions::new()
                .max_connections(READ_CONNECTIONS)
                .acquire_timeout(Duration::from_secs(10))
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        for p in [
                            format!("PRAGMA busy_timeout = {SQLITE_BUSY_MS}"),
                            "PRAGMA query_only = ON".to_string(),
                        ] {
                            sqlx::query(&p).execute(&mut *conn).await?;
                        }
                        Ok(())
                    })
                })
                .connect(&url)
                .await
                .map_err(|source| StoreError::OpenRead {
                    url: redact(&url),
                    source,
                })?
        } else {
            pool.clone()
        };
        Ok(Store {
            pool,
            read,
            backend,
            leaders: Arc::default(),
        })
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// One more than the largest flight id stored (1 when empty).
    pub async fn next_flight_id(&self) -> Result<i64> {
        let row = sqlx::query("SELECT COALESCE(MAX(id), 0) AS m FROM flights")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get::<i64, _>("m")? + 1)
    }

    /// Takes `n` flight ids for this writer alone: the first of `n` consecutive ids
    /// no other writer of this database (another lobby process) will get.
    pub async fn reserve_flight_ids(&self, n: i64) -> Result<i64> {
        let row = sqlx::query(
            "UPDATE counters SET next = next + $1 WHERE name = 'flight' RETURNING next",
        )
        .bind(n.max(1))
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::Reserve)?;
        Ok(row.try_get::<i64, _>("next")? - n.max(1))
    }

    /// Ends the flights a previous run left open (it stopped without closing them),
    /// at their last stored position's time. Returns how many.
    pub async fn close_orphans(&self) -> Result<u64> {
        let r = sqlx::query(
            "UPDATE flights SET end_time = COALESCE((SELECT MAX(time) FROM flight_positions p WHERE p.flight_id = flights.id), start_time) WHERE end_time IS NULL",
        )
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected())
    }

    /// Runs `ops` in one transaction.
    pub async fn apply(&self, ops: &[Op]) -> Result<()> {
        if ops.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool.begin().await?;
        let mut positions: Vec<(i64, i64, Fix)> = Vec::new();
        for op in ops {
            match op {
                Op::Open {
                    id,
                    callsign,
                    model,
                    relay,
                    start,
                } => {
                    sqlx::query("INSERT INTO flights (id, callsign, model, relay, start_time, distance_nm, samples, moving_s, aircraft_name, aircraft_class) VALUES ($1, $2, $3, $4, $5, 0, 0, 0, $6, $7)")
                        .bind(*id)
                        .bind(callsign.as_str())
                        .bind(model.as_str())
                        .bind(relay.as_str())
                        .bind(*start)
                        .bind(fgmp::aircraft::name(model))
                        .bind(fgmp::aircraft::class(model).as_str())
                        .execute(&mut *tx)
                        .await?;
                }
                Op::Sample {
                    id,
                    at,
                    fix,
                    first,
                    totals,
                } => {
                    positions.push((*id, *at, *fix));
                    // A flight's totals are written with its first position and then
                    // once a minute (every 6th position), and at its end: an open
                    // flight's distance lags at most a minute, for a sixth of the writes.
                    if totals.samples == 1 || totals.samples % 6 == 0 {
                        sqlx::query("UPDATE flights SET start_lat = $2, start_lon = $3, start_alt_ft = $4, distance_nm = $5, max_alt_ft = $6, samples = $7, moving_s = $8, departure = $9 WHERE id = $1")
                            .bind(*id)
                            .bind(first.lat)
                            .bind(first.lon)
                            .bind(first.alt_ft)
                            .bind(totals.distance_nm)
                            .bind(totals.max_alt_ft)
                            .bind(totals.samples)
                            .bind(totals.moving_s)
                            .bind(totals.departure)
                            .execute(&mut *tx)
                            .await?;
                    }
                }
                Op::Close {
                    id,
                    end,
                    last,
                    totals,
                } => {
                    sqlx::query("UPDATE flights SET end_time = $2, end_lat = $3, end_lon = $4, end_alt_ft = $5, distance_nm = $6, max_alt_ft = $7, samples = $8, moving_s = $9, departure = $10, arrival = $11 WHERE id = $1")
                        .bind(*id)
                        .bind(*end)
                        .bind(last.map(|f| f.lat))
                        .bind(last.map(|f| f.lon))
                        .bind(last.map(|f| f.alt_ft))
                        .bind(totals.distance_nm)
                        .bind(totals.max_alt_ft)
                        .bind(totals.samples)
                        .bind(totals.moving_s)
                        .bind(totals.departure)
                        .bind(totals.arrival)
                        .execute(&mut *tx)
                        .await?;
                }
            }
        }
        // Positions go in multi-row inserts: one statement per POSITIONS_PER_INSERT.
        for chunk in positions.chunks(POSITIONS_PER_INSERT) {
            let sql = insert_positions_sql(chunk.len());
            let mut q = sqlx::query(&sql);
            for (id, at, f) in chunk {
                q = q
                    .bind(*id)
                    .bind(*at)
                    .bind(f.lat)
                    .bind(f.lon)
                    .bind(f.alt_ft)
                    .bind(f.heading);
            }
            q.execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Records servers' states (first and last seen, players over time) in one
    /// transaction.
    pub async fn record_servers(&self, samples: &[ServerSample]) -> Result<()> {
        if samples.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool.begin().await?;
        for s in samples {
            sqlx::query("INSERT INTO servers (address, gamedir, name, first_seen, last_seen) VALUES ($1, $2, $3, $4, $4) ON CONFLICT (address) DO UPDATE SET gamedir = excluded.gamedir, name = COALESCE(excluded.name, servers.name), last_seen = excluded.last_seen")
                .bind(s.address.as_str())
                .bind(s.gamedir.as_str())
                .bind(s.name.as_deref())
                .bind(s.at)
                .execute(&mut *tx)
                .await?;
            sqlx::query("INSERT INTO server_samples (address, time, players, max, map) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (address, time) DO NOTHING")
                .bind(s.address.as_str())
                .bind(s.at)
                .bind(s.players)
                .bind(s.max)
                .bind(s.map.as_str())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Deletes what ended before `before` (Unix seconds): flights and their
    /// positions, server samples, servers last seen before it. Returns flights deleted.
    pub async fn prune(&self, before: i64) -> Result<u64> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM flight_positions WHERE flight_id IN (SELECT id FROM flights WHERE end_time < $1)")
            .bind(before)
            .execute(&mut *tx)
            .await?;
        let n = sqlx::query("DELETE FROM flights WHERE end_time < $1")
            .bind(before)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        sqlx::query("DELETE FROM server_samples WHERE time < $1")
            .bind(before)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM servers WHERE last_seen < $1")
            .bind(before)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(n)
    }

    /// Flights, newest first: at most `q.limit` (capped at [`MAX_FLIGHTS`]).
    pub async fn flights(&self, q: &FlightQuery) -> Result<Vec<FlightRow>> {
        let sql = flights_sql(q);
        let mut query = sqlx::query(&sql);
        if let Some(c) = &q.callsign {
            query = query.bind(c.as_str());
        }
        for v in [q.since, q.until, q.before].into_iter().flatten() {
            query = query.bind(v);
        }
        let rows = query
            .bind(q.limit.clamp(1, MAX_FLIGHTS))
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(flight_row).collect()
    }

    /// SQLite's plan for [`Store::flights`] of `q` (`EXPLAIN QUERY PLAN`'s `detail`
    /// lines, e.g. `SEARCH flights USING INDEX flights_by_callsign_id (callsign=?)`);
    /// empty with PostgreSQL. What the tests check, and an operator may look at.
    pub async fn query_plan(&self, q: &FlightQuery) -> Result<Vec<String>> {
        if self.backend != Backend::Sqlite {
            return Ok(Vec::new());
        }
        let sql = format!("EXPLAIN QUERY PLAN {}", flights_sql(q));
        let mut query = sqlx::query(&sql);
        if let Some(c) = &q.callsign {
            query = query.bind(c.as_str());
        }
        for v in [q.since, q.until, q.before].into_iter().flatten() {
            query = query.bind(v);
        }
        query
            .bind(q.limit)
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(|r| Ok(r.try_get::<String, _>("detail")?))
            .collect()
    }

    /// One flight.
    pub async fn flight(&self, id: i64) -> Result<Option<FlightRow>> {
        let sql = format!("SELECT {FLIGHT_COLUMNS} FROM flights WHERE id = $1");
        let row = sqlx::query(&sql)
            .bind(id)
            .fetch_optional(&self.read)
            .await?;
        row.as_ref().map(flight_row).transpose()
    }

    /// A flight's stored positions, in time order, at most `max_points` of them
    /// (capped at [`MAX_TRACK_POINTS`], at least 2): a longer track is downsampled as
    /// [`track_rows`] chooses, in the database. Also returns how many are stored.
    pub async fn track(&self, id: i64, max_points: i64) -> Result<(Vec<(i64, Fix)>, i64)> {
        let max = max_points.clamp(2, MAX_TRACK_POINTS);
        // Row rn (0-based, in time order) of n is kept when n <= max, or when it is
        // the first row of its share: floor(rn * (max-1) / (n-1)) differs from the
        // previous row's (integer division on both databases). The first and the last
        // rows are always kept; `track_rows` is the same rule in Rust.
        let rows = sqlx::query(
            "SELECT time, lat, lon, alt_ft, heading, n FROM (\
             SELECT time, lat, lon, alt_ft, heading, \
             ROW_NUMBER() OVER (ORDER BY time) - 1 AS rn, COUNT(*) OVER () AS n \
             FROM flight_positions WHERE flight_id = $1) t \
             WHERE n <= $2 OR rn = 0 OR (rn * ($2 - 1)) / NULLIF(n - 1, 0) > ((rn - 1) * ($2 - 1)) / NULLIF(n - 1, 0) \
             ORDER BY time",
        )
        .bind(id)
        .bind(max)
        .fetch_all(&self.read)
        .await?;
        let stored = match rows.first() {
            Some(r) => r.try_get::<i64, _>("n")?,
            None => 0,
        };
        let track = rows
            .iter()
            .map(|r| {
                Ok((
                    r.try_get("time")?,
                    Fix {
                        lat: r.try_get("lat")?,
                        lon: r.try_get("lon")?,
                        alt_ft: r.try_get("alt_ft")?,
                        heading: r.try_get("heading")?,
                    },
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((track, stored))
    }

    /// A callsign's totals; open flights count up to `now`; its `aircraft` the
    /// `max_aircraft` models flown longest (capped at [`MAX_AIRCRAFT`]), its
    /// `airports` the `max_airports` departed from or arrived at most (capped at
    /// [`MAX_AIRPORTS`]).
    pub async fn callsign(
        &self,
        callsign: &str,
        now: i64,
        max_aircraft: i64,
        max_airports: i64,
    ) -> Result<CallsignTotals> {
        let all = sqlx::query("SELECT COUNT(*) AS n, CAST(COALESCE(SUM(COALESCE(end_time, $2) - start_time), 0) AS BIGINT) AS secs, CAST(COALESCE(SUM(distance_nm), 0) AS DOUBLE PRECISION) AS nm FROM flights WHERE callsign = $1")
            .bind(callsign)
            .bind(now)
            .fetch_one(&self.read)
            .await?;
        let mut t = CallsignTotals {
            flights: all.try_get("n")?,
            hours: all.try_get::<i64, _>("secs")? as f64 / 3600.0,
            distance_nm: all.try_get("nm")?,
            aircraft: Vec::new(),
            airports: Vec::new(),
        };
        let rows = sqlx::query("SELECT model, COUNT(*) AS n, CAST(SUM(COALESCE(end_time, $2) - start_time) AS BIGINT) AS secs FROM flights WHERE callsign = $1 GROUP BY model ORDER BY secs DESC, model LIMIT $3")
            .bind(callsign)
            .bind(now)
            .bind(max_aircraft.clamp(1, MAX_AIRCRAFT))
            .fetch_all(&self.read)
            .await?;
        for r in &rows {
            let n: i64 = r.try_get("n")?;
            let secs: i64 = r.try_get("secs")?;
            t.aircraft
                .push((r.try_get("model")?, n, secs as f64 / 3600.0));
        }
        // Both halves find the callsign's rows through flights_by_callsign_id.
        let rows = sqlx::query("SELECT ident, CAST(SUM(d) AS BIGINT) AS departures, CAST(SUM(a) AS BIGINT) AS arrivals FROM (\
             SELECT departure AS ident, 1 AS d, 0 AS a FROM flights WHERE callsign = $1 AND departure IS NOT NULL \
             UNION ALL SELECT arrival AS ident, 0 AS d, 1 AS a FROM flights WHERE callsign = $1 AND arrival IS NOT NULL) t \
             GROUP BY ident ORDER BY SUM(d) + SUM(a) DESC, ident LIMIT $2")
            .bind(callsign)
            .bind(max_airports.clamp(1, MAX_AIRPORTS))
            .fetch_all(&self.read)
            .await?;
        for r in &rows {
            t.airports.push((
                r.try_get("ident")?,
                r.try_get("departures")?,
                r.try_get("arrivals")?,
            ));
        }
        Ok(t)
    }

    /// A leaderboard: the callsigns of the flights that started at or after `since`
    /// (all with `None`), by `rank`, the first `limit` (capped at [`MAX_LEADERS`]);
    /// open flights count up to `now`. Ties go to the other measure, then the
    /// callsign. Reads only the index `flights_by_start_callsign`
    /// ([`Store::leaderboard_plan`]).
    pub async fn leaderboard(
        &self,
        since: Option<i64>,
        rank: Rank,
        limit: i64,
        now: i64,
    ) -> Result<Vec<Leader>> {
        let rows = sqlx::query(&leaderboard_sql(rank))
            .bind(since.unwrap_or(i64::MIN))
            .bind(now)
            .bind(limit.clamp(1, MAX_LEADERS))
            .fetch_all(&self.read)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(Leader {
                    callsign: r.try_get("callsign")?,
                    flights: r.try_get("n")?,
                    secs: r.try_get("secs")?,
                    distance_nm: r.try_get("nm")?,
                })
            })
            .collect()
    }

    /// [`Store::leaderboard`], read from the database at most once every
    /// [`LEADERS_MAX_AGE`] seconds per period, rank and limit (the API's; at most 3
    /// periods, 2 ranks and 100 limits are ever kept); a cached board counts open
    /// flights up to when it was read.
    pub async fn leaderboard_cached(
        &self,
        since: Option<i64>,
        rank: Rank,
        limit: i64,
        now: i64,
    ) -> Result<Vec<Leader>> {
        let key = (since.map(|s| now - s), rank, limit);
        if let Some((at, rows)) = lock(&self.leaders).get(&key) {
            if (0..LEADERS_MAX_AGE).contains(&(now - at)) {
                return Ok(rows.clone());
            }
        }
        let rows = self.leaderboard(since, rank, limit, now).await?;
        let mut cache = lock(&self.leaders);
        if cache.len() >= 1_000 {
            cache.clear(); // only the API's parameters reach here: never in practice
        }
        cache.insert(key, (now, rows.clone()));
        Ok(rows)
    }

    /// SQLite's plan for [`Store::leaderboard`] (empty with PostgreSQL).
    pub async fn leaderboard_plan(&self, rank: Rank) -> Result<Vec<String>> {
        if self.backend != Backend::Sqlite {
            return Ok(Vec::new());
        }
        sqlx::query(&format!("EXPLAIN QUERY PLAN {}", leaderboard_sql(rank)))
            .bind(0i64)
            .bind(0i64)
            .bind(10i64)
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(|r| Ok(r.try_get::<String, _>("detail")?))
            .collect()
    }

    /// A callsign's newest flights, at most `limit` (capped at
    /// [`MAX_EXPORT_FLIGHTS`]): what its CSV export holds.
    pub async fn callsign_flights(&self, callsign: &str, limit: i64) -> Result<Vec<FlightRow>> {
        let sql = format!(
            "SELECT {FLIGHT_COLUMNS} FROM flights WHERE callsign = $1 ORDER BY id DESC LIMIT $2"
        );
        sqlx::query(&sql)
            .bind(callsign)
            .bind(limit.clamp(1, MAX_EXPORT_FLIGHTS))
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(flight_row)
            .collect()
    }

    /// A server's first and last seen, name, and its newest `limit` samples (capped
    /// at [`MAX_SERVER_SAMPLES`]) at or after `since`, in time order.
    pub async fn server_history(
        &self,
        address: &str,
        since: i64,
        limit: i64,
    ) -> Result<Option<(i64, i64, Option<String>, Vec<(i64, i64, i64, String)>)>> {
        let Some(s) =
            sqlx::query("SELECT first_seen, last_seen, name FROM servers WHERE address = $1")
                .bind(address)
                .fetch_optional(&self.read)
                .await?
        else {
            return Ok(None);
        };
        let mut samples = sqlx::query("SELECT time, players, max, map FROM server_samples WHERE address = $1 AND time >= $2 ORDER BY time DESC LIMIT $3")
            .bind(address)
            .bind(since)
            .bind(limit.clamp(1, MAX_SERVER_SAMPLES))
            .fetch_all(&self.read)
            .await?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get("time")?,
                    r.try_get("players")?,
                    r.try_get("max")?,
                    r.try_get("map")?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        samples.reverse();
        Ok(Some((
            s.try_get("first_seen")?,
            s.try_get("last_seen")?,
            s.try_get("name")?,
            samples,
        )))
    }

    /// The database's size, bytes (SQLite: its pages × the page size, what the
    /// file holds once the WAL is checkpointed; PostgreSQL: `pg_database_size` of the
    /// current database). Read through the readers' pool: it never waits for the writer.
    pub async fn size_bytes(&self) -> Result<i64> {
        let row = match self.backend {
            Backend::Sqlite => sqlx::query(
                "SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()",
            )
            .fetch_one(&self.read)
            .await?,
            Backend::Postgres => {
                sqlx::query("SELECT pg_database_size(current_database()) AS n")
                    .fetch_one(&self.read)
                    .await?
            }
        };
        Ok(row.try_get("n")?)
    }

    /// Closes the pools (pending writes are done: every write awaits its commit).
    pub async fn close(&self) {
        self.read.close().await;
        self.pool.close().await;
    }
}

/// `url` without its password (in the user part or a `password=` parameter), for
/// messages and settings.
pub fn redact(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut out = redact_userinfo(base);
    if let Some(q) = query {
        let q: Vec<String> = q
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&q.join("&"));
    }
    out
}

fn redact_userinfo(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let userinfo = &url[s + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}
