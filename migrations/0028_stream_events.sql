-- Up Migration

-- The outbox of the live event stream (src/core/stream-events.ts): one row per NFT transfer
-- (kind 0) and one per trade (kind 1: a sale, a paid mint or a return), written in the batch's
-- transaction. `id` counts a chain's rows from 1 without gaps, in commit order: the indexer is the
-- chain's one writer and takes the next ids in its own transaction. Rows are appended in id order,
-- so the key's B-tree grows at its right edge, and the one index serves every read (a range of ids)
-- and the rollback (the newest rows).
-- A rollback keeps the rows of the orphaned blocks, marked with `rollback_peak`, and appends a
-- retraction for each: a copy of the row with `retracts` naming it, since the rows it was made from
-- are gone. The payload is columns, narrow on the many transfer rows; a trade's price breakdown is
-- JSON (`trade`), on trade rows alone.
CREATE TABLE stream_events (
  chain_id      bigint NOT NULL,
  id            bigint NOT NULL,
  block_number  bigint NOT NULL,
  log_index     integer NOT NULL,
  seq           integer NOT NULL,
  kind          smallint NOT NULL,
  contract      bytea NOT NULL,
  token_id      numeric(78, 0) NOT NULL,
  -- The sender and recipient, or a trade's seller and buyer.
  from_address  bytea NOT NULL,
  to_address    bytea NOT NULL,
  -- Units moved, or a trade's quantity.
  amount        numeric(78, 0) NOT NULL,
  tx_hash       bytea NOT NULL,
  block_time    timestamptz NOT NULL,
  -- A transfer's event standard; NULL on trades.
  standard      text,
  -- A trade's kind, market, flags, prices and payments; NULL on transfers.
  trade         jsonb,
  -- On a retraction: the id of the row it takes back.
  retracts      bigint,
  -- On a row taken back and on its retraction: the highest block the chain had been indexed to
  -- when the rollback happened (confirmed reads send both only when the rollback went that deep).
  rollback_peak bigint,
  PRIMARY KEY (chain_id, id)
);

-- Per chain: the highest block indexed before the latest rollback (with the head since, the
-- highest ever: what a rollback's depth is measured from), and how far retention has pruned the
-- outbox (every row up to `pruned_through`, the rows of blocks before `pruned_before`).
CREATE TABLE stream_state (
  chain_id       bigint PRIMARY KEY,
  peak_block     bigint,
  pruned_through bigint,
  pruned_before  timestamptz
);

-- Down Migration
DROP TABLE stream_state;
DROP TABLE stream_events;
