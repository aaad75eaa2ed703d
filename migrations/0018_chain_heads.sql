-- Up Migration

-- What each chain's indexer last saw of its node, for the API's readiness: the node's head block,
-- the confirmation depth the indexer keeps behind it, and when the indexer last wrote them (its
-- heartbeat, written at most every few seconds while it runs). A chain whose heartbeat is old has
-- no indexer running; one whose indexed height is far below the head less the depth is behind.
-- The columns are NULL until an indexer of this version runs: adding them rewrites nothing, and
-- writing them leaves `updated_at` (the served data's version) alone.
ALTER TABLE chains
  ADD COLUMN head_block bigint,
  ADD COLUMN confirmations integer,
  ADD COLUMN heartbeat_at timestamptz;

-- Down Migration
ALTER TABLE chains DROP COLUMN head_block, DROP COLUMN confirmations, DROP COLUMN heartbeat_at;
