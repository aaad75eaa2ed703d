-- Up Migration

-- How many of a queued token's failed attempts were refusals (a 404, a refused address, a body
-- too large, a value the store refused), apart from `attempts`, which counts every failed attempt:
-- refusals have a smaller budget of their own, spaced hours apart.
ALTER TABLE metadata_queue ADD COLUMN refusals integer NOT NULL DEFAULT 0;

-- Workers take due tokens a few per contract at a time, contract after contract: each contract's
-- due tokens are read from here in due order, so one contract with a million queued tokens costs
-- its first few rows, not a million. It replaces the index on `due_at` alone, which no query reads
-- any more.
CREATE INDEX metadata_queue_contract_due ON metadata_queue (chain_id, contract, due_at);
DROP INDEX metadata_queue_due;

-- Down Migration
CREATE INDEX metadata_queue_due ON metadata_queue (due_at);
DROP INDEX metadata_queue_contract_due;
ALTER TABLE metadata_queue DROP COLUMN refusals;
