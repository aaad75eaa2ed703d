-- Up Migration

-- A single on-chain value fits numeric(78,0), but a sum of them does not: nine ERC-1155 mints of
-- 2^256-1 (cheap to emit) pass 10^78. Balances, holder units and every total are unbounded.
ALTER TABLE collection_stats DROP COLUMN supply;
ALTER TABLE collection_stats ALTER COLUMN minted TYPE numeric, ALTER COLUMN burned TYPE numeric;
ALTER TABLE collection_stats ADD COLUMN supply numeric GENERATED ALWAYS AS (minted - burned) STORED;
ALTER TABLE token_balances ALTER COLUMN amount TYPE numeric;
ALTER TABLE collection_holders ALTER COLUMN units TYPE numeric;
ALTER TABLE collection_buckets ALTER COLUMN minted TYPE numeric, ALTER COLUMN burned TYPE numeric;

-- The event shapes a contract had been seen emitting when it was last inspected: a new shape
-- (a proxy upgraded, an ERC-721 that starts logging ERC-20-shaped transfers) inspects it again.
ALTER TABLE contracts ADD COLUMN shapes text[] NOT NULL DEFAULT '{}';

-- Every contract creation seen in traces or receipts, stored without asking the node anything:
-- a traced backfill meets tens of millions of them, most of which never emit a transfer. A
-- contract is inspected when it first matters, and takes its mint event from here.
CREATE TABLE contract_creations (
  chain_id     bigint NOT NULL,
  address      bytea NOT NULL,
  block_number bigint NOT NULL,
  block_time   timestamptz NOT NULL,
  tx_hash      bytea NOT NULL,
  creator      bytea NOT NULL,
  minter       bytea NOT NULL,
  source       text NOT NULL CHECK (source IN ('trace', 'receipt')),
  PRIMARY KEY (chain_id, address)
);
CREATE INDEX contract_creations_by_block ON contract_creations USING brin (chain_id, block_number);

-- Transfer-topic logs that were read but not indexed, and why: a layout that contradicts its
-- declaration (malformed), an emitter whose types give no reading of it (unclassified), or
-- ERC-2309 ranges past the expansion budget (spam). Nothing is dropped without a trace here.
CREATE TABLE skipped_logs (
  chain_id     bigint NOT NULL,
  block_number bigint NOT NULL,
  log_index    integer NOT NULL,
  contract     bytea NOT NULL,
  tx_hash      bytea NOT NULL,
  reason       text NOT NULL CHECK (reason IN ('malformed', 'unclassified', 'spam')),
  -- For spam, the number of tokens the event claimed.
  tokens       numeric,
  PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX skipped_logs_by_contract ON skipped_logs (chain_id, contract);

-- Fails the transaction that calls it unless the chain's indexer lock (a session-level advisory
-- lock) is held by the given backend: every batch write calls it, so a writer whose lock went
-- with a dropped connection can never interleave with one that took the lock over.
CREATE FUNCTION mintlens_require_chain_lock(lock_space integer, lock_key integer, holder integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM pg_locks
    WHERE locktype = 'advisory' AND classid = lock_space::oid AND objid = lock_key::oid
      AND objsubid = 2 AND pid = holder AND granted
  ) THEN
    RAISE EXCEPTION 'this indexer no longer holds the chain lock (key %)', lock_key
      USING ERRCODE = '55P03';
  END IF;
END
$$;

-- Down Migration
DROP FUNCTION mintlens_require_chain_lock(integer, integer, integer);
DROP TABLE skipped_logs, contract_creations;
ALTER TABLE contracts DROP COLUMN shapes;
