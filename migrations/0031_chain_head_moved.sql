-- Up Migration

-- When the node's head, as the indexer records it, last changed: a node that stops following its
-- chain still answers, and an indexer caught up with it keeps a fresh heartbeat, so readiness
-- also asks how long the head has stood still. NULL until an indexer of this version records a
-- head (it is then set, as a change).
ALTER TABLE chains ADD COLUMN head_moved_at timestamptz;

-- Down Migration
ALTER TABLE chains DROP COLUMN head_moved_at;
