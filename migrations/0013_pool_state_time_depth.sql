-- Up Migration

-- What time-weighted, liquidity-floored rates need of each pool state: its block's time, and a V3
-- pool's in-range liquidity from its Swap event (0 after Initialize; V2 depth is in the reserves).
-- Both nullable and without a default, so adding them rewrites nothing. Rows stored before have
-- NULL in both: a NULL time counts as older than any rate window (the state holds from the
-- window's start until the next one), and a NULL liquidity as deep enough.
ALTER TABLE pool_states
  ADD COLUMN block_time timestamptz,
  ADD COLUMN liquidity numeric(78, 0);

-- Down Migration
ALTER TABLE pool_states DROP COLUMN block_time, DROP COLUMN liquidity;
