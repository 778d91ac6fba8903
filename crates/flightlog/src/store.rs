//! The flight log's database: SQLite (a file, created on first use) or PostgreSQL,
//! chosen by the URL, through sqlx's `Any` driver: one code path, one set of
//! migrations (`migrations/`, portable SQL), `$N` placeholders (both accept them).
//! Writes come in batches ([`Store::apply`]: one transaction); reads serve the API.

use crate::flights::{Fix, Op};
use anyhow::{Context, Result};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};
use std::time::Duration;

/// The migrations, embedded at build time.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

pub use crate::backend::Backend;

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

/// One flight as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct FlightRow {
    /// Id.
    pub id: i64,
    /// Callsign.
    pub callsign: String,
    /// Model.
    pub model: String,
    /// Relay.
    pub relay: String,
    /// Start, Unix seconds.
    pub start: i64,
    /// End, Unix seconds; `None` while flying.
    pub end: Option<i64>,
    /// First position.
    pub first: Option<Fix>,
    /// Last position (set when it ended).
    pub last: Option<Fix>,
    /// Nautical miles flown.
    pub distance_nm: f64,
    /// Highest altitude, feet.
    pub max_alt_ft: Option<f64>,
    /// Positions stored.
    pub samples: i64,
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

/// A callsign's totals.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallsignTotals {
    /// Flights.
    pub flights: i64,
    /// Hours flown (open flights up to `now`).
    pub hours: f64,
    /// Nautical miles.
    pub distance_nm: f64,
    /// (model, flights, hours), most flown first.
    pub aircraft: Vec<(String, i64, f64)>,
}

/// The flight log's database.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

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

const FLIGHT_COLUMNS: &str = "id, callsign, model, relay, start_time, end_time, start_lat, start_lon, start_alt_ft, end_lat, end_lon, end_alt_ft, distance_nm, max_alt_ft, samples";

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
        let pool = AnyPoolOptions::new()
            // SQLite has one writer: one connection serialises everything cleanly.
            .max_connections(if backend == Backend::Sqlite { 1 } else { 4 })
            .acquire_timeout(Duration::from_secs(10))
            .connect(&url)
            .await
            .with_context(|| format!("cannot open the flight log at {}", redact(&url)))?;
        if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await
                .context("cannot switch the flight log to WAL")?;
            sqlx::query("PRAGMA synchronous = NORMAL")
                .execute(&pool)
                .await?;
        }
        MIGRATOR
            .run(&pool)
            .await
            .context("cannot migrate the flight log")?;
        Ok(Store { pool, backend })
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
        .context("cannot reserve flight ids")?;
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
                    sqlx::query("INSERT INTO flights (id, callsign, model, relay, start_time, distance_nm, samples) VALUES ($1, $2, $3, $4, $5, 0, 0)")
                        .bind(*id)
                        .bind(callsign.as_str())
                        .bind(model.as_str())
                        .bind(relay.as_str())
                        .bind(*start)
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
                        sqlx::query("UPDATE flights SET start_lat = $2, start_lon = $3, start_alt_ft = $4, distance_nm = $5, max_alt_ft = $6, samples = $7 WHERE id = $1")
                            .bind(*id)
                            .bind(first.lat)
                            .bind(first.lon)
                            .bind(first.alt_ft)
                            .bind(totals.distance_nm)
                            .bind(totals.max_alt_ft)
                            .bind(totals.samples)
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
                    sqlx::query("UPDATE flights SET end_time = $2, end_lat = $3, end_lon = $4, end_alt_ft = $5, distance_nm = $6, max_alt_ft = $7, samples = $8 WHERE id = $1")
                        .bind(*id)
                        .bind(*end)
                        .bind(last.map(|f| f.lat))
                        .bind(last.map(|f| f.lon))
                        .bind(last.map(|f| f.alt_ft))
                        .bind(totals.distance_nm)
                        .bind(totals.max_alt_ft)
                        .bind(totals.samples)
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

    /// Flights, newest first.
    pub async fn flights(&self, q: &FlightQuery) -> Result<Vec<FlightRow>> {
        let sql = format!(
            "SELECT {FLIGHT_COLUMNS} FROM flights WHERE ($1 IS NULL OR callsign = $1) AND ($2 IS NULL OR end_time IS NULL OR end_time >= $2) AND ($3 IS NULL OR start_time <= $3) AND ($4 IS NULL OR id < $4) ORDER BY id DESC LIMIT $5"
        );
        let rows = sqlx::query(&sql)
            .bind(q.callsign.as_deref())
            .bind(q.since)
            .bind(q.until)
            .bind(q.before)
            .bind(q.limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(flight_row).collect()
    }

    /// One flight.
    pub async fn flight(&self, id: i64) -> Result<Option<FlightRow>> {
        let sql = format!("SELECT {FLIGHT_COLUMNS} FROM flights WHERE id = $1");
        let row = sqlx::query(&sql)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(flight_row).transpose()
    }

    /// A flight's stored positions, in time order.
    pub async fn track(&self, id: i64) -> Result<Vec<(i64, Fix)>> {
        let rows = sqlx::query("SELECT time, lat, lon, alt_ft, heading FROM flight_positions WHERE flight_id = $1 ORDER BY time")
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
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
            .collect()
    }

    /// A callsign's totals; open flights count up to `now`.
    pub async fn callsign(&self, callsign: &str, now: i64) -> Result<CallsignTotals> {
        let rows = sqlx::query("SELECT model, COUNT(*) AS n, CAST(SUM(COALESCE(end_time, $2) - start_time) AS BIGINT) AS secs, SUM(distance_nm) AS nm FROM flights WHERE callsign = $1 GROUP BY model")
            .bind(callsign)
            .bind(now)
            .fetch_all(&self.pool)
            .await?;
        let mut t = CallsignTotals::default();
        for r in &rows {
            let n: i64 = r.try_get("n")?;
            let secs: i64 = r.try_get("secs")?;
            let nm: f64 = r.try_get("nm")?;
            t.flights += n;
            t.hours += secs as f64 / 3600.0;
            t.distance_nm += nm;
            t.aircraft
                .push((r.try_get("model")?, n, secs as f64 / 3600.0));
        }
        t.aircraft
            .sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
        Ok(t)
    }

    /// A server's first and last seen, name, and samples since `since`.
    pub async fn server_history(
        &self,
        address: &str,
        since: i64,
    ) -> Result<Option<(i64, i64, Option<String>, Vec<(i64, i64, i64, String)>)>> {
        let Some(s) =
            sqlx::query("SELECT first_seen, last_seen, name FROM servers WHERE address = $1")
                .bind(address)
                .fetch_optional(&self.pool)
                .await?
        else {
            return Ok(None);
        };
        let samples = sqlx::query("SELECT time, players, max, map FROM server_samples WHERE address = $1 AND time >= $2 ORDER BY time")
            .bind(address)
            .bind(since)
            .fetch_all(&self.pool)
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
        Ok(Some((
            s.try_get("first_seen")?,
            s.try_get("last_seen")?,
            s.try_get("name")?,
            samples,
        )))
    }

    /// The database's size on disk, bytes (SQLite: pages × page size after a
    /// checkpoint; PostgreSQL: `pg_database_size` of the current database).
    pub async fn size_bytes(&self) -> Result<i64> {
        let row = match self.backend {
            Backend::Sqlite => {
                sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                    .execute(&self.pool)
                    .await?;
                sqlx::query("SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()")
                    .fetch_one(&self.pool)
                    .await?
            }
            Backend::Postgres => {
                sqlx::query("SELECT pg_database_size(current_database()) AS n")
                    .fetch_one(&self.pool)
                    .await?
            }
        };
        Ok(row.try_get("n")?)
    }

    /// Closes the pool (pending writes are done: every write awaits its commit).
    pub async fn close(&self) {
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
