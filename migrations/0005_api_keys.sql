-- Up Migration

-- One API key per user. Only the SHA-256 of the key's secret is stored; the key id is the
-- non-secret part of the key (16 hex digits after `ml_`) that finds its row and tells keys apart
-- in listings. A revoked user keeps the row: `mintlens keys rotate` gives it a new key and
-- enables it again; `mintlens keys create` is for new users only.
CREATE TABLE api_keys (
  user_name  text PRIMARY KEY CHECK (user_name ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  key_id     text NOT NULL UNIQUE CHECK (key_id ~ '^[0-9a-f]{16}$'),
  key_hash   bytea NOT NULL CHECK (octet_length(key_hash) = 32),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- The last time the key was replaced; NULL while the first key is in use.
  rotated_at timestamptz,
  -- Set while the user is revoked; a rotation clears it.
  revoked_at timestamptz
);

-- Down Migration
DROP TABLE api_keys;
