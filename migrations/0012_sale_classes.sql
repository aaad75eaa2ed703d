-- Up Migration

-- Sales counted by class (src/core/sale-classes.ts): organic sales in the existing columns, which every
-- ranking and series reads by default; flagged sales (a wash rule fired, or a rate used to price
-- the sale jumped out of its recent range) in columns of their own, added only when a request asks
-- for them; unpriced sales (paid in a token without a rate) counted apart, never in a price or a
-- volume. The new columns are constant defaults or NULL: adding them rewrites nothing.
--
-- Sales indexed before this version are counted as they were: a stored sale keeps its flags, but its
-- bucket, day and window figures are not moved. An index from an earlier start block counts them
-- by class.

CREATE FUNCTION mintlens_sale_class(flags text[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN 'unpriced' = ANY(flags) THEN 'unpriced'
    WHEN EXISTS (SELECT 1 FROM unnest(flags) AS f WHERE f LIKE 'wash%' OR f = 'rate_outlier') THEN 'flagged'
    ELSE 'organic' END
$$;

ALTER TABLE collection_buckets
  ADD COLUMN flagged_sales bigint NOT NULL DEFAULT 0,
  ADD COLUMN flagged_units numeric NOT NULL DEFAULT 0,
  ADD COLUMN flagged_volume numeric NOT NULL DEFAULT 0,
  ADD COLUMN flagged_min_unit_price numeric,
  ADD COLUMN flagged_max_unit_price numeric,
  ADD COLUMN unpriced_sales bigint NOT NULL DEFAULT 0,
  ADD COLUMN unpriced_units numeric NOT NULL DEFAULT 0;

ALTER TABLE collection_days
  ADD COLUMN flagged_sales bigint NOT NULL DEFAULT 0,
  ADD COLUMN flagged_units numeric NOT NULL DEFAULT 0,
  ADD COLUMN flagged_volume numeric NOT NULL DEFAULT 0,
  ADD COLUMN flagged_min_unit_price numeric,
  ADD COLUMN flagged_max_unit_price numeric,
  ADD COLUMN unpriced_sales bigint NOT NULL DEFAULT 0,
  ADD COLUMN unpriced_units numeric NOT NULL DEFAULT 0;

-- The windows hold both figures, and rank by either: the organic ones through the indexes of 0011,
-- now partial (a collection with only flagged or unpriced sales is in no organic ranking), and every
-- sale with a price through four more. One row per (window, collection): at most a few hundred
-- thousand, rebuilt here; the indexer counts them again from the rollups with its next batch.
DROP TABLE collection_windows;
CREATE TABLE collection_windows (
  chain_id       bigint NOT NULL,
  -- The window's length: 3600, 86400, 604800, 2592000 or 31536000.
  window_seconds integer NOT NULL,
  contract       bytea NOT NULL,
  sales          bigint NOT NULL DEFAULT 0,
  sold_units     numeric NOT NULL DEFAULT 0,
  volume         numeric NOT NULL DEFAULT 0,
  -- The highest unit price (wei); -1 only inside a batch's transaction, while it is read again.
  max_unit_price numeric NOT NULL DEFAULT 0,
  flagged_sales  bigint NOT NULL DEFAULT 0,
  flagged_units  numeric NOT NULL DEFAULT 0,
  flagged_volume numeric NOT NULL DEFAULT 0,
  flagged_max_unit_price numeric NOT NULL DEFAULT 0,
  unpriced_sales bigint NOT NULL DEFAULT 0,
  -- Volume per unit, to 18 decimals of a wei: what the average-price ranking orders by.
  avg_unit_price numeric GENERATED ALWAYS AS
    (CASE WHEN sold_units > 0 THEN (volume * 1.000000000000000000) / sold_units ELSE 0 END) STORED,
  -- The same over every sale with a price, organic or flagged.
  all_sales      bigint GENERATED ALWAYS AS (sales + flagged_sales) STORED,
  all_volume     numeric GENERATED ALWAYS AS (volume + flagged_volume) STORED,
  all_max_unit_price numeric GENERATED ALWAYS AS (GREATEST(max_unit_price, flagged_max_unit_price)) STORED,
  all_avg_unit_price numeric GENERATED ALWAYS AS
    (CASE WHEN sold_units + flagged_units > 0
          THEN ((volume + flagged_volume) * 1.000000000000000000) / (sold_units + flagged_units) ELSE 0 END) STORED,
  PRIMARY KEY (chain_id, window_seconds, contract)
);
-- One index per ranked metric and figure: highest first, ties by contract address. The metric is
-- negated so that "after this row" of a page token is one row comparison, one range of the index.
CREATE INDEX collection_windows_by_volume ON collection_windows (chain_id, window_seconds, (-volume), contract)
  WHERE sales > 0;
CREATE INDEX collection_windows_by_sales ON collection_windows (chain_id, window_seconds, (-sales), contract)
  WHERE sales > 0;
CREATE INDEX collection_windows_by_max_price
  ON collection_windows (chain_id, window_seconds, (-max_unit_price), contract) WHERE sales > 0;
CREATE INDEX collection_windows_by_avg_price
  ON collection_windows (chain_id, window_seconds, (-avg_unit_price), contract) WHERE sales > 0;
CREATE INDEX collection_windows_all_by_volume
  ON collection_windows (chain_id, window_seconds, (-all_volume), contract) WHERE all_sales > 0;
CREATE INDEX collection_windows_all_by_sales
  ON collection_windows (chain_id, window_seconds, (-all_sales), contract) WHERE all_sales > 0;
CREATE INDEX collection_windows_all_by_max_price
  ON collection_windows (chain_id, window_seconds, (-all_max_unit_price), contract) WHERE all_sales > 0;
CREATE INDEX collection_windows_all_by_avg_price
  ON collection_windows (chain_id, window_seconds, (-all_avg_unit_price), contract) WHERE all_sales > 0;
-- The rows a batch emptied or must read a highest price for again: found without a walk of the window.
CREATE INDEX collection_windows_pending ON collection_windows (chain_id, window_seconds)
  WHERE sales + flagged_sales + unpriced_sales <= 0 OR max_unit_price < 0 OR flagged_max_unit_price < 0;
UPDATE chains SET window_end = NULL;

-- Down Migration
DROP INDEX collection_windows_pending;
DROP TABLE collection_windows;
CREATE TABLE collection_windows (
  chain_id       bigint NOT NULL,
  window_seconds integer NOT NULL,
  contract       bytea NOT NULL,
  sales          bigint NOT NULL,
  sold_units     numeric NOT NULL,
  volume         numeric NOT NULL,
  max_unit_price numeric NOT NULL,
  avg_unit_price numeric GENERATED ALWAYS AS
    (CASE WHEN sold_units > 0 THEN (volume * 1.000000000000000000) / sold_units ELSE 0 END) STORED,
  PRIMARY KEY (chain_id, window_seconds, contract)
);
CREATE INDEX collection_windows_by_volume ON collection_windows (chain_id, window_seconds, (-volume), contract);
CREATE INDEX collection_windows_by_sales ON collection_windows (chain_id, window_seconds, (-sales), contract);
CREATE INDEX collection_windows_by_max_price
  ON collection_windows (chain_id, window_seconds, (-max_unit_price), contract);
CREATE INDEX collection_windows_by_avg_price
  ON collection_windows (chain_id, window_seconds, (-avg_unit_price), contract);
CREATE INDEX collection_windows_pending ON collection_windows (chain_id, window_seconds)
  WHERE sales <= 0 OR max_unit_price < 0;
UPDATE chains SET window_end = NULL;
ALTER TABLE collection_days
  DROP COLUMN flagged_sales, DROP COLUMN flagged_units, DROP COLUMN flagged_volume,
  DROP COLUMN flagged_min_unit_price, DROP COLUMN flagged_max_unit_price, DROP COLUMN unpriced_sales,
  DROP COLUMN unpriced_units;
ALTER TABLE collection_buckets
  DROP COLUMN flagged_sales, DROP COLUMN flagged_units, DROP COLUMN flagged_volume,
  DROP COLUMN flagged_min_unit_price, DROP COLUMN flagged_max_unit_price, DROP COLUMN unpriced_sales,
  DROP COLUMN unpriced_units;
DROP FUNCTION mintlens_sale_class(text[]);
