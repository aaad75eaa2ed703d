-- Up Migration

-- Tokens whose metadata is to be fetched (again): queued with the batch that mints them, by an
-- operator's refresh, or by a metadata-update event. Workers take due rows with
-- FOR UPDATE SKIP LOCKED and push `due_at` ahead while they work, so a crashed worker's rows come
-- due again; a row leaves the queue when its token's outcome is stored.
CREATE TABLE metadata_queue (
  chain_id   bigint NOT NULL,
  contract   bytea NOT NULL,
  token_id   numeric(78, 0) NOT NULL,
  reason     text NOT NULL,
  attempts   integer NOT NULL DEFAULT 0,
  due_at     timestamptz NOT NULL DEFAULT now(),
  last_error text NOT NULL DEFAULT '',
  PRIMARY KEY (chain_id, contract, token_id)
);
CREATE INDEX metadata_queue_due ON metadata_queue (due_at);

-- Down Migration
DROP TABLE metadata_queue;
