-- Up Migration

-- The block ranges whose newly minted tokens are still to be queued for their metadata: the indexer
-- records one row per run of at most a few thousand mints in its batch, rather than a queue row per
-- token, and a metadata worker whose queue runs low moves a range's tokens (those of `tokens` first
-- minted in it, without metadata yet) into `metadata_queue` and deletes the range, in one
-- statement. A token is pending while it is queued or in a range. The table is new and empty.
CREATE TABLE metadata_mint_ranges (
  chain_id    bigint NOT NULL,
  first_block bigint NOT NULL,
  last_block  bigint NOT NULL,
  PRIMARY KEY (chain_id, first_block)
);

-- Down Migration
DROP TABLE metadata_mint_ranges;
