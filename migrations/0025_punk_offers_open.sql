-- Up Migration

-- Each punk's latest offer row is its current one. Finding the floor by taking every punk's latest
-- row read the contract's whole offer history; marking each row with the block of the row that
-- replaced it lets a partial index hold only the offers open now, lowest first, so the floor is
-- one index probe. A rollback deletes the rows after its ancestor and reopens the rows they had
-- replaced.
ALTER TABLE punk_offers ADD COLUMN superseded_block bigint;

UPDATE punk_offers p SET superseded_block = n.next_block
FROM (
  SELECT chain_id, contract, punk_index, block_number, log_index,
         lead(block_number) OVER (
           PARTITION BY chain_id, contract, punk_index ORDER BY block_number, log_index) AS next_block
  FROM punk_offers
) n
WHERE n.next_block IS NOT NULL AND p.chain_id = n.chain_id AND p.contract = n.contract
  AND p.punk_index = n.punk_index AND p.block_number = n.block_number AND p.log_index = n.log_index;

CREATE INDEX punk_offers_open ON punk_offers (chain_id, contract, min_value)
  WHERE superseded_block IS NULL AND min_value IS NOT NULL;

-- Down Migration
DROP INDEX punk_offers_open;
ALTER TABLE punk_offers DROP COLUMN superseded_block;
