-- Up Migration

-- One row per token the indexer saw minted (sent from the zero address or a burn address), with
-- its first mint: the NFT's mint event, found by its key rather than by scanning the collection's
-- transfers. A token minted again (an ERC-1155 id) keeps its first mint; a rollback removes the
-- tokens first minted in the blocks it undoes.
CREATE TABLE tokens (
  chain_id     bigint NOT NULL,
  contract     bytea NOT NULL,
  token_id     numeric(78, 0) NOT NULL,
  block_number bigint NOT NULL,
  log_index    integer NOT NULL,
  seq          integer NOT NULL,
  tx_hash      bytea NOT NULL,
  block_time   timestamptz NOT NULL,
  PRIMARY KEY (chain_id, contract, token_id)
);
CREATE INDEX tokens_by_block ON tokens USING brin (chain_id, block_number);

INSERT INTO tokens (chain_id, contract, token_id, block_number, log_index, seq, tx_hash, block_time)
SELECT DISTINCT ON (chain_id, contract, token_id) chain_id, contract, token_id, block_number, log_index, seq, tx_hash,
       block_time
FROM nft_transfers
WHERE from_address IN ('\x0000000000000000000000000000000000000000'::bytea,
                       '\x000000000000000000000000000000000000dead'::bytea,
                       '\xdead000000000000000042069420694206942069'::bytea)
ORDER BY chain_id, contract, token_id, block_number, log_index, seq;

-- Down Migration
DROP TABLE tokens;
