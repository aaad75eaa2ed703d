-- Up Migration

-- Addresses and hashes are bytea (20 and 32 bytes). Token ids and amounts are numeric(78,0):
-- exact for any uint256. Large tables lead their keys with (chain_id, contract) so that they
-- can be distributed by collection without a schema change.

CREATE TABLE chains (
  chain_id      bigint PRIMARY KEY,
  name          text NOT NULL,
  native_symbol text NOT NULL,
  start_block   bigint NOT NULL,
  -- The first block not yet indexed: everything below it is committed.
  next_block    bigint NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- The most recent indexed headers, for reorg detection by parent hash.
CREATE TABLE recent_blocks (
  chain_id    bigint NOT NULL,
  number      bigint NOT NULL,
  hash        bytea NOT NULL,
  parent_hash bytea NOT NULL,
  block_time  timestamptz NOT NULL,
  PRIMARY KEY (chain_id, number)
);

CREATE TABLE contracts (
  chain_id         bigint NOT NULL,
  address          bytea NOT NULL,
  types            text[] NOT NULL DEFAULT '{}',
  name             text NOT NULL DEFAULT '',
  symbol           text NOT NULL DEFAULT '',
  decimals         integer NOT NULL DEFAULT 0,
  -- The mint event: the deploying transaction, or where the contract was first seen when
  -- no deployment could be observed (mint_source says which).
  mint_tx          bytea,
  mint_block       bigint,
  mint_time        timestamptz,
  minter           bytea,
  creator          bytea,
  mint_source      text NOT NULL CHECK (mint_source IN ('trace', 'receipt', 'first_event')),
  discovered_block bigint NOT NULL,
  PRIMARY KEY (chain_id, address)
);
CREATE INDEX contracts_by_mint_time ON contracts (chain_id, mint_time, address);
CREATE INDEX contracts_by_discovery ON contracts (chain_id, discovered_block);

CREATE TABLE nft_transfers (
  chain_id     bigint NOT NULL,
  contract     bytea NOT NULL,
  block_number bigint NOT NULL,
  log_index    integer NOT NULL,
  -- Position inside a multi-token event (ERC-1155 batch, ERC-2309 range).
  seq          integer NOT NULL,
  token_id     numeric(78, 0) NOT NULL,
  from_address bytea NOT NULL,
  to_address   bytea NOT NULL,
  amount       numeric(78, 0) NOT NULL,
  tx_hash      bytea NOT NULL,
  tx_index     integer NOT NULL,
  block_time   timestamptz NOT NULL,
  standard     text NOT NULL,
  PRIMARY KEY (chain_id, contract, block_number, log_index, seq)
);
-- Rows arrive in block order, so a BRIN index finds the newest blocks (reorg rollback) for
-- almost no write cost.
CREATE INDEX nft_transfers_by_block ON nft_transfers USING brin (chain_id, block_number);

-- ERC-20 movements inside transactions that move NFTs: the candidate payments.
CREATE TABLE fungible_transfers (
  chain_id     bigint NOT NULL,
  contract     bytea NOT NULL,
  block_number bigint NOT NULL,
  log_index    integer NOT NULL,
  from_address bytea NOT NULL,
  to_address   bytea NOT NULL,
  amount       numeric(78, 0) NOT NULL,
  tx_hash      bytea NOT NULL,
  tx_index     integer NOT NULL,
  block_time   timestamptz NOT NULL,
  PRIMARY KEY (chain_id, contract, block_number, log_index)
);
CREATE INDEX fungible_transfers_by_block ON fungible_transfers USING brin (chain_id, block_number);

-- Current balance of every (token, holder); rows at zero are deleted. A token's supply is the
-- sum of its balances; its mint event is its first transfer from the zero address.
CREATE TABLE token_balances (
  chain_id bigint NOT NULL,
  contract bytea NOT NULL,
  token_id numeric(78, 0) NOT NULL,
  holder   bytea NOT NULL,
  amount   numeric(78, 0) NOT NULL,
  PRIMARY KEY (chain_id, contract, token_id, holder)
);

-- Units of a collection each holder has, across its tokens; rows at zero are deleted.
CREATE TABLE collection_holders (
  chain_id bigint NOT NULL,
  contract bytea NOT NULL,
  holder   bytea NOT NULL,
  units    numeric(78, 0) NOT NULL,
  PRIMARY KEY (chain_id, contract, holder)
);
CREATE INDEX collection_holders_by_units ON collection_holders (chain_id, contract, units DESC, holder);

CREATE TABLE collection_stats (
  chain_id  bigint NOT NULL,
  contract  bytea NOT NULL,
  minted    numeric(78, 0) NOT NULL DEFAULT 0,
  burned    numeric(78, 0) NOT NULL DEFAULT 0,
  supply    numeric(78, 0) GENERATED ALWAYS AS (minted - burned) STORED,
  holders   bigint NOT NULL DEFAULT 0,
  transfers bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (chain_id, contract)
);

-- Fifteen-minute buckets per collection, kept as blocks are indexed, so that every supply
-- and owner-count series is read in O(buckets) without scanning transfers.
CREATE TABLE collection_buckets (
  chain_id      bigint NOT NULL,
  contract      bytea NOT NULL,
  bucket_start  timestamptz NOT NULL,
  minted        numeric(78, 0) NOT NULL DEFAULT 0,
  burned        numeric(78, 0) NOT NULL DEFAULT 0,
  holders_delta bigint NOT NULL DEFAULT 0,
  transfers     bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (chain_id, contract, bucket_start)
);

-- Down Migration
DROP TABLE collection_buckets, collection_stats, collection_holders, token_balances,
  fungible_transfers, nft_transfers, contracts, recent_blocks, chains;
