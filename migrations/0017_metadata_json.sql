-- Up Migration

-- Attributes were stored as a JSON string holding the list (`jsonb_typeof` 'string'), not as the
-- list itself: each such value becomes the JSON it holds. Values already a list are left alone,
-- so running it over a store written by either version is the same. One pass over the table.
UPDATE token_metadata SET attributes = (attributes #>> '{}')::jsonb
WHERE jsonb_typeof(attributes) = 'string';

-- Down Migration
-- Back to the string the previous version wrote.
UPDATE token_metadata SET attributes = to_jsonb(attributes::text)
WHERE jsonb_typeof(attributes) <> 'string';
