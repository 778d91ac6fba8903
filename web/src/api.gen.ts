// Generated from web/openapi.json (lobby's GET /api/openapi.json) by web/gen-api.mjs
// with openapi-typescript: do not edit; `npm run gen-api` writes it again.

export interface paths {
    "/api/admin/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * fgms's `show TOPIC`: `stats` and `settings` (objects as `/stats` and the
         *     configuration write them), `version` (VersionBody), `uptime` (UptimeBody),
         *     `whitelist`, `blacklist`, `relays`, `crossfeeds` (ListBody), `tracker` (TrackerBody),
         *     `users` (UsersBody).
         */
        get: operations["show"];
        put?: never;
        /**
         * fgms's `LIST add ENTRY`: saved, then applied at once, kept across restarts and
         *     reloads until deleted.
         */
        post: operations["add"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/admin/{name}/{entry}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * fgms's `LIST delete ENTRY` (the entry percent-encoded; a CIDR's `/` may stay):
         *     saved, then applied; an entry of the file stays deleted across reloads until it
         *     is added again.
         */
        delete: operations["delete"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/airports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The airports in an area, the most prominent first. */
        get: operations["list"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/airports/{ident}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One airport by its ident (case-insensitive). */
        get: operations["one"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/atc": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The ATC stations among the relay's pilots (fgms's rule: a callsign ending `_DL`,
         *     `_GN`, `_TW`, `_AP`, `_DE` or `_CT` with the model `OpenRadar` or one containing `ATC`).
         */
        get: operations["atc"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/callsigns/{callsign}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A callsign's totals and latest flights. */
        get: operations["callsign"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/callsigns/{callsign}/csv": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A callsign's flights as CSV. */
        get: operations["callsign_csv"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/chat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The recent chat of the relay's pilots, each line once. */
        get: operations["chat"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/dns": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The records the directory publishes now. */
        get: operations["dns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/flights": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Flights, newest first, paged. */
        get: operations["flights"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/flights/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One flight with its track. */
        get: operations["flight"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/flights/{id}/gpx": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A flight as GPX 1.1. */
        get: operations["gpx"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/flights/{id}/kml": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A flight as KML 2.2. */
        get: operations["kml"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/leaderboards": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The leaderboards. */
        get: operations["leaderboards"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/list/heatmaps": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The list's players samples as heat maps. */
        get: operations["heatmaps"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/pilots": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every pilot the relay knows. */
        get: operations["pilots"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/pilots/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The pilot stream: a `snapshot` event, then one `update` per second with changes. */
        get: operations["pilots_stream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/relays": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Relay links and the directory's published relays. */
        get: operations["relays"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/servers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The master's live servers. */
        get: operations["servers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/servers/{addr}/details": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A listed server's info, players and rules, asked now (cached 10 s). */
        get: operations["details"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/servers/{addr}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A Xash3D server's player history. */
        get: operations["server_history"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/servers/register": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Self-registration: a pending entry and its token; the master admits the server
         *     once it shows the token in its host name or a rule (see docs/API.md).
         */
        post: operations["register"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process answers. */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether every configured part serves. */
        get: operations["readyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description One model a callsign flew. */
        AircraftTotals: {
            /** @description Its class. */
            aircraft_class: string;
            /** @description Its readable name. */
            aircraft_name: string;
            /**
             * Format: int64
             * @description Flights.
             */
            flights: number;
            /**
             * Format: double
             * @description Hours.
             */
            hours: number;
            /** @description Model. */
            model: string;
        };
        /** @description One airport. */
        Airport: {
            /** @description ISO 3166-1 alpha-2 country code. */
            country: string;
            /**
             * Format: int32
             * @description Field elevation, feet; `null` where unknown.
             */
            elevation_ft?: number | null;
            /** @description ICAO code where it has one (`EGLL`), else its local or GPS code (`00AA`). */
            ident: string;
            /** @description `large`, `medium`, `small` or `seaplane`. */
            kind: string;
            /**
             * Format: double
             * @description Latitude, degrees north.
             */
            lat: number;
            /**
             * Format: double
             * @description Longitude, degrees east.
             */
            lon: number;
            /** @description Its name. */
            name: string;
        };
        /** @description The body of `GET /api/airports`. */
        AirportsBody: {
            /** @description The airports in the box, large before medium before small, then by ident. */
            airports: components["schemas"]["Airport"][];
            /** @description Whether `limit` left some out (zoom in, or raise `min`, to see them). */
            truncated: boolean;
        };
        /** @description One airport a callsign departed from or arrived at. */
        AirportTotals: {
            /**
             * Format: int64
             * @description Flights that arrived at it.
             */
            arrivals: number;
            /**
             * Format: int64
             * @description Flights that departed from it.
             */
            departures: number;
            /** @description The airport's ident (`/api/airports/{ident}`). */
            ident: string;
            /** @description Its name, from the airport table (`null` if the table no longer has it). */
            name?: string | null;
        };
        /** @description The body of `GET /api/atc`. */
        AtcBody: {
            /**
             * Format: int64
             * @description When the snapshot was taken, Unix seconds.
             */
            generated_at: number;
            /** @description The stations, by callsign. */
            stations: components["schemas"]["Station"][];
        };
        /** @description The body of `GET /api/callsigns/{callsign}`. */
        CallsignBody: {
            /**
             * @description Models flown, most hours first (the first `aircraft=`, 20 by default, 100 at
             *     most).
             */
            aircraft: components["schemas"]["AircraftTotals"][];
            /**
             * @description Airports departed from or arrived at, most visits (departures and arrivals)
             *     first (the first `airports=`, 20 by default, 100 at most).
             */
            airports: components["schemas"]["AirportTotals"][];
            /** @description The callsign. */
            callsign: string;
            /**
             * Format: double
             * @description Nautical miles flown.
             */
            distance_nm: number;
            /**
             * Format: int64
             * @description Flights recorded (within retention).
             */
            flights: number;
            /**
             * Format: int64
             * @description When it was read, Unix seconds.
             */
            generated_at: number;
            /**
             * Format: double
             * @description Hours flown.
             */
            hours: number;
            /** @description The latest flights, newest first (`recent=`, 20 by default, 100 at most). */
            recent: components["schemas"]["FlightEntry"][];
        };
        /** @description What a change did. */
        ChangeBody: {
            /** @description `add` or `delete`. */
            action: string;
            /**
             * Format: int64
             * @description When, Unix seconds.
             */
            at: number;
            /** @description The admin who made it (the token's name). */
            by: string;
            /**
             * @description Whether the list in force changed (false: it already was so; the change is
             *     recorded anyway, so a later edit of the file does not undo it).
             */
            changed: boolean;
            /** @description The entry, as given. */
            entry: string;
            /** @description The list in force after the change. */
            in_force: string[];
            /** @description `blacklist`, `relays` or `crossfeeds`. */
            list: string;
        };
        /** @description The body of a change: `POST /api/admin/{list}` adds `entry`. */
        ChangeRequest: {
            /**
             * @description The entry as the configuration writes it: an IP or CIDR for the blacklist,
             *     `host:port` for relays and crossfeeds.
             */
            entry: string;
        };
        /** @description The body of `GET /api/chat`. */
        ChatBody: {
            /** @description What was recorded and dropped since the process started. */
            counters: components["schemas"]["ChatCounters"];
            /**
             * Format: int64
             * @description When it was made, Unix seconds.
             */
            generated_at: number;
            /** @description Lines kept in all, before any filter. */
            kept: number;
            /** @description The most recent lines the filters kept (at most `limit`), oldest first. */
            lines: components["schemas"]["ChatLine"][];
        };
        /** @description What was dropped, since the process started. */
        ChatCounters: {
            /**
             * Format: int64
             * @description Lines evicted early to stay under the total cap.
             */
            evicted: number;
            /**
             * Format: int64
             * @description Lines that aged out.
             */
            expired: number;
            /**
             * Format: int64
             * @description Lines recorded.
             */
            recorded: number;
            /**
             * Format: int64
             * @description Lines refused: their sender already had `per_pilot` lines kept.
             */
            refused_per_pilot: number;
        };
        /** @description One chat line. */
        ChatLine: {
            /**
             * Format: int64
             * @description When it was first seen, Unix seconds.
             */
            at: number;
            /** @description Whether the sender is an ATC station. */
            atc: boolean;
            /** @description Who sent it. */
            callsign: string;
            /**
             * Format: double
             * @description The sender's transmit frequency then, MHz, if it sent one.
             */
            frequency_mhz?: number | null;
            /**
             * Format: int64
             * @description Counts up by one per line recorded by this process (use with `since`).
             */
            id: number;
            /**
             * Format: double
             * @description Where the sender was, degrees.
             */
            lat: number;
            /**
             * Format: double
             * @description Where the sender was, degrees.
             */
            lon: number;
            /** @description The line, cleaned of control characters, at most 255 characters. */
            text: string;
        };
        /**
         * @description An entry of the file deleted at run time (it stays deleted across reloads until
         *     it is added again).
         */
        DeletedEntry: {
            /**
             * Format: int64
             * @description When, Unix seconds.
             */
            at: number;
            /** @description Who deleted it. */
            by: string;
            /** @description The entry. */
            entry: string;
        };
        /** @description A player in a server's details. */
        DetailsPlayer: {
            /**
             * Format: int32
             * @description Score.
             */
            frags: number;
            /** @description Name, colour codes removed. */
            name: string;
            /**
             * Format: float
             * @description Seconds connected (-1 for bots on Xash).
             */
            seconds: number;
        };
        /** @description The body of `GET /api/dns`. */
        DnsBody: {
            /**
             * Format: int64
             * @description When the snapshot was taken, Unix seconds.
             */
            generated_at: number;
            /** @description Every record of the zone, in the directory's order (SOA first). */
            records: components["schemas"]["DnsRecord"][];
            /**
             * Format: int32
             * @description The SOA serial.
             */
            serial: number;
            /** @description The zone's origin, fully qualified. */
            zone: string;
        };
        /** @description One record in presentation form. */
        DnsRecord: {
            /** @description The record data in zone-file presentation format. */
            data: string;
            /** @description Owner name, fully qualified. */
            name: string;
            /**
             * Format: int32
             * @description TTL, seconds.
             */
            ttl: number;
            /** @description Record type (`SOA`, `NS`, `SRV`, `TXT`, `A`, `AAAA`, `NAPTR`). */
            type: string;
        };
        /** @description What every error answer carries. */
        ErrorBody: {
            /** @description What is wrong, for a person. */
            error: string;
        };
        /** @description The body of `GET /api/flights/{id}`. */
        FlightBody: {
            /** @description The flight. */
            flight: components["schemas"]["FlightEntry"];
            /**
             * Format: int64
             * @description When it was read, Unix seconds.
             */
            generated_at: number;
            /** @description Its track, a GeoJSON Feature (RFC 7946). */
            track: components["schemas"]["TrackFeature"];
        };
        /** @description One flight: a callsign flying one model on one relay. */
        FlightEntry: {
            /**
             * @description The aircraft's class (`single_prop`, `airliner`, ..., `other`: the classes
             *     of `/api/pilots`).
             */
            aircraft_class: string;
            /**
             * @description The aircraft's readable name (`Cessna 172P Skyhawk`; the model's file name
             *     when the table has none).
             */
            aircraft_name: string;
            /**
             * @description The arrival airport's ident, by the same rule at the last position; `null`
             *     while flying, for a flight that ended in the air, or unknown.
             */
            arrival?: string | null;
            /** @description Callsign. */
            callsign: string;
            /**
             * @description The departure airport's ident (`EGLL`): the airport within 5 km of the first
             *     position when that position was slow (under 40 kt) and low (within 500 ft of
             *     the field elevation); `null` for a flight that began in the air, or unknown.
             */
            departure?: string | null;
            /**
             * Format: double
             * @description Nautical miles flown (between consecutive positions; jumps faster than
             *     2,000 kt are not counted).
             */
            distance_nm: number;
            /**
             * Format: int64
             * @description Seconds from start to end (to `generated_at` while flying).
             */
            duration_s: number;
            /**
             * Format: int64
             * @description End, Unix seconds; `null` while flying.
             */
            end?: number | null;
            end_position?: null | components["schemas"]["Point"];
            /**
             * Format: int64
             * @description Id, for `/api/flights/{id}` and paging.
             */
            id: number;
            /**
             * Format: double
             * @description Highest altitude, feet.
             */
            max_alt_ft?: number | null;
            /**
             * @description Model as the relay gave it (a path for local pilots, fgms's short name
             *     through the tracker, `unknown` when the start was not seen).
             */
            model: string;
            /**
             * Format: int64
             * @description Seconds the aircraft moved: the intervals between consecutive positions
             *     (every 10 s) whose average ground speed was above 5 kt (docs/API.md); `null`
             *     for flights recorded before lobby kept it.
             */
            moving_s?: number | null;
            /** @description The relay it flew on. */
            relay: string;
            /**
             * Format: int64
             * @description Positions stored (one every 10 s at most).
             */
            samples: number;
            /**
             * Format: int64
             * @description Start, Unix seconds.
             */
            start: number;
            start_position?: null | components["schemas"]["Point"];
        };
        /** @description The body of `GET /api/flights`. */
        FlightsBody: {
            /** @description The flights, newest first. */
            flights: components["schemas"]["FlightEntry"][];
            /**
             * Format: int64
             * @description When it was read, Unix seconds.
             */
            generated_at: number;
            /**
             * Format: int64
             * @description Pass as `before` for the next page; `null` on the last page.
             */
            next_before?: number | null;
        };
        /** @description One gamedir's heat map cells. */
        GamedirHeat: {
            /** @description The gamedir. */
            gamedir: string;
            /** @description Median concurrent players by UTC hour, 00 to 23 (`null`: no sample). */
            hours: (number | null)[];
            /** @description Median concurrent players by UTC weekday, Monday first. */
            weekdays: (number | null)[];
        };
        /** @description The body of `GET /healthz`. */
        HealthBody: {
            /** @description Always `ok`: the process answers. */
            status: string;
        };
        /** @description `GET /api/list/heatmaps`: the server list's players samples as heat maps. */
        HeatmapsBody: {
            /** @description One entry per gamedir with samples. */
            gamedirs: components["schemas"]["GamedirHeat"][];
            /**
             * Format: int64
             * @description When they were computed, Unix seconds.
             */
            generated_at: number;
            /**
             * Format: int32
             * @description Days of samples the hour map covers (14).
             */
            hour_days: number;
            /**
             * Format: int32
             * @description Weeks of samples the weekday map covers (6).
             */
            weekday_weeks: number;
        };
        /** @description One callsign of a leaderboard. */
        Leader: {
            /** @description Callsign. */
            callsign: string;
            /**
             * Format: double
             * @description Their nautical miles, 1 decimal.
             */
            distance_nm: number;
            /**
             * Format: int64
             * @description Flights that started in the period.
             */
            flights: number;
            /**
             * Format: double
             * @description Their hours, start to end (open flights up to `generated_at`), 2 decimals.
             */
            hours: number;
            /**
             * Format: int64
             * @description 1 for the first.
             */
            rank: number;
        };
        /** @description The body of `GET /api/leaderboards`. */
        LeaderboardBody: {
            /**
             * @description `hours` or `flights`: what the callsigns are ranked by (ties: the other, then
             *     the callsign).
             */
            by: string;
            /**
             * Format: int64
             * @description When it was read, Unix seconds.
             */
            generated_at: number;
            /** @description The callsigns, first first: at most `limit`. */
            leaders: components["schemas"]["Leader"][];
            /** @description `7d`, `30d` or `all`. */
            period: string;
            /**
             * Format: int64
             * @description The flights counted started at or after this (Unix seconds); `null` for `all`
             *     (every flight within the log's retention).
             */
            since?: number | null;
        };
        /** @description A GeoJSON LineString geometry: `[lon, lat, altitude in metres]` per position. */
        LineString: {
            /** @description Positions, in time order. */
            coordinates: number[][];
            /** @description Always `LineString`. */
            type: string;
        };
        /** @description One relay link or crossfeed target. */
        Link: {
            /** @description The address in use; `null` while the name does not resolve. */
            address?: string | null;
            /**
             * Format: int64
             * @description Bytes accepted from it.
             */
            bytes_in: number;
            /**
             * Format: int64
             * @description Bytes sent to it.
             */
            bytes_out: number;
            /**
             * Format: int64
             * @description Datagrams accepted from it.
             */
            datagrams_in: number;
            /**
             * Format: int64
             * @description Datagrams sent to it.
             */
            datagrams_out: number;
            /** @description `relay` or `crossfeed`. */
            kind: string;
            /**
             * Format: int64
             * @description When a datagram from it was last accepted, Unix seconds; `null` if never.
             */
            last_in?: number | null;
            /** @description Its configured name (`host:port`). */
            name: string;
        };
        /** @description The body of `GET /api/admin/{list}`. */
        ListBody: {
            /** @description Run-time deletions in force (entries the file may list that do not apply). */
            deleted: components["schemas"]["DeletedEntry"][];
            /** @description The list in force: the file's entries, then those added at run time. */
            entries: components["schemas"]["ListEntry"][];
            /** @description `whitelist`, `blacklist`, `relays` or `crossfeeds`. */
            list: string;
        };
        /** @description One entry of a list in force. */
        ListEntry: {
            /**
             * Format: int64
             * @description For an entry added at run time: when, Unix seconds.
             */
            at?: number | null;
            /** @description For an entry added at run time: who added it. */
            by?: string | null;
            /** @description The entry. */
            entry: string;
            link?: null | components["schemas"]["Link"];
            /** @description `file` (the configuration) or `admin` (added at run time). */
            source: string;
        };
        /** @description One part's readiness. */
        PartStatus: {
            /** @description What it waits for when not ready; `null` when ready. */
            detail?: string | null;
            /** @description `relay`, `master`, `dns`, `sim` or `http`. */
            part: string;
            /** @description Whether it serves. */
            ready: boolean;
        };
        /** @description One pilot. */
        Pilot: {
            /** @description The model's file name without `.xml` (`c172p`), as fgms's tracker reports it. */
            aircraft: string;
            /**
             * @description The aircraft's readable name (`Cessna 172P Skyhawk`) where lobby's table knows
             *     it, else `aircraft`.
             */
            aircraft_name: string;
            /**
             * Format: double
             * @description Altitude above the WGS84 ellipsoid, feet.
             */
            alt_ft: number;
            /**
             * @description Whether it is an ATC station by fgms's rule: a callsign ending `_DL`, `_GN`,
             *     `_TW`, `_AP`, `_DE` or `_CT` and the model `OpenRadar` or one containing `ATC`.
             */
            atc: boolean;
            /** @description Callsign, as FlightGear sends it. */
            callsign: string;
            /**
             * @description The chat line it sends now (property 10002, repeated in every datagram for about
             *     10 s), cleaned of control characters, at most 255 characters; `null` if none.
             *     Past lines: `GET /api/chat`.
             */
            chat?: string | null;
            /**
             * @description The map symbol's class, from the model by lobby's written table
             *     (`fgmp::aircraft`): `airliner`, `business_jet`, `single_prop`, `twin_prop`,
             *     `helicopter`, `glider`, `military_jet`, `airship`, `ship`, `atc` or `other`.
             */
            class: string;
            /**
             * Format: double
             * @description How fast `sim_time` advanced against the arrival of its datagrams between the
             *     last two snapshots: 1.0 in real time, 0 paused, above 1 under time
             *     acceleration (which FlightGear's multiplayer interpolation does not follow:
             *     the aircraft jumps on others' screens); `null` on its first snapshot.
             */
            clock_rate?: number | null;
            /**
             * Format: double
             * @description Radio transmit frequency, MHz (property 13001, Hz; protocol v2 aircraft that set
             *     it); `null` if not sent.
             */
            frequency_mhz?: number | null;
            /**
             * Format: double
             * @description Horizontal speed over the ground, knots.
             */
            ground_speed_kt: number;
            /**
             * Format: double
             * @description True heading, degrees, `0 <= heading < 360`.
             */
            heading: number;
            /**
             * Format: double
             * @description The `lag` field of its last datagram, seconds, as its client sends it (1 / its
             *     send rate: 0.1 at 10 Hz).
             */
            lag_s: number;
            /**
             * Format: int64
             * @description When its last datagram arrived, Unix seconds.
             */
            last_seen: number;
            /**
             * Format: double
             * @description Geodetic latitude, degrees north.
             */
            lat: number;
            /** @description The livery file (property 1101), if sent and not empty. */
            livery?: string | null;
            /** @description Whether its client talks to this relay. */
            local: boolean;
            /**
             * Format: double
             * @description Longitude, degrees east.
             */
            lon: number;
            /** @description Model path, as sent (`Aircraft/c172p/Models/c172p.xml`). */
            model: string;
            /**
             * Format: int64
             * @description When it joined, Unix seconds.
             */
            online_since: number;
            /**
             * Format: double
             * @description Pitch, degrees, nose up positive.
             */
            pitch: number;
            /**
             * Format: int32
             * @description The property protocol its client speaks: 1, or 2 ("MP2017": the pad word
             *     `0x1face002`). Pilots on different versions may see each other's properties as
             *     "nil" or broken models.
             */
            protocol: number;
            /**
             * Format: double
             * @description Datagrams per second it sent over the last snapshot interval (about 10 for
             *     FlightGear's default); `null` on its first snapshot.
             */
            rate_hz?: number | null;
            /**
             * @description For a remote pilot, the relay it was learned from (its label, or the sender's
             *     IP for a whitelisted source); `null` for a local pilot.
             */
            relay?: string | null;
            /**
             * Format: double
             * @description Roll, degrees, right wing down positive.
             */
            roll: number;
            /**
             * Format: double
             * @description The `time` field of its last datagram: the client's multiplayer clock, seconds.
             */
            sim_time: number;
            transponder?: null | components["schemas"]["Transponder"];
            /**
             * Format: int32
             * @description The model variant (property 1100), if sent.
             */
            variant?: number | null;
        };
        /** @description The body of `GET /api/pilots`. */
        PilotsBody: {
            /**
             * Format: int64
             * @description When the snapshot was taken, Unix seconds.
             */
            generated_at: number;
            /** @description Pilots known (observers excluded), before any filter. */
            online: number;
            /** @description The pilots the filters kept, by `online_since` then callsign. */
            pilots: components["schemas"]["Pilot"][];
        };
        /** @description A position. */
        Point: {
            /**
             * Format: double
             * @description Feet.
             */
            alt_ft: number;
            /**
             * Format: double
             * @description Degrees north.
             */
            lat: number;
            /**
             * Format: double
             * @description Degrees east.
             */
            lon: number;
        };
        /** @description One relay the directory publishes, and its health. */
        Published: {
            /** @description SRV target. */
            host: string;
            /** @description Display name (TXT `name`). */
            name: string;
            /**
             * Format: int32
             * @description UDP port (the configured one, also while DNS publishes 0 for a relay that is down).
             */
            port: number;
            /**
             * Format: double
             * @description The last probe's round trip, milliseconds; `null` when it went unanswered.
             */
            rtt_ms?: number | null;
            /**
             * Format: int64
             * @description When `up` last changed, Unix seconds; `null` before the first probe.
             */
            since?: number | null;
            /** @description Whether DNS publishes it as up now. */
            up: boolean;
        };
        /** @description The body of `GET /readyz` (200 when `ready`, else 503). */
        ReadyBody: {
            /** @description Every configured part, in start order. */
            parts: components["schemas"]["PartStatus"][];
            /** @description Whether every part configured in this process serves. */
            ready: boolean;
        };
        /** @description The answer to a registration: what the server must show, and until when. */
        RegisterBody: {
            /** @description The server, as read. */
            address: string;
            /**
             * Format: int64
             * @description How often the master checks, seconds.
             */
            check_every: number;
            /**
             * Format: int64
             * @description The token is valid until then, Unix seconds.
             */
            expires_at: number;
            /** @description Its game directory. */
            gamedir: string;
            /**
             * @description The token: put it in the server's host name, or in a rule (`sv_contact`, or a
             *     `lobby_token` cvar), until the server is admitted.
             */
            token: string;
        };
        /** @description The body of `POST /api/servers/register`. */
        RegisterRequest: {
            /** @description The server, `IP:PORT` (IPv6 as `[ADDR]:PORT`); a host name is refused. */
            address: string;
            /** @description Who to reach about it (kept for the operator, never published). */
            contact: string;
            /** @description Its game directory (`valve`, `cstrike`, ...). */
            gamedir: string;
        };
        /** @description This process's relay. */
        RelayInfo: {
            /** @description Hub mode: relay traffic is passed on to the other relays. */
            hub: boolean;
            /** @description Relay links, then crossfeed targets. */
            links: components["schemas"]["Link"][];
            /** @description The relay's name (telnet header, fgms `server.name`). */
            name: string;
            /** @description Distance-tiered forwarding: the tiers and what they left out. */
            thinning: components["schemas"]["Thinning"];
        };
        /** @description The body of `GET /api/relays`. */
        RelaysBody: {
            /**
             * Format: int64
             * @description When the snapshot was taken, Unix seconds.
             */
            generated_at: number;
            /** @description The directory's relays; empty when no directory runs here. */
            published: components["schemas"]["Published"][];
            relay?: null | components["schemas"]["RelayInfo"];
        };
        /**
         * @description `GET /api/servers/{addr}/details`: a listed server asked now by the master (its
         *     answer cached 10 s).
         */
        ServerDetails: {
            /** @description `ip:port`. */
            address: string;
            /** @description The reply's dialect: `xash49`, `xash48`, `source`, `gold_src`. */
            dialect?: string | null;
            /**
             * Format: int32
             * @description Round trip of its info answer, ms; `null` when it did not answer.
             */
            ping_ms?: number | null;
            /** @description Its players (A2S_PLAYER), `null` when it sent none. */
            players?: components["schemas"]["DetailsPlayer"][] | null;
            /** @description Why `players` is `null`. */
            players_note?: string | null;
            /**
             * Format: int32
             * @description Protocol of its answer (49 Xash3D, 48 GoldSrc).
             */
            protocol?: number | null;
            /**
             * Format: int64
             * @description When it was asked, Unix seconds.
             */
            queried_at: number;
            /** @description Its rules (A2S_RULES) as `[name, value]` pairs, `null` when it sent none. */
            rules?: [
                string,
                string
            ][] | null;
            /** @description Why `rules` is `null`. */
            rules_note?: string | null;
        };
        /** @description One listed server. */
        ServerEntry: {
            /** @description `ip:port`, IPv6 bracketed. */
            address: string;
            /**
             * Format: int32
             * @description Bots.
             */
            bots: number;
            /** @description Dedicated server (not a listen server or a proxy). */
            dedicated: boolean;
            /** @description Game directory (`valve`, `cstrike`, ...). */
            gamedir: string;
            /**
             * Format: int64
             * @description When its last heartbeat was accepted, Unix seconds (for a server known only
             *     from the curated sources: its last answer to the master's probe).
             */
            last_heartbeat: number;
            /** @description Map. */
            map: string;
            /**
             * Format: int32
             * @description Maximum players.
             */
            max: number;
            /**
             * @description The server's host name, from its own info reply (the master protocol carries
             *     none): colour codes and control characters removed, at most 64 characters.
             *     `null` until the server has answered (servers behind NAT are not asked).
             */
            name?: string | null;
            /** @description Behind NAT (clients reach it through the master's NAT announce). */
            nat: boolean;
            /** @description `linux`, `windows`, `macos` or `unknown`. */
            os: string;
            /**
             * @description Whether joining needs a password (the heartbeat's `password` key read the way
             *     FWGS sends it since 2025-10: `0` when a password is set).
             */
            password: boolean;
            /**
             * Format: int32
             * @description The master's round trip to it at its last probe, ms; `null` when the master
             *     does not probe it (heartbeats prove it alive).
             */
            ping_ms?: number | null;
            /**
             * Format: int32
             * @description Players, bots not counted.
             */
            players: number;
            /**
             * Format: int32
             * @description Protocol.
             */
            protocol: number;
            /**
             * Format: int32
             * @description Region code (255: the world).
             */
            region: number;
            /**
             * Format: int64
             * @description When the master first listed it, Unix seconds.
             */
            registered_since: number;
            /**
             * @description Where the list knows it from, one or more of `heartbeat` (UDP heartbeats),
             *     `curated` (the operator's sources) and `registered` (self-registration).
             */
            sources?: string[];
            /** @description Engine version, `major.minor[.patch]`. */
            version: string;
        };
        /** @description The body of `GET /api/servers/{addr}/history`. */
        ServerHistoryBody: {
            /** @description `ip:port`. */
            address: string;
            /**
             * Format: int64
             * @description First seen listed, Unix seconds.
             */
            first_seen: number;
            /**
             * Format: int64
             * @description When it was read, Unix seconds.
             */
            generated_at: number;
            /**
             * Format: int64
             * @description Last seen listed, Unix seconds.
             */
            last_seen: number;
            /** @description Its name when last known. */
            name?: string | null;
            /**
             * @description Samples since `since`, in time order (one every 5 minutes by default): the
             *     newest `limit=` (1,000 by default, 5,000 at most).
             */
            samples: components["schemas"]["ServerSamplePoint"][];
        };
        /** @description One sample of a server. */
        ServerSamplePoint: {
            /** @description Map. */
            map: string;
            /**
             * Format: int64
             * @description Slots.
             */
            max: number;
            /**
             * Format: int64
             * @description Players.
             */
            players: number;
            /**
             * Format: int64
             * @description Unix seconds.
             */
            time: number;
        };
        /** @description The body of `GET /api/servers`. */
        ServersBody: {
            /**
             * Format: int64
             * @description When the snapshot was taken, Unix seconds.
             */
            generated_at: number;
            /** @description The servers the filters kept, by address. */
            servers: components["schemas"]["ServerEntry"][];
            /** @description Servers listed, before any filter. */
            total: number;
        };
        /** @description One ATC station. */
        Station: {
            /**
             * @description The airport its callsign names (the part before the last `_`, 3 or 4
             *     letters or digits), if any.
             */
            airport?: string | null;
            /** @description The airport's name, where the embedded airport table knows its ident. */
            airport_name?: string | null;
            /** @description Callsign (`EDDF_TW`). */
            callsign: string;
            /**
             * Format: double
             * @description Transmit frequency, MHz, if its client sends one (property 13001).
             */
            frequency_mhz?: number | null;
            /**
             * Format: double
             * @description Where it sits, degrees.
             */
            lat: number;
            /**
             * Format: double
             * @description Where it sits, degrees.
             */
            lon: number;
            /** @description The client's model (`OpenRadar`, or one containing `ATC`, such as `ATC-pie`). */
            model: string;
            /**
             * Format: int64
             * @description When it joined, Unix seconds.
             */
            online_since: number;
            /**
             * @description The position kind its callsign ends with: `DL` (delivery), `GN` (ground), `TW`
             *     (tower), `AP` (approach), `DE` (departure), `CT` (centre).
             */
            position: string;
        };
        /** @description Distance-tiered forwarding on this relay since it started. */
        Thinning: {
            /** @description Per tier, nearest first (empty when the tiers are off). */
            per_tier: components["schemas"]["TierCount"][];
            /**
             * Format: int64
             * @description Bytes the relay sent.
             */
            sent_bytes: number;
            /**
             * Format: int64
             * @description Datagrams the relay sent (to pilots, links and crossfeeds, and pongs).
             */
            sent_datagrams: number;
            /**
             * @description The tiers as `[relay] tiers` writes them (`off`: every datagram to every
             *     pilot in range, as fgms).
             */
            tiers: string;
        };
        /** @description One tier and what it left out. */
        TierCount: {
            /**
             * Format: double
             * @description Datagrams per second a pilot is sent of each pilot in this tier; `null`: the sender's full rate.
             */
            rate_hz?: number | null;
            /**
             * Format: int64
             * @description Their bytes.
             */
            thinned_bytes: number;
            /**
             * Format: int64
             * @description Position datagrams not sent to pilots in this tier.
             */
            thinned_datagrams: number;
            /**
             * Format: double
             * @description The tier's outer bound, nautical miles; `null` for the last (every distance beyond).
             */
            up_to_nm?: number | null;
        };
        /** @description The body of `GET /api/admin/tracker`: the relay's link to its tracker. */
        TrackerBody: {
            /**
             * Format: int64
             * @description Messages the tracker acknowledged.
             */
            acked: number;
            /**
             * Format: int64
             * @description Messages waiting or unacknowledged now.
             */
            backlog: number;
            /** @description Whether the tracker has identified the relay now. */
            connected: boolean;
            /**
             * Format: int64
             * @description Messages dropped because the queue was full.
             */
            dropped: number;
            /**
             * Format: int64
             * @description Messages queued so far (CONNECT, DISCONNECT, POSITION).
             */
            queued: number;
            /**
             * Format: int64
             * @description Connections lost or refused.
             */
            reconnects: number;
            /** @description The tracker, `host:port`; `null` when the relay reports to none. */
            server?: string | null;
        };
        /** @description A GeoJSON Feature holding a flight's track. */
        TrackFeature: {
            /** @description The track. */
            geometry: components["schemas"]["LineString"];
            /**
             * @description `times` (Unix seconds) and `headings` (degrees), one per position; `id`,
             *     `callsign`; `positions_stored` (more than the positions here when the track
             *     was downsampled).
             */
            properties: {
                [key: string]: unknown;
            };
            /** @description Always `Feature`. */
            type: string;
        };
        /** @description A transponder as sent; each part `null` when not sent. */
        Transponder: {
            /**
             * Format: int32
             * @description The altitude it reports, feet.
             */
            altitude_ft?: number | null;
            /**
             * Format: int32
             * @description The transmitted code (squawk, e.g. 7000; -9999: off).
             */
            code?: number | null;
            /** @description Whether IDENT is pressed. */
            ident?: boolean | null;
            /**
             * Format: int32
             * @description The mode knob (FlightGear's KT76C: 0 off, 1 standby, 2 test, 3 ground, 4 on, 5 alt).
             */
            mode?: number | null;
        };
        /** @description The data of one `update` event: the previous event's state taken to this one's. */
        Update: {
            /**
             * @description Pilots (whole) whose protocol, ATC status, frequency, transponder, livery,
             *     variant or chat changed, or whose packet rate moved by 2 Hz and a fifth or
             *     clock rate by half (not the `lag` field alone: `lobby load` stamps a sequence
             *     number there, and any client may vary it at will);
             *     their position is in `moved` if it changed too.
             */
            changed?: components["schemas"]["Pilot"][];
            /**
             * Format: int64
             * @description When the new snapshot was taken, Unix seconds.
             */
            generated_at: number;
            /** @description New pilots, and pilots whose model changed (also listed in `left`). */
            joined: components["schemas"]["Pilot"][];
            /** @description Callsigns that are gone (or whose model changed). */
            left: string[];
            /**
             * @description `[callsign, lat, lon, alt_ft, heading, ground_speed_kt]` per pilot whose
             *     compact form changed.
             */
            moved: unknown[][];
            /** @description Pilots known now (observers excluded). */
            online: number;
        };
        /** @description The body of `GET /api/admin/uptime`. */
        UptimeBody: {
            /**
             * Format: int64
             * @description Configuration reloads (SIGHUP) applied since.
             */
            reloads: number;
            /**
             * Format: int64
             * @description When the process started serving, Unix seconds.
             */
            started: number;
            /**
             * Format: int64
             * @description Seconds since.
             */
            uptime_s: number;
        };
        /** @description One pilot as the admin sees it: the public form plus its source address. */
        User: components["schemas"]["Pilot"] & {
            /** @description Its source address (a local pilot's client; a remote pilot's relay). */
            address: string;
            /**
             * Format: double
             * @description Its receive range, nautical miles.
             */
            range_nm: number;
        };
        /** @description The body of `GET /api/admin/users`. */
        UsersBody: {
            /** @description Pilots known, observers included (fgms's count). */
            online: number;
            /** @description Every pilot, by join time; observers included. */
            users: components["schemas"]["User"][];
        };
        /** @description The body of `GET /api/admin/version`. */
        VersionBody: {
            /** @description The FlightGear multiplayer protocol version spoken (`1.1`). */
            fgmp_protocol: string;
            /** @description The tracker protocol version spoken (`V20151207`). */
            tracker_protocol: string;
            /** @description lobby's version. */
            version: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    show: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description stats, settings, version, uptime, whitelist, blacklist, crossfeeds, relays, tracker or users */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the topic's body (see the description) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            /** @description no valid bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the source is not in [admin] allow */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the admin API is off, no such topic, or no relay runs here */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    add: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description blacklist, relays or crossfeeds */
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ChangeRequest"];
            };
        };
        responses: {
            /** @description the change is saved and in force */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChangeBody"];
                };
            };
            /** @description not an entry this list can hold */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no valid bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the source is not in [admin] allow */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the admin API is off, no such list, or no relay runs here */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the state file cannot be written: nothing changed */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    delete: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the entry to delete */
                entry: string;
                /** @description blacklist, relays or crossfeeds */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the change is saved and in force */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChangeBody"];
                };
            };
            /** @description not an entry this list can hold */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no valid bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the source is not in [admin] allow */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the admin API is off, no such list, or no relay runs here */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the state file cannot be written: nothing changed */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    list: {
        parameters: {
            query?: {
                /**
                 * @description `west,south,east,north` in degrees (west > east crosses the antimeridian);
                 *     default the world.
                 * @example -23,63.5,-21.5,64.5
                 */
                bbox?: string;
                /** @description At most this many, large first. */
                limit?: number;
                /**
                 * @description The least kind listed: `large`, `medium`, `small` (default: with seaplane
                 *     bases) or `seaplane`.
                 */
                min?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the airports */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AirportsBody"];
                };
            };
            /** @description a bad parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    one: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ICAO or local code, e.g. EGLL */
                ident: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the airport */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Airport"];
                };
            };
            /** @description no airport has this ident */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    atc: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the stations */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AtcBody"];
                };
            };
            /** @description no relay runs in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    callsign: {
        parameters: {
            query?: {
                /** @description Models listed (most hours first). */
                aircraft?: number;
                /** @description Airports listed (most departures and arrivals first). */
                airports?: number;
                /** @description Latest flights listed. */
                recent?: number;
            };
            header?: never;
            path: {
                /** @description the callsign */
                callsign: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description flights, hours, distance, aircraft flown and airports visited */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CallsignBody"];
                };
            };
            /** @description a bad parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no flight log in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    callsign_csv: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the callsign */
                callsign: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description RFC 4180 CSV, a header row then one row per flight, newest first, at most 10,000 (the newest); an attachment named CALLSIGN-flights.csv */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/csv": string;
                };
            };
            /** @description a parameter (there are none) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no flight log in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    chat: {
        parameters: {
            query?: {
                /** @description Only this callsign (exact). */
                callsign?: string;
                /** @description At most this many lines, the most recent. */
                limit?: number;
                /**
                 * @description `lat,lon,nm`: only lines sent within nm nautical miles of the point (as
                 *     `GET /api/pilots` reads it).
                 * @example 64.0,-22.6,10
                 */
                near?: string;
                /** @description Only lines with a greater id. */
                since?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the lines, oldest first */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatBody"];
                };
            };
            /** @description a bad parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no relay runs in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    dns: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the zone's records */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DnsBody"];
                };
            };
            /** @description no directory runs in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    flights: {
        parameters: {
            query?: {
                /** @description The previous page's `next_before`: ids below it. */
                before?: number;
                /** @description Only this callsign (exact). */
                callsign?: string;
                /** @description Page size. */
                limit?: number;
                /** @description Only flights that ended at or after this (Unix seconds), or are flying. */
                since?: number;
                /** @description Only flights that started at or before this (Unix seconds). */
                until?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the flights */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FlightsBody"];
                };
            };
            /** @description a bad parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no flight log in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    flight: {
        parameters: {
            query?: {
                /**
                 * @description Positions in the track at most: a longer track is downsampled evenly, its
                 *     first and last positions kept.
                 */
                points?: number;
            };
            header?: never;
            path: {
                /** @description The flight's id. */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the flight and its track (GeoJSON Feature) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FlightBody"];
                };
            };
            /** @description a bad id or parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no such flight, or no flight log */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    gpx: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The flight's id. */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description GPX 1.1: departure and arrival waypoints, one trk of one trkseg (ele in metres above the WGS84 ellipsoid, time ISO 8601 UTC), at most 2,000 positions; an attachment named CALLSIGN-ID.gpx */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/gpx+xml": string;
                };
            };
            /** @description a bad id or any parameter (there are none) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no such flight, or no flight log */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    kml: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The flight's id. */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description KML 2.2: a Placemark with the track as a LineString (altitudeMode absolute, lon,lat,metres), and a Placemark per known departure and arrival airport; an attachment named CALLSIGN-ID.kml */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/vnd.google-earth.kml+xml": string;
                };
            };
            /** @description a bad id or any parameter (there are none) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no such flight, or no flight log */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    leaderboards: {
        parameters: {
            query?: {
                /** @description `hours` (default) or `flights`: what the callsigns are ranked by. */
                by?: "hours" | "flights";
                /** @description Callsigns listed. */
                limit?: number;
                /**
                 * @description `7d` (default), `30d` or `all`: the flights that started in the last 7 or 30
                 *     days, or every flight within retention.
                 */
                period?: "7d" | "30d" | "all";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the callsigns with the most hours or flights */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LeaderboardBody"];
                };
            };
            /** @description a bad parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no flight log in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    heatmaps: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the heat maps */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HeatmapsBody"];
                };
            };
            /** @description no master runs here */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    pilots: {
        parameters: {
            query?: {
                /** @description Only this callsign (exact). */
                callsign?: string;
                /**
                 * @description `lat,lon,nm`: only pilots within nm nautical miles of the point (lat
                 *     -90..90, lon -180..180, nm >= 0).
                 * @example 64.0,-22.6,10
                 */
                near?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the pilots */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PilotsBody"];
                };
            };
            /** @description a bad parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no relay runs in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    pilots_stream: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description text/event-stream: `snapshot` (data: PilotsBody), then `update` events (data: Update) and `chat` events (data: an array of ChatLine, the lines new since the last event) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["Update"];
                };
            };
            /** @description no relay runs in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description too many streams open */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    relays: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description links and published relays */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RelaysBody"];
                };
            };
        };
    };
    servers: {
        parameters: {
            query?: {
                /** @description Dedicated (1) or not (0). */
                dedicated?: number;
                /** @description Empty (1: no player) or not (0). */
                empty?: number;
                /** @description Full (1: `players >= max`) or not (0). */
                full?: number;
                /** @description Game directory, exact. */
                gamedir?: string;
                /** @description Map, exact. */
                map?: string;
                /** @description Behind NAT (1) or not (0). */
                nat?: number;
                /** @description With a password (1) or not (0). */
                password?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the servers */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ServersBody"];
                };
            };
            /** @description a bad parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description no master runs in this process */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    details: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description ip:port (IPv6 bracketed) */
                addr: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description what it answered */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ServerDetails"];
                };
            };
            /** @description not a listed server, or no master runs here */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the master is asking as many servers as it may; retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    server_history: {
        parameters: {
            query?: {
                /** @description Samples at most, the newest. */
                limit?: number;
                /** @description Samples from this time on (Unix seconds; default: the last 24 hours). */
                since?: number;
            };
            header?: never;
            path: {
                /** @description ip:port (IPv6 bracketed) */
                addr: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description first and last seen, and players over time */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ServerHistoryBody"];
                };
            };
            /** @description a bad parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description never seen, or no flight log */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    register: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RegisterRequest"];
            };
        };
        responses: {
            /** @description pending: the server must show the token */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RegisterBody"];
                };
            };
            /** @description a bad field (named) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description the address is banned */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description registration is off, or no master runs here */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description listed or pending already */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description too many from this network or in all; retry later */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description alive */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthBody"];
                };
            };
        };
    };
    readyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description every part serves */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReadyBody"];
                };
            };
            /** @description some part does not serve yet */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReadyBody"];
                };
            };
        };
    };
}
