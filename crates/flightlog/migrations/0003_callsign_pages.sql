-- A callsign's flights are read newest first, by id (`/api/flights?callsign=`, paged
-- by `before`, and `/api/callsigns/{callsign}`): an index on (callsign, id) finds
-- them and gives their order without a sort. It replaces (callsign, start_time),
-- which no query orders by.
CREATE INDEX flights_by_callsign_id ON flights (callsign, id);
DROP INDEX flights_by_callsign;
