-- Up Migration

-- Rankings kept at commit time: one row per (chain, ranked window, collection with sales in it),
-- moved by every batch to end after its newest block. The API reads a page of a ranking through
-- the index of its metric and computes nothing. Both are new and empty: the indexer counts the
-- windows from the rollups with its first batch (window_end is NULL until then).
ALTER TABLE chains ADD COLUMN window_end timestamptz;

CREATE TABLE collection_windows (
  chain_id       bigint NOT NULL,
  -- The window's length: 3600, 86400, 604800, 2592000 or 31536000.
  window_seconds integer NOT NULL,
  contract       bytea NOT NULL,
  sales          bigint NOT NULL,
  sold_units     numeric NOT NULL,
  volume         numeric NOT NULL,
  -- The highest unit price (wei); -1 only inside a batch's transaction, while it is read again.
  max_unit_price numeric NOT NULL,
  -- Volume per unit, to 18 decimals of a wei: what the average-price ranking orders by.
  avg_unit_price numeric GENERATED ALWAYS AS
    (CASE WHEN sold_units > 0 THEN (volume * 1.000000000000000000) / sold_units ELSE 0 END) STORED,
  PRIMARY KEY (chain_id, window_seconds, contract)
);
-- One index per ranked metric: highest first, ties by contract address. The metric is negated so
-- that "after this row" of a page token is one row comparison, and one range of the index.
CREATE INDEX collection_windows_by_volume ON collection_windows (chain_id, window_seconds, (-volume), contract);
CREATE INDEX collection_windows_by_sales ON collection_windows (chain_id, window_seconds, (-sales), contract);
CREATE INDEX collection_windows_by_max_price
  ON collection_windows (chain_id, window_seconds, (-max_unit_price), contract);
CREATE INDEX collection_windows_by_avg_price
  ON collection_windows (chain_id, window_seconds, (-avg_unit_price), contract);
-- The rows a batch emptied or must read a highest price for again: found without a walk of the window.
CREATE INDEX collection_windows_pending ON collection_windows (chain_id, window_seconds)
  WHERE sales <= 0 OR max_unit_price < 0;

-- Down Migration
DROP TABLE collection_windows;
ALTER TABLE chains DROP COLUMN window_end;
