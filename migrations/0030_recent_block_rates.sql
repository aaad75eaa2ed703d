-- Up Migration

-- The chain's dollar rate at each recent block, kept with its header: the newest is what the API
-- values a price of now at (a floor), exactly as a sale of that block is valued. Dollars per wei
-- as a fraction, as the indexer's rates are; NULL where the chain had no dollar rate (and on
-- blocks remembered before this migration). A rollback forgets the blocks after its ancestor, and
-- their rates with them.
ALTER TABLE recent_blocks ADD COLUMN usd_per_wei_num numeric, ADD COLUMN usd_per_wei_den numeric;

-- Down Migration
ALTER TABLE recent_blocks DROP COLUMN usd_per_wei_den, DROP COLUMN usd_per_wei_num;
