-- Up Migration

-- The ownership of collections older than the start block, read from their transfer logs alone
-- (`--ownership-history logs`): one row per collection whose earlier history is being read, with
-- where the reading stands and what it has counted so far. Both tables are new and empty.
CREATE TABLE ownership_histories (
  chain_id   bigint NOT NULL,
  contract   bytea NOT NULL,
  -- Blocks [0, end_block) are read: end_block is the chain's start block.
  end_block  bigint NOT NULL,
  -- The first block not yet read; the reading is complete when it reaches end_block.
  next_block bigint NOT NULL,
  minted     numeric NOT NULL DEFAULT 0,
  burned     numeric NOT NULL DEFAULT 0,
  transfers  bigint NOT NULL DEFAULT 0,
  -- Transfer-topic logs of the collection that could not be read (malformed or unclassified).
  skipped    bigint NOT NULL DEFAULT 0,
  -- The indexer's checkpoint when the history was added to the collection's ownership; NULL before.
  applied_at bigint,
  PRIMARY KEY (chain_id, contract)
);

-- Net units per (token, holder) of the blocks read so far, until the history is applied; rows at
-- zero are deleted.
CREATE TABLE ownership_history_balances (
  chain_id bigint NOT NULL,
  contract bytea NOT NULL,
  token_id numeric(78, 0) NOT NULL,
  holder   bytea NOT NULL,
  amount   numeric NOT NULL,
  PRIMARY KEY (chain_id, contract, token_id, holder)
);

-- Down Migration
DROP TABLE ownership_history_balances, ownership_histories;
