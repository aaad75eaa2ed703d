-- Up Migration

-- The API's rate limit counters when `--rate-limit-store` names this database: one row per key and
-- window, as rate-limiter-flexible reads and writes them (key, points, expiry in ms since the epoch).
-- Made here rather than by the API at start, so that an API role without CREATE can use it.
-- Unlogged: counters a few seconds old are worth no WAL, and a crash that empties the table only
-- gives each key a fresh window.
CREATE UNLOGGED TABLE rate_limits (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);

-- Down Migration
DROP TABLE rate_limits;
