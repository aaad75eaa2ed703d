-- Up Migration

-- Public CryptoPunks offers, one row per change of a punk's offer: PunkOffered to anyone sets its
-- minimum price; PunkNoLongerForSale, an offer to one address, or any move of the punk ends it
-- (min_value NULL). A punk's open offer is its latest row when that row has a price. History is kept
-- so that a rollback restores the offers that were open before it, as punk_bids does for bids.
CREATE TABLE punk_offers (
  chain_id     bigint NOT NULL,
  contract     bytea NOT NULL,
  punk_index   numeric(78, 0) NOT NULL,
  block_number bigint NOT NULL,
  log_index    integer NOT NULL,
  -- Wei; NULL when no public offer is open after this event.
  min_value    numeric(78, 0),
  PRIMARY KEY (chain_id, contract, punk_index, block_number, log_index)
);
CREATE INDEX punk_offers_by_block ON punk_offers USING brin (chain_id, block_number);

-- Down Migration
DROP TABLE punk_offers;
