-- Up Migration

-- One row per NFT trade that involved a payment: sales, paid mints (kind 'mint', never counted
-- as sales) and NFTs that came back to their holder in the same transaction (kind 'return').
-- Keyed by the transfer that delivered the NFT to its buyer, and its seller: one delivery can
-- carry units of several sellers.
CREATE TABLE sales (
  chain_id       bigint NOT NULL,
  contract       bytea NOT NULL,
  token_id       numeric(78, 0) NOT NULL,
  block_number   bigint NOT NULL,
  log_index      integer NOT NULL,
  seq            integer NOT NULL,
  seller         bytea NOT NULL,
  buyer          bytea NOT NULL,
  tx_hash        bytea NOT NULL,
  tx_index       integer NOT NULL,
  block_time     timestamptz NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('sale', 'mint', 'return')),
  quantity       numeric(78, 0) NOT NULL,
  -- Wei paid in the native coin, and the ERC-20 part converted to wei at the block's rates.
  native_paid    numeric NOT NULL,
  fungible_paid  numeric NOT NULL,
  -- native_paid + fungible_paid: the price of all `quantity` units.
  total_native   numeric NOT NULL,
  -- USD value of total_native at the block's rate; NULL when the chain has no USD rate yet.
  total_usd      numeric,
  attributed_by  text NOT NULL,
  -- The marketplace whose event the transaction logged ('' when none is known).
  market         text NOT NULL DEFAULT '',
  -- 'unpriced': an ERC-20 of the payment has no known rate (its amount is kept, not converted);
  -- 'tx_value': the node has no call traces, so the native part is the transaction's value;
  -- 'wash': the buyer sold this NFT to the seller in its previous sale.
  flags          text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (chain_id, contract, block_number, log_index, seq, seller)
);
CREATE INDEX sales_by_block ON sales USING brin (chain_id, block_number);
CREATE INDEX sales_last_of_token ON sales (chain_id, contract, token_id, block_number DESC, log_index DESC)
  WHERE kind = 'sale';

-- The ERC-20 part of each trade's payment, per token, in the token's base units, and what it
-- was worth in wei at the block's rate (NULL when the token has no known rate).
CREATE TABLE sale_payments (
  chain_id     bigint NOT NULL,
  contract     bytea NOT NULL,
  block_number bigint NOT NULL,
  log_index    integer NOT NULL,
  seq          integer NOT NULL,
  seller       bytea NOT NULL,
  token        bytea NOT NULL,
  amount       numeric NOT NULL,
  native_value numeric,
  PRIMARY KEY (chain_id, contract, block_number, log_index, seq, seller, token)
);
CREATE INDEX sale_payments_by_block ON sale_payments USING brin (chain_id, block_number);

-- Open CryptoPunks bids, from PunkBidEntered until withdrawn or accepted: an accepted bid's
-- PunkBought logs value 0, and the bid is what the buyer paid. History is kept (one row per
-- bid event) so that a rollback restores the bids that were open before it.
CREATE TABLE punk_bids (
  chain_id     bigint NOT NULL,
  contract     bytea NOT NULL,
  punk_index   numeric(78, 0) NOT NULL,
  block_number bigint NOT NULL,
  log_index    integer NOT NULL,
  bidder       bytea NOT NULL,
  -- 0 when the event withdrew or settled the bid.
  value        numeric(78, 0) NOT NULL,
  PRIMARY KEY (chain_id, contract, punk_index, block_number, log_index)
);
CREATE INDEX punk_bids_by_block ON punk_bids USING brin (chain_id, block_number);

-- The state of each configured liquidity pool after every change of it: Uniswap V2 reserves
-- (Sync) or a V3 pool's sqrtPriceX96 (Initialize, Swap). The rate at any block is the last
-- state at or before it, so no archive node is needed to price a sale.
CREATE TABLE pool_states (
  chain_id       bigint NOT NULL,
  pool           bytea NOT NULL,
  block_number   bigint NOT NULL,
  log_index      integer NOT NULL,
  reserve0       numeric(78, 0),
  reserve1       numeric(78, 0),
  sqrt_price_x96 numeric(78, 0),
  PRIMARY KEY (chain_id, pool, block_number, log_index)
);

-- Sales in the fifteen-minute buckets: count, units, volume and the extreme unit prices (wei).
ALTER TABLE collection_buckets
  ADD COLUMN sales bigint NOT NULL DEFAULT 0,
  ADD COLUMN sold_units numeric NOT NULL DEFAULT 0,
  ADD COLUMN volume numeric NOT NULL DEFAULT 0,
  ADD COLUMN min_unit_price numeric,
  ADD COLUMN max_unit_price numeric;

-- Down Migration
ALTER TABLE collection_buckets
  DROP COLUMN sales, DROP COLUMN sold_units, DROP COLUMN volume,
  DROP COLUMN min_unit_price, DROP COLUMN max_unit_price;
DROP TABLE pool_states, punk_bids, sale_payments, sales;
