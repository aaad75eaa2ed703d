-- Up Migration

-- A subscription may leave out the events of collections judged spam when its batches are read
-- (`mintlens webhooks add --exclude-spam`), as a stream's `excludeSpam` does. A column with a
-- constant default: no rewrite of the table.
ALTER TABLE webhooks ADD COLUMN exclude_spam boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE webhooks DROP COLUMN exclude_spam;
