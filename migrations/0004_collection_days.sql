-- Up Migration

-- Each collection's fifteen-minute buckets summed per UTC day, so that a long series or window
-- reads a day's row rather than its 96 buckets. Worked out again from the buckets for every day
-- a batch or a rollback touches, within its transaction: a day always equals the sum of its
-- buckets.
CREATE TABLE collection_days (
  chain_id       bigint NOT NULL,
  contract       bytea NOT NULL,
  day            timestamptz NOT NULL,
  minted         numeric NOT NULL,
  burned         numeric NOT NULL,
  holders_delta  bigint NOT NULL,
  transfers      bigint NOT NULL,
  sales          bigint NOT NULL,
  sold_units     numeric NOT NULL,
  volume         numeric NOT NULL,
  min_unit_price numeric,
  max_unit_price numeric,
  PRIMARY KEY (chain_id, contract, day)
);
CREATE INDEX collection_days_by_day ON collection_days (chain_id, day);
-- Rankings read every collection's buckets at the edges of a window.
CREATE INDEX collection_buckets_by_start ON collection_buckets (chain_id, bucket_start);

INSERT INTO collection_days (chain_id, contract, day, minted, burned, holders_delta, transfers, sales, sold_units,
                             volume, min_unit_price, max_unit_price)
SELECT chain_id, contract, date_bin('1 day', bucket_start, TIMESTAMPTZ 'epoch'), sum(minted), sum(burned),
       sum(holders_delta), sum(transfers), sum(sales), sum(sold_units), sum(volume), min(min_unit_price),
       max(max_unit_price)
FROM collection_buckets
GROUP BY 1, 2, 3;

-- Down Migration
DROP INDEX collection_buckets_by_start;
DROP TABLE collection_days;
